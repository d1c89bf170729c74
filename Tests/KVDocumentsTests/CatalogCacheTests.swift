import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// Reads use the cached catalog without reading its generation only while the database
/// has not been written since the cache was checked (LevelDB's write counter): any write,
/// through another store, a raw write or a schema change, makes the next read check again.
@Suite struct CatalogCacheTests {
    static let twoCollections = #"""
        {"collections": {"people": {"primaryKey": "id", "indexes": [{"name": "by_age", "fields": ["age"]}]},
                         "trips": {"primaryKey": "id"}}}
        """#

    @Test func aSchemaChangeByAnotherStoreIsSeenByTheNextGetAndFind() throws {
        try withTemporaryDatabase { db, _ throws in
            let a = try DocumentStore(database: db, schema: try DocumentSchema(json: Data(Self.twoCollections.utf8)))
            try a.collection("people").insert(["id": "p1", "age": 30])
            // Reads that the cache serves: the same answers, again and again.
            for _ in 0..<3 {
                #expect(try a.collection("people").get(id: "p1")?["age"] == 30)
                #expect(try a.collection("people").find(DocumentQuery().where("age", .equal(30))).count == 1)
            }
            // Another store on the database drops "people".
            let b = try DocumentStore(database: db)
            try b.apply(try DocumentSchema(collections: ["trips": CollectionSchema()]))
            let get = expectError(.schema) { try a.collection("people").get(id: "p1") }
            #expect(get?.message.hasPrefix("no collection \"people\"") == true)
            expectError(.schema) { try a.collection("people").find() }
            // And brings it back with another primary key.
            try b.apply(
                try DocumentSchema(collections: [
                    "people": CollectionSchema(primaryKey: "name"), "trips": CollectionSchema()
                ]))
            try b.collection("people").insert(["name": "Ada"])
            #expect(try a.collection("people").get(id: "Ada")?["name"] == "Ada")
        }
    }

    @Test func aRawWriteOfTheCatalogIsSeenByTheNextRead() throws {
        try withTemporaryDatabase { db, _ throws in
            let a = try DocumentStore(database: db, schema: try DocumentSchema(json: Data(Self.twoCollections.utf8)))
            try a.collection("people").insert(["id": "p1", "age": 30])
            #expect(try a.collection("people").get(id: "p1") != nil)
            // A raw write under the catalog's generation key, as `kvrepl put` could make: the
            // generation is unreadable now, and the next read says so instead of trusting the cache.
            try db.put(Tuple(["m", "generation"]).encoded, [0xFF])
            expectError(.corruption) { try a.collection("people").get(id: "p1") }
        }
    }

    @Test func getsRacingSchemaChangesSeeOneCatalogOrTheOther() throws {
        try withTemporaryDatabase { db, _ throws in
            let store = try DocumentStore(
                database: db, schema: try DocumentSchema(json: Data(Self.twoCollections.utf8)))
            for i in 0..<50 { try store.collection("people").insert(["id": .string("p\(i)"), "age": .int(Int64(i))]) }
            let failures = Locked<[String]>([])
            let done = ManagedAtomicFlag()
            DispatchQueue.concurrentPerform(iterations: 3) { worker in
                if worker == 0 {
                    // Drops and adds the index, back and forth: the documents stay.
                    for round in 0..<20 {
                        var schema = try? DocumentSchema(json: Data(Self.twoCollections.utf8))
                        if round % 2 == 0 { schema?.collections["people"]?.indexes = [] }
                        do { try schema.map { try store.apply($0) } } catch {
                            failures.withLock { $0.append("apply: \(error)") }
                        }
                    }
                    done.set()
                    return
                }
                while !done.isSet {
                    do {
                        let i = Int.random(in: 0..<50)
                        let doc = try store.collection("people").get(id: .string("p\(i)"))
                        if doc?["age"] != .int(Int64(i)) {
                            failures.withLock { $0.append("p\(i): \(String(describing: doc))") }
                        }
                    } catch {
                        failures.withLock { $0.append("get: \(error)") }
                    }
                }
            }
            #expect(failures.withLock { $0 }.isEmpty)
        }
    }
}
