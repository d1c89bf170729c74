import KVSupport

/// The narrow ordered key-value interface that the text and document layers read
/// through: a point read and a scan of a key range in either direction, both at one
/// consistent state of the data.
///
/// `KeyValueReader` is the storage seam. LevelDB implements it today, through
/// ``LevelDBReader`` (the latest state, or a ``LevelDBSnapshot`` for a fixed one); layered
/// databases and other backends implement it too. Writes go through a ``WriteBatch``
/// applied atomically by the store that owns the data.
///
/// **Invariants.** Every read of one reader sees the same state: a reader made from a
/// snapshot never sees a later write. Keys compare bytewise (or by the store's
/// comparator), and a scan yields each key of its range once, in order.
public protocol KeyValueReader {
    /// A name for messages: where the data is (LevelDB: the database's directory).
    var name: String { get }

    /// The value stored under `key`, or `nil`.
    func value(forKey key: [UInt8]) throws -> [UInt8]?

    /// Lends the value stored under `key` to `body` (`nil` when the key is missing), valid
    /// only during `body`: for readers that parse a value in place. By default a copy read
    /// with ``value(forKey:)``; LevelDB's readers lend the buffer `leveldb_get` returns.
    func withValue<R>(forKey key: [UInt8], _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R

    /// A cursor over the entries of `range`, in `order`.
    func scan(_ range: KeyRange, order: ScanOrder) throws -> any KeyValueCursor

    /// ``scan(_:order:)`` of large derived values (a vector index's packed blocks) that
    /// does not verify the storage's per-block checksums where it has them: LevelDB's
    /// `verify_checksums`, whose CRC32C (the portable one in Debian's LevelDB, about four
    /// instructions a byte) cost 84% of a vector scan's instructions. LevelDB still checks
    /// them in compactions (``LevelDBOptions/paranoidChecks``), `verify` reads the same values
    /// with them, and the values themselves carry their own structure checks. By default
    /// ``scan(_:order:)``.
    func scanWithoutChecksums(_ range: KeyRange, order: ScanOrder) throws -> any KeyValueCursor

    /// A forward cursor over the entries of several ranges, range after range.
    /// REQUIRES: `ranges` in increasing order and disjoint. By default, one ``scan(_:order:)``
    /// after the other; LevelDB's readers seek one iterator instead.
    func scan(ranges: [KeyRange]) throws -> any KeyValueCursor

    /// The number of entries in `range`. By default, a scan that counts what it yields;
    /// LevelDB's readers step an iterator without handing out the entries.
    func count(_ range: KeyRange) throws -> Int

    /// Runs `body`, whose reads inside a write transaction a store checking for other
    /// writers (etcd) need not check at commit: the caller guarantees that any other writer
    /// that changes what `body` reads also changes a key the transaction reads outside it
    /// (a text index's segments, immutable until a merge that rewrites its merge state and
    /// statistics). Reads still see the transaction's state. By default `body` just runs.
    func withUncheckedReads<R>(_ body: () throws -> R) rethrows -> R

    /// Whether each read is a round trip over a network (etcd): callers that will read many
    /// keys one by one read them in one range, or with ``values(forKeys:)``, instead. False
    /// by default.
    var readsAreRoundTrips: Bool { get }

    /// The values under `keys`, in their order (`nil` for an absent key), at the reader's one
    /// state. By default one ``value(forKey:)`` after the other; a store whose reads are
    /// round trips (etcd) reads many in one request.
    func values(forKeys keys: [[UInt8]]) throws -> [[UInt8]?]
}

/// Entries of a scan, one at a time, lent to a closure without copying.
public protocol KeyValueCursor: AnyObject {
    /// Calls `body` with the next entry's key and value, which are valid only inside
    /// `body`; returns `nil` at the end of the range.
    /// - Throws: a storage error met while moving (never a silent end), or what `body` throws.
    func next<R>(_ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> R) throws -> R?

