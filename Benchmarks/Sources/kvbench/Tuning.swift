import Foundation
import KVDocs

extension Bench {
    /// A database filled with the bench keys (batches of 1000) and compacted, so reads hit table files.
    func filled(_ options: RawOptions, compact: Bool = true) throws -> LevelDB {
        let db = try LevelDB(path: freshPath("tuning"), options: options.swift)
        _ = try swiftFill(db, random: true, batch: 1000)
        if compact { try db.compact() }
        return db
    }

    func runTuning() throws {
        let n = data.n
        // Bloom filter: a missing key costs a disk read per level without one.
        for bits in [0, 10] {
            var o = RawOptions()
            o.bloomBits = bits
            let db = try filled(o)
            defer { db.close() }
            let label = bits == 0 ? "no bloom" : "bloom 10 bits"
            try measure("tuning", "bloom: readrandom", label) { (try swiftReadRandom(db).0, n, [:]) }
            try measure("tuning", "bloom: readmissing", label) { (try swiftReadRandom(db, missing: true).0, n, [:]) }
        }
        // Block cache.
        for mb in [8, 64] {
            var o = RawOptions()
            o.cache = mb << 20
            let db = try filled(o)
            defer { db.close() }
            try measure("tuning", "block cache: readrandom", "\(mb) MB cache") { (try swiftReadRandom(db).0, n, [:]) }
        }
        // Checksums: KVDocs verifies every block read from the disk by default
        // (ReadOptions.verifyChecksums); an 8 MB cache over a larger database makes reads
        // miss the cache, where the CRC-32C is paid.
        do {
            var o = RawOptions()
            o.cache = 8 << 20
            let db = try filled(o)
            defer { db.close() }
            for verify in [false, true] {
                let options = LevelDBReadOptions(verifyChecksums: verify, fillCache: true)
                let label = verify ? "verify checksums (default)" : "no verification"
                try measure("tuning", "checksums: readrandom", label) {
                    var hits = 0
                    let start = now()
                    for i in 0..<n where try db.get(data.key(Int(data.order[i])), options: options) != nil { hits += 1 }
                    return (now() - start, n, [:])
                }
                try measure("tuning", "checksums: readseq", label) {
                    let start = now()
                    let count = try db.forEach(options: LevelDBReadOptions(verifyChecksums: verify, fillCache: false)) {
                        _, _ in
                    }
                    return (now() - start, count, [:])
                }
            }
        }
        // Write buffer.
        for mb in [4, 64] {
            var o = RawOptions()
            o.writeBuffer = mb << 20
            try measure("tuning", "write buffer: fillrandom", "\(mb) MB buffer") {
                let db = try LevelDB(path: freshPath("wb"), options: o.swift)
                defer { db.close() }
                return (try swiftFill(db, random: true), n, [:])
            }
        }
        // Block size.
        for kb in [4, 16, 64] {
            var o = RawOptions()
            o.blockSize = kb << 10
            let db = try filled(o)
            defer { db.close() }
            try measure("tuning", "block size: readrandom", "\(kb) KB blocks") { (try swiftReadRandom(db).0, n, [:]) }
            try measure("tuning", "block size: readseq", "\(kb) KB blocks") {
                let r = try swiftReadSeq(db, reverse: false)
                return (r.0, r.1, [:])
            }
        }
        // Compression: throughput and bytes on disk.
        for snappy in [true, false] {
            var o = RawOptions()
            o.snappy = snappy
            try measure("tuning", "compression: fillrandom", snappy ? "snappy" : "none") {
                let path = freshPath("compression")
                let db = try LevelDB(path: path, options: o.swift)
                defer { db.close() }
                let seconds = try swiftFill(db, random: true)
                try db.compact()
                return (seconds, n, ["bytes_on_disk": directorySize(path)])
            }
        }
        // Batch size on writes.
        for batch in [1, 10, 100, 1000] {
            try measure("tuning", "batch size: fillrandom", "\(batch) per batch") {
                let db = try LevelDB(path: freshPath("batch"))
                defer { db.close() }
                return (try swiftFill(db, random: true, batch: batch), n, [:])
            }
        }
        // Sync.
        let syncCount = max(100, n / 100)
        for sync in [false, true] {
            try measure("tuning", "sync: fillrandom", sync ? "sync" : "no sync") {
                let db = try LevelDB(path: freshPath("sync"))
                defer { db.close() }
                return (try swiftFill(db, random: true, count: syncCount, sync: sync), syncCount, [:])
            }
        }
        try runKeyDesign()
    }

    /// Key design: the same records under sequential, random-order, tuple-composite and
    /// hashed keys; filling, and reading one group of 100 related records.
    func runKeyDesign() throws {
        let n = data.n
        let groups = max(1, n / 100)
        func hashed(_ i: Int) -> [UInt8] {
            var generator = BenchRandom(seed: UInt64(i))
            var h = generator.next()
            return withUnsafeBytes(of: &h) { Array($0) } + withUnsafeBytes(of: UInt64(i).bigEndian) { Array($0) }
        }
        let designs: [(String, (Int) -> [UInt8])] = [
            ("sequential", { i in Array(self.data.key(i)) }),
            ("random order", { i in Array(self.data.key(Int(self.data.order[i]))) }),
            (
                "tuple (group, id)",
                { i in
                    let k = Int(self.data.order[i])
                    return Tuple(["rec", .int(Int64(k / 100)), .int(Int64(k))]).encoded
                }
            ),
            ("hashed", { i in hashed(Int(self.data.order[i])) })
        ]
        for (name, key) in designs {
            let path = freshPath("keys")
            let db = try LevelDB(path: path)
            defer { db.close() }
            try measure("tuning", "key design: fill (1000/batch)", name) {
                let start = now()
                let b = WriteBatch()
                for i in 0..<n {
                    b.put(key(i), data.value(i))
                    if (i + 1) % 1000 == 0 || i == n - 1 {
                        try db.write(b)
                        b.clear()
                    }
                }
                return (now() - start, n, [:])
            }
            // Read 100 related records (one group): a prefix scan when the key design keeps
            // them together, else 100 point reads.
            let reads = min(groups, 2000)
            try measure("tuning", "key design: read a group of 100", name) {
                var rng = BenchRandom(seed: 9)
                var total = 0
                let start = now()
                for _ in 0..<reads {
                    let g = Int(rng.next() % UInt64(groups))
                    switch name {
                    case "tuple (group, id)":
                        total += try db.forEach(in: .prefix(Tuple(["rec", .int(Int64(g))]))) { _, v in _ = v.count }
                    case "hashed":
                        for k in (g * 100)..<min(g * 100 + 100, n) where try db.get(hashed(k)) != nil { total += 1 }
                    default:
                        total += try db.forEach(
                            in: KeyRange(
                                from: Array(data.key(g * 100)),
                                to: g * 100 + 100 < n ? Array(data.key(g * 100 + 100)) : nil)
                        ) { _, v in _ = v.count }
                    }
                }
                return (now() - start, reads, ["records": Double(total)])
            }
        }
    }
}
