import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// `ReadTransaction.forEach`: the documents `find` returns, handed over one at a time as the
/// scan reaches them.
@Suite struct ReadTransactionForEachTests {
    static let schema =
        #"{"collections": {"people": {"primaryKey": "id", "indexes": [{"name": "by_age", "fields": ["age"]}]}}}"#

    static let queries: [DocumentQuery] = [
        DocumentQuery(),
        DocumentQuery().limit(7).offset(3),
        DocumentQuery().where("age", .greaterOrEqual(30)),
        DocumentQuery().where("age", .in([20, 31, 44])),
        DocumentQuery().where("age", .between(25, 40)).orderBy("age", descending: true).limit(9),
        DocumentQuery().orderBy("name").offset(5),
        DocumentQuery().where("age", .less(50)).select(["name"])
    ]

    @Test func forEachHandsOverWhatFindReturnsInItsOrder() throws {
        try withTemporaryDatabase { db, _ in
            let store = try DocumentStore(database: db, schema: try DocumentSchema(json: Data(Self.schema.utf8)))
            for i in 0..<120 {
                try store.collection("people").insert([
                    "id": .int(Int64(i)), "age": .int(Int64(18 + (i * 7) % 40)), "name": .string("n\((i * 13) % 120)")
                ])
            }
            try store.read { tx in
                for query in Self.queries {
                    var handed: [JSONValue] = []
                    try tx.forEach("people", query) { handed.append($0) }
                    #expect(handed == (try tx.find("people", query)), "\(query)")
                }
            }
        }
    }

    /// A document is handed over before the next one is read: the documents before a
    /// damaged one arrive, then its error.
    @Test func forEachHandsOverEachDocumentBeforeReadingTheNext() throws {
        try withTemporaryDatabase { db, _ in
            let store = try DocumentStore(database: db, schema: try DocumentSchema(json: Data(Self.schema.utf8)))
            for i in 0..<10 { try store.collection("people").insert(["id": .int(Int64(i)), "age": .int(Int64(i))]) }
            try db.put(Tuple(["d", "people", .int(7)]), Array("{broken".utf8))
            var handed: [JSONValue] = []
            #expect(throws: KVDocsError.self) {
                try store.read { tx in try tx.forEach("people") { handed.append($0["id"] ?? .null) } }
            }
            #expect(handed == (0..<7).map { .int(Int64($0)) })
        }
    }

    /// An error thrown by the body ends the scan and reaches the caller.
    @Test func anErrorFromTheBodyEndsTheScan() throws {
        try withTemporaryDatabase { db, _ in
            let store = try DocumentStore(database: db, schema: try DocumentSchema(json: Data(Self.schema.utf8)))
            for i in 0..<10 { try store.collection("people").insert(["id": .int(Int64(i)), "age": .int(Int64(i))]) }
            var seen = 0
            #expect(throws: KVDocsError.self) {
                try store.read { tx in
                    try tx.forEach("people") { _ in
                        seen += 1
                        if seen == 3 { throw KVDocsError(.invalidArgument, "enough") }
                    }
                }
            }
            #expect(seen == 3)
        }
    }
}
