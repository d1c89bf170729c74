import CAllocationCount
import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// The hot read paths allocate a bounded number of times per returned document, so that a
/// change that brings back a copy per entry, a tree per payload or a closure per match
/// fails here rather than only in kvbench. The tests run in a debug build, which allocates
/// more than a release one (kvbench and kvprofile report those); the bounds are generous,
/// about 1.2 times what the debug paths make today (in each test's comment): they catch a
/// return of per-entry work, not a single allocation more.
@Suite struct AllocationBoundTests {
    struct Person: Codable, Equatable {
        var id: String
        var name: String
        var age: Int
        var city: String
        var email: String
    }

    static func people(_ n: Int) -> [Person] {
        (0..<n).map {
            Person(
                id: "p\($0)", name: "Person number \($0)", age: 18 + $0 % 70, city: "City \($0 % 20)",
                email: "person\($0)@example.com")
        }
    }

    static func schema(covering: Bool) throws -> DocumentSchema {
        let include: SecondaryIndexDefinition.Inclusion = covering ? .document : .none
        return try DocumentSchema(collections: [
            "person": CollectionSchema(
                primaryKey: "id",
                indexes: [
                    SecondaryIndexDefinition(name: "by_city", fields: ["city"], include: include),
                    SecondaryIndexDefinition(name: "by_age", fields: ["age"], include: include)
                ])
        ])
    }

    /// The allocations the calling thread makes in `body`, per round, the least of a few
    /// rounds (the first of which may fill caches), or `nil` when this build does not count
    /// them (under a sanitizer).
    static func allocations(rounds: Int = 5, _ body: () throws -> Int) rethrows -> (perRound: UInt64, returned: Int)? {
        guard kv_allocations_counted() else { return nil }
        var least = UInt64.max, returned = 0
        for _ in 0..<rounds {
            let before = kv_allocations()
            returned = try body()
            least = min(least, kv_allocations() - before)
        }
        return (least, returned)
    }

    static func withPeople(covering: Bool, _ body: (DocumentStore) throws -> Void) throws {
        try withTemporaryDatabase { db, _ throws in
            let store = try DocumentStore(database: db, schema: try schema(covering: covering))
            let people = Self.people(2000)
            try store.write { batch in for p in people { try batch.insert("person", encoding: p) } }
            try body(store)
        }
    }

    @Test func theCountingAllocatorCountsThisThreadsAllocations() throws {
        guard kv_allocations_counted() else { return }
        let before = kv_allocations()
        var boxes: [[Int]] = []
        for i in 0..<100 { boxes.append([i, i + 1]) }
        #expect(kv_allocations() - before >= 100, "\(boxes.count) arrays")
    }

    /// A covering equality query (whole documents in the entries, limit 20): decoding every
    /// payload, today 328 allocations per query in a debug build, 16.4 per returned document
    /// (release, in kvprofile: 5.0, the document's members array and its strings longer than
    /// 15 bytes); answered from the decoded-document cache, 124 per query, 6.2 per document
    /// (the query's own work: the plan, the scan, the result array).
    @Test func aCoveringQueryAllocatesLittlePerReturnedDocument() throws {
        try Self.withPeople(covering: true) { store in
            let people = try store.collection("person")
            let query = DocumentQuery().where("city", .equal("City 3")).limit(20)
            #expect(try people.explain(query).covering)
            // Every payload decoded (the document cache off), then answered from the cache.
            store.decodedDocumentCacheLimit = 0
            guard let measured = try Self.allocations({ try people.find(query).count }) else { return }
            #expect(measured.returned == 20)
            let perDocument = Double(measured.perRound) / Double(measured.returned)
            #expect(perDocument <= 20, "\(measured.perRound) allocations for \(measured.returned) documents")
            store.decodedDocumentCacheLimit = DecodedDocumentCache.defaultLimit
            guard let cached = try Self.allocations({ try people.find(query).count }) else { return }
            let perCachedDocument = Double(cached.perRound) / Double(cached.returned)
            #expect(perCachedDocument <= 7.5, "\(cached.perRound) allocations for \(cached.returned) documents, cached")
        }
    }

    /// A typed equality query (an index, then a get per document, decoded straight from the
    /// stored bytes): today 547 allocations per query in a debug build, 27.4 per returned
    /// document (release, in kvprofile: 12.9, of which LevelDB's get makes several).
    @Test func aTypedEqualityQueryAllocatesLittlePerReturnedDocument() throws {
        try Self.withPeople(covering: false) { store in
            let people = try store.collection("person", of: Person.self)
            let query = DocumentQuery().where("city", .equal("City 3")).limit(20)
            #expect(try !store.collection("person").explain(query).covering)
            guard let measured = try Self.allocations({ try people.find(query).count }) else { return }
            #expect(measured.returned == 20)
            let perDocument = Double(measured.perRound) / Double(measured.returned)
            #expect(perDocument <= 33, "\(measured.perRound) allocations for \(measured.returned) documents")
        }
    }
}
