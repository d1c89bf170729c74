import CBench
import Foundation
import KVDocs

/// Options shared by the Swift and C sides of a raw workload.
struct RawOptions {
    var writeBuffer = 0, blockSize = 0, cache = 0, bloomBits = 0
    var snappy = true

    var swift: LevelDBOptions {
        var o = LevelDBOptions()
        if writeBuffer > 0 { o.writeBufferSize = writeBuffer }
        if blockSize > 0 { o.blockSize = blockSize }
        if cache > 0 { o.blockCacheCapacity = cache }
        o.bloomFilterBitsPerKey = bloomBits > 0 ? bloomBits : nil  // the C side gets the same
        o.compression = snappy ? .snappy : .none
        return o
    }

    var c: cb_options {
        cb_options(
            write_buffer_size: writeBuffer, block_size: blockSize, cache_capacity: cache, bloom_bits: Int32(bloomBits),
            compression: snappy ? 1 : 0)
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
}

/// The C baseline's handle.
final class CDatabase {
    let handle: OpaquePointer
    init(path: String, options: RawOptions) throws {
        var error: UnsafeMutablePointer<CChar>? = nil
        guard let h = cb_open(path, options.c, &error) else {
            defer { free(error) }
            throw BenchError(description: error.map { String(cString: $0) } ?? "cb_open failed")
        }
        handle = h
    }
    deinit { cb_close(handle) }

    static func check(_ seconds: Double, _ error: UnsafeMutablePointer<CChar>?) throws -> Double {
        if seconds < 0 {
            defer { free(error) }
            throw BenchError(description: error.map { String(cString: $0) } ?? "C workload failed")
        }
        return seconds
    }
}

extension Bench {
    // MARK: Swift workloads (through the wrapper, as a user would write them)

    func swiftFill(_ db: LevelDB, random: Bool, count: Int? = nil, batch: Int = 1, sync: Bool = false) throws -> Double
    {
        let n = count ?? data.n
        let start = now()
        if batch <= 1 {
            for i in 0..<n {
                let k = random ? Int(data.order[i]) : i
                try db.put(data.key(k), data.value(i), sync: sync)
            }
        } else {
            let b = WriteBatch()
            for i in 0..<n {
                b.put(data.key(random ? Int(data.order[i]) : i), data.value(i))
                if (i + 1) % batch == 0 || i == n - 1 {
                    try db.write(b, sync: sync)
                    b.clear()
                }
            }
        }
        return now() - start
    }

    func swiftReadRandom(_ db: LevelDB, missing: Bool = false, borrowed: Bool = false) throws -> (Double, Int) {
        var hits = 0
        let start = now()
        for i in 0..<data.n {
            let k = Int(data.order[i])
            let key = missing ? data.missingKeys[(k * 16)..<(k * 16 + 16)] : data.key(k)
            if borrowed {
                if try db.withValue(forKey: key, { $0 != nil }) { hits += 1 }
            } else if try db.get(key) != nil {
                hits += 1
            }
        }
        return (now() - start, hits)
    }

    func swiftReadSeq(_ db: LevelDB, reverse: Bool, copying: Bool = false) throws -> (Double, Int) {
        var count = 0
        var bytes = 0
        let start = now()
        if copying {
            let entries = try db.entries(order: reverse ? .reverse : .forward)
            while let entry = try entries.next() {
                bytes += entry.key.count + entry.value.count
                count += 1
            }
        } else {
            count = try db.forEach(order: reverse ? .reverse : .forward) { k, v in bytes += k.count + v.count }
        }
        return (now() - start, count + (bytes == 0 ? 1 : 0))
    }

    func swiftSeekRandom(_ db: LevelDB) throws -> (Double, Int) {
        var hits = 0
        let start = now()
        let cursor = try db.makeCursor()
        for i in 0..<data.n {
            let key = data.key(Int(data.order[i]))
            try cursor.seek(to: key)
            if try cursor.isValid {
                let same = try cursor.withKey { k in k.elementsEqual(key) }
                _ = try cursor.withValue { $0.count }
                if same { hits += 1 }
            }
        }
        return (now() - start, hits)
    }

