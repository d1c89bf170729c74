import Foundation
import GRDB
import KVDocs

/// The record both stores hold.
struct Person: Codable, FetchableRecord, PersistableRecord {
    var id: String
    var name: String
    var age: Int
    var city: String
    var email: String
    var score: Double
    static let databaseTableName = "person"

    static func make(_ i: Int, _ rng: inout BenchRandom) -> Person {
        Person(id: String(format: "p%08d", i), name: "Person \(i)", age: Int(rng.next() % 80) + 10,
               city: "City \(rng.next() % 50)", email: "p\(i)@example.org", score: Double(rng.next() % 10_000) / 100)
    }
}

/// SQLite the way a Swift user would use it: GRDB, a Codable record, WAL mode
/// (synchronous NORMAL, as durable as LevelDB without sync), the same indexes, the same batches.
func openSQLite(_ path: String) throws -> DatabaseQueue {
    var config = Configuration()
    config.prepareDatabase { db in
        try db.execute(sql: "PRAGMA journal_mode = WAL")
        try db.execute(sql: "PRAGMA synchronous = NORMAL")
    }
    return try DatabaseQueue(path: path, configuration: config)
}

extension Bench {
    var documentCount: Int { quick ? 2_000 : min(data.n, 100_000) }

    static let indexSets: [Int: [(String, [String], Bool)]] = [
        0: [],
        1: [("by_city", ["city"], false)],
        3: [("by_city", ["city"], false), ("by_age", ["age"], false), ("by_email", ["email"], true)],
    ]

    func kvdocsStore(_ indexes: Int) throws -> (KVDocs.Database, DocumentStore) {
        let db = try KVDocs.Database(path: freshPath("docs"))
        let defs = (Self.indexSets[indexes] ?? []).map { IndexDefinition(name: $0.0, fields: $0.1.map { FieldPath(stringLiteral: $0) }, unique: $0.2) }
        let store = try DocumentStore(database: db, schema: try Schema(collections: ["person": CollectionSchema(primaryKey: "id", indexes: defs)]))
        return (db, store)
    }

    func sqliteStore(_ indexes: Int) throws -> DatabaseQueue {
        let queue = try openSQLite(freshPath("sqlite") + ".sqlite")
        try queue.write { db in
            try db.create(table: "person") { t in
                t.primaryKey("id", .text)
                t.column("name", .text); t.column("age", .integer); t.column("city", .text)
                t.column("email", .text); t.column("score", .double)
            }
            for (name, fields, unique) in Self.indexSets[indexes] ?? [] {
                try db.create(index: name, on: "person", columns: fields, unique: unique)
            }
        }
        return queue
    }

    func people() -> [Person] {
        var rng = BenchRandom(seed: 11)
        return (0..<documentCount).map { Person.make($0, &rng) }
    }

