import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// The plan cache (plans chosen by a query's shape, reused with new values) gives exactly
/// what planning from scratch gives: the same plan and the same documents, through schema
/// changes, index builds, reindexing and writes between the runs. The choice is cached per
/// query shape: queries differing only in their operand values reuse it; operand types,
/// `in` sizes and code points are part of the shape.
@Suite struct PlanCacheTests {
    @Test func queriesOfOneShapePlanAlikeAndOtherShapesPlanAfresh() throws {
        try withPeopleStore { _, people throws in
            let a = try people.explain(DocumentQuery().where("age", .equal(30)).where("last", .equal("Ng")))
            let b = try people.explain(DocumentQuery().where("age", .equal(41)).where("last", .equal("Zed")))
            #expect(a.index == b.index && b.ranges != a.ranges)
            #expect(
                QueryShape(collection: "people", query: DocumentQuery().where("age", .equal(1)))
                    == QueryShape(collection: "people", query: DocumentQuery().where("age", .equal(2))))
            #expect(
                QueryShape(
                    collection: "people", query: DocumentQuery().where("age", .greater(1)).where("age", .greater(2)))
                    != QueryShape(
                        collection: "people",
                        query: DocumentQuery().where("age", .greater(1)).where("age", .greater("a"))))
            #expect(
                QueryShape(collection: "people", query: DocumentQuery().where("tags[]", .in([1, 2])))
                    != QueryShape(collection: "people", query: DocumentQuery().where("tags[]", .in([1]))))
            #expect(
                QueryShape(collection: "c", query: DocumentQuery().where(try FieldPath("caf\u{E9}"), .equal(1)))
                    != QueryShape(
                        collection: "c", query: DocumentQuery().where(try FieldPath("cafe\u{301}"), .equal(1))))
            // Same shape, one with types that change the plan's bounds: still answered right.
            try people.insert(["id": "x", "age": 50])
            #expect(try people.find(DocumentQuery().where("age", .greater(10)).where("age", .greater(20))).count == 1)
            #expect(try people.find(DocumentQuery().where("age", .greater(10)).where("age", .greater("a"))).isEmpty)
        }
    }

    /// Index declarations the schema draws from, by name.
    static let indexPool: [String: String] = [
        "by_age": #"{"name": "by_age", "fields": ["age"]}"#,
        "by_last_first": #"{"name": "by_last_first", "fields": ["last", "first"]}"#,
        "by_email": #"{"name": "by_email", "fields": ["email"], "unique": true}"#,
        "by_tag": #"{"name": "by_tag", "fields": ["tags[]"]}"#,
        "by_city": #"{"name": "by_city", "fields": ["address.city"], "include": "*"}"#,
        "by_city_age": #"{"name": "by_city_age", "fields": ["address.city", "age"]}"#,
        "by_first_sparse": #"{"name": "by_first_sparse", "fields": ["first"], "sparse": true}"#,
        "by_age_covering": #"{"name": "by_age_covering", "fields": ["age"], "include": ["last", "first"]}"#
    ]

    static func schema(_ indexes: [String]) throws -> DocumentSchema {
        let declared = indexes.compactMap { indexPool[$0] }.joined(separator: ", ")
        return try DocumentSchema(
            json: Data(#"{"collections": {"people": {"primaryKey": "id", "indexes": [\#(declared)]}}}"#.utf8))
    }

    /// The same query with new operands for its conditions: its shape stays the same
    /// when the new values have the old ones' types (a cache hit), else it is another shape.
    static func rebound(_ query: DocumentQuery, _ rng: inout SplitMix64) -> DocumentQuery {
        var q = query
        q.conditions = query.conditions.map { c in
            let field = c.field.description
            let op: QueryOperator
            switch c.op {
            case .equal: op = .equal(DocumentGenerator.operand(field, &rng))
            case .notEqual: op = .notEqual(DocumentGenerator.operand(field, &rng))
            case .less: op = .less(DocumentGenerator.operand(field, &rng))
            case .lessOrEqual: op = .lessOrEqual(DocumentGenerator.operand(field, &rng))
            case .greater: op = .greater(DocumentGenerator.operand(field, &rng))
            case .greaterOrEqual: op = .greaterOrEqual(DocumentGenerator.operand(field, &rng))
            case .between:
                op = .between(DocumentGenerator.operand(field, &rng), DocumentGenerator.operand(field, &rng))
            case .prefix(let p): op = .prefix(String(p.dropLast()) + ["", "S", "P", "é"][Int(rng.next() % 4)])
            case .in(let list):
                op = .in((0..<max(1, list.count)).map { _ in DocumentGenerator.operand(field, &rng) })
            }
            return QueryCondition(field: c.field, op: op)
        }
        return q
    }

    /// A result or the kind of error it threw, for comparing two ways of answering.
    enum Outcome: Equatable {
        case documents([JSONValue])
        case failed(KVDocsError.Kind)
    }

    static func outcome(_ body: () throws -> [JSONValue]) -> Outcome {
        do { return .documents(try body()) } catch let e as KVDocsError { return .failed(e.kind) } catch {
            return .failed(.invalidArgument)
        }
    }

    @Test func aCachedPlanAnswersAsAFreshPlanThroughSchemaChangesBuildsAndReindexing() throws {
        try withTemporaryDatabase { db, _ throws in
            var rng = SplitMix64(seed: 47)
            var indexes = ["by_age", "by_last_first", "by_email", "by_city"]
            let store = try DocumentStore(database: db, schema: try Self.schema(indexes))
            var model: [JSONValue: JSONValue] = [:]
            let ids: [JSONValue] = (0..<80).map { $0 % 9 == 0 ? .int(Int64($0)) : .string(String(format: "p%03d", $0)) }
            func write(_ count: Int) throws {
                let people = try store.collection("people")
                for _ in 0..<count {
                    let id = ids.randomElement(using: &rng)!
                    if Int.random(in: 0..<5, using: &rng) == 0 {
                        _ = try people.delete(id: id)
                        model[id] = nil
                        continue
                    }
                    var doc = DocumentGenerator.document(id: id, &rng)
                    // Unique emails only: a clash is another test's subject.
                    if case .object(var o) = doc, o["email"] != nil {
                        o["email"] = .string("\(id)@x.org")
                        doc = .object(o)
                    }
                    try people.upsert(doc)
                    model[id] = doc
                }
            }
            var compared = 0, hits = 0, usedIndex = 0
            for round in 0..<8 {
                try write(60)
                // Between rounds: declare or drop an index (a build, a new catalog), reindex.
                switch round % 4 {
                case 0:
                    let absent = Self.indexPool.keys.sorted().filter { !indexes.contains($0) }
                    if let added = absent.randomElement(using: &rng) { indexes.append(added) }
                    try store.apply(try Self.schema(indexes))
                case 1:
                    if indexes.count > 1 { indexes.remove(at: Int.random(in: 0..<indexes.count, using: &rng)) }
                    try store.apply(try Self.schema(indexes))
                case 2:
                    try store.reindex(collection: "people")
                default:
                    if let one = indexes.randomElement(using: &rng) {
                        try store.reindex(collection: "people", index: one)
                    }
                }
                for _ in 0..<40 {
                    let shape = DocumentGenerator.query(&rng)
                    var query = shape
                    for binding in 0..<4 {
                        if binding > 0 { query = Self.rebound(shape, &rng) }
                        try store.read { tx in
                            // The cached side runs first: a rebound query finds its shape's
                            // plan in the cache (planned by an earlier binding or transaction).
                            let cached = Self.outcome { try tx.find("people", query, cachedPlan: true) }
                            let cachedPlan = try? tx.plan("people", query, cachedPlan: true)
                            let freshPlan = try? tx.plan("people", query, cachedPlan: false)
                            let fresh = Self.outcome { try tx.find("people", query, cachedPlan: false) }
                            #expect(
                                cachedPlan?.description == freshPlan?.description,
                                "round \(round): \(query.conditions) order \(String(describing: query.order))")
                            #expect(cached == fresh, "round \(round): \(query.conditions)")
                            if case .documents(let documents) = cached {
                                #expect(
                                    documents.map { $0["id"] ?? .null } == ReferenceSemantics.answer(model, query),
                                    "round \(round): \(query.conditions)\n\(String(describing: cachedPlan))")
                            }
                            if freshPlan?.index != nil { usedIndex += 1 }
                        }
                        compared += 1
                        if binding > 0 { hits += 1 }
                    }
                }
            }
            #expect(compared == 8 * 40 * 4)
            #expect(usedIndex > compared / 4, "\(usedIndex) of \(compared) plans used an index")
            #expect(hits > 0)
        }
    }

    /// A plan cached under one catalog is not used under the next: a query whose index is
    /// dropped is answered by a scan, and by the index again once it is back.
    @Test func aSchemaChangeRetiresTheCachedPlans() throws {
        try withTemporaryDatabase { db, _ throws in
            let store = try DocumentStore(database: db, schema: try Self.schema(["by_age"]))
            let people = try store.collection("people")
            for i in 0..<20 { try people.insert(["id": .string("p\(i)"), "age": .int(Int64(i % 5))]) }
            let query = DocumentQuery().where("age", .equal(3))
            #expect(try people.explain(query).index == "by_age")
            let before = try people.find(query)
            try store.apply(try Self.schema(["by_last_first"]))
            #expect(try people.explain(query).index == nil)
            #expect(try people.find(query) == before)
            try store.apply(try Self.schema(["by_last_first", "by_age"]))
            #expect(try people.explain(query).index == "by_age")
            #expect(try people.find(query) == before)
        }
    }
}
