import CAllocationCount
import CBench
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
        Person(
            id: String(format: "p%08d", i), name: "Person \(i)", age: Int(rng.next() % 80) + 10,
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

    /// KVDocs' indexes: each entry's key ends with the document's id, so `by_city` orders
    /// a city's entries by id, as SQLite's `(city, id)` does.
    static let indexSets: [Int: [(String, [String], Bool)]] = [
        0: [],
        1: [("by_city", ["city"], false)],
        3: [("by_city", ["city"], false), ("by_age", ["age"], false), ("by_email", ["email"], true)]
    ]

    /// The indexes a SQLite expert declares for the measured queries: the ordering column
    /// after the filtered one (`WHERE city = ? ORDER BY id` reads `(city, id)` in order, with
    /// no sort). The table's `id` is a `TEXT PRIMARY KEY`, not the rowid, so an index on
    /// `(city)` alone would hold rowids and sort every match by `id`.
    static let sqliteIndexSets: [Int: [(String, [String], Bool)]] = [
        0: [],
        1: [("by_city", ["city", "id"], false)],
        3: [("by_city", ["city", "id"], false), ("by_age", ["age", "id"], false), ("by_email", ["email"], true)]
    ]

    func sqliteStore(_ indexes: Int) throws -> DatabaseQueue {
        let queue = try openSQLite(freshPath("sqlite") + ".sqlite")
        try queue.write { db in
            try db.create(table: "person") { t in
                t.primaryKey("id", .text)
                t.column("name", .text)
                t.column("age", .integer)
                t.column("city", .text)
                t.column("email", .text)
                t.column("score", .double)
            }
            for (name, fields, unique) in Self.sqliteIndexSets[indexes] ?? [] {
                try db.create(index: name, on: "person", columns: fields, unique: unique)
            }
        }
        return queue
    }

    func people() -> [Person] {
        var rng = BenchRandom(seed: 11)
        return (0..<documentCount).map { Person.make($0, &rng) }
    }

    /// The people as C arrays for the raw SQLite side (strings duplicated once, freed at the end).
    final class CPeople {
        let count: Int
        let id, name, city, email: UnsafeMutablePointer<UnsafePointer<CChar>?>
        let age: UnsafeMutablePointer<Int64>
        let score: UnsafeMutablePointer<Double>
        var rows: cs_people { cs_people(id: id, name: name, age: age, city: city, email: email, score: score) }

        init(_ people: [Person]) {
            count = people.count
            func strings(_ f: (Person) -> String) -> UnsafeMutablePointer<UnsafePointer<CChar>?> {
                let p = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: max(1, people.count))
                for (i, person) in people.enumerated() { p[i] = UnsafePointer(strdup(f(person))) }
                return p
            }
            id = strings(\.id)
            name = strings(\.name)
            city = strings(\.city)
            email = strings(\.email)
            age = .allocate(capacity: max(1, people.count))
            score = .allocate(capacity: max(1, people.count))
            for (i, p) in people.enumerated() {
                age[i] = Int64(p.age)
                score[i] = p.score
            }
        }

        deinit {
            for p in [id, name, city, email] {
                for i in 0..<count { free(UnsafeMutablePointer(mutating: p[i])) }
                p.deallocate()
            }
            age.deallocate()
            score.deallocate()
        }
    }

    /// Runs a C timing function, turning its error into a Swift one.
    func c(_ body: (UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Double) throws -> Double {
        var error: UnsafeMutablePointer<CChar>?
        let seconds = body(&error)
        if seconds < 0 || error != nil {
            defer { free(error) }
            throw BenchError("sqlite-c: " + (error.map { String(cString: $0) } ?? "failed"))
        }
        return seconds
    }

    func openC(_ indexes: Int, covering: Bool = false) throws -> OpaquePointer {
        var error: UnsafeMutablePointer<CChar>?
        guard let db = cs_open(freshPath("sqlite-c") + ".sqlite", Int32(indexes), covering ? 1 : 0, &error) else {
            defer { free(error) }
            throw BenchError("sqlite-c: " + (error.map { String(cString: $0) } ?? "cannot open"))
        }
        return db
    }

    func json(_ p: Person) -> JSONValue {
        .object([
            "id": .string(p.id), "name": .string(p.name), "age": .int(Int64(p.age)), "city": .string(p.city),
            "email": .string(p.email), "score": .double(p.score)
        ])
    }

    /// The schema of the documents section: `indexes` of `indexSets`, the plain ones
    /// including the whole document when `covering`.
    static func documentsSchema(_ indexes: Int, covering: Bool) throws -> DocumentSchema {
        let include: SecondaryIndexDefinition.Inclusion = covering ? .document : .none
        let defs = (Self.indexSets[indexes] ?? []).map {
            SecondaryIndexDefinition(
                name: $0.0, fields: $0.1.map { FieldPath(stringLiteral: $0) }, unique: $0.2,
                include: $0.2 ? .none : include)
        }
        return try DocumentSchema(collections: ["person": CollectionSchema(primaryKey: "id", indexes: defs)])
    }

    func kvdocsStore(_ indexes: Int, covering: Bool) throws -> (KVDocs.LevelDB, DocumentStore) {
        let db = try KVDocs.LevelDB(path: freshPath("docs"))
        let store = try DocumentStore(database: db, schema: try Self.documentsSchema(indexes, covering: covering))
        return (db, store)
    }

    func runDocuments() throws {
        let people = people()
        let n = people.count
        let cPeople = CPeople(people)
        let batches = stride(from: 0, to: n, by: 1000).map { Array(people[$0..<min($0 + 1000, n)]) }
        let jsonBatches = batches.map { $0.map(json) }
        for indexes in [0, 1, 3] {
            let name = "insert (\(indexes) secondary indexes)"
            try measure("documents", name, "kvdocs") {
                let (db, store) = try kvdocsStore(indexes, covering: false)
                defer { db.close() }
                let start = now()
                for batch in batches { try store.write { b in for p in batch { try b.insert("person", encoding: p) } } }
                return (now() - start, n, [:])
            }
            try measure("documents", name, "kvdocs-untyped") {
                let (db, store) = try kvdocsStore(indexes, covering: false)
                defer { db.close() }
                let start = now()
                for batch in jsonBatches { try store.write { b in for p in batch { try b.insert("person", p) } } }
                let seconds = now() - start
                try db.compact()
                return (seconds, n, ["bytes_on_disk": directorySize(db.path)])
            }
            try measure("documents", name, "sqlite-c") {
                let db = try openC(indexes)
                defer { cs_close(db) }
                return (try c { cs_insert(db, cPeople.rows, Int32(n), 1000, $0) }, n, [:])
            }
            try measure("documents", name, "grdb") {
                let queue = try sqliteStore(indexes)
                let start = now()
                for batch in batches { try queue.write { db in for p in batch { try p.insert(db) } } }
                return (now() - start, n, [:])
            }
        }
        // Covering indexes: the extra space and write cost, then the queries through them.
        try measure("documents", "insert (3 indexes, 2 covering)", "kvdocs-untyped") {
            let path = freshPath("docs-covering")
            let db = try KVDocs.LevelDB(path: path)
            let store = try DocumentStore(database: db, schema: try Self.documentsSchema(3, covering: true))
            let start = now()
            for batch in jsonBatches { try store.write { b in for p in batch { try b.insert("person", p) } } }
            let seconds = now() - start
            try db.compact()
            defer { db.close() }
            return (seconds, n, ["bytes_on_disk": directorySize(path)])
        }
        try measure("documents", "insert (3 indexes, 2 covering)", "sqlite-c") {
            let db = try openC(3, covering: true)
            defer { cs_close(db) }
            return (try c { cs_insert(db, cPeople.rows, Int32(n), 1000, $0) }, n, [:])
        }
        // Reads, updates and deletes on stores with 3 indexes (and covering copies).
        let (db, store) = try kvdocsStore(3, covering: false)
        defer { db.close() }
        for batch in jsonBatches { try store.write { b in for p in batch { try b.insert("person", p) } } }
        let (coveringDB, coveringStore) = try kvdocsStore(3, covering: true)
        defer { coveringDB.close() }
        for batch in jsonBatches { try coveringStore.write { b in for p in batch { try b.insert("person", p) } } }
        for d in [db, coveringDB] { try d.compact() }  // level 0 drained before reads
        let queue = try sqliteStore(3)
        for batch in batches { try queue.write { db in for p in batch { try p.insert(db) } } }
        let cdb = try openC(3)
        defer { cs_close(cdb) }
        _ = try c { cs_insert(cdb, cPeople.rows, Int32(n), 1000, $0) }
        let cCovering = try openC(3, covering: true)
        defer { cs_close(cCovering) }
        _ = try c { cs_insert(cCovering, cPeople.rows, Int32(n), 1000, $0) }
        let typed = try store.collection("person", of: Person.self)
        let untyped = try store.collection("person")
        let covered = try coveringStore.collection("person")

        // Every side returns the same rows in the same order.
        func cIDs(_ db: OpaquePointer, _ kind: Int32, _ text: String, _ low: Int64, _ limit: Int) throws -> [String] {
            var buffer = [CChar](repeating: 0, count: 64 * 1024)
            var error: UnsafeMutablePointer<CChar>?
            let count = cs_ids(db, kind, text, low, 2, Int32(limit), &buffer, buffer.count, &error)
            if count < 0 {
                defer { free(error) }
                throw BenchError("sqlite-c: " + (error.map { String(cString: $0) } ?? ""))
            }
            return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).split(
                separator: "\n"
            ).map(String.init)
        }
        for i in [0, 7, 33] {
            let city = "City \(i)", a = 10 + i
            let eq = DocumentQuery().where("city", .equal(.string(city))).limit(20)
            let byAge = DocumentQuery().where("age", .greaterOrEqual(.int(Int64(a)))).where(
                "age", .less(.int(Int64(a + 2)))
            )
            .orderBy("age").limit(50)
            let byID = DocumentQuery().where("age", .greaterOrEqual(.int(Int64(a)))).where(
                "age", .less(.int(Int64(a + 2)))
            )
            .limit(50)
            let grdbEq = try queue.read { db in
                try Person.filter(Column("city") == city).order(Column("id")).limit(20).fetchAll(db).map(\.id)
            }
            let grdbAge = try queue.read { db in
                try Person.filter(Column("age") >= a && Column("age") < a + 2).order(Column("age"), Column("id")).limit(
                    50
                ).fetchAll(db).map(\.id)
            }
            let grdbID = try queue.read { db in
                try Person.filter(Column("age") >= a && Column("age") < a + 2).order(Column("id")).limit(50).fetchAll(
                    db
                ).map(\.id)
            }
            let checks: [(String, [String], [String], [String], [String], [String])] = [
                (
                    "equality", try typed.find(eq).map(\.id), try untyped.find(eq).compactMap { $0["id"]?.stringValue },
                    try covered.find(eq).compactMap { $0["id"]?.stringValue }, try cIDs(cdb, 0, city, 0, 20), grdbEq
                ),
                (
                    "range by age", try typed.find(byAge).map(\.id),
                    try untyped.find(byAge).compactMap { $0["id"]?.stringValue },
                    try covered.find(byAge).compactMap { $0["id"]?.stringValue }, try cIDs(cdb, 1, "", Int64(a), 50),
                    grdbAge
                ),
                (
                    "range by id", try typed.find(byID).map(\.id),
                    try untyped.find(byID).compactMap { $0["id"]?.stringValue },
                    try covered.find(byID).compactMap { $0["id"]?.stringValue }, try cIDs(cdb, 2, "", Int64(a), 50),
                    grdbID
                )
            ]
            for (what, a, b, cov, cc, g) in checks where !(a == b && b == cov && cov == cc && cc == g && !a.isEmpty) {
                throw BenchError(
                    "documents: the sides disagree on the \(what) query (\(city), \(a)): kvdocs \(a.prefix(5)), untyped \(b.prefix(5)), covering \(cov.prefix(5)), sqlite-c \(cc.prefix(5)), grdb \(g.prefix(5))"
                )
            }
        }

        var rng = BenchRandom(seed: 12)
        let lookups = (0..<min(n, 20_000)).map { _ in people[Int(rng.next() % UInt64(n))].id }
        let lookupIDs = CPeople(lookups.map { Person(id: $0, name: "", age: 0, city: "", email: "", score: 0) })
        try measure("documents", "get by primary key", "kvdocs") {
            let start = now()
            for id in lookups { _ = try typed.get(id: .string(id)) }
            return (now() - start, lookups.count, [:])
        }
        try measure("documents", "get by primary key", "kvdocs-untyped") {
            let start = now()
            for id in lookups { _ = try untyped.get(id: .string(id)) }
            return (now() - start, lookups.count, [:])
        }
        try measure("documents", "get by primary key", "sqlite-c") {
            var found: Int32 = 0
            return (try c { cs_get(cdb, lookupIDs.id, Int32(lookups.count), &found, $0) }, lookups.count, [:])
        }
        try measure("documents", "get by primary key", "grdb") {
            let start = now()
            try queue.read { db in for id in lookups { _ = try Person.fetchOne(db, key: id) } }
            return (now() - start, lookups.count, [:])
        }

        let queries = quick ? 200 : 2_000
        let cities = CPeople(
            (0..<queries).map { Person(id: "", name: "", age: 0, city: "City \($0 % 50)", email: "", score: 0) })
        let lows = (0..<queries).map { Int64(10 + $0 % 78) }
        func kvdocsQueries(_ name: String, _ make: @escaping (Int) -> DocumentQuery) throws {
            try measure("documents", name, "kvdocs") {
                let start = now()
                for i in 0..<queries { _ = try typed.find(make(i)) }
                return (now() - start, queries, [:])
            }
            try measure("documents", name, "kvdocs-untyped") {
                let start = now()
                for i in 0..<queries { _ = try untyped.find(make(i)) }
                return (now() - start, queries, [:])
            }
        }
        let equality = "indexed equality (city = ?, id order, limit 20)"
        try kvdocsQueries(equality) { DocumentQuery().where("city", .equal(.string("City \($0 % 50)"))).limit(20) }
        try measure("documents", equality, "sqlite-c") {
            var rows: Int32 = 0
            return (try c { cs_equal(cdb, cities.city, Int32(queries), 20, &rows, $0) }, queries, [:])
        }
        try measure("documents", equality, "grdb") {
            let start = now()
            try queue.read { db in
                for i in 0..<queries {
                    _ = try Person.filter(Column("city") == "City \(i % 50)").order(Column("id")).limit(20).fetchAll(db)
                }
            }
            return (now() - start, queries, [:])
        }
        let rangeByAge = "indexed range (age in [a, a+2), order by age, limit 50)"
        try kvdocsQueries(rangeByAge) { i in
            DocumentQuery().where("age", .greaterOrEqual(.int(lows[i]))).where("age", .less(.int(lows[i] + 2))).orderBy(
                "age"
            )
            .limit(50)
        }
        try measure("documents", rangeByAge, "sqlite-c") {
            var rows: Int32 = 0
            return (try c { cs_range(cdb, lows, Int32(queries), 2, 50, 0, &rows, $0) }, queries, [:])
        }
        try measure("documents", rangeByAge, "grdb") {
            let start = now()
            try queue.read { db in
                for i in 0..<queries {
                    _ = try Person.filter(Column("age") >= lows[i] && Column("age") < lows[i] + 2).order(
                        Column("age"), Column("id")
                    ).limit(50).fetchAll(db)
                }
            }
            return (now() - start, queries, [:])
        }
        let rangeByID = "indexed range (age in [a, a+2), id order, limit 50; no natural index)"
        try kvdocsQueries(rangeByID) { i in
            DocumentQuery().where("age", .greaterOrEqual(.int(lows[i]))).where("age", .less(.int(lows[i] + 2))).limit(
                50)
        }
        try measure("documents", rangeByID, "sqlite-c") {
            var rows: Int32 = 0
            return (try c { cs_range(cdb, lows, Int32(queries), 2, 50, 1, &rows, $0) }, queries, [:])
        }
        try measure("documents", rangeByID, "grdb") {
            let start = now()
            try queue.read { db in
                for i in 0..<queries {
                    _ = try Person.filter(Column("age") >= lows[i] && Column("age") < lows[i] + 2).order(Column("id"))
                        .limit(50).fetchAll(db)
                }
            }
            return (now() - start, queries, [:])
        }
        // The same queries answered from covering indexes (KVDocs: "include": "*", untyped
        // results; SQLite: indexes holding every column).
        for (name, kind) in [
            ("covering equality (city = ?, id order, limit 20)", 0),
            ("covering range (age in [a, a+2), order by age, limit 50)", 1)
        ] {
            try measure("documents", name, "kvdocs-untyped") {
                let start = now()
                for i in 0..<queries {
                    let q =
                        kind == 0
                        ? DocumentQuery().where("city", .equal(.string("City \(i % 50)"))).limit(20)
                        : DocumentQuery().where("age", .greaterOrEqual(.int(lows[i]))).where(
                            "age", .less(.int(lows[i] + 2))
                        )
                        .orderBy("age").limit(50)
                    _ = try covered.find(q)
                }
                return (now() - start, queries, [:])
            }
            try measure("documents", name, "sqlite-c") {
                var rows: Int32 = 0
                let seconds =
                    kind == 0
                    ? try c { cs_equal(cCovering, cities.city, Int32(queries), 20, &rows, $0) }
                    : try c { cs_range(cCovering, lows, Int32(queries), 2, 50, 0, &rows, $0) }
                return (seconds, queries, [:])
            }
        }

        // The physical floors of the reads, on these very databases' files as the queries
        // left them (before the writes below change them).
        let queryFloors = try makeDocumentQueryFloors(
            untyped: untyped, covered: covered, queries: queries,
            equality: { DocumentQuery().where("city", .equal(.string("City \($0 % 50)"))).limit(20) },
            range: { i in
                DocumentQuery().where("age", .greaterOrEqual(.int(lows[i]))).where("age", .less(.int(lows[i] + 2)))
                    .orderBy(
                        "age"
                    ).limit(50)
            },
            rangeByID: { i in
                DocumentQuery().where("age", .greaterOrEqual(.int(lows[i]))).where("age", .less(.int(lows[i] + 2)))
                    .limit(50)
            },
            names: (
                "covering equality (city = ?, id order, limit 20)",
                "covering range (age in [a, a+2), order by age, limit 50)", rangeByID
            ))
        try measureFloors(
            db: db, store: store, untyped: untyped, lookups: lookups, queries: queries, lows: lows,
            names: [
                "get by primary key", equality, rangeByAge
            ])
        try measure(queryFloors, path: try floorCopy(of: db.path), coveringPath: try floorCopy(of: coveringDB.path))

        // Updates that move index entries (age and city change), in batches of 1000.
        let updates = Array(people.prefix(min(n, 20_000)))
        var round = 0
        func changed(_ p: Person, _ r: Int) -> Person {
            var p = p
            p.age += 1 + r
            p.city = "City \((p.age * 7) % 50)"
            return p
        }
        try measure("documents", "update moving index entries", "kvdocs") {
            round += 1
            let r = round
            let start = now()
            for chunk in stride(from: 0, to: updates.count, by: 1000) {
                try store.write { b in
                    for p in updates[chunk..<min(chunk + 1000, updates.count)] {
                        try b.upsert("person", encoding: changed(p, r))
                    }
                }
            }
            return (now() - start, updates.count, [:])
        }
        try measure("documents", "update moving index entries", "kvdocs-untyped") {
            round += 1
            let r = round
            let changedJSON = updates.map { json(changed($0, r)) }
            let start = now()
            for chunk in stride(from: 0, to: changedJSON.count, by: 1000) {
                try store.write { b in
                    for p in changedJSON[chunk..<min(chunk + 1000, changedJSON.count)] { try b.upsert("person", p) }
                }
            }
            return (now() - start, updates.count, [:])
        }
        try measure("documents", "update moving index entries", "sqlite-c") {
            round += 1
            let moved = CPeople(updates.map { changed($0, round) })
            return (try c { cs_update(cdb, moved.rows, Int32(updates.count), 1000, $0) }, updates.count, [:])
        }
        try measure("documents", "update moving index entries", "grdb") {
            round += 1
            let r = round
            let start = now()
            for chunk in stride(from: 0, to: updates.count, by: 1000) {
                try queue.write { db in
                    for p in updates[chunk..<min(chunk + 1000, updates.count)] { try changed(p, r).update(db) }
                }
            }
            return (now() - start, updates.count, [:])
        }
        // Deletes (the last measurement on these stores: each repeat deletes a fresh slice).
        let deleteCount = min(n / (repeats * 4 + 1), 5_000)
        var deleteRound = 0
        func slice() -> ArraySlice<Person> {
            defer { deleteRound += 1 }
            return people.dropFirst(deleteRound * deleteCount).prefix(deleteCount)
        }
        try measure("documents", "delete", "kvdocs") {
            let s = slice()
            let start = now()
            try store.write { b in for p in s { try b.delete("person", id: .string(p.id)) } }
            return (now() - start, s.count, [:])
        }
        try measure("documents", "delete", "kvdocs-untyped") {
            let s = slice()
            let start = now()
            try store.write { b in for p in s { try b.delete("person", id: .string(p.id)) } }
            return (now() - start, s.count, [:])
        }
        deleteRound = 0
        try measure("documents", "delete", "sqlite-c") {
            let ids = CPeople(Array(slice()))
            return (try c { cs_delete(cdb, ids.id, Int32(ids.count), $0) }, ids.count, [:])
        }
        deleteRound = repeats
        try measure("documents", "delete", "grdb") {
            let s = slice()
            let start = now()
            try queue.write { db in for p in s { _ = try Person.deleteOne(db, key: p.id) } }
            return (now() - start, s.count, [:])
        }
        try measureDocumentWriteFloors(
            jsonBatches: jsonBatches, typedPeople: Array(batches.prefix(1)), updates: updates, changed: changed,
            deleteSlices: (0..<repeats).map {
                people.dropFirst($0 * deleteCount).prefix(deleteCount)
            })
    }

    /// The physical floor of the read workloads on this very database: LevelDB's C API
    /// doing the access pattern KVDocs' plans do (a seek and `limit` index entries, then
    /// one get per returned document), with none of KVDocs' work (no plan, no snapshot, no
    /// parsing). Keys are taken from KVDocs' answers first, untimed; the database's files are
    /// then opened through the C API with KVDocs' options (``floorCopy(of:)``).
    func measureFloors(
        db: KVDocs.LevelDB, store: DocumentStore, untyped: DocumentCollection, lookups: [String],
        queries: Int, lows: [Int64], names: [String]
    ) throws {
        let documents = Subspace().subspace(["d", "person"])
        func docKey(_ document: JSONValue) -> [UInt8] {
            documents.pack([document["id"].flatMap { $0.stringValue }.map(TupleElement.string) ?? .null])
        }
        struct Pattern {
            var starts: [UInt8] = []
            var startLengths: [Int] = []
            var docs: [UInt8] = []
            var docLengths: [Int] = []
            var limit = 0
        }
        var patterns: [Pattern] = []
        // get by primary key: one get each.
        var gets = Pattern(limit: 1)
        for id in lookups {
            let k = documents.pack([.string(id)])
            gets.startLengths.append(0)
            gets.docs += k
            gets.docLengths.append(k.count)
        }
        patterns.append(gets)
        // Equality and range: the index prefix KVDocs' plan seeks, then its documents.
        for (limit, prefix, query) in [
            (20, "by_city", { (i: Int) in DocumentQuery().where("city", .equal(.string("City \(i % 50)"))).limit(20) }),
            (
                50, "by_age",
                { (i: Int) in
                    DocumentQuery().where("age", .greaterOrEqual(.int(lows[i]))).where("age", .less(.int(lows[i] + 2)))
                        .orderBy(
                            "age"
                        ).limit(50)
                }
            )
        ] {
            var p = Pattern(limit: limit)
            for i in 0..<queries {
                let plan = try untyped.explain(query(i))
                guard let range = plan.ranges.first, let lower = range.lower?.key, plan.index == prefix else {
                    throw BenchError("floor: the \(prefix) query did not plan on its index")
                }
                p.starts += lower
                p.startLengths.append(lower.count)
                let found = try untyped.find(query(i))
                for k in 0..<limit {
                    if k < found.count {
                        let key = docKey(found[k])
                        p.docs += key
                        p.docLengths.append(key.count)
                    } else {
                        p.docLengths.append(0)
                    }
                }
            }
            patterns.append(p)
        }
        let path = try floorCopy(of: db.path)
        var error: UnsafeMutablePointer<CChar>?
        guard
            let cdb = cb_open(
                path,
                cb_options(write_buffer_size: 0, block_size: 0, cache_capacity: 0, bloom_bits: 10, compression: 1),
                &error)
        else {
            defer { free(error) }
            throw BenchError("floor: " + (error.map { String(cString: $0) } ?? "cannot open"))
        }
        defer { cb_close(cdb) }
        for (name, full) in zip(names, patterns) {
            // The index part alone (no document gets): what a covering entry costs at least.
            var indexOnly = full
            indexOnly.docLengths = indexOnly.docLengths.map { _ in 0 }
            indexOnly.docs = []
            try measure("documents", name, "leveldb-floor") {
                var extra: [String: Double] = [:]
                var seconds = 0.0
                for (p, label, seek) in [
                    (indexOnly, "index_only_us", false), (full, "documents_by_iterator_us", true), (full, "", false)
                ]
                where label.isEmpty || full.startLengths.contains(where: { $0 > 0 }) {
                    var entries: Int32 = 0
                    var error: UnsafeMutablePointer<CChar>?
                    let allocationsBefore = kv_allocations()
                    let elapsed = p.starts.withUnsafeBufferPointer { starts in
                        p.docs.withUnsafeBufferPointer { docs in
                            p.startLengths.withUnsafeBufferPointer { sl in
                                p.docLengths.withUnsafeBufferPointer { dl in
                                    starts.withMemoryRebound(to: CChar.self) { s in
                                        docs.withMemoryRebound(to: CChar.self) { d in
                                            cb_index_floor(
                                                cdb, s.baseAddress, sl.baseAddress, Int32(p.startLengths.count),
                                                Int32(p.limit),
                                                d.baseAddress, dl.baseAddress, seek ? 1 : 0, &entries, &error)
                                        }
                                    }
                                }
                            }
                        }
                    }
                    if elapsed < 0 {
                        defer { free(error) }
                        throw BenchError("floor: " + (error.map { String(cString: $0) } ?? ""))
                    }
                    if label.isEmpty {
                        seconds = elapsed
                        extra["index_entries"] = Double(entries)
                        if kv_allocations_counted() {
                            extra[Self.allocationsKey] =
                                Double(kv_allocations() - allocationsBefore) / Double(max(1, p.startLengths.count))
                        }
                    } else {
                        extra[label] = elapsed * 1e6 / Double(max(1, p.startLengths.count))
                    }
                }
                return (seconds, full.startLengths.count, extra)
            }
        }
    }
}

extension BenchError {
    init(_ description: String) { self.init(description: description) }
}

extension JSONValue {
    var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }
}
