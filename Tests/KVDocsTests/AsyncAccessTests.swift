import Foundation
import Testing
@testable import KVDocs
import KVDocsTestSupport

/// The async API: the same reads and writes, run on the store's executor (never on the
/// caller's thread), a read transaction with one snapshot across collections, and
/// cancellation before a call starts writing nothing.
@Suite struct AsyncAccessTests {
    static let schema = #"""
    {"collections": {"people": {"primaryKey": "id", "indexes": [{"name": "by_age", "fields": ["age"]}],
                                "text": [{"name": "bio_text", "fields": ["bio"]}]},
                     "trips": {"primaryKey": "id"}}}
    """#

    static func open(_ dir: TemporaryDirectory) throws -> (Database, DocumentStore) {
        let db = try Database(path: dir.child("db"))
        return (db, try DocumentStore(database: db, schema: try Schema(json: Data(schema.utf8))))
    }

    @MainActor
    @Test func readsAndWritesRunOnTheStoresExecutorNotTheCallers() async throws {
        let dir = TemporaryDirectory()
        let (db, store) = try Self.open(dir)
        defer { db.close() }
        #expect(!StoreExecutor.isCurrent)
        let wroteThere = try await store.write { batch in
            try batch.insert("people", ["id": 1, "age": 30, "bio": "river"])
            return StoreExecutor.isCurrent
        }
        let readThere = try await store.read { _ in StoreExecutor.isCurrent }
        #expect(wroteThere)
        #expect(readThere)
        #expect(!StoreExecutor.isCurrent)
    }

    @Test func everyCollectionCallHasAnAsyncVariantWithTheSameResults() async throws {
        struct Person: Codable, Sendable, Equatable { var id: Int; var age: Int; var bio: String }
        let dir = TemporaryDirectory()
        let (db, store) = try Self.open(dir)
        defer { db.close() }
        let people = try store.collection("people")
        let typed = try store.collection("people", of: Person.self)
        #expect(try await people.insert(["id": 1, "age": 30, "bio": "river bank"]).operation == .insert)
        #expect(try await people.upsert(["id": 1, "age": 31, "bio": "river bank"]).operation == .update)
        #expect(try await people.update(["id": 1, "age": 32, "bio": "river bank"]).operation == .update)
        try await typed.insert(Person(id: 2, age: 20, bio: "ocean river"))
        try await typed.upsert(Person(id: 3, age: 70, bio: "mountain"))
        try await typed.update(Person(id: 3, age: 71, bio: "mountain"))
        #expect(try await people.get(id: 1)?["age"] == 32)
        #expect(try await typed.get(id: 2) == Person(id: 2, age: 20, bio: "ocean river"))
        let young = Query().where("age", .less(50)).orderBy("age")
        #expect(try await people.find(young).map { $0["id"] } == [2, 1])
        #expect(try await typed.find(young).map(\.id) == [2, 1])
        #expect(try await people.count(young) == 2)
        #expect(try await typed.count() == 3)
        let hits = try await people.search("river")
        #expect(try await hits == store.read { try $0.search("people", "river") })
        #expect(try await people.delete(id: 3))
        #expect(try await typed.delete(id: 3) == false)
        #expect(try await store.changes(since: 0).count == 7)
        // Errors come through unchanged.
        await #expect(throws: KVDocsError.self) { try await people.insert(["id": 1, "age": 1, "bio": ""]) }
    }

    @Test func anAsyncReadTransactionSeesOneSnapshotAcrossCollectionsWhileWritersRun() async throws {
        let dir = TemporaryDirectory()
        let (db, store) = try Self.open(dir)
        defer { db.close() }
        try await withThrowingTaskGroup(of: [String].self) { group in
            group.addTask {
                for i in 0..<300 {
                    try await store.write { batch in
                        try batch.insert("people", ["id": .int(Int64(i)), "age": 1, "bio": "x"])
                        try batch.insert("trips", ["id": .int(Int64(i))])
                    }
                }
                return []
            }
            for _ in 0..<4 {
                group.addTask {
                    var problems: [String] = []
                    for _ in 0..<100 {
                        let (p, t) = try await store.read { tx in (try tx.count("people"), try tx.count("trips")) }
                        if p != t { problems.append("people \(p), trips \(t)") }
                    }
                    return problems
                }
            }
            for try await problems in group { #expect(problems.isEmpty) }
        }
    }

    @Test func aCallCancelledBeforeItStartsWritesNothing() async throws {
        let dir = TemporaryDirectory()
        let (db, store) = try Self.open(dir)
        defer { db.close() }
        let people = try store.collection("people")
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await people.insert(["id": 1, "age": 1, "bio": ""])
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(try await people.count() == 0)
        #expect(store.lastSequence == 0)
    }

    @Test func asyncWritesOfOneStoreApplyInTheOrderSubmitted() async throws {
        let dir = TemporaryDirectory()
        let (db, store) = try Self.open(dir)
        defer { db.close() }
        let people = try store.collection("people")
        for version in 0..<50 {
            try await people.upsert(["id": 1, "age": .int(Int64(version)), "bio": ""])
        }
        #expect(try await people.get(id: 1)?["age"] == 49)
        #expect(try await store.changes().map(\.sequence) == Array(1...50))
    }
}
