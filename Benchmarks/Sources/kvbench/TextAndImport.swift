import CBench
import Foundation
import GRDB
import KVDocs

extension Bench {
    /// The athletes case: 18,000 athletes with ~20 entries of points history, 2 indexes.
    struct Athlete: Codable, FetchableRecord, PersistableRecord {
        struct Points: Codable {
            var date: String
            var points: Int
        }
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
            let history = (0..<(15 + Int(rng.next() % 11))).map { d in
                Athlete.Points(
                    date: String(format: "2024-%02d-%02d", 1 + d % 12, 1 + d % 28), points: Int(rng.next() % 1000))
            }
            let a = Athlete(
                id: String(format: "a%05d", i), name: "Athlete \(i)",
                country: ["AU", "NZ", "FR", "JP", "BR", "KE", "US", "DE"][Int(rng.next() % 8)],
                sport: ["swimming", "athletics", "cycling", "rowing", "judo"][Int(rng.next() % 5)], history: history)
            text += String(decoding: try encoder.encode(a), as: UTF8.self) + "\n"
        }
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        let schema = try DocumentSchema(
            json: Data(
                #"{"collections": {"athletes": {"primaryKey": "id", "indexes": [{"name": "by_country", "fields": ["country"]}, {"name": "by_sport", "fields": ["sport"]}]}}}"#
                    .utf8))
        // The import has a fixed size; --quick runs it once to stay within a minute.
        let importRepeats = quick ? 1 : repeats
        try measure("import", "18,000 athletes (JSON lines, 2 indexes)", "kvdocs", repeats: importRepeats) {
            let db = try KVDocs.LevelDB(path: freshPath("import"))
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
                    t.primaryKey("id", .text)
                    t.column("name", .text)
                    t.column("country", .text)
                    t.column("sport", .text)
                    t.column("history", .jsonText)
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
        // The physical floor: the batches the import writes (1000 documents each), captured
        // and replayed through the C API (Floors.swift: per document a get of its key, then
        // its record, its two index entries and its change record; the sequence record).
        try measureInsertFloor(
            "import", "18,000 athletes (JSON lines, 2 indexes)", schema: schema, collections: ["athletes"],
            documents: count,
            repeats: importRepeats
        ) { store in
            _ = try store.importJSONLines(into: "athletes", path: file)
            return (count + 999) / 1000
        }
    }
}
