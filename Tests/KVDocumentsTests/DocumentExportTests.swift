import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@Suite struct DocumentExportTests {
    static let schema =
        #"{"collections": {"things": {"primaryKey": "id", "indexes": [{"name": "by_age", "fields": ["age"]}]}, "other": {"primaryKey": "id"}}}"#

    static func withThings<R>(_ body: (DocumentStore, DocumentCollection, TemporaryDirectory) throws -> R) throws -> R {
        let dir = TemporaryDirectory()
        return try withTemporaryDatabase { db, _ throws in
            let store = try DocumentStore(database: db, schema: try DocumentSchema(json: Data(schema.utf8)))
            return try body(store, try store.collection("things"), dir)
        }
    }

    /// What `find` returns, written the way an export writes it.
    static func expectedLines(_ documents: [JSONValue]) throws -> Data {
        var data = Data()
        for d in documents {
            data.append(try d.canonicalData())
            data.append(0x0A)
        }
        return data
    }

    static func contents(_ file: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: file)) }

    @Test func anEmptyCollectionExportsAnEmptyFile() throws {
        try Self.withThings { _, things, dir throws in
            #expect(try things.exportJSONLines(to: dir.child("out.jsonl")) == 0)
            #expect(try Self.contents(dir.child("out.jsonl")).isEmpty)
        }
    }

    /// Random documents (integer and string ids, exact numbers, nested values, code-point
    /// keys) after random writes: the export is byte for byte what `find` reads, and
    /// importing it into an empty collection gives the same documents back.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func anExportIsWhatFindReadsAndImportsBackToTheSameDocuments(seed: UInt64) throws {
        try Self.withThings { store, things, dir throws in
            var rng = SplitMix64(seed: seed)
            for _ in 0..<400 {
                let id: JSONValue =
                    Bool.random(using: &rng)
                    ? .int(Int64.random(in: -50...50, using: &rng)) : .string("t\(Int.random(in: 0..<80, using: &rng))")
                if Int.random(in: 0..<6, using: &rng) == 0 {
                    try things.delete(id: id)
                } else {
                    var document = DocumentGenerator.document(id: id, &rng)
                    if case .object(var o) = document {
                        o["cafe\u{301}"] = .double(0.30000000000000004)
                        o["café"] = .double(-0.0)
                        document = .object(o)
                    }
                    try things.upsert(document)
                }
            }
            try store.collection("other").insert(["id": "not exported"])
            let file = dir.child("things.jsonl")
            let found = try things.find()
            #expect(try things.exportJSONLines(to: file) == found.count)
            #expect(try Self.contents(file) == Self.expectedLines(found))

            let copy = try withTemporaryDatabase { db, _ throws -> [JSONValue] in
                let imported = try DocumentStore(database: db, schema: try DocumentSchema(json: Data(Self.schema.utf8)))
                #expect(try imported.importJSONLines(into: "things", path: file, mode: .insert) == found.count)
                return try imported.collection("things").find()
            }
            #expect(copy == found)
        }
    }

    /// A store written by the format-1 code (migrated on open, documents left as that code
    /// wrote them), plus a document stored in a spelling that is not canonical (keys out of
    /// order, spaces, `-0`, `1E2`): the export writes every document as `find` reads it,
    /// canonical, not as stored.
    @Test func storedDocumentsAreExportedCanonicallyWhateverTheirStoredSpelling() throws {
        let dir = TemporaryDirectory()
        let path = dir.child("db")
        try FileManager.default.copyItem(
            atPath: packageRoot.appendingPathComponent("Tests/Fixtures/format1-db").path, toPath: path)
        let db = try LevelDB(path: path)
        defer { db.close() }
        let store = try DocumentStore(database: db)
        let things = try store.collection("things")
        let spelled = #"{ "n": -0, "id": 9, "code": "Z9", "meta": {"b": 1E2, "a": [ 1 ]} }"#
        try db.put(store.layout.document("things", .int(9)), spelled)
        let file = dir.child("things.jsonl")
        #expect(try things.exportJSONLines(to: file) == 4)
        #expect(try Self.contents(file) == Self.expectedLines(things.find()))
        let lines = try Self.contents(file).split(separator: 0x0A).map { String(decoding: $0, as: UTF8.self) }
        #expect(lines.last == #"{"code":"Z9","id":9,"meta":{"a":[1],"b":100.0},"n":-0.0}"#)
    }

    /// All collections of one read transaction come from its snapshot, whatever is written meanwhile.
    @Test func exportsOfATransactionReadItsSnapshot() throws {
        try Self.withThings { store, things, dir throws in
            try things.insert(["id": 1, "age": 30])
            try store.read { tx in
                try things.insert(["id": 2, "age": 40])
                try store.collection("other").insert(["id": "x"])
                #expect(try tx.exportJSONLines(from: "things", to: dir.child("things.jsonl")) == 1)
                #expect(try tx.exportJSONLines(from: "other", to: dir.child("other.jsonl")) == 0)
            }
            #expect(try Self.contents(dir.child("things.jsonl")) == Data("{\"age\":30,\"id\":1}\n".utf8))
            #expect(try store.exportJSONLines(from: "things", to: dir.child("now.jsonl")) == 2)
            #expect(
                try Self.contents(dir.child("now.jsonl")) == Data("{\"age\":30,\"id\":1}\n{\"age\":40,\"id\":2}\n".utf8)
            )
        }
    }

    @Test func aDamagedDocumentIsReportedNotExported() throws {
        try Self.withThings { store, things, dir throws in
            try things.insert(["id": 1])
            try store.leveldb.put(store.layout.document("things", .int(2)), "{not json")
            let error = expectError(.corruption) { try things.exportJSONLines(to: dir.child("out.jsonl")) }
            #expect(error?.message.hasPrefix("document 2 of \"things\" is not valid JSON: ") == true)
            #expect(error?.key == store.layout.document("things", .int(2)))
        }
    }

    /// A query that selects fields reads only those members of a binary document; damage
    /// on their path is still reported with the document and its key, as a full read does.
    @Test func aDamagedDocumentIsReportedWhenFieldsAreSelected() throws {
        try Self.withThings { store, things, dir throws in
            try things.insert(["id": 1, "age": 3])
            var bytes = try BinaryJSON.encode(["age": "x", "id": 2])
            // The age's string length now runs past the end of the document.
            if let s = bytes.firstIndex(of: UInt8(ascii: "x")) { bytes[s - 1] = 0x7F }
            try store.leveldb.put(store.layout.document("things", .int(2)), bytes)
            let error = expectError(.corruption) { _ = try things.find(DocumentQuery().select(["age"])) }
            #expect(error?.message.hasPrefix("document 2 of \"things\" is not valid JSON: ") == true)
            #expect(error?.key == store.layout.document("things", .int(2)))
        }
    }

    @Test func anUnknownCollectionOrAnUnwritableFileIsAnError() throws {
        try Self.withThings { store, things, dir throws in
            try things.insert(["id": 1])
            expectError(.schema) { try store.exportJSONLines(from: "nope", to: dir.child("out.jsonl")) }
            #expect(!FileManager.default.fileExists(atPath: dir.child("out.jsonl")))
            let file = dir.child("missing/out.jsonl")
            let error = expectError(.ioError) { try things.exportJSONLines(to: file) }
            #expect(error?.message == "cannot open \(file) for writing: No such file or directory")
        }
    }
}

@Suite struct DocumentStoreExistsTests {
    @Test func aStoreExistsOnceItsSchemaIsStoredUnderItsRoot() throws {
        try withTemporaryDatabase { db, _ throws in
            #expect(try !DocumentStore.exists(in: db))
            _ = try DocumentStore(database: db)  // no schema: nothing stored
            #expect(try !DocumentStore.exists(in: db))
            _ = try DocumentStore(database: db, schema: try peopleSchema(), root: Subspace(["app"]))
            #expect(try !DocumentStore.exists(in: db))
            #expect(try DocumentStore.exists(in: db, root: Subspace(["app"])))
            _ = try DocumentStore(database: db, schema: try peopleSchema())
            #expect(try DocumentStore.exists(in: db))
            db.close()
            expectError(.closed) { try DocumentStore.exists(in: db) }
        }
    }
}