    /// ``next(_:)`` without a result: calls `body` with the next entry and returns `true`, or
    /// returns `false` at the end. Not generic, so that a hot loop over an existential
    /// cursor makes no generic call per entry; by default ``next(_:)``.
    func step(_ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Void) throws -> Bool
}

extension KeyValueCursor {
    /// ``next(_:)``, its result dropped.
    public func step(_ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Void) throws
        -> Bool
    {
        try next(body) != nil
    }
}

extension LevelDBEntries: KeyValueCursor {}

extension KeyValueReader {
    /// ``scan(_:order:)`` (the default: a store without per-block checksums to skip).
    public func scanWithoutChecksums(_ range: KeyRange, order: ScanOrder) throws -> any KeyValueCursor {
        try scan(range, order: order)
    }

    /// One ``scan(_:order:)`` after the other, forward.
    public func scan(ranges: [KeyRange]) throws -> any KeyValueCursor {
        ChainedCursor(reader: self, ranges: ranges)
    }
}

extension KeyValueReader {
    /// A local store: a point read costs less than a range read.
    public var readsAreRoundTrips: Bool { false }

    /// A copy of the value, read with ``value(forKey:)``, lent to `body`.
    public func withValue<R>(forKey key: [UInt8], _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R {
        guard let value = try value(forKey: key) else { return try body(nil) }
        return try value.withUnsafeBytes { try body($0) }
    }

    /// One ``value(forKey:)`` after the other.
    public func values(forKeys keys: [[UInt8]]) throws -> [[UInt8]?] {
        try keys.map { try value(forKey: $0) }
    }

    /// Every read is as good as checked (a store with one writer, a snapshot): `body` just runs.
    public func withUncheckedReads<R>(_ body: () throws -> R) rethrows -> R { try body() }

    /// The number of entries in `range`.
    public func count(_ range: KeyRange) throws -> Int {
        let cursor = try scan(range, order: .forward)
        var n = 0
        while try cursor.next({ _, _ in () }) != nil { n += 1 }
        return n
    }
}

/// The writable side of the storage seam: atomic batches, snapshots, and the lock that
/// serializes the read-modify-write sequences of the layers above.
///
/// **Invariants.** ``write(_:sync:)`` applies a batch entirely or not at all; a reader from
/// ``snapshotReader()`` sees exactly the writes committed before it was made; while one
/// thread is inside ``withWriterLock(_:)``, no other thread of this process is.
///
/// **Other writers.** A store that one process owns (LevelDB: its lock file) needs no more:
/// its writer lock excludes every other writer. A store that other processes write at the
/// same time checks each transaction when it commits instead: a ``write(_:sync:)`` inside
/// ``transact(attempts:_:)`` whose reads another writer has changed since throws a
/// ``KVDocsError/writeConflict(_:path:key:)`` having written nothing, and `transact` runs
/// the body again on the new state.
public protocol KeyValueStore: KeyValueReader, Sendable {
    /// Applies `batch` atomically; with `sync`, durably before returning.
    func write(_ batch: WriteBatch, sync: Bool) throws
    /// A reader of the data as it is now, unaffected by later writes, until released.
    func snapshotReader() throws -> any SnapshotReader
    /// Runs `body` holding the store's writer lock (reentrant): no other holder runs meanwhile.
    func withWriterLock<R>(_ body: () throws -> R) rethrows -> R
    /// Runs `body` as a write transaction: holding the writer lock, and refusing to start
    /// inside another holder of it on the same thread.
    /// - Throws: `.invalidArgument` for a nested write, or what `body` throws.
    func withWriteTransaction<R>(_ body: () throws -> R) throws -> R
    /// Runs `body` as a write transaction (``withWriteTransaction(_:)``); when the store
    /// reports that another writer changed what `body` read (a retryable ``KVDocsError/Kind/conflict``),
    /// runs it again from the start, at most `attempts` times in all, then throws that conflict.
    ///
    /// `body` must be re-runnable: it reads and writes through the store, and defers every
    /// other effect until `transact` returns. By default (LevelDB, layered stores) a store
    /// has no other writers to give way to, and `body` runs once.
    /// - Throws: `.invalidArgument` for `attempts` below 1 or a nested write, what `body`
    ///   throws, or the last conflict.
    func transact<R>(attempts: Int, _ body: () throws -> R) throws -> R
    /// The most operations one ``write(_:sync:)`` may hold, when the store bounds them (etcd:
    /// its transactions' operations); `nil` (LevelDB) for no bound. Writers that split their
    /// work into batches (index builds, ``deleteAll(in:batchSize:sync:)``) keep under it.
    var maximumBatchCount: Int? { get }
}

/// A reader of one frozen state of a store.
public protocol SnapshotReader: KeyValueReader {
    /// Frees the snapshot; later reads fail.
    func release()
}

extension KeyValueStore {
    /// No bound: LevelDB applies a batch of any size.
    public var maximumBatchCount: Int? { nil }

