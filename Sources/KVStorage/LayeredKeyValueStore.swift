import Foundation
import KVSupport

/// A read-only **base** database under a writable **user** database, seen as one ordered
/// key-value store: the storage seam (``KeyValueStore``) over two LevelDB databases.
///
/// <!-- doc-code: preamble=examples -->
/// ```swift
/// let base = try LevelDB.openPrivateCopy(of: bundledPath, under: userPath + ".base")
/// let user = try LevelDB(path: userPath)
/// let layered = try LayeredKeyValueStore(base: base, user: user)
/// let value = try layered.value(forKey: key)        // the user's, else the base's
/// ```
///
/// **Invariants.**
/// - Every read sees the **merged** data: a key the user layer holds has the user layer's
///   value; a key the user layer deleted is absent, even when the base holds it; any other
///   key has the base's value. Scans yield the merged keys in order, once each.
/// - Writes go to the user database only; the base database is never written through this
///   store.
/// - In the user database, each key's value is stored behind one tag byte: `0x01` then the
///   value, or `0x00` alone for a deletion that hides a base key (a tombstone). A deletion
///   of a key the base does not hold deletes the user's entry instead. The user database is
///   therefore not readable on its own: it is a layer.
/// - Keys compare bytewise in both databases.
public final class LayeredKeyValueStore: KeyValueStore, Sendable {
    // Checked Sendable: both handles are Sendable (the base behind a lock).

    /// The read-only layer (the latest one: ``replaceBase(with:)`` swaps it).
    public var base: LevelDB { current.withLock { $0 } }
    /// The writable layer.
    public let user: LevelDB
    /// Ranges read from the user layer alone: the base's keys there are hidden (a document
    /// store's change feed, which records the user's writes only).
    public let userOnly: [KeyRange]
    private let current: Locked<LevelDB>
    /// Held shared while a read starts (a value, a cursor, a snapshot), exclusively by
    /// ``withReadsHeld(_:)``: no read starts while the layers change in several steps.
    private let gate = ReadWriteLock()

    package static let tombstone: UInt8 = 0
    package static let present: UInt8 = 1

    /// A layered store over `base` and `user`.
    /// - Parameters:
    ///   - base: the read-only layer.
    ///   - user: the writable layer.
    ///   - userOnly: key ranges whose base entries are hidden.
    /// - Throws: `.invalidArgument` when either database has a custom comparator (layers
    ///   merge bytewise) or when both are the same database.
    public init(base: LevelDB, user: LevelDB, userOnly: [KeyRange] = []) throws {
        guard base !== user, base.path != user.path else {
            throw KVDocsError(
                .invalidArgument, "the base and the user layer must be two databases (both are \(user.path))",
                path: user.path)
        }
        guard base.comparator == nil, user.comparator == nil else {
            throw KVDocsError(
                .invalidArgument,
                "layered databases compare keys bytewise; \(base.comparator != nil ? base.path : user.path) has a custom comparator"
            )
        }
        self.current = Locked(base)
        self.user = user
        self.userOnly = userOnly
    }

    /// Makes `newBase` the base of every later read, and returns the one it replaces. Readers
    /// holding a snapshot keep reading the base of their snapshot.
    /// - Throws: `.invalidArgument` for the user database itself or a custom comparator.
    @discardableResult
    public func replaceBase(with newBase: LevelDB) throws -> LevelDB {
        guard newBase !== user, newBase.path != user.path else {
            throw KVDocsError(
                .invalidArgument, "the base and the user layer must be two databases (both are \(user.path))",
                path: user.path)
        }
        guard newBase.comparator == nil else {
            throw KVDocsError(
                .invalidArgument, "layered databases compare keys bytewise; \(newBase.path) has a custom comparator")
        }
        return current.withLock { old in
            let previous = old
            old = newBase
            return previous
        }
    }

    /// The user database's directory.
    public var name: String { user.path }

    /// The merged value of `key`: the user layer's, else (unless the user deleted it) the base's.
    public func value(forKey key: [UInt8]) throws -> [UInt8]? {
        try gate.withReadLock {
            try Self.value(key, base: LevelDBReader(base), user: LevelDBReader(user), userOnly: userOnly)
        }
    }

    /// A cursor over the merged entries of `range`, in `order`.
    public func scan(_ range: KeyRange, order: ScanOrder) throws -> any KeyValueCursor {
        try gate.withReadLock {
            try MergedCursor(
                base: base.entries(range, order: order), user: user.entries(range, order: order), order: order,
                userName: user.path, userOnly: userOnly)
        }
    }

    /// A reader of both layers as they are now (one snapshot of each).
    public func snapshotReader() throws -> any SnapshotReader {
        try gate.withReadLock {
            LayeredSnapshotReader(base: try base.snapshot(), user: try user.snapshot(), userOnly: userOnly)
        }
    }

    /// Runs `body` while no read starts: reads that started before go on over the layers as
    /// they were, later ones start after `body` (a base replacement swaps the base and
    /// rewrites the user's derived data in several batches under it).
    /// REQUIRES: `body` does not read through this store.
    package func withReadsHeld<R>(_ body: () throws -> R) rethrows -> R {
        try gate.withWriteLock(body)
    }

    /// Applies `batch` to the user database, atomically: puts as tagged values, deletes as
    /// tombstones where the base holds the key, else as deletes.
    public func write(_ batch: WriteBatch, sync: Bool) throws {
        try user.write(try layerBatch(batch), sync: sync)
    }

