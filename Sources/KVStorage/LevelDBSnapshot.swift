import CLevelDB
import KVSupport

/// A consistent, read-only view of a database at the moment it was taken.
///
/// Writes made after ``LevelDB/snapshot()`` are invisible through it. A snapshot keeps
/// old versions of changed keys from being compacted away, so release long-lived ones:
/// ``release()`` does it explicitly, and it happens on deinit and on ``LevelDB/close()``.
/// After release, reads through the snapshot throw `.closed`.
///
/// <!-- doc-code: preamble=examples -->
/// ```swift
/// let snapshot = try db.snapshot()
/// try db.put("k", "new")
/// try snapshot.get("k")          // still the old value
/// try snapshot.entries(.prefix("user:")).forEach { entry in … }
/// ```
public final class LevelDBSnapshot {
    /// The database the snapshot was taken of. Kept alive by the snapshot.
    public let database: LevelDB
    private var handle: OpaquePointer?
    /// C read options through the snapshot with the default flags, made once for all the
    /// snapshot's reads (a transaction reads through them many times). Used only while
    /// ``handle`` is set.
    private let defaultReadOptions: OpaquePointer

    init(database: LevelDB) throws {
        self.database = database
        let options: OpaquePointer = leveldb_readoptions_create()
        defaultReadOptions = options
        // Thrown after every stored property is set, an error still runs deinit, which
        // destroys the options.
        handle = try database.withHandle { db in
            let snapshot: OpaquePointer = leveldb_create_snapshot(db)
            leveldb_readoptions_set_verify_checksums(options, 1)
            leveldb_readoptions_set_fill_cache(options, 1)
            leveldb_readoptions_set_snapshot(options, snapshot)
            database.register(.snapshot(snapshot), owner: self)
            return snapshot
        }
    }

    deinit {
        database.free(ownedBy: self)
        leveldb_readoptions_destroy(defaultReadOptions)
    }

    /// Releases the snapshot now. Calling it again does nothing.
    public func release() {
        database.free(ownedBy: self)
        handle = nil
    }

    /// Whether the snapshot can still be read: not released and its database open.
    public var isValid: Bool { handle != nil && !database.isClosed }

    /// The C snapshot. REQUIRES: called inside `withHandle` of `database` (the database is open).
    func cHandle(for db: LevelDB) throws -> OpaquePointer {
        guard db === database else {
            throw KVDocsError(
                .invalidArgument, "the snapshot belongs to the database at \(database.path), not \(db.path)",
                path: db.path)
        }
        guard let handle else {
            throw KVDocsError(.closed, "the snapshot of \(database.path) was released", path: database.path)
        }
        return handle
    }

    /// The C read options of `options` (which name this snapshot) when they are the
    /// default flags: made once; `nil` for other flags. REQUIRES: called inside `withHandle`
    /// of `db`.
    func cachedReadOptions(_ options: LevelDBReadOptions, for db: LevelDB) throws -> OpaquePointer? {
        _ = try cHandle(for: db)
        return options.verifyChecksums && options.fillCache ? defaultReadOptions : nil
    }

    /// Read options reading through this snapshot.
    public func readOptions(verifyChecksums: Bool = true, fillCache: Bool = true) -> LevelDBReadOptions {
        LevelDBReadOptions(verifyChecksums: verifyChecksums, fillCache: fillCache, snapshot: self)
    }

    /// The value under `key` as of the snapshot, or `nil`.
    /// - Throws: `.closed` after ``release()`` or ``LevelDB/close()``; storage errors.
    public func get<Key: ByteRepresentable>(_ key: Key) throws -> [UInt8]? {
        try database.get(key, options: readOptions())
    }

    /// The value under `key` as of the snapshot decoded as `type`, or `nil`.
    /// - Throws: `.closed` after ``release()`` or ``LevelDB/close()``; `.decoding` when the
    ///   bytes are not a `type`; storage errors.
    public func get<Key: ByteRepresentable, Value: ByteDecodable>(_ key: Key, as type: Value.Type) throws -> Value? {
        try database.get(key, as: type, options: readOptions())
    }

    /// The entries of `range` as of the snapshot. See ``LevelDB/entries(_:order:limit:options:)``.
    /// - Throws: `.closed` after ``release()`` or ``LevelDB/close()``; `.invalidArgument`
    ///   for a negative limit.
    public func entries(_ range: KeyRange = .all, order: ScanOrder = .forward, limit: Int? = nil) throws
        -> LevelDBEntries
    {
        try database.entries(range, order: order, limit: limit, options: readOptions())
    }
}

// A snapshot's handle is released without locking; it belongs to the thread that took it.
@available(*, unavailable)
extension LevelDBSnapshot: Sendable {}

extension LevelDB {
    /// Takes a snapshot of the current state. See ``LevelDBSnapshot``.
    /// - Throws: `.closed`.
    public func snapshot() throws -> LevelDBSnapshot {
        try LevelDBSnapshot(database: self)
    }
}
