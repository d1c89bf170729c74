import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// A schema change that fails keeps nothing of the new schema and leaves the stored one
/// fully in force; writes cannot nest; verify speaks only of ready indexes.
@Suite struct SchemaChangeRecoveryTests {
    static func schema(_ indexes: String) throws -> DocumentSchema {
        try DocumentSchema(json: Data(#"{"collections": {"people": {"indexes": [\#(indexes)]}}}"#.utf8))
    }

    /// A failed apply used to drop the stored schema's unique index before its own build
    /// failed, so duplicates were accepted afterwards and the store could not reopen.
    @Test func aFailedApplyRestoresTheIndexesItDropped() throws {
        try withTemporaryDatabase { db, _ throws in
            let v1 = try Self.schema(#"{"name": "by_email", "fields": ["email"], "unique": true}"#)
            let v2 = try Self.schema(#"{"name": "by_handle", "fields": ["handle"], "unique": true}"#)
            let store = try DocumentStore(database: db, schema: v1)
            let people = try store.collection("people")
            try people.insert(["id": 1, "email": "a@x", "handle": "h"])
            try people.insert(["id": 2, "email": "b@x", "handle": "h"])
            let error = #expect(throws: KVDocsError.self) { try store.apply(v2) }
            #expect(error?.kind == .uniqueViolation)
            #expect(try store.schema == v1)
            #expect(throws: KVDocsError.self) { try people.insert(["id": 3, "email": "a@x"]) }
            #expect(try store.verify().isClean)
            #expect(try people.explain(DocumentQuery().where("email", .equal("a@x"))).index == "by_email")
            let reopened = try DocumentStore(database: db)
            #expect(try reopened.verify().isClean)
        }
    }

    /// A failed apply used to leave the indexes it had built marked ready; nothing kept them
    /// up to date under the stored schema, and a later apply trusted them.
    @Test func indexesBuiltByAFailedApplyAreNotTrustedLater() throws {
        try withTemporaryDatabase { db, _ throws in
            let v1 = try Self.schema("")
            let v2 = try Self.schema(
                #"{"name": "by_age", "fields": ["age"]}, {"name": "by_email", "fields": ["email"], "unique": true}"#)
            let store = try DocumentStore(database: db, schema: v1)
            let people = try store.collection("people")
            try people.insert(["id": 1, "age": 30, "email": "a@x"])
            try people.insert(["id": 2, "age": 31, "email": "a@x"])
            #expect(throws: KVDocsError.self) { try store.apply(v2) }
            try people.insert(["id": 9, "age": 40])
            try people.upsert(["id": 2, "age": 31, "email": "b@x"])
            try store.apply(v2)
            #expect(try people.find(DocumentQuery().where("age", .equal(40))).map { $0["id"] } == [9])
            #expect(try store.verify().isClean)
        }
    }

    @Test func aWriteInsideAnotherWriteIsRefusedAndNothingIsWritten() throws {
        try withPeopleStore { store, people throws in
            let error = #expect(throws: KVDocsError.self) {
                try store.write { batch in
                    try batch.insert("people", ["id": 1, "email": "a@x"])
                    try people.insert(["id": 2, "email": "a@x"])
                }
            }
            #expect(error?.kind == .invalidArgument)
            #expect(error?.message.contains("inside another write") == true)
            #expect(try people.count() == 0)
            #expect(try store.changes().isEmpty)
            // Progress callbacks of an index build cannot write either.
            var refusals = 0
            try store.reindex(collection: "people", index: "by_age") { _ in
                if (try? people.insert(["id": 3])) == nil { refusals += 1 }
            }
            #expect(refusals > 0)
            try people.insert(["id": 4])
            #expect(try people.count() == 1)
            #expect(try store.verify().isClean)
        }
    }

    @Test func aTextIndexOnAnEmptyCollectionVerifiesClean() throws {
        try withPeopleStore { store, people throws in
            #expect(try store.verify().isClean)
            try store.reindex(collection: "people")
            #expect(try store.verify().isClean)
            try people.insert(["id": 1, "bio": "night train"])
            try people.delete(id: 1)
            #expect(try store.verify().isClean)
        }
    }
}

@Suite struct TextTermCodePointTests {
    static let composed = "\u{D55C}"  // 한 as one syllable
    static let conjoining = "\u{1112}\u{1161}\u{11AB}"  // 한 as conjoining jamo

    /// Terms that Swift's String calls equal are two terms: changing a document from one
    /// spelling to the other leaves no posting of the old one behind.
    @Test func termsThatDifferOnlyInNormalisationAreTwoTerms() throws {
        #expect(Self.composed == Self.conjoining)
        try withPeopleStore { store, people throws in
            try people.insert(["id": 1, "bio": .string(Self.composed)])
            #expect(try people.search(Self.composed).map(\.id) == [1])
            try people.upsert(["id": 1, "bio": .string(Self.conjoining)])
            #expect(try store.verify().isClean)
            #expect(try people.search(Self.composed).isEmpty)
            #expect(try people.search(Self.conjoining).map(\.id) == [1])
        }
    }
}