    func runDocuments() throws {
        let people = people()
        let n = people.count
        let batches = stride(from: 0, to: n, by: 1000).map { Array(people[$0..<min($0 + 1000, n)]) }
        for indexes in [0, 1, 3] {
            try measure("documents", "insert (\(indexes) secondary indexes)", "kvdocs") {
                let (db, store) = try kvdocsStore(indexes)
                defer { db.close() }
                let start = now()
                for batch in batches { try store.write { b in for p in batch { try b.insert("person", encoding: p) } } }
                return (now() - start, n, [:])
            }
            try measure("documents", "insert (\(indexes) secondary indexes)", "sqlite") {
                let queue = try sqliteStore(indexes)
                let start = now()
                for batch in batches { try queue.write { db in for p in batch { try p.insert(db) } } }
                return (now() - start, n, [:])
            }
        }
        // Reads and updates on stores with 3 indexes.
        let (db, store) = try kvdocsStore(3)
        defer { db.close() }
        for batch in batches { try store.write { b in for p in batch { try b.insert("person", encoding: p) } } }
        let queue = try sqliteStore(3)
        for batch in batches { try queue.write { db in for p in batch { try p.insert(db) } } }
        let typed = try store.collection("person", of: Person.self)
        var rng = BenchRandom(seed: 12)
        let lookups = (0..<min(n, 20_000)).map { _ in people[Int(rng.next() % UInt64(n))].id }
        try measure("documents", "get by primary key", "kvdocs") {
            let start = now()
            for id in lookups { _ = try typed.get(id: .string(id)) }
            return (now() - start, lookups.count, [:])
        }
        try measure("documents", "get by primary key", "sqlite") {
            let start = now()
            try queue.read { db in for id in lookups { _ = try Person.fetchOne(db, key: id) } }
            return (now() - start, lookups.count, [:])
        }
        let queries = quick ? 200 : 2_000
        try measure("documents", "indexed equality (city = ?, limit 20)", "kvdocs") {
            let start = now()
            for i in 0..<queries { _ = try typed.find(Query().where("city", .equal(.string("City \(i % 50)"))).limit(20)) }
            return (now() - start, queries, [:])
        }
        try measure("documents", "indexed equality (city = ?, limit 20)", "sqlite") {
            let start = now()
            try queue.read { db in for i in 0..<queries { _ = try Person.filter(Column("city") == "City \(i % 50)").limit(20).fetchAll(db) } }
            return (now() - start, queries, [:])
        }
        try measure("documents", "indexed range (age in [a, a+2), limit 50)", "kvdocs") {
            let start = now()
            for i in 0..<queries {
                let a = 10 + i % 78
                _ = try typed.find(Query().where("age", .greaterOrEqual(.int(Int64(a)))).where("age", .less(.int(Int64(a + 2)))).limit(50))
            }
            return (now() - start, queries, [:])
        }
        try measure("documents", "indexed range (age in [a, a+2), limit 50)", "sqlite") {
            let start = now()
            try queue.read { db in
                for i in 0..<queries {
                    let a = 10 + i % 78
                    _ = try Person.filter(Column("age") >= a && Column("age") < a + 2).limit(50).fetchAll(db)
                }
            }
            return (now() - start, queries, [:])
        }
        // Updates that move index entries (age and city change), in batches of 1000.
        let updates = Array(people.prefix(min(n, 20_000)))
        try measure("documents", "update moving index entries", "kvdocs") {
            let start = now()
            for chunk in stride(from: 0, to: updates.count, by: 1000) {
                try store.write { b in
                    for var p in updates[chunk..<min(chunk + 1000, updates.count)] {
                        p.age += 1; p.city = "City \((p.age * 7) % 50)"
                        try b.upsert("person", encoding: p)
                    }
                }
            }
            return (now() - start, updates.count, [:])
        }
        try measure("documents", "update moving index entries", "sqlite") {
            let start = now()
            for chunk in stride(from: 0, to: updates.count, by: 1000) {
                try queue.write { db in
                    for var p in updates[chunk..<min(chunk + 1000, updates.count)] {
                        p.age += 1; p.city = "City \((p.age * 7) % 50)"
                        try p.update(db)
                    }
                }
            }
            return (now() - start, updates.count, [:])
        }
        // Deletes (the last measurement on these stores: each repeat deletes a fresh slice).
        var deleteRound = 0
        let deleteCount = min(n / (repeats * 2 + 1), 5_000)
        try measure("documents", "delete", "kvdocs") {
            let slice = people.dropFirst(deleteRound * deleteCount).prefix(deleteCount)
            deleteRound += 1
            let start = now()
            try store.write { b in for p in slice { try b.delete("person", id: .string(p.id)) } }
            return (now() - start, slice.count, [:])
        }
        deleteRound = 0
        try measure("documents", "delete", "sqlite") {
            let slice = people.dropFirst(deleteRound * deleteCount).prefix(deleteCount)
            deleteRound += 1
            let start = now()
            try queue.write { db in for p in slice { _ = try Person.deleteOne(db, key: p.id) } }
            return (now() - start, slice.count, [:])
        }
    }
}
