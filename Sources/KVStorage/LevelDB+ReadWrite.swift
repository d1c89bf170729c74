import CLevelDB
import KVSupport

extension LevelDB {
    /// Returns the value stored under `key`, or `nil` when the key is missing.
    ///
    /// An empty value is returned as an empty array, never as `nil`.
    /// - Throws: ``KVDocsError`` (`.closed`, `.corruption`, `.ioError`).
    public func get<Key: ByteRepresentable>(_ key: Key, options: LevelDBReadOptions = LevelDBReadOptions()) throws
        -> [UInt8]?
    {
        try withValue(forKey: key, options: options) { $0.map { Array($0) } }
    }

    /// Returns the value stored under `key` decoded as `type`, or `nil` when the key is missing.
    ///
    /// ```swift
    /// let name = try db.get("user:1:name", as: String.self)
    /// ```
    /// - Throws: ``KVDocsError``; `.decoding` when the bytes are not a `type` (invalid UTF-8 for `String`).
    public func get<Key: ByteRepresentable, Value: ByteDecodable>(
        _ key: Key, as type: Value.Type, options: LevelDBReadOptions = LevelDBReadOptions()
    ) throws -> Value? {
        try withValue(forKey: key, options: options) { bytes in
            try bytes.map { try Value(storedBytes: $0) }
        }
    }

    /// Whether a value is stored under `key` (an empty value counts).
    /// - Throws: ``KVDocsError`` (`.closed`, `.corruption`, `.ioError`).
    public func contains<Key: ByteRepresentable>(_ key: Key, options: LevelDBReadOptions = LevelDBReadOptions()) throws
        -> Bool
    {
        try withValue(forKey: key, options: options) { $0 != nil }
    }

    /// Lends the value stored under `key` to `body` without copying it into Swift memory:
    /// `body` gets `nil` for a missing key. For hot paths that parse or compare the value in place.
    ///
    /// The buffer is valid only during `body`; do not let it escape.
    /// - Throws: ``KVDocsError``, or what `body` throws.
    public func withValue<Key: ByteRepresentable, R>(
        forKey key: Key,
        options: LevelDBReadOptions = LevelDBReadOptions(),
        _ body: (UnsafeRawBufferPointer?) throws -> R
    ) throws -> R {
        var length = 0
        let value = try withHandle { db in
            try withReadOptions(options) { readOptions in
                try key.withBytes { k in
                    try withLevelDBError(path: path, key: k) {
                        leveldb_get(db, readOptions, k.cChars, k.count, &length, $0)
                    }
                }
            }
        }
        guard let value else { return try body(nil) }
        // leveldb_get returns a malloc'd copy (empty values are non-NULL, length 0), which is
        // this call's until it frees it: `body` runs outside the handle's lock, so it may use
        // the database itself.
        defer { leveldb_free(value) }
        return try body(UnsafeRawBufferPointer(start: value, count: length))
    }

    /// Stores `value` under `key`, replacing any value there.
    /// - Parameters:
    ///   - key: the key; any bytes, the empty key included.
    ///   - value: the value; any bytes, the empty value included.
    ///   - sync: wait until the write reaches the disk (`fsync`), so it and every
    ///     earlier write survive a power loss or an OS crash; without it a write survives a
    ///     crash of the process, not of the machine (see ``LevelDB``, Durability).
    /// - Throws: ``KVDocsError`` (`.closed`, `.ioError`), with ``KVDocsError/key`` set to `key`.
    public func put<Key: ByteRepresentable, Value: ByteRepresentable>(_ key: Key, _ value: Value, sync: Bool = false)
        throws
    {
        try withHandle { db in
            let writeOptions = writeOptions(sync: sync)
            try key.withBytes { k in
                try value.withBytes { v in
                    try latchingWriteFailure {
                        try withLevelDBError(path: path, key: k) {
                            leveldb_put(db, writeOptions, k.cChars, k.count, v.cChars, v.count, $0)
                        }
                    }
                }
            }
        }
    }

