import Foundation
import KVDocs

extension Bench {
    /// Opening a layered store over a shipped base: the first open (the base's tables
    /// hard-linked, or copied across file systems) and later opens, for a small base and a
    /// 100 MB one, against opening the base database alone.
    func runLayers() throws {
        let sizes = quick ? [2 << 20, 8 << 20] : [5 << 20, 100 << 20]
        var lines: [String] = []
        for target in sizes {
            let base = freshPath("layers-base")
            let (documents, bytes) = try Self.makeLayersBase(base, targetBytes: target)
            let label = "\(Int((bytes / 1e6).rounded())) MB base"
            lines.append("\(label): \(documents) documents")
            try measure("layers", "open the base database alone, \(label)", "database") {
                let t = now()
                let db = try Database(path: base)
                db.close()
                return (now() - t, 1, ["base bytes": bytes])
            }
            // Same file system: tables hard-linked.
            try measure("layers", "first open (tables linked), \(label)", "kvdocs") {
                let user = freshPath("layers-user")
                let t = now()
                let layers = try LayeredDatabase(user: user, base: base, create: true)
                let seconds = now() - t
                layers.close()
                return (seconds, 1, ["base bytes": bytes])
            }
            let user = freshPath("layers-user")
            try LayeredDatabase(user: user, base: base, create: true).close()
            try measure("layers", "later open, \(label)", "kvdocs") {
                let t = now()
                let layers = try LayeredDatabase(user: user, base: base)
                let seconds = now() - t
                layers.close()
                return (seconds, 1, ["base bytes": bytes])
            }
            // Another file system (/dev/shm): the tables are copied once.
            let shm = "/dev/shm"
            if FileManager.default.isWritableFile(atPath: shm) {
                let remote = shm + "/kvbench-layers-\(getpid())"
                defer { try? FileManager.default.removeItem(atPath: remote) }
                var copies: [String] = []
                try measure("layers", "first open (tables copied), \(label)", "kvdocs") {
                    let user = remote + "/user-" + UUID().uuidString
                    copies.append(user)
                    let t = now()
                    let layers = try LayeredDatabase(user: user, base: base, create: true)
                    let seconds = now() - t
                    layers.close()
                    return (seconds, 1, ["base bytes": bytes])
                }
                if let user = copies.first {
                    try measure("layers", "later open after a copy, \(label)", "kvdocs") {
                        let t = now()
                        let layers = try LayeredDatabase(user: user, base: base)
                        let seconds = now() - t
                        layers.close()
                        return (seconds, 1, ["base bytes": bytes])
                    }
                }
            }
        }
        FileHandle.standardError.write(Data(("  " + lines.joined(separator: "; ") + "\n").utf8))
    }

    /// A base of athletes with a secondary and a text index, written until its directory
    /// holds `targetBytes`; returns the documents and the bytes.
    static func makeLayersBase(_ path: String, targetBytes: Int) throws -> (Int, Double) {
        let db = try Database(path: path)
        defer { db.close() }
        let schema = try Schema(json: Data(#"""
            {"collections": {"athletes": {"indexes": [{"name": "by_country", "fields": ["country"]}],
              "text": [{"name": "about", "fields": ["name", "bio"]}]}}}
            """#.utf8))
        let store = try DocumentStore(database: db, schema: schema)
        var rng = BenchRandom(seed: 99)
        let words = ["swimmer", "runner", "cyclist", "rower", "sprinter", "marathon", "relay", "gold", "silver", "bronze", "record",
                     "coach", "club", "national", "junior", "senior", "champion", "final", "heat", "season", "training", "world"]
        var n = 0
        while true {
            try store.write { batch in
                for _ in 0..<5000 {
                    let bio = (0..<(40 + Int(rng.next() % 80))).map { _ in words[Int(rng.next() % UInt64(words.count))] }.joined(separator: " ")
                    try batch.insert("athletes", ["id": .int(Int64(n)), "name": .string("athlete \(n)"),
                                                  "country": .string(["AUS", "NZL", "FRA", "KEN", "JPN"][n % 5]), "bio": .string(bio),
                                                  "born": .int(Int64(1950 + Int(rng.next() % 60)))])
                    n += 1
                }
            }
            if n % 50_000 == 0 || Int(directorySize(path)) >= targetBytes {
                try db.compact()
                if Int(directorySize(path)) >= targetBytes { break }
            }
        }
        return (n, directorySize(path))
    }
}
