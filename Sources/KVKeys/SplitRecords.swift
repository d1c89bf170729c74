import KVStorage
import KVSupport

/// Values of any size under tuple keys: a value larger than ``splitThreshold`` is stored
/// as numbered chunks, as the FoundationDB record layer does.
///
/// Layout, inside ``subspace``: a value of at most `splitThreshold` bytes is stored at
/// `key + (0,)`; a larger one as chunks of `splitThreshold` bytes at `key + (1,)`,
/// `key + (2,)`, …. Every write removes the record's previous keys in the same atomic
/// batch, so overwriting a large value with a small one leaves no stale chunks, and a
/// reader (one LevelDB iterator, hence one consistent view) never sees a mix of two versions.
///
/// <!-- doc-code: preamble=examples -->
/// ```swift
/// let blobs = try SplitRecords(database: db, subspace: Subspace(["blob"]))
/// try blobs.put(["photo", 7], jpegBytes)          // split if over 100 KB
/// let bytes = try blobs.get(["photo", 7])
/// try blobs.read(["photo", 7]) { chunk in output.append(contentsOf: chunk) }   // streamed
/// ```
public struct SplitRecords: Sendable {
    /// FoundationDB's record layer splits records above 100,000 bytes.
    public static let defaultSplitThreshold = 100_000

    /// The database the records are stored in.
    public let database: LevelDB
    /// The region of keys the records occupy; a record `key` lives under `subspace.pack(key)`.
    public let subspace: Subspace
    /// The largest value stored unsplit, and the size of each chunk.
    public let splitThreshold: Int

    /// A store of records under `subspace`.
    /// - Throws: `.invalidArgument` unless `splitThreshold` is at least 1.
    public init(database: LevelDB, subspace: Subspace, splitThreshold: Int = SplitRecords.defaultSplitThreshold) throws
    {
        guard splitThreshold >= 1 else {
            throw KVDocsError(
                .invalidArgument, "splitThreshold must be at least 1 byte (got \(splitThreshold))", path: database.path)
        }
        self.database = database
        self.subspace = subspace
        self.splitThreshold = splitThreshold
    }

    /// Stores `value` under `key`, replacing any previous value, in one atomic batch.
    ///
    /// Reads the record's existing chunk keys first, under ``LevelDB/withWriterLock(_:)``,
    /// so concurrent writers of the same record cannot leave stale chunks.
    /// - Parameters:
    ///   - key: the record's key inside ``subspace``.
    ///   - value: the value, of any size; empty included.
    ///   - sync: as for ``LevelDB/put(_:_:sync:)``.
    /// - Throws: ``KVDocsError``; on error the previous value is unchanged.
    public func put<Value: ByteRepresentable>(_ key: Tuple, _ value: Value, sync: Bool = false) throws {
        try database.withWriterLock {
            let batch = WriteBatch()
            let existing = try chunkIndexes(of: key)
            var written = Set<Int64>()
            value.withBytes { bytes in
                if bytes.count <= splitThreshold {
                    batch.put(chunkKey(key, 0), bytes)
                    written.insert(0)
                } else {
                    var index: Int64 = 1
                    var offset = 0
                    while offset < bytes.count {
                        let end = min(offset + splitThreshold, bytes.count)
                        batch.put(chunkKey(key, index), UnsafeRawBufferPointer(rebasing: bytes[offset..<end]))
                        written.insert(index)
                        index += 1
                        offset = end
                    }
                }
            }
            for stale in existing where !written.contains(stale) { batch.delete(chunkKey(key, stale)) }
            try database.write(batch, sync: sync)
        }
    }

    /// Removes the record and all its chunks, atomically. Removing a missing record is not an error.
    /// - Parameters:
    ///   - key: the record's key inside ``subspace``.
    ///   - sync: as for ``LevelDB/put(_:_:sync:)``.
    /// - Throws: storage errors; on error the record is unchanged.
    public func delete(_ key: Tuple, sync: Bool = false) throws {
        try database.withWriterLock {
            let batch = WriteBatch()
            for index in try chunkIndexes(of: key) { batch.delete(chunkKey(key, index)) }
            if batch.count > 0 { try database.write(batch, sync: sync) }
        }
    }

