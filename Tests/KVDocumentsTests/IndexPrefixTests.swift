import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// Compound indexes serve any leading prefix of their fields (equality on the first k, then
/// a range or the order on the next), as SQLite's do, and the answers are SQLite's.
@Suite struct IndexPrefixTests {
    /// The fields an index draws from: plain, nested and multi-valued.
    static let pool = ["a", "b", "c.d", "t[]"]

    /// A scalar value (not missing): null, a boolean, integers, a fraction, strings.
    static func scalar(_ rng: inout SplitMix64) -> JSONValue {
        switch Int.random(in: 0..<20, using: &rng) {
        case 0, 1: return nil
        case 2: return true
        case 3: return false
        case 4: return 1.5
        case 5...11: return .int(Int64.random(in: 0...3, using: &rng))
        default: return .string(["a", "b", "ab", "é"].randomElement(using: &rng) ?? "a")
        }
    }

    /// A document with each field missing, null or a value; `c` is sometimes not an object
    /// and `t` sometimes an empty array or not an array at all.
    static func document(id: Int, _ rng: inout SplitMix64) -> JSONValue {
        var o: JSONObject = ["id": .int(Int64(id))]
        if Int.random(in: 0..<5, using: &rng) > 0 { o["a"] = scalar(&rng) }
        if Int.random(in: 0..<5, using: &rng) > 0 { o["b"] = scalar(&rng) }
        switch Int.random(in: 0..<6, using: &rng) {
        case 0: break
        case 1: o["c"] = 7
        case 2: o["c"] = .object([:])
        default: o["c"] = .object(["d": scalar(&rng)])
        }
        switch Int.random(in: 0..<6, using: &rng) {
        case 0: break
        case 1: o["t"] = .array([])
        case 2: o["t"] = "a"
        default: o["t"] = .array((0..<Int.random(in: 1...3, using: &rng)).map { _ in scalar(&rng) })
        }
        return .object(o)
    }

    /// One query as KVDocs takes it and as the SQLite tool reads it.
    struct DrawnQuery {
        var query = DocumentQuery()
        var spec: JSONObject = [:]
        /// Whether an index that is not sparse must serve it (an equality on its first field,
        /// a range on it, or the order by it).
        var prefixServes = false
    }

