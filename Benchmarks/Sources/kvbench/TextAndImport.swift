import CBench
import Foundation
import GRDB
import KVDocs

extension Bench {
    /// A corpus of notes whose words follow a Zipf-like distribution.
    func corpus() -> [(id: Int, title: String, body: String)] {
        let count = quick ? 2_000 : 20_000
        var rng = BenchRandom(seed: 21)
        let syllables = ["ka", "lo", "mi", "ra", "te", "su", "no", "vi", "pe", "da", "ri", "zo", "fu", "ne", "ba"]
        let vocabulary = (0..<5000).map { i -> String in
            var w = ""
            var x = i
            repeat { w += syllables[x % syllables.count]; x /= syllables.count } while x > 0
            return w
        }
        func word() -> String {
            // Zipf-like: small indexes are much more frequent.
            let u = Double(rng.next() % 1_000_000) / 1_000_000
            return vocabulary[min(vocabulary.count - 1, Int(pow(Double(vocabulary.count), u)) - 1)]
        }
        return (0..<count).map { i in
            (i, (0..<4).map { _ in word() }.joined(separator: " "), (0..<(20 + Int(rng.next() % 60))).map { _ in word() }.joined(separator: " "))
        }
    }

    func runText() throws {
        let notes = corpus()
        let batches = stride(from: 0, to: notes.count, by: 1000).map { Array(notes[$0..<min($0 + 1000, notes.count)]) }
        let schema = try Schema(json: Data(#"{"collections": {"notes": {"primaryKey": "id", "text": [{"name": "body_text", "fields": ["title", "body"]}]}}}"#.utf8))
        var kv: (KVDocs.Database, DocumentStore)?
        try measure("text", "build index (insert documents)", "kvdocs") {
            if let (db, _) = kv { db.close() }
            let db = try KVDocs.Database(path: freshPath("text"))
            let store = try DocumentStore(database: db, schema: schema)
            let start = now()
            for batch in batches {
                try store.write { b in for n in batch { try b.insert("notes", ["id": .int(Int64(n.id)), "title": .string(n.title), "body": .string(n.body)]) } }
            }
            kv = (db, store)
            return (now() - start, notes.count, [:])
        }
        var sqlite: DatabaseQueue?
        try measure("text", "build index (insert documents)", "sqlite fts5") {
            let queue = try openSQLite(freshPath("fts") + ".sqlite")
            try queue.write { db in try db.create(virtualTable: "notes", using: FTS5()) { t in t.column("title"); t.column("body") } }
            let start = now()
            for batch in batches {
                try queue.write { db in
                    for n in batch { try db.execute(sql: "INSERT INTO notes(rowid, title, body) VALUES (?, ?, ?)", arguments: [n.id, n.title, n.body]) }
                }
            }
            sqlite = queue
            return (now() - start, notes.count, [:])
        }
        guard let (db, store) = kv, let queue = sqlite else { return }
        defer { db.close() }
        let collection = try store.collection("notes")
        // Queries from the corpus itself.
        var rng = BenchRandom(seed: 22)
        func pick() -> [String] { notes[Int(rng.next() % UInt64(notes.count))].body.split(separator: " ").map(String.init) }
        let count = quick ? 100 : 200
        let kinds: [(String, () -> String)] = [
            ("term", { pick()[3] }),
            ("AND (two terms)", { let w = pick(); return "\(w[1]) \(w[7])" }),
            ("phrase", { let w = pick(); return "\"\(w[4]) \(w[5])\"" }),
            ("prefix", { String(pick()[2].prefix(3)) + "*" }),
        ]
        for (kind, make) in kinds {
            let queries = (0..<count).map { _ in make() }
            try measure("text", "query: \(kind), top 10 by bm25", "kvdocs") {
                let start = now()
                for q in queries { _ = try collection.search(q, options: SearchOptions(limit: 10, includeDocuments: false)) }
                return (now() - start, queries.count, [:])
            }
            try measure("text", "query: \(kind), top 10 by bm25", "sqlite fts5") {
                let start = now()
                try queue.read { db in
                    for q in queries { _ = try Row.fetchAll(db, sql: "SELECT rowid, bm25(notes) FROM notes WHERE notes MATCH ? ORDER BY bm25(notes) LIMIT 10", arguments: [q]) }
                }
                return (now() - start, queries.count, [:])
            }
        }
    }

    /// The athletes case: 18,000 athletes with ~20 entries of points history, 2 indexes.
    struct Athlete: Codable, FetchableRecord, PersistableRecord {
        struct Points: Codable { var date: String; var points: Int }
        var id: String
        var name: String
        var country: String
        var sport: String
        var history: [Points]
        static let databaseTableName = "athlete"
    }

    func runImport() throws {
        let count = 18_000
        let file = freshPath("athletes") + ".jsonl"
        var rng = BenchRandom(seed: 31)
        var text = ""
        let encoder = JSONEncoder()
        for i in 0..<count {
            let history = (0..<(15 + Int(rng.next() % 11))).map { d in Athlete.Points(date: String(format: "2024-%02d-%02d", 1 + d % 12, 1 + d % 28), points: Int(rng.next() % 1000)) }
            let a = Athlete(id: String(format: "a%05d", i), name: "Athlete \(i)", country: ["AU", "NZ", "FR", "JP", "BR", "KE", "US", "DE"][Int(rng.next() % 8)],
                            sport: ["swimming", "athletics", "cycling", "rowing", "judo"][Int(rng.next() % 5)], history: history)
            text += String(decoding: try encoder.encode(a), as: UTF8.self) + "\n"
        }
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        let schema = try Schema(json: Data(#"{"collections": {"athletes": {"primaryKey": "id", "indexes": [{"name": "by_country", "fields": ["country"]}, {"name": "by_sport", "fields": ["sport"]}]}}}"#.utf8))
        // The import has a fixed size; --quick runs it once to stay within a minute.
        let importRepeats = quick ? 1 : repeats
        try measure("import", "18,000 athletes (JSON lines, 2 indexes)", "kvdocs", repeats: importRepeats) {
            let db = try KVDocs.Database(path: freshPath("import"))
            defer { db.close() }
            let store = try DocumentStore(database: db, schema: schema)
            let start = now()
            let imported = try store.importJSONLines(into: "athletes", path: file)
            return (now() - start, imported, [:])
        }
        // SQLite's C API: each line bound to one prepared INSERT … SELECT json_extract(…), so
        // SQLite parses the JSON itself; transactions of 1000 lines, as the others.
        try measure("import", "18,000 athletes (JSON lines, 2 indexes)", "sqlite-c", repeats: importRepeats) {
            var imported: Int32 = 0
            let seconds = try c { cs_import(freshPath("import-c") + ".sqlite", file, &imported, $0) }
            return (seconds, Int(imported), [:])
        }
        try measure("import", "18,000 athletes (JSON lines, 2 indexes)", "grdb", repeats: importRepeats) {
            let queue = try openSQLite(freshPath("import") + ".sqlite")
            try queue.write { db in
                try db.create(table: "athlete") { t in
                    t.primaryKey("id", .text); t.column("name", .text); t.column("country", .text); t.column("sport", .text); t.column("history", .jsonText)
                }
                try db.create(index: "by_country", on: "athlete", columns: ["country"])
                try db.create(index: "by_sport", on: "athlete", columns: ["sport"])
            }
            let start = now()
            var reader = try LineReader(path: file)
            defer { reader.close() }
            let decoder = JSONDecoder()
            var batch: [Athlete] = []
            var imported = 0
            func flush() throws {
                try queue.write { db in for a in batch { try a.insert(db) } }
                imported += batch.count
                batch.removeAll(keepingCapacity: true)
            }
            while let line = try reader.next() {
                batch.append(try decoder.decode(Athlete.self, from: line))
                if batch.count == 1000 { try flush() }
            }
            try flush()
            return (now() - start, imported, [:])
        }
    }
}