    /// One write transaction: a store whose writer lock excludes every other writer never
    /// conflicts, so `body` runs once.
    /// - Throws: `.invalidArgument` for `attempts` below 1 or a nested write, what `body` throws.
    public func transact<R>(attempts: Int, _ body: () throws -> R) throws -> R {
        guard attempts >= 1 else {
            throw KVDocsError(
                .invalidArgument, "a write transaction needs at least 1 attempt, not \(attempts)", path: name)
        }
        return try withWriteTransaction(body)
    }

    /// Deletes every key in `range` in batches of `batchSize` (each atomic, the whole not),
    /// returning how many were deleted.
    /// - Throws: `.invalidArgument` for a `batchSize` below 1, storage errors.
    @discardableResult
    public func deleteAll(in range: KeyRange, batchSize: Int = 10_000, sync: Bool = false) throws -> Int {
        guard batchSize >= 1 else {
            throw KVDocsError(.invalidArgument, "deleteAll: batchSize must be at least 1, not \(batchSize)", path: name)
        }
        return try deleteKeys(of: try scan(range, order: .forward), batchSize: batchSize, sync: sync)
    }

    /// Deletes every key `cursor` yields, in atomic batches of `batchSize`, at most half
    /// ``maximumBatchCount``: a store whose transactions compare what they read (etcd) also
    /// compares each key deleted, which was read.
    func deleteKeys(of cursor: any KeyValueCursor, batchSize: Int, sync: Bool) throws -> Int {
        let batchSize = min(batchSize, maximumBatchCount.map { max(1, $0 / 2 - 2) } ?? batchSize)
        let batch = WriteBatch()
        var deleted = 0
        while try cursor.next({ key, _ in batch.delete(key) }) != nil {
            deleted += 1
            if batch.count >= batchSize {
                try write(batch, sync: sync)
                batch.clear()
            }
        }
        if batch.count > 0 { try write(batch, sync: sync) }
        return deleted
    }
}

extension LevelDB: KeyValueStore {
    /// The database's directory.
    public var name: String { path }

    /// The value under `key` in the latest state.
    public func value(forKey key: [UInt8]) throws -> [UInt8]? { try get(key) }