    /// Equality (`=` or `in`) on the first k index fields, maybe a range on the next, maybe
    /// another condition, maybe an order (often by the next field), a limit and an offset.
    static func drawQuery(index: [String], _ rng: inout SplitMix64) -> DrawnQuery {
        var drawn = DrawnQuery()
        var conditions: [JSONValue] = []
        func add(_ field: String, _ op: QueryOperator) {
            drawn.query = drawn.query.where(FieldPath(stringLiteral: field), op)
            let (name, operand): (String, JSONValue) =
                switch op {
                case .equal(let v): ("=", v)
                case .notEqual(let v): ("!=", v)
                case .less(let v): ("<", v)
                case .lessOrEqual(let v): ("<=", v)
                case .greater(let v): (">", v)
                case .greaterOrEqual(let v): (">=", v)
                case .between(let lo, let hi): ("between", [lo, hi])
                case .prefix(let p): ("prefix", .string(p))
                case .in(let list): ("in", .array(list))
                }
            conditions.append([.string(field), .string(name), operand])
        }
        let k = Int.random(in: 0...index.count, using: &rng)
        for field in index.prefix(k) {
            if Int.random(in: 0..<5, using: &rng) == 0 {
                add(field, .in((0..<Int.random(in: 1...3, using: &rng)).map { _ in scalar(&rng) }))
            } else {
                add(field, .equal(scalar(&rng)))
            }
        }
        drawn.prefixServes = k > 0
        if k < index.count, Bool.random(using: &rng) {
            let field = index[k]
            let number = Bool.random(using: &rng)
            let bound = { (rng: inout SplitMix64) -> JSONValue in
                number
                    ? .int(Int64.random(in: 0...3, using: &rng))
                    : .string(["a", "ab", "b"].randomElement(using: &rng) ?? "a")
            }
            switch Int.random(in: 0..<6, using: &rng) {
            case 0: add(field, .greater(bound(&rng)))
            case 1: add(field, .greaterOrEqual(bound(&rng)))
            case 2: add(field, .less(bound(&rng)))
            case 3: add(field, .lessOrEqual(bound(&rng)))
            case 4: add(field, .between(bound(&rng), bound(&rng)))
            default: add(field, .prefix(["a", "", "é"].randomElement(using: &rng) ?? "a"))
            }
            if k == 0 { drawn.prefixServes = true }
        }
        if Int.random(in: 0..<5, using: &rng) == 0 {
            let field = pool.randomElement(using: &rng) ?? "a"
            add(field, Bool.random(using: &rng) ? .notEqual(scalar(&rng)) : .equal(scalar(&rng)))
        }
        let single = pool.filter { !$0.hasSuffix("[]") }
        var orderOnly = false
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: break
        case 1:
            if let f = single.randomElement(using: &rng) {
                drawn.query = drawn.query.orderBy(FieldPath(stringLiteral: f), descending: Bool.random(using: &rng))
            }
        default:
            if k < index.count, !index[k].hasSuffix("[]") {
                drawn.query = drawn.query.orderBy(
                    FieldPath(stringLiteral: index[k]), descending: Bool.random(using: &rng))
                orderOnly = k == 0
            }
        }
        if Bool.random(using: &rng) { drawn.query = drawn.query.limit(Int.random(in: 0...12, using: &rng)) }
        // The order alone is served from the index only with a limit to stop the scan.
        if orderOnly && drawn.query.limit != nil { drawn.prefixServes = true }
        if Int.random(in: 0..<3, using: &rng) == 0 {
            drawn.query = drawn.query.offset(Int.random(in: 0...5, using: &rng))
        }
        let order: JSONValue = drawn.query.order.map { [.string($0.field.description), .bool($0.descending)] } ?? nil
        drawn.spec = [
            "conditions": .array(conditions), "order": order,
            "limit": drawn.query.limit.map { .int(Int64($0)) } ?? nil, "offset": .int(Int64(drawn.query.offset))
        ]
        return drawn
    }

    /// SQLite's answers (ids in order) and counts for `queries` over `documents`.
    static func sqliteAnswers(_ documents: [JSONValue], index: [String], _ queries: [DrawnQuery]) throws -> (
        finds: [[JSONValue]], counts: [Int]
    ) {
        let spec: JSONValue = [
            "docs": .array(documents), "index": .array(index.map { .string($0) }),
            "queries": .array(queries.map { .object($0.spec) })
        ]
        let output = try runPython(
            "Tests/python/sqlite_query_tool.py", input: String(decoding: try spec.canonicalData(), as: UTF8.self))
        let result = try JSONValue(parsing: Array(output.utf8))
        guard case .array(let finds)? = result["finds"], case .array(let counts)? = result["counts"] else {
            throw KVDocsError(
                .invalidArgument, "sqlite_query_tool.py printed no finds or counts: \(output.prefix(200))")
        }
        return (
            finds.map { if case .array(let ids) = $0 { ids } else { [] } },
            counts.map { if case .int(let n) = $0 { Int(n) } else { -1 } }
        )
    }

    /// Random compound indexes of 1–3 fields (nested and multi-valued among them) over
    /// documents missing fields or holding null: every query's answer, in order, and its
    /// count equal SQLite's, before and after random rewrites and deletes; an index that is
    /// not sparse serves every query with an equality on its first field (or a range on it,
    /// or an order by it, ties sorted by id when other fields follow), and a sparse one only
    /// those constraining all its fields.
    @Test(
        .requires(.sqliteJSON),
        arguments: [(1, false), (2, false), (3, false), (4, false), (5, false), (6, false), (7, true), (8, true)]
            as [(UInt64, Bool)])
    func prefixPlansAnswerAsSQLiteDoes(seed: UInt64, sparse: Bool) throws {
        var rng = SplitMix64(seed: seed)
        var fields = Array(Self.pool.shuffled(using: &rng).prefix(Int.random(in: 1...3, using: &rng)))
        if seed == 1 { fields = ["a", "b"] }  // the athletes' (country, points) shape
        let index = SecondaryIndexDefinition(
            name: "i", fields: fields.map { FieldPath(stringLiteral: $0) }, sparse: sparse)
        try withTemporaryDatabase { db, _ in
            let store = try DocumentStore(
                database: db, schema: try DocumentSchema(collections: ["c": CollectionSchema(indexes: [index])]))
            let c = try store.collection("c")
            var documents: [Int: JSONValue] = [:]
            for id in 1...150 { documents[id] = Self.document(id: id, &rng) }
            for id in documents.keys.sorted() { try c.insert(documents[id] ?? nil) }
            for round in 0..<2 {
                if round == 1 {
                    for _ in 0..<60 {
                        let id = Int.random(in: 1...170, using: &rng)
                        if Int.random(in: 0..<4, using: &rng) == 0 {
                            try c.delete(id: .int(Int64(id)))
                            documents[id] = nil
                        } else {
                            documents[id] = Self.document(id: id, &rng)
                            try c.upsert(documents[id] ?? nil)
                        }
                    }
                    #expect(try store.verify().isClean)
                }
                let queries = (0..<60).map { _ in Self.drawQuery(index: fields, &rng) }
                let all = documents.keys.sorted().compactMap { documents[$0] }
                let expected = try Self.sqliteAnswers(all, index: fields, queries)
                for (n, drawn) in queries.enumerated() {
                    let plan = try c.explain(drawn.query)
                    let found = try c.find(drawn.query).map { $0["id"] ?? nil }
                    #expect(found == expected.finds[n], "\(fields) \(drawn.query) plan:\n\(plan)")
                    #expect(try c.count(drawn.query) == expected.counts[n], "count \(fields) \(drawn.query)")
                    if sparse {
                        let constrained = Set(drawn.query.conditions.map(\.field))
                        if plan.index != nil {
                            #expect(index.fields.allSatisfy(constrained.contains), "\(drawn.query)")
                        }
                    } else if drawn.prefixServes {
                        #expect(plan.index == "i", "\(fields) \(drawn.query) plan:\n\(plan)")
                    }
                }
            }
        }
    }

    /// The athletes' query: top 10 by points in one country over `(country, points)`,
    /// written without a condition on points, reads the index in order and stops after 10
    /// entries; documents missing points or holding null come last when descending; the
    /// count uses the index too.
    @Test func theTopTenOfOneCountryReadsTheCompoundIndexInOrder() throws {
        let schema = try DocumentSchema(
            json: Data(
                #"{"collections": {"athletes": {"indexes": [{"name": "by_country_points", "fields": ["country", "points"]}]}}}"#
                    .utf8))
        try withTemporaryDatabase { db, _ in
            let store = try DocumentStore(database: db, schema: schema)
            let athletes = try store.collection("athletes")
            for id in 1...40 {
                var o: JSONObject = ["id": .int(Int64(id)), "country": id % 2 == 0 ? "NOR" : "SWE"]
                if id % 7 != 0 { o["points"] = id % 5 == 0 ? nil : .int(Int64(id * 37 % 100)) }
                try athletes.insert(.object(o))
            }
            let top = DocumentQuery().where("country", .equal("NOR")).orderBy("points", descending: true).limit(10)
            let plan = try athletes.explain(top)
            #expect(plan.index == "by_country_points" && plan.orderedByScan && plan.filter.isEmpty)
            let nor = try athletes.find(DocumentQuery().where("country", .equal("NOR")))
            let expected = nor.sorted { x, y in
                let c = ValueOrder.compare(x["points"] ?? nil, y["points"] ?? nil)
                let px = x["points"], py = y["points"]
                if (px == nil) != (py == nil) { return py == nil }  // missing last when descending
                if c != 0 { return c > 0 }
                return ValueOrder.compare(x["id"] ?? nil, y["id"] ?? nil) > 0
            }.prefix(10).map { $0["id"] ?? nil }
            #expect(try athletes.find(top).map { $0["id"] ?? nil } == Array(expected))
            let count = DocumentQuery().where("country", .equal("NOR"))
            #expect(try athletes.explain(count).index == "by_country_points")
            #expect(try athletes.count(count) == 20)
            // All of a country's documents, the ones missing points among them, are counted.
            #expect(
                try athletes.count(DocumentQuery().where("country", .equal("NOR")).where("points", .greaterOrEqual(0)))
                    < 20)
        }
    }

    /// An order on an index field that other fields follow comes from the scan, each run of
    /// equal order values sorted by id (the index sorts it by the later field), both ways,
    /// with offsets falling inside a run.
    @Test func tiesOfAnOrderServedByTheIndexAreSortedByID() throws {
        let schema = try DocumentSchema(
            json: Data(#"{"collections": {"c": {"indexes": [{"name": "i", "fields": ["k", "p", "name"]}]}}}"#.utf8))
        try withTemporaryDatabase { db, _ in
            let store = try DocumentStore(database: db, schema: schema)
            let c = try store.collection("c")
            var rows: [(id: Int, p: Int)] = []
            for id in 1...30 {
                let p = id % 4
                // Names run against ids, so the index holds each run in reverse id order.
                try c.insert([
                    "id": .int(Int64(id)), "k": "x", "p": .int(Int64(p)),
                    "name": .string(String(UnicodeScalar(UInt8(100 - id))))
                ])
                rows.append((id, p))
            }
            for descending in [false, true] {
                for offset in [0, 3, 8] {
                    let q = DocumentQuery().where("k", .equal("x")).orderBy("p", descending: descending).offset(offset)
                        .limit(9)
                    let plan = try c.explain(q)
                    #expect(plan.index == "i" && plan.orderedByScan && plan.tiesSortedByID)
                    #expect(plan.description.contains("each run of equal order values sorted by id"))
                    let expected = rows.sorted { a, b in
                        a.p != b.p ? (a.p < b.p) != descending : (a.id < b.id) != descending
                    }.dropFirst(offset).prefix(9).map { JSONValue.int(Int64($0.id)) }
                    #expect(
                        try c.find(q).map { $0["id"] ?? nil } == Array(expected),
                        "descending \(descending) offset \(offset)")
                }
            }
        }
    }

    /// A unique index bound on its field is one point read: it wins over a prefix of a
    /// compound index with as many equalities, whichever is declared first; an order alone
    /// is read from an index only with a limit.
    @Test func aPointLookupBeatsAPrefixAndAnOrderAloneNeedsALimit() throws {
        let schema = try DocumentSchema(
            json: Data(
                #"{"collections": {"athletes": {"indexes": [{"name": "by_country_points", "fields": ["country", "points"]}, {"name": "by_licence", "fields": ["licence"], "unique": true}]}}}"#
                    .utf8))
        try withTemporaryDatabase { db, _ in
            let athletes = try DocumentStore(database: db, schema: schema).collection("athletes")
            try athletes.insert(["id": 1, "country": "NOR", "licence": "L1", "points": 3])
            #expect(
                try athletes.explain(DocumentQuery().where("country", .equal("NOR")).where("licence", .equal("L1")))
                    .index
                    == "by_licence")
            #expect(try athletes.explain(DocumentQuery().orderBy("country")).index == nil)
            #expect(try athletes.explain(DocumentQuery().orderBy("country").limit(5)).index == "by_country_points")
        }
    }

    /// The fixture written before index prefixes (plain indexes at format 1, documents
    /// missing a field left out) opens with its plain indexes rebuilt, with progress, at
    /// format 3; the unique one is kept; prefix queries then find the documents the old
    /// entries left out.
    @Test(.readsSnappyFixture) func plainIndexesOfTheFormerLayoutAreRebuiltWithEveryDocument() throws {
        let dir = TemporaryDirectory()
        let path = dir.child("db")
        try FileManager.default.copyItem(
            atPath: packageRoot.appendingPathComponent("Tests/Fixtures/index1-db").path, toPath: path)
        let db = try LevelDB(path: path)
        defer { db.close() }
        let plain = IndexIdentity("athletes", "by_country_points", .secondary)
        #expect(try DocumentCatalog().indexStates(.secondary, in: db)[plain]?.format == 1)
        var built = Set<String>()
        let store = try DocumentStore(database: db) { if $0.done == $0.total { built.insert($0.index) } }
        // The documents too, rewritten in the binary form (an empty index name).
        #expect(built == ["", "by_country_points", "by_tags", "by_club_cover"])
        #expect(try DocumentCatalog().indexStates(.secondary, in: db)[plain]?.format == 3)
        #expect(
            try DocumentCatalog().indexStates(.secondary, in: db)[IndexIdentity("athletes", "by_licence", .secondary)]?
                .format
                == 2)
        #expect(try store.verify().isClean)
        let athletes = try store.collection("athletes")
        let nor = DocumentQuery().where("country", .equal("NOR")).orderBy("points")
        #expect(try athletes.explain(nor).index == "by_country_points")
        // 2 misses points, 3 holds null: missing first, then null, then the numbers (ties by
        // id: strings before integers).
        #expect(try athletes.find(nor).map { $0["id"] ?? nil } == [2, 3, 6, "x7", 1])
        #expect(try athletes.count(DocumentQuery().where("country", .equal("NOR"))) == 5)
        #expect(try athletes.find(DocumentQuery().where("licence", .equal("L2"))).map { $0["id"] ?? nil } == [2])
        // Reopened: nothing left to rebuild.
        built = []
        _ = try DocumentStore(database: db) { built.insert($0.index) }
        #expect(built.isEmpty)
    }

    /// `"sparse": true` keeps the former behaviour and is part of the schema JSON; a unique
    /// index is always sparse, so `"sparse": false` on one is refused with the reason.
    @Test func sparseIsDeclaredInTheSchemaJSON() throws {
        let schema = try DocumentSchema(
            json: Data(
                #"{"collections": {"c": {"indexes": [{"name": "s", "fields": ["a", "b"], "sparse": true}, {"name": "p", "fields": ["a"]}]}}}"#
                    .utf8))
        let indexes = try #require(schema[collection: "c"]).indexes
        #expect(indexes.map(\.sparse) == [true, false])
        let again = try DocumentSchema(json: schema.jsonData())
        #expect(again == schema)
        #expect(String(decoding: schema.jsonData(), as: UTF8.self).contains(#""sparse":true"#))
        let error = expectError(.schema) {
            _ = try DocumentSchema(
                json: Data(
                    #"{"collections": {"c": {"indexes": [{"name": "u", "fields": ["a"], "unique": true, "sparse": false}]}}}"#
                        .utf8))
        }
        #expect(error?.message.contains("always sparse") == true)
        _ = expectError(.schema) {
            _ = try DocumentSchema(
                json: Data(#"{"collections": {"c": {"indexes": [{"name": "u", "fields": ["a"], "sparse": 1}]}}}"#.utf8))
        }
    }
}

/// Layered databases over a base written before index prefixes: the user layer gets the
/// plain indexes whole, and a base replacement derives them whole again, so no document of
/// the base is missing from them.
@Suite struct IndexPrefixLayerTests {
    /// A copy of the format-1 fixture at `path`, plus, when `extra`, a document missing
    /// `points` written as that code wrote it (no entry in any index: it misses every
    /// indexed field but `country`, and format 1 left such documents out).
    static func oldBase(_ path: String, extra: Bool) throws {
        try FileManager.default.copyItem(
            atPath: packageRoot.appendingPathComponent("Tests/Fixtures/index1-db").path, toPath: path)
        guard extra else { return }
        let db = try LevelDB(path: path)
        defer { db.close() }
        try db.put(
            Subspace().subspace(["d"]).pack(["athletes", 8]), Array(#"{"country":"NOR","id":8,"name":"Ho"}"#.utf8))
    }

    @Test(.readsSnappyFixture) func aBaseOfTheFormerIndexLayoutIsIndexedWholeOverAndAcrossReplacement() throws {
        let dir = TemporaryDirectory("layers")
        try Self.oldBase(dir.child("v1"), extra: false)
        try Self.oldBase(dir.child("v2"), extra: true)
        let nor = DocumentQuery().where("country", .equal("NOR")).orderBy("points")
        let layers = try LayeredDocumentStore(user: dir.child("user"), base: dir.child("v1"), create: true)
        defer { layers.close() }
        let athletes = try layers.store.collection("athletes")
        try athletes.insert(["id": 9, "name": "Iv", "country": "NOR"])
        #expect(try athletes.explain(nor).index == "by_country_points")
        #expect(try athletes.find(nor).map { $0["id"] ?? nil } == [2, 9, 3, 6, "x7", 1])
        #expect(try layers.store.verify().isClean)

        try layers.replaceBase(with: dir.child("v2"))
        #expect(try athletes.find(nor).map { $0["id"] ?? nil } == [2, 8, 9, 3, 6, "x7", 1])
        #expect(try athletes.count(DocumentQuery().where("country", .equal("NOR"))) == 7)
        #expect(try layers.store.verify().isClean)
    }
}