    // MARK: C workloads

    func cFill(_ db: CDatabase, random: Bool, count: Int? = nil, batch: Int = 1, sync: Bool = false) throws -> Double {
        var error: UnsafeMutablePointer<CChar>? = nil
        let n = count ?? data.n
        let seconds = data.keys.withUnsafeBufferPointer { keys in
            data.values.withUnsafeBufferPointer { values in
                data.order.withUnsafeBufferPointer { order in
                    keys.withMemoryRebound(to: CChar.self) { k in
                        values.withMemoryRebound(to: CChar.self) { v in
                            cb_fill(
                                db.handle, k.baseAddress, random ? order.baseAddress : nil, Int32(n), v.baseAddress,
                                v.count,
                                Int32(BenchData.valueSize), Int32(batch), sync ? 1 : 0, &error)
                        }
                    }
                }
            }
        }
        return try CDatabase.check(seconds, error)
    }

    func cReadRandom(_ db: CDatabase, missing: Bool = false) throws -> (Double, Int) {
        var error: UnsafeMutablePointer<CChar>? = nil
        var found: Int32 = 0
        let source = missing ? data.missingKeys : data.keys
        let seconds = source.withUnsafeBufferPointer { keys in
            data.order.withUnsafeBufferPointer { order in
                keys.withMemoryRebound(to: CChar.self) { k in
                    cb_read_random(db.handle, k.baseAddress, order.baseAddress, Int32(data.n), &found, &error)
                }
            }
        }
        return (try CDatabase.check(seconds, error), Int(found))
    }

    func cReadSeq(_ db: CDatabase, reverse: Bool) throws -> (Double, Int) {
        var error: UnsafeMutablePointer<CChar>? = nil
        var count: Int32 = 0
        let seconds = cb_read_seq(db.handle, reverse ? 1 : 0, &count, &error)
        return (try CDatabase.check(seconds, error), Int(count))
    }

    func cSeekRandom(_ db: CDatabase) throws -> (Double, Int) {
        var error: UnsafeMutablePointer<CChar>? = nil
        var found: Int32 = 0
        let seconds = data.keys.withUnsafeBufferPointer { keys in
            data.order.withUnsafeBufferPointer { order in
                keys.withMemoryRebound(to: CChar.self) { k in
                    cb_seek_random(db.handle, k.baseAddress, order.baseAddress, Int32(data.n), &found, &error)
                }
            }
        }
        return (try CDatabase.check(seconds, error), Int(found))
    }

    // MARK: The raw section: every workload on both sides

