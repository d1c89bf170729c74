import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

// The toy kind is `LengthIndexKind` (Tests/KVDocsTestSupport/LengthIndexKind.swift): written
// with the public API only, outside the library.

// MARK: - The tests

@Suite struct IndexKindRegistrationTests {
    static let schemaJSON = #"""
        {"collections": {"words": {"primaryKey": "id",
          "indexes": [{"name": "by_word", "fields": ["word"]},
                      {"name": "by_length", "type": "length", "fields": ["word"]}],
          "text": [{"name": "word_text", "fields": ["word"]}]}}}
        """#

    init() throws { try IndexKindRegistry.register(LengthIndexKind()) }

    /// The entries of the length index, as (length, id) pairs, in key order.
    static func entries(_ db: LevelDB, collection: String = "words", index: String = "by_length") throws
        -> [(Int64, String)]
    {
        let subspace = Layout(root: Subspace()).subspace(of: IndexIdentity(collection, index, LengthIndexKind.kind))
        var result: [(Int64, String)] = []
        let cursor = try db.scan(subspace.range, order: .forward)
        while let key = try cursor.next({ k, _ in Array(k) }) {
            let t = try subspace.unpack(key)
            result.append((try t.int64(at: 0), try t.string(at: 1)))
        }
        return result
    }

    /// The length index a brute-force pass over `documents` implies.
    static func model(_ documents: [String: String]) -> [(Int64, String)] {
        documents.map { (Int64($0.value.utf8.count), $0.key) }.sorted {
            $0.0 != $1.0 ? $0.0 < $1.0 : Array($0.1.utf8).lexicographicallyPrecedes(Array($1.1.utf8))
        }
    }

    static func same(_ a: [(Int64, String)], _ b: [(Int64, String)]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
    }

    @Test func aRegisteredKindIsBuiltMaintainedVerifiedAndDroppedLikeABuiltInOne() throws {
        let dir = TemporaryDirectory()
        let path = dir.child("db")
        var model: [String: String] = [:]
        var rng = SplitMix64(seed: 7)
        let words = ["", "a", "ab", "straße", "日本語", "naïve", "kvdocs", "é", "emoji 🎉"]
        do {
            let db = try LevelDB(path: path)
            defer { db.close() }
            // Documents first, without the index: the build must cover them.
            let plain = try DocumentSchema(collections: ["words": CollectionSchema()])
            let before = try DocumentStore(database: db, schema: plain)
            for i in 0..<200 {
                let word = words[Int(rng.next() % UInt64(words.count))] + String(repeating: "x", count: i % 5)
                try before.collection("words").insert(["id": .string("w\(i)"), "word": .string(word)])
                model["w\(i)"] = word
            }
            try before.collection("words").insert(["id": "n1", "word": 42])  // not a string: no entry

            // Build, reporting progress like the built-in kinds.
            let schema = try DocumentSchema(json: Data(Self.schemaJSON.utf8))
            var built: [String] = []
            let store = try DocumentStore(database: db, schema: schema) { built.append($0.index) }
            #expect(built.contains("by_length"))
            #expect(Self.same(try Self.entries(db), Self.model(model)))
            #expect(try store.verify().isClean)

            // Writes: insert, update, delete, and a write that makes the field a non-string.
            let words = try store.collection("words")
            for step in 0..<300 {
                let id = "w\(Int(rng.next() % 260))"
                switch rng.next() % 4 {
                case 0:
                    _ = try words.delete(id: .string(id))
                    model[id] = nil
                case 1:
                    try words.upsert(["id": .string(id), "word": .null])
                    model[id] = nil
                default:
                    let word = String(repeating: "y", count: Int(rng.next() % 12)) + "\(step)"
                    try words.upsert(["id": .string(id), "word": .string(word)])
                    model[id] = word
                }
            }
            #expect(Self.same(try Self.entries(db), Self.model(model)))
            #expect(try store.verify().isClean)

            // verify reports a damaged entry and a missing one.
            let subspace = Layout(root: Subspace()).subspace(
                of: IndexIdentity("words", "by_length", LengthIndexKind.kind))
            try db.put(subspace.pack([.int(999), "ghost"]), [UInt8]())
            let first = try #require(try Self.entries(db).first)
            try db.delete(subspace.pack([.int(first.0), .string(first.1)]))
            let report = try store.verify(collection: "words")
            #expect(report.danglingEntries == 1 && report.missingEntries == 1)
            #expect(!report.isClean)
        }

        // The schema JSON round trip; then reopening the store, whose stored schema declares
        // the kind, and reindexing the damaged index.
        let schema = try DocumentSchema(json: Data(Self.schemaJSON.utf8))
        let again = try DocumentSchema(json: schema.jsonData())
        #expect(again == schema)
        #expect(again.jsonData() == schema.jsonData())
        let written = try #require(try JSONValue(parsing: schema.jsonData())["collections"]?["words"]?["indexes"])
        #expect(
            written
                == [
                    ["name": "by_word", "fields": ["word"], "unique": false],
                    ["name": "by_length", "type": "length", "fields": ["word"]]
                ])
        do {
            let db = try LevelDB(path: path)
            defer { db.close() }
            let store = try DocumentStore(database: db, schema: schema)
            try store.reindex(collection: "words")
            #expect(Self.same(try Self.entries(db), Self.model(model)))
            #expect(try store.verify().isClean)

            // Drop: a schema without the index removes its entries and its state.
            var smaller = schema
            smaller.collections["words"]?.definitions.removeAll { $0.kind == LengthIndexKind.kind }
            try store.apply(smaller)
            #expect(try Self.entries(db).isEmpty)
            let state = DocumentCatalog().stateKey(IndexIdentity("words", "by_length", LengthIndexKind.kind))
            #expect(try db.get(state) == nil)
            #expect(try store.verify().isClean)
        }
    }

    @Test func theKindChecksItsOptionsAndTheSchemaNamesWhatIsWrong() throws {
        func schemaError(_ json: String) -> String? {
            do {
                _ = try DocumentSchema(json: Data(json.utf8), file: "s.json")
                return nil
            } catch let e as KVDocsError {
                return e.message
            } catch { return "\(error)" }
        }
        let twoFields = #"{"collections": {"w": {"indexes": [{"name": "l", "type": "length", "fields": ["a", "b"]}]}}}"#
        #expect(
            schemaError(twoFields)
                == "s.json: collection \"w\": index \"l\": a length index takes \"fields\": [one field path]")
        let extra = #"{"collections": {"w": {"indexes": [{"name": "l", "type": "length", "fields": ["a"], "x": 1}]}}}"#
        #expect(schemaError(extra)?.contains("unknown member \"x\" for a length index") == true)
        let unknown = #"{"collections": {"w": {"indexes": [{"name": "l", "type": "lenght", "fields": ["a"]}]}}}"#
        let message = try #require(schemaError(unknown))
        #expect(message.contains("\"type\" must be \"geo\" or a registered kind: ") && message.contains("\"length\""))
        let duplicate =
            #"{"collections": {"w": {"indexes": [{"name": "l", "fields": ["a"]}, {"name": "l", "type": "length", "fields": ["a"]}]}}}"#
        #expect(schemaError(duplicate)?.contains("index \"l\" is declared twice") == true)
    }

    @Test func reservedAndTakenKindNamesAreRefused() throws {
        struct Impostor: IndexKind {
            let kind: IndexIdentity.Kind
            func validate(_ definition: AnyIndexDefinition) throws {}
            func maintainer(
                for definition: AnyIndexDefinition, identity: IndexIdentity, schema: CollectionSchema,
                subspace: Subspace
            ) -> any IndexMaintainer {
                LengthIndexKind().maintainer(for: definition, identity: identity, schema: schema, subspace: subspace)
            }
        }
        for name in ["", "geo", "text", "index", "schema", "format", "undo"] {
            #expect(throws: KVDocsError.self) {
                try IndexKindRegistry.register(Impostor(kind: IndexIdentity.Kind(catalogName: name)))
            }
        }
        #expect(throws: KVDocsError.self) { try IndexKindRegistry.register(Impostor(kind: LengthIndexKind.kind)) }
        try IndexKindRegistry.register(LengthIndexKind())  // the same kind again: nothing happens
    }

    @Test func typedViewsAndGenericDefinitionsAgree() throws {
        var c = CollectionSchema(
            indexes: [SecondaryIndexDefinition(name: "a", fields: ["x"], unique: true)],
            text: [TextIndexDefinition(name: "t", fields: ["body"], tokenizer: .porter)],
            geo: [GeoIndexDefinition(name: "g", field: "loc")])
        c.definitions.insert(
            try AnyIndexDefinition(name: "l", kind: LengthIndexKind.kind, options: ["fields": ["x"]]), at: 0)
        c.indexes.append(SecondaryIndexDefinition(name: "b", fields: ["y"], sparse: true))
        #expect(c.definitions.map(\.name) == ["a", "b", "t", "g", "l"])
        #expect(c.indexes.map(\.name) == ["a", "b"] && c.text.map(\.name) == ["t"] && c.geo.map(\.name) == ["g"])
        // Built-in definitions made from their options equal the typed ones.
        for d in c.definitions where d.kind != LengthIndexKind.kind {
            #expect(try AnyIndexDefinition(name: d.name, kind: d.kind, options: d.options) == d)
        }
        #expect(throws: KVDocsError.self) {
            try AnyIndexDefinition(name: "q", kind: IndexIdentity.Kind(catalogName: "nope"), options: [:])
        }
        _ = try DocumentSchema(collections: ["c": c])
    }

    /// The schema JSON of the built-in kinds is written byte for byte as earlier versions
    /// wrote it: every fixture store's stored schema (from format 2 on) reads back and writes
    /// the same bytes.
    @Test(.readsSnappyFixture) func storedSchemasOfEarlierVersionsAreWrittenBackByteForByte() throws {
        let fixtures = packageRoot.appendingPathComponent("Tests/Fixtures")
        let names = try FileManager.default.contentsOfDirectory(atPath: fixtures.path).filter { $0.hasSuffix("-db") }
            .sorted()
        var checked = 0
        for name in names {
            let dir = TemporaryDirectory()
            let path = dir.child("db")
            try FileManager.default.copyItem(atPath: fixtures.appendingPathComponent(name).path, toPath: path)
            let db = try LevelDB(path: path)
            defer { db.close() }
            // Format 1 stores wrote their schema through Foundation; from format 2 on it is canonical.
            guard try db.get(Subspace().pack(["m", "format"])) != nil,
                let stored = try db.get(Subspace().pack(["m", "schema"]))
            else { continue }
            let schema = try DocumentSchema(json: Data(stored), file: name)
            #expect(Array(schema.jsonData()) == stored, "\(name)")
            checked += 1
        }
        #expect(checked >= 5)
    }
}
