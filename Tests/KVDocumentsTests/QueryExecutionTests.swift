import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// Streaming execution: every strategy (scan order, merge of per-value streams by id,
/// top-k heaps) against the brute-force model, and plans that re-check only what their
/// ranges do not guarantee.
@Suite struct QueryExecutionTests {
    /// A document whose age has many distinct values (so a wide range has more value
    /// streams than are merged, and falls back to the top-k heap).
    static func document(id: JSONValue, _ rng: inout SplitMix64) -> JSONValue {
        guard case .object(var o) = DocumentGenerator.document(id: id, &rng) else { return .null }
        if Int.random(in: 0..<4, using: &rng) > 0 { o["age"] = .int(Int64.random(in: 0...400, using: &rng)) }
        return .object(o)
    }

    static func query(_ rng: inout SplitMix64) -> DocumentQuery {
        var q = DocumentGenerator.query(&rng)
        switch Int.random(in: 0..<6, using: &rng) {
        case 0:  // a wide range: hundreds of values
            let a = Int64.random(in: 0...200, using: &rng)
            q.conditions.append(
                QueryCondition(field: "age", op: .between(.int(a), .int(a + Int64.random(in: 0...250, using: &rng)))))
        case 1:  // a narrow range: a few values, merged by id
            let a = Int64.random(in: 0...400, using: &rng)
            q.conditions.append(QueryCondition(field: "age", op: .greaterOrEqual(.int(a))))
            q.conditions.append(QueryCondition(field: "age", op: .less(.int(a + Int64.random(in: 1...4, using: &rng)))))
        case 2:  // bounds of two types on one side: only one can bound the scan
            q.conditions.append(
                QueryCondition(field: "age", op: .greater(.int(Int64.random(in: 0...400, using: &rng)))))
            q.conditions.append(QueryCondition(field: "age", op: .greater(.string("a"))))
        case 3:  // two prefixes: only one can bound the scan
            q.conditions.append(QueryCondition(field: "last", op: .prefix("S")))
            q.conditions.append(QueryCondition(field: "last", op: .prefix("Sm")))
        default: break
        }
        if Int.random(in: 0..<3, using: &rng) == 0 { q.limit = Int.random(in: 0...60, using: &rng) }
        return q
    }

    @Test(arguments: [41] as [UInt64])
    func everyExecutionStrategyMatchesTheBruteForceModel(seed: UInt64) throws {
        try withPeopleStore { store, people throws in
            var rng = SplitMix64(seed: seed)
            var model: [JSONValue: JSONValue] = [:]
            try store.write { batch in
                for i in 0..<1500 {
                    let id: JSONValue = i % 9 == 0 ? .int(Int64(i)) : .string(String(format: "p%04d", i))
                    var doc = Self.document(id: id, &rng)
                    if case .object(var o) = doc {
                        o["email"] = nil
                        doc = .object(o)
                    }  // no unique clashes
                    try batch.insert("people", doc)
                    model[id] = doc
                }
            }
            var strategies: [String: Int] = [:]
            for _ in 0..<250 {
                let query = Self.query(&rng)
                let plan = try people.explain(query)
                let expected = ReferenceSemantics.answer(model, query)
                let actual = try people.find(query).map { $0["id"] ?? .null }
                #expect(
                    actual == expected,
                    "\(query.conditions) order \(String(describing: query.order)) limit \(String(describing: query.limit)) offset \(query.offset)\n\(plan)"
                )
                var unlimited = query
                unlimited.limit = nil
                unlimited.offset = 0
                #expect(try people.count(query) == ReferenceSemantics.answer(model, unlimited).count)
                strategies[String(plan.orderDescription.prefix(8)), default: 0] += 1
            }
            // Each strategy ran: in scan order, merged by id (or its heap fallback), top-k.
            #expect(strategies.count == 3, "\(strategies)")
            #expect(strategies.values.allSatisfy { $0 >= 20 }, "\(strategies)")
        }
    }

    @Test func conditionsTheRangeGuaranteesAreNotRechecked() throws {
        try withPeopleStore { _, people throws in
            let guaranteed = try people.explain(DocumentQuery().where("age", .greaterOrEqual(3)).where("age", .less(5)))
            #expect(guaranteed.index == "by_age" && guaranteed.filter.isEmpty)
            let sameSide = try people.explain(DocumentQuery().where("age", .greater(3)).where("age", .greater("a")))
            #expect(sameSide.filter == [QueryCondition(field: "age", op: .greater("a"))])
            let prefixes = try people.explain(
                DocumentQuery().where("last", .prefix("S")).where("last", .prefix("Sm")).where("first", .equal("Ann")))
            #expect(prefixes.filter.contains(QueryCondition(field: "last", op: .prefix("Sm"))))
            let residual = try people.explain(
                DocumentQuery().where("tags[]", .equal("a")).where("tags[]", .notEqual("b")))
            #expect(
                residual.index == "by_tag" && residual.filter == [QueryCondition(field: "tags[]", op: .notEqual("b"))])
        }
    }

    @Test func aMultiValuedMatchComesOnceWhicheverStrategyFindsIt() throws {
        try withPeopleStore { _, people throws in
            for i in 0..<200 {
                try people.insert([
                    "id": .string(String(format: "d%03d", i)),
                    "tags": .array([.string("a"), .string("b"), .int(Int64(i % 7))])
                ])
            }
            let both = DocumentQuery().where("tags[]", .in(["a", "b"]))
            #expect(try people.find(both).count == 200)
            #expect(try people.find(both.limit(5)).map { $0["id"] } == ["d000", "d001", "d002", "d003", "d004"])
            #expect(try people.count(both) == 200)
            let numbers = DocumentQuery().where("tags[]", .greaterOrEqual(0)).where("tags[]", .less(7))
            #expect(try people.find(numbers.limit(3).offset(198)).map { $0["id"] } == ["d198", "d199"])
            #expect(try people.count(numbers) == 200)
        }
    }
}

