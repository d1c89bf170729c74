import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// Covering indexes: entries carry fields (or the whole document), kept exact through
/// writes, and queries that read only those fields never fetch a document.
@Suite struct CoveringIndexTests {
    static let schemaJSON = #"""
        {"collections": {"people": {"primaryKey": "id", "indexes": [
          {"name": "by_age", "fields": ["age"], "include": ["last", "address"]},
          {"name": "by_city", "fields": ["address.city"], "include": "*"},
          {"name": "by_email", "fields": ["email"], "unique": true, "include": ["first"]},
          {"name": "by_tag", "fields": ["tags[]"], "include": ["first", "last"]}
        ]}}}
        """#

    /// The reference projection: each selected path's value placed at its path.
    static func project(_ document: JSONValue, _ paths: [String]) -> JSONValue {
        var result: JSONValue = .object([:])
        func set(_ value: JSONValue, _ names: ArraySlice<String>, in target: inout JSONValue) {
            guard case .object(var o) = target, let name = names.first else { return }
            if names.count == 1 {
                o[name] = value
            } else {
                var inner = o[name] ?? .object([:])
                set(value, names.dropFirst(), in: &inner)
                o[name] = inner
            }
            target = .object(o)
        }
        for path in paths.sorted(by: { $0.count > $1.count }) {
            let names = path.split(separator: ".").map(String.init)
            var value: JSONValue? = document
            for n in names { value = value?[n] }
            if let value { set(value, names[...], in: &result) }
        }
        return result
    }

    @Test func coveringQueriesMatchTheBruteForceModelThroughWrites() throws {
        try withTemporaryDatabase { db, _ throws in
            let store = try DocumentStore(database: db, schema: try DocumentSchema(json: Data(Self.schemaJSON.utf8)))
            let people = try store.collection("people")
            var rng = SplitMix64(seed: 77)
            var model: [JSONValue: JSONValue] = [:]
            let ids: [JSONValue] = (0..<60).map { .string(String(format: "c%02d", $0)) }
            var covered = 0
            for round in 0..<500 {
                let id = ids.randomElement(using: &rng)!
                let doc = DocumentGenerator.document(id: id, &rng)
                let emailTaken =
                    doc["email"].map { email in model.contains { $0.key != id && $0.value["email"] == email } } ?? false
                if Int.random(in: 0..<5, using: &rng) == 0 {
                    try people.delete(id: id)
                    model[id] = nil
                } else if !emailTaken {
                    try people.upsert(doc)
                    model[id] = doc
                }
                guard round % 2 == 0 else { continue }
                var query = DocumentGenerator.query(&rng)
                let selectable = ["last", "first", "address", "address.city", "age", "id"]
                let selected =
                    Bool.random(using: &rng)
                    ? Array(selectable.shuffled(using: &rng).prefix(Int.random(in: 1...3, using: &rng))) : nil
                query.fields = selected.map { $0.map { FieldPath(stringLiteral: $0) } }
                let plan = try people.explain(query)
                if plan.covering { covered += 1 }
                var expected = ReferenceSemantics.answer(model, query).compactMap { model[$0] }
                if let selected { expected = expected.map { Self.project($0, selected) } }
                #expect(try people.find(query) == expected, "\(query)\n\(plan)")
            }
            #expect(try store.verify().isClean)
            #expect(covered > 40, "\(covered) covering plans")
        }
    }

    /// A covering plan reads the entries only: with the document deleted behind the store's
    /// back, the covering query still answers from the index while a fetching one does not.
    @Test func aCoveringPlanReadsNoDocument() throws {
        try withTemporaryDatabase { db, _ throws in
            let store = try DocumentStore(database: db, schema: try DocumentSchema(json: Data(Self.schemaJSON.utf8)))
            let people = try store.collection("people")
            try people.insert([
                "id": "a", "age": 30, "last": "Ng", "first": "Al", "address": ["city": "Perth", "zip": "6000"],
                "email": "a@x"
            ])
            try db.delete(Subspace().pack(["d", "people", "a"]))
            let byAge = DocumentQuery().where("age", .equal(30)).select(["last", "address.zip"])
            #expect(try people.explain(byAge).covering)
            #expect(try people.explain(byAge).description.contains("covering: answered from the index entries alone"))
            #expect(try people.find(byAge) == [["last": "Ng", "address": ["zip": "6000"]]])
            #expect(
                try people.find(DocumentQuery().where("address.city", .equal("Perth"))).map { $0["first"] } == ["Al"])
            #expect(
                try people.find(DocumentQuery().where("email", .equal("a@x")).select(["first", "id"])) == [
                    ["first": "Al", "id": "a"]
                ])
            let notCovered = DocumentQuery().where("age", .equal(30)).select(["first"])
            #expect(try !people.explain(notCovered).covering)
            #expect(try people.find(notCovered).isEmpty)
        }
    }

    @Test func includeIsPartOfTheSchemaJSONAndValidated() throws {
        let schema = try DocumentSchema(json: Data(Self.schemaJSON.utf8))
        let indexes = try schema.collection("people").indexes
        #expect(indexes[0].include == .fields(["last", "address"]))
        #expect(indexes[1].include == .document)
        #expect(try DocumentSchema(json: schema.jsonData()).collection("people").indexes == indexes)
        for (include, message) in [
            (#"[]"#, "non-empty array"), (#"["a", "a"]"#, "twice"), (#"["tags[]"]"#, "whole fields"),
            (#""all""#, "must be an array"), (#"[3]"#, "strings")
        ] {
            let json =
                #"{"collections": {"c": {"primaryKey": "id", "indexes": [{"name": "i", "fields": ["x"], "include": \#(include)}]}}}"#
            let error = try #require(throws: KVDocsError.self) { try DocumentSchema(json: Data(json.utf8)) }
            #expect(error.message.contains(message), "\(error.message)")
        }
        // An index without "include" keeps its stored definition (no rebuild on upgrade).
        #expect(
            SecondaryIndexDefinition(name: "i", fields: ["x"]).json == ["name": "i", "fields": ["x"], "unique": false])
    }
}