    /// Removes `key`. Removing a missing key is not an error.
    /// - Parameters:
    ///   - key: the key to remove.
    ///   - sync: as for ``put(_:_:sync:)``: wait until the delete reaches the disk.
    /// - Throws: ``KVDocsError`` (`.closed`, `.ioError`), with ``KVDocsError/key`` set to `key`.
    public func delete<Key: ByteRepresentable>(_ key: Key, sync: Bool = false) throws {
        try withHandle { db in
            let writeOptions = writeOptions(sync: sync)
            try key.withBytes { k in
                try latchingWriteFailure {
                    try withLevelDBError(path: path, key: k) { leveldb_delete(db, writeOptions, k.cChars, k.count, $0) }
                }
            }
        }
    }

    /// Applies every operation of `batch` atomically: readers see all of them or none,
    /// and after a crash either all or none are in the database.
    /// - Parameters:
    ///   - batch: the operations, applied in the order they were added; the batch is left
    ///     as it was and can be written again.
    ///   - sync: as for ``put(_:_:sync:)``: wait until the batch reaches the disk
    ///     (one `fsync` for the whole batch).
    /// - Throws: ``KVDocsError``; on error nothing of the batch is applied.
    public func write(_ batch: WriteBatch, sync: Bool = false) throws {
        try withHandle { db in
            let writeOptions = writeOptions(sync: sync)
            try latchingWriteFailure {
                try withLevelDBError(path: path) { leveldb_write(db, writeOptions, batch.handle, $0) }
            }
        }
    }

    /// Fills a new batch with `body` and applies it atomically. If `body` throws, nothing is written.
    /// `sync` is as for ``write(_:sync:)``.
    /// - Throws: what `body` throws, or ``KVDocsError`` as ``write(_:sync:)``.
    ///
    /// ```swift
    /// try db.write { batch in
    ///     batch.put("a", "1")
    ///     batch.delete("b")
    /// }
    /// ```
    public func write(sync: Bool = false, _ body: (WriteBatch) throws -> Void) throws {
        let batch = WriteBatch()
        try body(batch)
        try write(batch, sync: sync)
    }

    /// Deletes every key in `range` (the first `limit` of them in `order`, when given) and
    /// returns how many were deleted.
    ///
    /// Keys are deleted in batches of `batchSize`: each batch is atomic, the whole deletion
    /// is not: a crash or an error part-way leaves the keys of the batches already written
    /// deleted and the others in place. Pass `batchSize: .max` to delete a range of bounded
    /// size in one atomic batch. Memory stays bounded by one batch. Complexity: one scan of
    /// the keys deleted, and one write per batch.
    ///
    /// - Parameters:
    ///   - range: the keys to delete, compared in the database's order.
    ///   - order: the direction in which keys are visited, which decides which keys a
    ///     `limit` keeps.
    ///   - limit: the most keys to delete; `nil` for all of `range`, `0` for none.
    ///   - batchSize: the most deletes per atomic batch, at least 1.
    ///   - sync: as for ``put(_:_:sync:)``, for every batch.
    /// - Returns: the number of keys deleted.
    /// - Throws: `.invalidArgument` for a `batchSize` below 1 or a negative `limit`,
    ///   storage errors.
    @discardableResult
    public func deleteRange(
        _ range: KeyRange, order: ScanOrder = .forward, limit: Int? = nil,
        batchSize: Int = 10_000, sync: Bool = false
    ) throws -> Int {
        guard batchSize >= 1 else {
            throw KVDocsError(
                .invalidArgument, "deleteRange: batchSize must be at least 1, not \(batchSize)", path: path)
        }
        if let limit, limit < 0 {
            throw KVDocsError(.invalidArgument, "deleteRange: limit must not be negative, not \(limit)", path: path)
        }
        return try deleteKeys(of: try entries(range, order: order, limit: limit), batchSize: batchSize, sync: sync)
    }

    /// Runs `body` with C read options for `options`; the shared default when possible.
    /// REQUIRES: called inside `withHandle`.
    func withReadOptions<R>(_ options: LevelDBReadOptions, _ body: (OpaquePointer) throws -> R) throws -> R {
        if options.isDefault { return try body(defaultReadOptions) }
        if let cached = try options.snapshot?.cachedReadOptions(options, for: self) { return try body(cached) }
        let snapshot = try options.snapshot?.cHandle(for: self)
        return try withCReadOptions(options, snapshot: snapshot, body)
    }
}