    func runRaw() throws {
        let n = data.n
        let syncCount = max(100, n / 100)
        let options = RawOptions()
        let writes: [(String, Int, (LevelDB) throws -> Double, (CDatabase) throws -> Double)] = [
            ("fillseq", n, { try self.swiftFill($0, random: false) }, { try self.cFill($0, random: false) }),
            ("fillrandom", n, { try self.swiftFill($0, random: true) }, { try self.cFill($0, random: true) }),
            (
                "fillbatch (1000/batch)", n, { try self.swiftFill($0, random: false, batch: 1000) },
                { try self.cFill($0, random: false, batch: 1000) }
            ),
            (
                "fillsync", syncCount, { try self.swiftFill($0, random: true, count: syncCount, sync: true) },
                { try self.cFill($0, random: true, count: syncCount, sync: true) }
            )
        ]
        for (name, ops, swift, c) in writes {
            try measure("raw", name, "c") {
                let db = try CDatabase(path: freshPath("c"), options: options)
                return (try c(db), ops, [:])
            }
            try measure("raw", name, "swift") {
                let db = try LevelDB(path: freshPath("swift"), options: options.swift)
                defer { db.close() }
                return (try swift(db), ops, [:])
            }
        }
        // Overwrite: a filled database, then random overwrites.
        try measure("raw", "overwrite", "c") {
            let db = try CDatabase(path: freshPath("c"), options: options)
            _ = try cFill(db, random: false, batch: 1000)
            return (try cFill(db, random: true), n, [:])
        }
        try measure("raw", "overwrite", "swift") {
            let db = try LevelDB(path: freshPath("swift"), options: options.swift)
            defer { db.close() }
            _ = try swiftFill(db, random: false, batch: 1000)
            return (try swiftFill(db, random: true), n, [:])
        }
        // Reads, on one filled database per side.
        let cdb = try CDatabase(path: freshPath("c-read"), options: options)
        _ = try cFill(cdb, random: false, batch: 1000)
        let sdb = try LevelDB(path: freshPath("swift-read"), options: options.swift)
        defer { sdb.close() }
        _ = try swiftFill(sdb, random: false, batch: 1000)
        try readWorkloads(cdb, sdb, suffix: "")
        _ = cb_compact(cdb.handle)
        try sdb.compact()
        try measureAlternating(
            "raw", "readrandom (after full compaction)",
            [("c", { (try self.cReadRandom(cdb).0, n, [:]) }), ("swift", { (try self.swiftReadRandom(sdb).0, n, [:]) })]
        )
    }

    /// Waits (up to 60 s) until both databases' background compactions have emptied level
    /// 0, so that reads on either side meet the same shape of tree.
    func drainLevelZero(_ cdb: CDatabase, _ sdb: LevelDB) {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let c = cb_level0_files(cdb.handle)
            let s = Int((try? sdb.property("leveldb.num-files-at-level0")) ?? "0") ?? 0
            if c <= 0 && s <= 0 { return }
            usleep(100_000)
        }
    }

    func readWorkloads(_ cdb: CDatabase, _ sdb: LevelDB, suffix: String) throws {
        let n = data.n
        drainLevelZero(cdb, sdb)
        // C and Swift runs alternate, repeat by repeat.
        try measureAlternating(
            "raw", "readrandom",
            [("c", { (try self.cReadRandom(cdb).0, n, [:]) }), ("swift", { (try self.swiftReadRandom(sdb).0, n, [:]) })]
        )
        try measure("raw", "readrandom (borrowed value)", "swift") {
            let r = try swiftReadRandom(sdb, borrowed: true)
            return (r.0, n, [:])
        }
        try measureAlternating(
            "raw", "readmissing",
            [
                ("c", { (try self.cReadRandom(cdb, missing: true).0, n, [:]) }),
                ("swift", { (try self.swiftReadRandom(sdb, missing: true).0, n, [:]) })
            ])
        try measureAlternating(
            "raw", "readseq",
            [
                (
                    "c",
                    {
                        let r = try self.cReadSeq(cdb, reverse: false)
                        return (r.0, r.1, [:])
                    }
                ),
                (
                    "swift",
                    {
                        let r = try self.swiftReadSeq(sdb, reverse: false)
                        return (r.0, r.1, [:])
                    }
                )
            ])
        try measure("raw", "readseq (copying sequence)", "swift") {
            let r = try swiftReadSeq(sdb, reverse: false, copying: true)
            return (r.0, r.1, [:])
        }
        try measureAlternating(
            "raw", "readreverse",
            [
                (
                    "c",
                    {
                        let r = try self.cReadSeq(cdb, reverse: true)
                        return (r.0, r.1, [:])
                    }
                ),
                (
                    "swift",
                    {
                        let r = try self.swiftReadSeq(sdb, reverse: true)
                        return (r.0, r.1, [:])
                    }
                )
            ])
        try measureAlternating(
            "raw", "seekrandom",
            [("c", { (try self.cSeekRandom(cdb).0, n, [:]) }), ("swift", { (try self.swiftSeekRandom(sdb).0, n, [:]) })]
        )
    }
}