    /// The whole value, reassembled; `nil` when there is no record.
    /// - Throws: `.corruption` when chunks are missing or mixed with an unsplit value.
    public func get(_ key: Tuple, options: LevelDBReadOptions = LevelDBReadOptions()) throws -> [UInt8]? {
        var value: [UInt8] = []
        let found = try read(key, options: options) { value.append(contentsOf: $0) }
        return found ? value : nil
    }

    /// Streams the value to `chunk`, one stored chunk at a time, without loading it whole.
    /// Returns `false` (calling `chunk` never) when there is no record.
    ///
    /// The chunks come from one iterator, so they belong to one version of the record.
    /// A gap in the chunk numbers throws `.corruption` when it is reached, after the chunks
    /// before it were delivered.
    @discardableResult
    public func read(
        _ key: Tuple, options: LevelDBReadOptions = LevelDBReadOptions(),
        chunk: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> Bool {
        let prefix = subspace.pack(key)
        let entries = try database.entries(Self.recordRange(prefix), options: options)
        // What may come next: nil before the first chunk, 0 after an unsplit value (nothing
        // may follow), else the next chunk number.
        var next: Int64? = nil
        func accept(_ k: UnsafeRawBufferPointer, _ v: UnsafeRawBufferPointer) throws {
            guard let index = Self.chunkIndex(k, prefixLength: prefix.count) else { return }
            let valid: Bool
            if let n = next { valid = n > 0 && index == n } else { valid = index <= 1 }
            guard valid else {
                let wanted = next.map { $0 == 0 ? "no further chunk" : "chunk \($0)" } ?? "chunk 0 or 1"
                throw KVDocsError(
                    .corruption, "record \(key) in \(subspace): found chunk \(index) where \(wanted) was expected",
                    path: database.path)
            }
            try chunk(v)
            next = index == 0 ? 0 : index + 1
        }
        while try entries.next(accept) != nil {}
        return next != nil
    }

    /// The keys of all records, in tuple order.
    ///
    /// Chunk keys of records whose keys extend one another interleave in the database
    /// (`("a", 1)` is chunk 1 of `("a")`, `("a", 1, 0)` the value of `("a", 1)`), so the
    /// keys are collected and sorted: memory and time grow with the number of records.
    /// - Throws: `.decoding` when a key of the subspace is not a tuple; storage errors.
    public func keys(options: LevelDBReadOptions = LevelDBReadOptions()) throws -> [Tuple] {
        var result = Set<Tuple>()
        let entries = try database.entries(subspace.range, options: options)
        while let tuple = try entries.next({ k, _ in try subspace.unpack(k) }) {
            guard let last = tuple.elements.last, case .int(let index) = last, index >= 0 else { continue }
            result.insert(Tuple(Array(tuple.elements.dropLast())))
        }
        return result.sorted()
    }

    // MARK: Layout

    private func chunkKey(_ key: Tuple, _ index: Int64) -> [UInt8] {
        subspace.pack(key.appending(TupleElement.int(index)))
    }

    /// The keys directly under a record: `prefix + 0x00 ..< prefix + 0xFF`.
    static func recordRange(_ prefix: [UInt8]) -> KeyRange {
        KeyRange(lower: .included(prefix + [0x00]), upper: .excluded(prefix + [0xFF]))
    }

    /// The chunk number of `key` when what follows the record prefix is exactly one
    /// integer (keys of longer records that extend this record's tuple are skipped).
    static func chunkIndex(_ key: UnsafeRawBufferPointer, prefixLength: Int) -> Int64? {
        guard let rest = try? Tuple(decoding: UnsafeRawBufferPointer(rebasing: key[prefixLength...])),
            rest.count == 1, case .int(let index) = rest[0], index >= 0
        else { return nil }
        return index
    }

    /// The chunk numbers stored for `key`.
    private func chunkIndexes(of key: Tuple) throws -> [Int64] {
        let prefix = subspace.pack(key)
        var indexes: [Int64] = []
        try database.forEach(in: Self.recordRange(prefix)) { k, _ in
            if let index = Self.chunkIndex(k, prefixLength: prefix.count) { indexes.append(index) }
        }
        return indexes
    }
}
