import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// The decoded-document cache returns what decoding the bytes read would return, and
/// nothing else: never a value of other bytes (a document rewritten, a snapshot older or
/// newer), within its byte limit, and not at all with a limit of 0.
@Suite struct DecodedDocumentCacheTests {
    /// What a document's bytes decode to in the model of the cache's tests: a pure function.
    static func decoded(_ bytes: UnsafeRawBufferPointer) -> JSONValue {
        .string(bytes.map { String($0, radix: 16) }.joined(separator: "."))
    }

    @Test func aKeyReadWithOtherBytesIsDecodedAgainNeverAnsweredFromTheCache() {
        let cache = DecodedDocumentCache(limit: 1 << 20)
        var decodes = 0
        func read(_ key: [UInt8], _ bytes: [UInt8]) -> JSONValue {
            bytes.withUnsafeBytes { b in
                cache.value(key: key, bytes: b) {
                    decodes += 1
                    return Self.decoded(b)
                }
            }
        }
        let key: [UInt8] = [1, 2, 3]
        for _ in 0..<3 { #expect(read(key, [7, 7]) == .string("7.7")) }
        // The first miss is only remembered; the second keeps the value; the third is a hit.
        #expect(decodes == 2)
        #expect(read(key, [7, 8]) == .string("7.8"))
        #expect(read(key, [7]) == .string("7"))
        #expect(read(key, [7, 7, 0]) == .string("7.7.0"))
        #expect(read([1, 2], [3, 7, 7]) == .string("3.7.7"))
        #expect(read(key, []) == .string(""))
        #expect(decodes == 7)
        #expect(cache.statistics.hits == 1)
    }

    @Test func randomReadsOfManyKeysAnswerAsDecodingAndStayWithinTheLimit() {
        var rng = SplitMix64(seed: 3)
        for limit in [0, 4096, 64 << 10, 4 << 20] {
            let cache = DecodedDocumentCache(limit: limit)
            // 3,000 keys, each with one of three versions of its bytes (some longer than an
            // eighth of the small limits, so never kept); reads drawn with a skew.
            let keys = (0..<3000).map { i -> [UInt8] in [0x15] + Array("k\(i)".utf8) }
            var largest = 0
            for step in 0..<40_000 {
                let k = Int(rng.next() % 3000) % (step % 2 == 0 ? 60 : 3000)
                let version = Int(rng.next() % 3)
                let length = version == 2 ? 700 : 1 + k % 40
                let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 * 31 + k + version) }
                let value = bytes.withUnsafeBytes { b in cache.value(key: keys[k], bytes: b) { Self.decoded(b) } }
                #expect(value == bytes.withUnsafeBytes { Self.decoded($0) })
                largest = max(largest, cache.charged)
                #expect(cache.charged <= limit)
            }
            let stats = cache.statistics
            if limit == 0 {
                #expect(stats.hits == 0 && largest == 0)
            } else {
                #expect(stats.hits > 0, "limit \(limit)")
            }
        }
    }

    /// Documents read often stay kept while reads spread over many more documents than the
    /// cache holds go by: a newcomer replaces an entry only when read more often lately.
    @Test func readsSpreadOverManyDocumentsDoNotEvictTheOnesReadOften() {
        let cache = DecodedDocumentCache(limit: 64 << 10)
        func read(_ i: Int) -> Bool {
            let before = cache.statistics.hits
            let bytes = [UInt8(truncatingIfNeeded: i), UInt8(truncatingIfNeeded: i >> 8), 1, 2, 3]
            let value = bytes.withUnsafeBytes { b in cache.value(key: Array("k\(i)".utf8), bytes: b) { Self.decoded(b) }
            }
            #expect(value == bytes.withUnsafeBytes { Self.decoded($0) })
            return cache.statistics.hits > before
        }
        let hot = Array(0..<40)
        for _ in 0..<8 { for i in hot { _ = read(i) } }
        #expect(hot.allSatisfy { read($0) })
        // 20,000 other documents, each read twice: about 60 times what the cache holds.
        for round in 0..<2 {
            for i in 1000..<21_000 {
                _ = read(i)
                _ = round
            }
        }
        #expect(hot.filter { read($0) }.count >= 36, "the often-read documents were evicted")
    }

    @Test func settingTheLimitDropsWhatIsKept() {
        let cache = DecodedDocumentCache(limit: 1 << 20)
        for _ in 0..<2 {
            for i in 0..<100 {
                [UInt8(i), 1].withUnsafeBytes { b in _ = cache.value(key: [UInt8(i)], bytes: b) { Self.decoded(b) } }
            }
        }
        #expect(cache.charged > 0)
        cache.limit = 0
        #expect(cache.charged == 0 && cache.limit == 0)
        cache.limit = 1 << 16
        #expect(cache.charged == 0 && cache.limit == 1 << 16)
    }

    /// Two stores on one database, one caching (with a small limit, so entries are evicted
    /// and replaced all along) and one not: every get and query, in fresh transactions and in
    /// transactions opened before later writes, answers alike, through rewrites of the same
    /// ids, deletes, a covering index and schema changes.
    @Test func aCachingStoreAnswersAsAStoreThatDecodesEveryRead() throws {
        try withTemporaryDatabase { db, _ throws in
            var rng = SplitMix64(seed: 52)
            let schema = try PlanCacheTests.schema(["by_age", "by_city", "by_age_covering", "by_last_first"])
            let caching = try DocumentStore(database: db, schema: schema)
            caching.decodedDocumentCacheLimit = 48 << 10
            let plain = try DocumentStore(database: db)
            plain.decodedDocumentCacheLimit = 0
            #expect(plain.decodedDocumentCacheLimit == 0)
            let ids: [JSONValue] = (0..<60).map { $0 % 7 == 0 ? .int(Int64($0)) : .string("p\($0)") }
            var compared = 0
            for round in 0..<10 {
                // A transaction opened before this round's writes: it must keep seeing the
                // documents of its snapshot, whatever the cache learns from newer reads.
                let snapshot = try db.snapshot()
                defer { snapshot.release() }
                let people = try caching.collection("people")
                for _ in 0..<40 {
                    let id = ids.randomElement(using: &rng)!
                    if rng.next() % 6 == 0 {
                        _ = try people.delete(id: id)
                    } else {
                        var doc = DocumentGenerator.document(id: id, &rng)
                        if case .object(var o) = doc {
                            o["email"] = nil
                            doc = .object(o)
                        }
                        try people.upsert(doc)
                    }
                }
                if round == 5 { try caching.apply(try PlanCacheTests.schema(["by_city", "by_first_sparse"])) }
                for _ in 0..<30 {
                    let query = DocumentQuery(
                        conditions: DocumentGenerator.query(&rng).conditions, order: nil, limit: nil)
                    let id = ids.randomElement(using: &rng)!
                    try caching.read { tx throws in
                        try plain.read { ptx throws in
                            #expect(try tx.get("people", id: id) == ptx.get("people", id: id))
                            #expect(
                                PlanCacheTests.outcome { try tx.find("people", query) }
                                    == PlanCacheTests.outcome { try ptx.find("people", query) },
                                "round \(round): \(query.conditions)")
                        }
                    }
                    try caching.read(using: snapshot) { before throws in
                        try plain.read(using: snapshot) { plainBefore throws in
                            #expect(try before.get("people", id: id) == plainBefore.get("people", id: id))
                            #expect(
                                PlanCacheTests.outcome { try before.find("people", query) }
                                    == PlanCacheTests.outcome { try plainBefore.find("people", query) })
                        }
                    }
                    compared += 1
                }
            }
            #expect(compared == 300)
            #expect(caching.documentCache.statistics.hits > 100)
            #expect(caching.documentCache.charged <= 48 << 10)
            #expect(plain.documentCache.statistics.hits == 0)
        }
    }
}
