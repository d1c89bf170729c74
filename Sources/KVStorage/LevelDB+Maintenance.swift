import CLevelDB

extension LevelDB {
    /// The value of a LevelDB property, or `nil` when LevelDB does not know the name.
    ///
    /// Known names: `leveldb.stats` (compaction statistics per level), `leveldb.sstables`
    /// (the table files of each level), `leveldb.num-files-at-level<N>` (N from 0 to 6),
    /// `leveldb.approximate-memory-usage` (bytes).
    /// - Throws: `.closed`.
    public func property(_ name: String) throws -> String? {
        try withHandle { db in
            guard let value = leveldb_property_value(db, name) else { return nil }
            defer { leveldb_free(value) }
            return String(cString: value)
        }
    }

    /// The number of table files at `level` (0...6); `nil` for a level LevelDB does not have.
    /// - Throws: `.closed`.
    public func numberOfFiles(atLevel level: Int) throws -> Int? {
        try property("leveldb.num-files-at-level\(level)").flatMap { Int($0) }
    }

    /// LevelDB's estimate of the bytes of memory it uses (memtables and block cache).
    /// - Throws: `.closed`.
    public func approximateMemoryUsage() throws -> Int? {
        try property("leveldb.approximate-memory-usage").flatMap { Int($0) }
    }

    /// The approximate bytes on disk used by the keys of `range` (compressed, in table
    /// files only: recent writes still in the write buffer count as 0).
    ///
    /// Inclusivity of the bounds does not matter at this resolution; an unbounded end
    /// means the first or last possible key.
    /// - Throws: `.closed`.
    public func approximateSize(of range: KeyRange = .all) throws -> UInt64 {
        try approximateSizes(of: [range])[0]
    }

    /// ``approximateSize(of:)`` for several ranges in one call, in the order given; no
    /// ranges give `[]`.
    /// - Throws: `.closed`.
    public func approximateSizes(of ranges: [KeyRange]) throws -> [UInt64] {
        guard !ranges.isEmpty else { return try withHandle { _ in [] } }
        // An unbounded upper end: a key above every key of bytewise order that is not absurdly long.
        let top = [UInt8](repeating: 0xFF, count: 256)
        let starts = ranges.map { $0.lower?.key ?? [] }
        let limits = ranges.map { $0.upper?.key ?? top }
        var sizes = [UInt64](repeating: 0, count: ranges.count)
        try withHandle { db in
            withCStringArrays(starts, limits) { startPointers, startLengths, limitPointers, limitLengths in
                leveldb_approximate_sizes(
                    db, Int32(ranges.count), startPointers, startLengths,
                    limitPointers, limitLengths, &sizes)
            }
        }
        return sizes
    }

    /// Compacts the table files that overlap `range` (all of them by default), discarding
    /// deleted and overwritten values and pushing data to deeper levels. Blocks until done.
    ///
    /// LevelDB's compaction reports no error to its caller: a compaction that fails (a
    /// damaged block, a full disk) stops the database's writes instead. So this method then
    /// writes an empty batch, which returns that error.
    /// - Throws: `.closed`; `.corruption` or `.ioError` (naming the file where LevelDB does)
    ///   when the compaction failed, after which every write fails the same way until the
    ///   database is reopened (and, when damaged, repaired).
    public func compact(_ range: KeyRange = .all) throws {
        try withHandle { db in
            func call(_ start: UnsafeRawBufferPointer?, _ limit: UnsafeRawBufferPointer?) {
                // NULL means "before all keys" / "after all keys".
                leveldb_compact_range(db, start?.cChars, start?.count ?? 0, limit?.cChars, limit?.count ?? 0)
            }
            switch (range.lower?.key, range.upper?.key) {
            case (nil, nil): call(nil, nil)
            case (let s?, nil): s.withUnsafeBytes { call($0, nil) }
            case (nil, let l?): l.withUnsafeBytes { call(nil, $0) }
            case (let s?, let l?): s.withUnsafeBytes { sp in l.withUnsafeBytes { call(sp, $0) } }
            }
        }
        // An empty write returns the error that stopped a background compaction, if any.
        try write(WriteBatch(), sync: false)
    }

    /// Deletes the database at `path` and its files. The database must not be open.
    /// - Throws: `.locked` when it is open, `.ioError` when files cannot be removed.
    public static func destroy(path: String, options: LevelDBOptions = LevelDBOptions()) throws {
        let c = try COptions(options)
        try withLevelDBError(path: path) { leveldb_destroy_db(c.options, path, $0) }
    }

    /// The version of the LevelDB library in use, for example `"1.23"`.
    public static var levelDBVersion: String {
        "\(leveldb_major_version()).\(leveldb_minor_version())"
    }
}

/// Lends two arrays of byte strings as C arrays of pointers and lengths.
private func withCStringArrays<R>(
    _ a: [[UInt8]], _ b: [[UInt8]],
    _ body: (
        UnsafePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>, UnsafePointer<UnsafePointer<CChar>?>,
        UnsafePointer<Int>
    ) throws -> R
) rethrows -> R {
    // Copy every string into one buffer that stays put for the call.
    let all = a + b
    // REQUIRES: a and b are not empty (approximateSizes checks), so every buffer has a base address.
    let storage = UnsafeMutableRawBufferPointer.allocate(
        byteCount: max(1, all.reduce(0) { $0 + $1.count }), alignment: 1)
    defer { storage.deallocate() }
    var pointers: [UnsafePointer<CChar>?] = []
    var offset = 0
    guard let base = storage.baseAddress else { preconditionFailure("allocate returned no memory") }
    for bytes in all {
        let start = base + offset
        bytes.withUnsafeBytes { src in
            if let base = src.baseAddress { start.copyMemory(from: base, byteCount: src.count) }
        }
        pointers.append(UnsafePointer(start.assumingMemoryBound(to: CChar.self)))
        offset += bytes.count
    }
    let lengths = all.map(\.count)
    return try pointers.withUnsafeBufferPointer { p in
        try lengths.withUnsafeBufferPointer { l in
            try body(p.baseAddress!, l.baseAddress!, p.baseAddress! + a.count, l.baseAddress! + a.count)
        }
    }
}
