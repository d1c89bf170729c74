import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// A store whose catalog holds a record that cannot be read: what opening it throws, what
/// ``DocumentStore/remedy(for:root:)`` says fixes it, and that the fix works.
@Suite struct CatalogDamageTests {
    static let schema =
        #"{"collections": {"people": {"primaryKey": "id", "indexes": [{"name": "by_age", "fields": ["age"]}], "text": [{"name": "t", "fields": ["name"]}]}}}"#

    /// Runs `body` with a store of 6 people whose catalog record `record` (a key under
    /// ("m", …) of the root) holds garbage, and the database.
    func withDamagedCatalog(_ record: [TupleElement], root: Subspace = Subspace(), _ body: (LevelDB) throws -> Void)
        throws
    {
        try withTemporaryDatabase { db, _ in
            let store = try DocumentStore(
                database: db, schema: try DocumentSchema(json: Data(Self.schema.utf8)), root: root)
            for i in 0..<6 {
                try store.collection("people").insert([
                    "id": .int(Int64(i)), "age": .int(Int64(i % 3)), "name": .string("n\(i)")
                ])
            }
            try db.put(root.pack(Tuple(record)), Array("garbage".utf8))
            try body(db)
        }
    }

    static func openError(_ db: LevelDB, root: Subspace = Subspace()) -> KVDocsError? {
        do {
            _ = try DocumentStore(database: db, root: root)
            return nil
        } catch {
            return error as? KVDocsError
        }
    }

    @Test(
        arguments: [
            ["m", "index", "people", "by_age"], ["m", "text", "people", "t"], ["m", "index", "people", "no such index"],
            ["m", "seq"], ["m", "generation"]
        ] as [[TupleElement]])
    func salvageRepairsTheCatalogRecordsItCanRebuild(record: [TupleElement]) throws {
        for root in [Subspace(), Subspace(["app"])] {
            try withDamagedCatalog(record, root: root) { db in
                let error = try #require(Self.openError(db, root: root))
                #expect(error.kind == .corruption)
                #expect(DocumentStore.remedy(for: error, root: root) == .salvage, "\(error)")
                let (store, report) = try DocumentStore.salvage(database: db, root: root)
                #expect(report.catalogRepairs.count == 1, "\(report)")
                #expect(report.verification.isClean)
                #expect(try store.collection("people").count(DocumentQuery().where("age", .equal(1))) == 2)
                #expect(try store.collection("people").insert(["id": 9, "age": 1, "name": "x"]).sequence == 7)
                _ = try DocumentStore(database: db, root: root)  // opens again
            }
        }
    }

    @Test func aStoredSchemaThatCannotBeReadIsReplacedByTheSchemaGiven() throws {
        try withDamagedCatalog(["m", "schema"]) { db in
            let error = try #require(Self.openError(db))
            #expect(DocumentStore.remedy(for: error) == .reloadSchema, "\(error)")
            #expect(throws: KVDocsError.self) { try DocumentStore.salvage(database: db) }
            let store = try DocumentStore(database: db, schema: try DocumentSchema(json: Data(Self.schema.utf8)))
            #expect(try store.verify().isClean)
            #expect(try store.read { try $0.search("people", "n4") }.map(\.id) == [4])
            #expect(try store.collection("people").count(DocumentQuery().where("age", .equal(2))) == 2)
        }
    }

    @Test func aFormatVersionThatCannotBeReadHasNoRemedy() throws {
        try withDamagedCatalog(["m", "format"]) { db in
            let error = try #require(Self.openError(db))
            #expect(DocumentStore.remedy(for: error) == .none, "\(error)")
        }
    }

    @Test func aLayeredBackupIsAUserLayerAndAPlainStoreIsNot() throws {
        let dir = TemporaryDirectory("kvdocs-catalog")
        let base = dir.child("base"), user = dir.child("user"), backup = dir.child("backup")
        do {
            let db = try LevelDB(path: base)
            defer { db.close() }
            let store = try DocumentStore(database: db, schema: try DocumentSchema(json: Data(Self.schema.utf8)))
            try store.collection("people").insert(["id": 1, "age": 1, "name": "a"])
            #expect(try DocumentStore.isUserLayer(db) == false)
        }
        do {
            let layers = try LayeredDocumentStore(user: user, base: base, create: true)
            defer { layers.close() }
            try layers.store.collection("people").insert(["id": 2, "age": 2, "name": "b"])
            _ = try layers.backup(to: backup)
        }
        for path in [user, backup] {
            let db = try LevelDB(path: path)
            defer { db.close() }
            #expect(try DocumentStore.isUserLayer(db), "\(path)")
        }
    }
}