    /// Runs `body` under the user database's writer lock.
    public func withWriterLock<R>(_ body: () throws -> R) rethrows -> R {
        try user.withWriterLock(body)
    }

    /// Runs `body` under the user database's writer lock, refusing a nested write.
    public func withWriteTransaction<R>(_ body: () throws -> R) throws -> R {
        try user.withWriteTransaction(body)
    }

    /// `batch` as the user layer stores it.
    func layerBatch(_ batch: WriteBatch) throws -> WriteBatch {
        let layered = WriteBatch()
        for operation in batch.operations {
            switch operation {
            case .put(let key, let value):
                var tagged = [Self.present]
                tagged.reserveCapacity(value.count + 1)
                tagged.append(contentsOf: value)
                layered.put(key, tagged)
            case .delete(let key):
                if !userOnly.contains(where: { $0.contains(key) }), try base.get(key) != nil {
                    layered.put(key, [Self.tombstone])
                } else {
                    layered.delete(key)
                }
            }
        }
        return layered
    }

    /// The merged value of `key`.
    static func value(_ key: [UInt8], base: some KeyValueReader, user: some KeyValueReader, userOnly: [KeyRange]) throws
        -> [UInt8]?
    {
        if let stored = try user.value(forKey: key) {
            return try untag(stored, key: key, name: user.name)
        }
        if userOnly.contains(where: { $0.contains(key) }) { return nil }
        return try base.value(forKey: key)
    }

    /// The value behind a user entry's tag, or `nil` for a tombstone.
    package static func untag(_ stored: [UInt8], key: [UInt8], name: String) throws -> [UInt8]? {
        guard let tag = stored.first, tag == present || (tag == tombstone && stored.count == 1) else {
            throw KVDocsError(
                .corruption,
                "an entry of the user layer has no valid layer tag (it starts with \(stored.first.map { String(format: "0x%02x", $0) } ?? "nothing"))",
                path: name, key: key)
        }
        return tag == tombstone ? nil : Array(stored.dropFirst())
    }
}

/// A frozen state of both layers.
final class LayeredSnapshotReader: SnapshotReader {
    let base: LevelDBSnapshot
    let user: LevelDBSnapshot
    let userOnly: [KeyRange]

    init(base: LevelDBSnapshot, user: LevelDBSnapshot, userOnly: [KeyRange]) {
        self.base = base
        self.user = user
        self.userOnly = userOnly
    }

    var name: String { user.database.path }

    func value(forKey key: [UInt8]) throws -> [UInt8]? {
        try LayeredKeyValueStore.value(key, base: base.reader, user: user.reader, userOnly: userOnly)
    }

    func scan(_ range: KeyRange, order: ScanOrder) throws -> any KeyValueCursor {
        try MergedCursor(
            base: base.reader.scan(range, order: order), user: user.reader.scan(range, order: order), order: order,
            userName: name, userOnly: userOnly)
    }

    func scanWithoutChecksums(_ range: KeyRange, order: ScanOrder) throws -> any KeyValueCursor {
        try MergedCursor(
            base: base.reader.scanWithoutChecksums(range, order: order),
            user: user.reader.scanWithoutChecksums(range, order: order), order: order, userName: name,
            userOnly: userOnly)
    }

    func release() {
        base.release()
        user.release()
    }
}

/// The merge of a base scan and a user-layer scan in one order: on equal keys the user's
/// entry wins, and a tombstone hides the key.
final class MergedCursor: KeyValueCursor {
    private let base: any KeyValueCursor
    private let user: any KeyValueCursor
    private let order: ScanOrder
    private let userName: String
    private let userOnly: [KeyRange]
    private var baseHead: KeyValueEntry?
    private var userHead: KeyValueEntry?
    private var started = false

    init(
        base: any KeyValueCursor, user: any KeyValueCursor, order: ScanOrder, userName: String,
        userOnly: [KeyRange] = []
    ) {
        self.base = base
        self.user = user
        self.order = order
        self.userName = userName
        self.userOnly = userOnly
    }

    /// The next base entry outside the user-only ranges.
    private func nextBase() throws -> KeyValueEntry? {
        while let entry = try base.next({ KeyValueEntry(key: Array($0), value: Array($1)) }) {
            if userOnly.isEmpty || !userOnly.contains(where: { $0.contains(entry.key) }) { return entry }
        }
        return nil
    }

    func next<R>(_ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> R) throws -> R? {
        if !started {
            started = true
            baseHead = try nextBase()
            userHead = try user.next { KeyValueEntry(key: Array($0), value: Array($1)) }
        }
        while true {
            switch (baseHead, userHead) {
            case (nil, nil):
                return nil
            case (let b?, nil):
                baseHead = try nextBase()
                return try Self.lend(b.key, b.value, body)
            case (let b, let u?):
                let c = b.map { compareBytes($0.key, u.key) } ?? (order == .forward ? 1 : -1)
                if b != nil, order == .forward ? c < 0 : c > 0 {
                    baseHead = try nextBase()
                    return try Self.lend(b!.key, b!.value, body)
                }
                if c == 0 { baseHead = try nextBase() }
                userHead = try user.next { KeyValueEntry(key: Array($0), value: Array($1)) }
                guard let value = try LayeredKeyValueStore.untag(u.value, key: u.key, name: userName) else { continue }
                return try Self.lend(u.key, value, body)
            }
        }
    }

    private static func lend<R>(
        _ key: [UInt8], _ value: [UInt8], _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> R
    ) rethrows -> R {
        try key.withUnsafeBytes { k in try value.withUnsafeBytes { v in try body(k, v) } }
    }
}
