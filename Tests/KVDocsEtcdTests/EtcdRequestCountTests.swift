import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@testable import KVDocsEtcd

extension EtcdClusterTests {
    /// What reads cost in requests (round trips to the cluster), the measure of speed over
    /// a network that a test can assert without timing anything.
    @Suite struct EtcdRequestCountTests {
        @Test func readsCostAFewRequestsEachAndASearchReadsRowsInRanges() throws {
            try withEtcdStore { etcd throws in
                let schema = try EtcdDocumentTests.schema()
                let store = try DocumentStore(store: etcd, schema: schema)
                let words = [
                    "river", "station", "harbour", "train", "coffee", "garden", "market", "ocean", "bridge", "tower"
                ]
                for start in stride(from: 0, to: 2000, by: 100) {
                    try store.write { batch in
                        for i in start..<(start + 100) {
                            try batch.insert(
                                "people",
                                [
                                    "id": .int(Int64(i)), "age": .int(Int64((i * 7) % 90)),
                                    "email": .string("p\(i)@x.org"),
                                    "bio": .string(
                                        (0..<6).map { words[($0 * 3 + i) % words.count] }.joined(separator: " "))
                                ])
                        }
                    }
                }
                let people = try store.collection("people")
                func requests(_ body: () throws -> Void) rethrows -> Int {
                    let before = etcd.connection.requests.withLock { $0 }
                    try body()
                    return etcd.connection.requests.withLock { $0 } - before
                }
                let get = try requests { _ = try people.get(id: 77) }
                let find = try requests {
                    _ = try people.find(DocumentQuery().where("age", .greaterOrEqual(30)).orderBy("age").limit(20))
                }
                let search = try requests { _ = try people.search("river station", options: SearchOptions(limit: 10)) }
                // The revision, the catalog's generation, the document.
                #expect(get == 3)
                // And the index's entries in one range read, the 20 documents in one more
                // (one request each, it was 23).
                #expect(find == 4)
                // 2,000 documents, every one holding a term: their row ids are read in ranges
                // of 256 (one by one, this search made 631 requests).
                #expect(search < 40, "\(search) requests")
                // The 10 hits' documents in one request: without them, as many requests less one.
                let bare = try requests {
                    _ = try people.search(
                        "river station", options: SearchOptions(limit: 10, includeDocuments: false))
                }
                #expect(search == bare + 1, "\(search) with documents, \(bare) without")
                // An order no index gives: every match's document, 256 per request (one by
                // one, 1,334 requests).
                let ordered = try requests {
                    _ = try people.find(DocumentQuery().where("age", .greaterOrEqual(30)).orderBy("bio").limit(5))
                }
                #expect(ordered < 20, "\(ordered) requests")  // 1,334 matches
            }
        }
    }
}