    /// Lends the value under `key` in the latest state: LevelDB's own buffer, no copy.
    public func withValue<R>(forKey key: [UInt8], _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R {
        try withValue(forKey: key, options: LevelDBReadOptions(), body)
    }

    /// A cursor over `range` in the latest state.
    public func scan(_ range: KeyRange, order: ScanOrder) throws -> any KeyValueCursor {
        try entries(range, order: order)
    }

    /// A cursor over `range` in the latest state, LevelDB's block checksums not verified.
    public func scanWithoutChecksums(_ range: KeyRange, order: ScanOrder) throws -> any KeyValueCursor {
        try entries(range, order: order, options: LevelDBReadOptions(verifyChecksums: false))
    }

    /// A forward cursor over several ranges through one iterator, in the latest state.
    /// REQUIRES: `ranges` in increasing order and disjoint.
    public func scan(ranges: [KeyRange]) throws -> any KeyValueCursor {
        try RangesCursor(database: self, ranges: ranges, options: LevelDBReadOptions())
    }

    /// The number of entries in `range` in the latest state.
    public func count(_ range: KeyRange) throws -> Int {
        try LevelDBCursor(database: self, options: LevelDBReadOptions()).count(in: range)
    }

    /// A reader of a new ``LevelDBSnapshot``.
    public func snapshotReader() throws -> any SnapshotReader {
        SnapshotKeyValueReader(try snapshot())
    }
}

/// A ``SnapshotReader`` over a LevelDB ``LevelDBSnapshot``.
package final class SnapshotKeyValueReader: SnapshotReader {
    package let snapshot: LevelDBSnapshot
    private let reader: LevelDBReader

    init(_ snapshot: LevelDBSnapshot) {
        self.snapshot = snapshot
        self.reader = snapshot.reader
    }

    package var name: String { reader.name }
    package func value(forKey key: [UInt8]) throws -> [UInt8]? { try reader.value(forKey: key) }
    package func withValue<R>(forKey key: [UInt8], _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R {
        try reader.withValue(forKey: key, body)
    }
    package func scan(_ range: KeyRange, order: ScanOrder) throws -> any KeyValueCursor {
        try reader.scan(range, order: order)
    }
    package func scanWithoutChecksums(_ range: KeyRange, order: ScanOrder) throws -> any KeyValueCursor {
        try reader.scanWithoutChecksums(range, order: order)
    }
    package func scan(ranges: [KeyRange]) throws -> any KeyValueCursor { try reader.scan(ranges: ranges) }
    package func count(_ range: KeyRange) throws -> Int { try reader.count(range) }
    package func release() { snapshot.release() }
}

/// A ``KeyValueReader`` over a LevelDB ``LevelDB``: the latest state, or the state of a
/// snapshot when the read options carry one.
public struct LevelDBReader: KeyValueReader {
    /// The database read.
    public let database: LevelDB
    /// The options of every read: with a snapshot, reads see its state; without one, the latest.
    public let options: LevelDBReadOptions

    /// A reader of `database` with `options`.
    /// - Parameters:
    ///   - database: the database to read.
    ///   - options: the options of every read; set ``LevelDBReadOptions/snapshot`` to read one frozen state.
    public init(_ database: LevelDB, options: LevelDBReadOptions = LevelDBReadOptions()) {
        self.database = database
        self.options = options
    }

    /// The database's directory.
    public var name: String { database.path }

    /// The value stored under `key` at the reader's state, or `nil`.
    /// - Throws: `.closed` after ``LevelDB/close()`` or the release of the snapshot; storage errors.
    public func value(forKey key: [UInt8]) throws -> [UInt8]? {
        try database.get(key, options: options)
    }

    /// Lends the value stored under `key` at the reader's state to `body` (LevelDB's own
    /// buffer, valid only during `body`), or `nil` when the key is missing.
    /// - Throws: as ``value(forKey:)``, or what `body` throws.
    public func withValue<R>(forKey key: [UInt8], _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R {
        try database.withValue(forKey: key, options: options, body)
    }

    /// A cursor over the entries of `range`, in `order`, at the reader's state.
    /// - Throws: `.closed` after ``LevelDB/close()`` or the release of the snapshot; storage
    ///   errors. The cursor's ``KeyValueCursor/next(_:)`` throws the errors met while moving.
    public func scan(_ range: KeyRange, order: ScanOrder = .forward) throws -> any KeyValueCursor {
        try database.entries(range, order: order, options: options)
    }

    /// ``scan(_:order:)`` at the reader's state with LevelDB's block checksums not verified.
    public func scanWithoutChecksums(_ range: KeyRange, order: ScanOrder) throws -> any KeyValueCursor {
        var unchecked = options
        unchecked.verifyChecksums = false
        return try database.entries(range, order: order, options: unchecked)
    }

    /// A forward cursor over several ranges through one iterator, at the reader's state.
    /// REQUIRES: `ranges` in increasing order and disjoint.
    public func scan(ranges: [KeyRange]) throws -> any KeyValueCursor {
        try RangesCursor(database: database, ranges: ranges, options: options)
    }

    /// The number of entries in `range` at the reader's state.
    /// - Throws: `.closed` after ``LevelDB/close()`` or the release of the snapshot; storage errors.
    public func count(_ range: KeyRange) throws -> Int {
        try LevelDBCursor(database: database, options: options).count(in: range)
    }
}

extension LevelDBSnapshot {
    /// A reader of the database as this snapshot froze it.
    public var reader: LevelDBReader { LevelDBReader(database, options: readOptions()) }
}
