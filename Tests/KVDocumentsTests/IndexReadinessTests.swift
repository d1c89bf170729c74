import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// Index readiness is kept by typed identity (collection, name, kind), not joined strings.
@Suite struct IndexReadinessTests {
    /// The issue's scenario: a secondary index "#body" and a text index "body" added
    /// together used to share the readiness string "notes/#body", so the text index was
    /// never built: search found nothing and verify reported missing entries.
    @Test func aSecondaryIndexNamedLikeATextIndexNoLongerHidesItsBuild() throws {
        try withTemporaryDatabase { db, _ throws in
            let s1 = try DocumentSchema(json: Data(#"{"collections": {"notes": {}}}"#.utf8))
            let s2 = try DocumentSchema(
                json: Data(
                    #"""
                    {"collections": {"notes": {"indexes": [{"name": "#body", "fields": ["title"]}],
                                               "text": [{"name": "body", "fields": ["text"]}]}}}
                    """#.utf8))
            let store = try DocumentStore(database: db, schema: s1)
            try store.collection("notes").upsert(["id": 1, "title": "one", "text": "hello world"])
            try store.collection("notes").upsert(["id": 2, "title": "two", "text": "goodbye"])
            try store.apply(s2)
            #expect(try store.collection("notes").search("hello").map(\.id) == [1])
            #expect(try store.verify().isClean)
            // Reopened from the catalog: both are ready, nothing is rebuilt.
            var rebuilt: [String] = []
            let reopened = try DocumentStore(database: db) { rebuilt.append($0.index) }
            #expect(rebuilt.isEmpty)
            #expect(try reopened.collection("notes").search("hello").map(\.id) == [1])
            #expect(
                try reopened.collection("notes").explain(DocumentQuery().where("title", .equal("one"))).index == "#body"
            )
        }
    }

    @Test func collectionAndIndexNamesWithSlashesDoNotCollide() throws {
        try withTemporaryDatabase { db, _ throws in
            let s1 = try DocumentSchema(
                json: Data(#"{"collections": {"a/b": {"indexes": [{"name": "c", "fields": ["x"]}]}, "a": {}}}"#.utf8))
            let s2 = try DocumentSchema(
                json: Data(
                    #"{"collections": {"a/b": {"indexes": [{"name": "c", "fields": ["x"]}]}, "a": {"indexes": [{"name": "b/c", "fields": ["x"]}]}}}"#
                        .utf8))
            let store = try DocumentStore(database: db, schema: s1)
            try store.collection("a").insert(["id": 1, "x": 5])
            try store.collection("a/b").insert(["id": 1, "x": 6])
            try store.apply(s2)
            #expect(try store.verify().isClean)
            #expect(try store.collection("a").explain(DocumentQuery().where("x", .equal(5))).index == "b/c")
            #expect(try store.collection("a").find(DocumentQuery().where("x", .equal(5))).count == 1)
        }
    }
}
