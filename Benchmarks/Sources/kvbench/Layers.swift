import Foundation
import KVDocs

extension Bench {
    /// Opening a layered store over a shipped base: the first open (the base's files copied
    /// byte for byte and checksummed), later opens (the files' `stat` facts compared), and a
    /// later open after the base's files were touched (their content checksummed again), for
    /// a small base and a 100 MB one, against opening the base database alone. Then base
    /// replacement over user layers of growing size, against importing the same documents.
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
                let db = try LevelDB(path: base)
                db.close()
                return (now() - t, 1, ["base bytes": bytes])
            }
            try measure("layers", "first open (base copied), \(label)", "kvdocs") {
                let user = freshPath("layers-user")
                let t = now()
                let layers = try LayeredDocumentStore(user: user, base: base, create: true)
                let seconds = now() - t
                layers.close()
                return (seconds, 1, ["base bytes": bytes])
            }
            let user = freshPath("layers-user")
            try LayeredDocumentStore(user: user, base: base, create: true).close()
            try measure("layers", "later open, \(label)", "kvdocs") {
                let t = now()
                let layers = try LayeredDocumentStore(user: user, base: base)
                let seconds = now() - t
                layers.close()
                return (seconds, 1, ["base bytes": bytes])
            }
            // The base's files touched (an app update that rewrote the same bytes): read and
            // checksummed again, nothing replaced.
            try measure("layers", "later open, base files touched, \(label)", "kvdocs") {
                for name in try FileManager.default.contentsOfDirectory(atPath: base) {
                    try FileManager.default.setAttributes([.modificationDate: Date()], ofItemAtPath: base + "/" + name)
                }
                let t = now()
                let layers = try LayeredDocumentStore(user: user, base: base)
                let seconds = now() - t
                layers.close()
                return (seconds, 1, ["base bytes": bytes])
            }
        }
        try runLayerReplacement()
        FileHandle.standardError.write(Data(("  " + lines.joined(separator: "; ") + "\n").utf8))
    }

    /// Replacing the base under user layers of text-indexed documents of growing size: the
    /// time per user document should stay flat (linear in the user layer) and the peak
    /// memory bounded; against inserting the same documents into a new store (one batch).
    func runLayerReplacement() throws {
        let counts = quick ? [300, 1000, 3000] : [300, 1000, 3000, 10_000, 30_000]
        let baseA = freshPath("layers-replace-a"), baseB = freshPath("layers-replace-b")
        _ = try Self.makeLayersBase(baseA, targetBytes: 1 << 20)
        _ = try Self.makeLayersBase(baseB, targetBytes: 1 << 20)
        let words = [
            "harbour", "river", "coach", "club", "season", "relay", "gold", "final", "heat", "junior", "world",
            "training"
        ]
        func document(_ i: Int) -> JSONValue {
            .object([
                "id": .int(Int64(1_000_000 + i)), "name": .string("user athlete \(i)"),
                "country": .string(["AUS", "NZL"][i % 2]),
                "bio": .string((0..<(30 + i % 40)).map { words[($0 * 7 + i) % words.count] }.joined(separator: " ")),
                "born": .int(Int64(1970 + i % 30))
            ])
        }
        let schema = try DocumentSchema(json: Data(Self.layersSchemaJSON.utf8))
        for n in counts {
            let user = freshPath("layers-replace-user")
            let layers = try LayeredDocumentStore(user: user, base: baseA, create: true)
            try layers.store.write { batch in for i in 0..<n { try batch.insert("athletes", document(i)) } }
            var useB = true
            try measure("layers", "replace the base under \(n) user documents", "kvdocs") {
                try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
                let before = Self.peakResidentMegabytes()
                let t = now()
                try layers.replaceBase(with: useB ? baseB : baseA)
                let seconds = now() - t
                useB.toggle()
                return (
                    seconds, n,
                    ["user documents": Double(n), "peak MB over the start": Self.peakResidentMegabytes() - before]
                )
            }
            layers.close()
            try measure("layers", "replace the base under \(n) user documents", "import") {
                let db = try LevelDB(path: freshPath("layers-replace-import"))
                defer { db.close() }
                let store = try DocumentStore(database: db, schema: schema)
                let t = now()
                try store.write { batch in for i in 0..<n { try batch.insert("athletes", document(i)) } }
                return (now() - t, n, ["user documents": Double(n)])
            }
        }
    }

    static let layersSchemaJSON = #"""
        {"collections": {"athletes": {"indexes": [{"name": "by_country", "fields": ["country"]}],
          "text": [{"name": "about", "fields": ["name", "bio"]}]}}}
        """#

    /// A base of athletes with a secondary and a text index, written until its directory
    /// holds `targetBytes`; returns the documents and the bytes.
    static func makeLayersBase(_ path: String, targetBytes: Int) throws -> (Int, Double) {
        let db = try LevelDB(path: path)
        defer { db.close() }
        let schema = try DocumentSchema(
            json: Data(
                #"""
                {"collections": {"athletes": {"indexes": [{"name": "by_country", "fields": ["country"]}],
                  "text": [{"name": "about", "fields": ["name", "bio"]}]}}}
                """#.utf8))
        let store = try DocumentStore(database: db, schema: schema)
        var rng = BenchRandom(seed: 99)
        let words = [
            "swimmer", "runner", "cyclist", "rower", "sprinter", "marathon", "relay", "gold", "silver", "bronze",
            "record",
            "coach", "club", "national", "junior", "senior", "champion", "final", "heat", "season", "training", "world"
        ]
        var n = 0
        while true {
            try store.write { batch in
                for _ in 0..<5000 {
                    let bio = (0..<(40 + Int(rng.next() % 80))).map { _ in words[Int(rng.next() % UInt64(words.count))]
                    }.joined(separator: " ")
                    try batch.insert(
                        "athletes",
                        [
                            "id": .int(Int64(n)), "name": .string("athlete \(n)"),
                            "country": .string(["AUS", "NZL", "FRA", "KEN", "JPN"][n % 5]), "bio": .string(bio),
                            "born": .int(Int64(1950 + Int(rng.next() % 60)))
                        ])
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