/// Index entries are computed as bytes: they must be exactly the tuple encodings of the
/// documented element form.
@Suite struct IndexEntryEncodingTests {
    static func randomValue(_ rng: inout SplitMix64, depth: Int = 0) -> JSONValue {
        switch Int.random(in: 0..<(depth < 3 ? 9 : 7), using: &rng) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &rng))
        case 2: return .int(Int64(bitPattern: rng.next()))
        case 3: return .uint(rng.next() | (1 << 63))
        case 4: return .double(Double(bitPattern: rng.next() & ~(0x7FF << 52)))
        case 5: return DocumentGenerator.pick(DocumentGenerator.ages, &rng)
        case 6:
            return .string(
                String(
                    decoding: (0..<Int.random(in: 0...5, using: &rng)).map { _ in
                        UInt8.random(in: 0...0x7F, using: &rng)
                    }, as: UTF8.self))
        case 7: return .array((0..<Int.random(in: 0...3, using: &rng)).map { _ in randomValue(&rng, depth: depth + 1) })
        default: return .object(["k": randomValue(&rng, depth: depth + 1), "\0": .null])
        }
    }

    @Test func valueKeysAreTheTupleEncodingOfTheirElements() {
        var rng = SplitMix64(seed: 5)
        for _ in 0..<5000 {
            let v = Self.randomValue(&rng)
            #expect(ValueOrder.key(v) == Tuple(ValueOrder.encode(v)).encoded, "\(v)")
        }
    }

    @Test func entriesOfACompoundMultiValuedIndexAreEveryDistinctCombinationSorted() throws {
        let index = SecondaryIndexDefinition(name: "i", fields: ["a", "b[]"], unique: false)
        let document: JSONValue = ["a": 1, "b": ["y", "x", 3, 3.0, "x", ["n", nil]]]
        let expected = [JSONValue(3), "x", "y", ["n", nil]].map {
            Tuple(ValueOrder.encode(1) + ValueOrder.encode($0)).encoded
        }
        #expect(SecondaryIndexMaintainer.encodedValues(index, document) == expected)
        // Not sparse: a missing field, or a multi-valued one without elements, is the
        // missing marker, which sorts before null.
        let missing = SecondaryIndexMaintainer.missingMarker
        #expect(
            SecondaryIndexMaintainer.encodedValues(index, ["b": ["x"]]) == [
                missing + Tuple(ValueOrder.encode("x")).encoded
            ])
        #expect(
            SecondaryIndexMaintainer.encodedValues(index, ["a": 1, "b": []]) == [
                Tuple(ValueOrder.encode(1)).encoded + missing
            ])
        #expect(SecondaryIndexMaintainer.encodedValues(index, [:]) == [missing + missing])
        #expect(compareBytes(missing, ValueOrder.key(nil)) < 0)
        // Sparse: such documents have no entry.
        let sparse = SecondaryIndexDefinition(name: "i", fields: ["a", "b[]"], sparse: true)
        #expect(SecondaryIndexMaintainer.encodedValues(sparse, ["b": ["x"]]).isEmpty)
        #expect(SecondaryIndexMaintainer.encodedValues(sparse, ["a": 1, "b": []]).isEmpty)
        #expect(SecondaryIndexMaintainer.encodedValues(sparse, document) == expected)
    }
}
