import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// A registered kind answers its own query (`LengthRequest`, read with
/// `ReadTransaction.index(_:of:as:)`) through every reader of the request-value API, in a
/// plain store and in a layered store, against a brute-force model.
@Suite struct IndexKindQueryTests {
    static let schemaJSON = #"""
        {"collections": {"words": {"primaryKey": "id",
          "indexes": [{"name": "by_length", "type": "length", "fields": ["word"]},
                      {"name": "by_kind", "fields": ["kind"]}]},
          "other": {"primaryKey": "id"}}}
        """#

    init() throws { try IndexKindRegistry.register(LengthIndexKind()) }

    static let words = ["", "a", "ab", "abc", "straße", "日本語", "naïve", "kvdocs", "é", "emoji 🎉", "leveldb"]

    /// A random word document, or one whose field is not a string.
    static func document(_ id: String, _ rng: inout SplitMix64) -> JSONValue {
        let kind: JSONValue = rng.next() % 2 == 0 ? "noun" : "verb"
        if rng.next() % 10 == 0 { return ["id": .string(id), "word": 7, "kind": kind] }
        let word = words[Int(rng.next() % UInt64(words.count))] + String(repeating: "x", count: Int(rng.next() % 4))
        return ["id": .string(id), "word": .string(word), "kind": kind]
    }

    /// What `LengthRequest` must return, computed from the documents alone.
    static func model(_ documents: [String: JSONValue], _ request: LengthRequest) -> [JSONValue] {
        let hits = documents.compactMap { id, document -> (Int64, String, JSONValue)? in
            guard case .string(let word)? = document["word"] else { return nil }
            let length = Int64(word.utf8.count)
            guard request.lengths.contains(length), request.query.matches(document) else { return nil }
            return (length, id, document)
        }
        .sorted { $0.0 != $1.0 ? $0.0 < $1.0 : Array($0.1.utf8).lexicographicallyPrecedes(Array($1.1.utf8)) }
        .map(\.2)
        let page = hits.dropFirst(min(request.query.offset, hits.count))
        return Array(request.query.limit.map { page.prefix($0) } ?? page)
    }

    /// Random requests: length ranges, with and without a condition, a limit and an offset.
    static func requests(_ rng: inout SplitMix64) -> [LengthRequest] {
        (0..<40).map { _ in
            let low = Int64(rng.next() % 12)
            let high = low + Int64(rng.next() % 8)
            var query = DocumentQuery()
            if rng.next() % 2 == 0 { query = query.where("kind", .equal("noun")) }
            if rng.next() % 2 == 0 { query = query.limit(Int(rng.next() % 5)) }
            if rng.next() % 3 == 0 { query = query.offset(Int(rng.next() % 3)) }
            return LengthRequest("words", lengths: low...high, query: query)
        }
    }

    /// Writes `writes` in one batch (synchronously).
    static func apply(_ writes: [(String, JSONValue?)], to store: DocumentStore) throws {
        try store.write { batch in
            for (id, document) in writes {
                if let document {
                    try batch.upsert("words", document)
                } else {
                    try batch.delete("words", id: .string(id))
                }
            }
        }
    }

    /// `request` fetched from one new snapshot (synchronously).
    static func fetchFromOneSnapshot(_ request: LengthRequest, _ store: DocumentStore) throws -> [JSONValue] {
        try store.fetch(request)
    }

    /// `request` fetched inside a read transaction (synchronously).
    static func readInTransaction(_ request: LengthRequest, _ store: DocumentStore) throws -> [JSONValue] {
        try store.read { tx in try tx.fetch(request) }
    }

    @Test func aRegisteredKindAnswersItsOwnRequestThroughEveryReader() async throws {
        let dir = TemporaryDirectory()
        let db = try LevelDB(path: dir.child("db"))
        defer { db.close() }
        let store = try DocumentStore(database: db, schema: try DocumentSchema(json: Data(Self.schemaJSON.utf8)))
        var rng = SplitMix64(seed: 11)
        var documents: [String: JSONValue] = [:]
        for round in 0..<3 {
            // One batch of random writes: (id, the new document or nil for a delete).
            var writes: [(String, JSONValue?)] = []
            for _ in 0..<150 {
                let id = "w\(rng.next() % 200)"
                writes.append((id, rng.next() % 5 == 0 ? JSONValue?.none : .some(Self.document(id, &rng))))
            }
            try Self.apply(writes, to: store)
            for (id, document) in writes { documents[id] = document }
            for request in Self.requests(&rng) {
                let expected = Self.model(documents, request)
                #expect(
                    try Self.readInTransaction(request, store) == expected, "round \(round): \(request.lengths)")
                #expect(try Self.fetchFromOneSnapshot(request, store) == expected)
                #expect(try await store.fetch(request) == expected)
            }
        }
        #expect(try store.verify().isClean)

        // A data migration reads it too, as its writes leave the index.
        var migrator = DocumentMigrator()
        let seen = Locked<[JSONValue]>([])
        try migrator.register("drop the short words") { migration in
            for document in try migration.fetch(LengthRequest("words", lengths: 0...1)) {
                try migration.delete("words", id: document["id"] ?? .null)
            }
            let all = try migration.fetch(LengthRequest("words", lengths: 0...100))
            seen.withLock { $0 = all }
        }
        let migrated = try DocumentStore(database: db, migrator: migrator)
        let remaining = documents.filter {
            guard case .string(let w)? = $0.value["word"] else { return true }
            return w.utf8.count > 1
        }
        #expect(seen.withLock { $0 } == Self.model(remaining, LengthRequest("words", lengths: 0...100)))
        #expect(try await migrated.fetch(LengthRequest("words", lengths: 0...1)).isEmpty)
    }

    @Test func anObservedRequestOfAKindTracksItsCollectionAndFollowsWrites() async throws {
        let dir = TemporaryDirectory()
        let db = try LevelDB(path: dir.child("db"))
        defer { db.close() }
        let store = try DocumentStore(database: db, schema: try DocumentSchema(json: Data(Self.schemaJSON.utf8)))
        try store.collection("words").insert(["id": "a", "word": "abc"])
        var values = store.observe(LengthRequest("words", lengths: 3...3)).makeAsyncIterator()
        #expect(try await values.next()?.compactMap { $0["id"] } == ["a"])
        // The read tracked the collection the index belongs to, nothing else.
        #expect(values.cursor.registration.collections == [Array("words".utf8)])
        try store.collection("other").insert(["id": "o"])
        try store.collection("words").insert(["id": "b", "word": "xyz"])
        #expect(try await values.next()?.compactMap { $0["id"] } == ["a", "b"])
        try store.collection("words").update(["id": "a", "word": "abcd"])
        #expect(try await values.next()?.compactMap { $0["id"] } == ["b"])
    }

    @Test func aRegisteredKindAnswersInALayeredStoreOverTheMergedDocuments() throws {
        let dir = TemporaryDirectory("kind-layers")
        let schema = try DocumentSchema(json: Data(Self.schemaJSON.utf8))
        var rng = SplitMix64(seed: 23)
        func makeBase(_ path: String, seed: UInt64) throws -> [String: JSONValue] {
            var local = SplitMix64(seed: seed)
            var documents: [String: JSONValue] = [:]
            let db = try LevelDB(path: path)
            defer { db.close() }
            let store = try DocumentStore(database: db, schema: schema)
            try store.write { batch in
                for i in 0..<120 {
                    let document = Self.document("w\(i)", &local)
                    try batch.upsert("words", document)
                    documents["w\(i)"] = document
                }
            }
            return documents
        }
        let base = try makeBase(dir.child("base"), seed: 1)
        let layers = try LayeredDocumentStore(user: dir.child("user"), base: dir.child("base"), create: true)
        defer { layers.close() }
        // The user's own documents, edits of base documents and deletes of others.
        var user: [String: JSONValue?] = [:]
        for _ in 0..<80 {
            let id = "w\(rng.next() % 160)"
            if rng.next() % 4 == 0 {
                _ = try layers.store.collection("words").delete(id: .string(id))
                user[id] = .some(JSONValue?.none)
            } else {
                let document = Self.document(id, &rng)
                try layers.store.collection("words").upsert(document)
                user[id] = .some(document)
            }
        }
        func merged(_ base: [String: JSONValue]) -> [String: JSONValue] {
            var all = base
            for (id, document) in user { all[id] = document }
            return all
        }
        for request in Self.requests(&rng) {
            #expect(try layers.store.fetch(request) == Self.model(merged(base), request))
        }
        #expect(try layers.store.verify().isClean)

        // A new base: the user's documents and deletes stay, the kind's entries follow.
        let next = try makeBase(dir.child("base2"), seed: 2)
        try layers.replaceBase(with: dir.child("base2"))
        for request in Self.requests(&rng) {
            #expect(try layers.store.fetch(request) == Self.model(merged(next), request))
        }
        #expect(try layers.store.verify().isClean)
    }

    @Test func readingAKindsIndexNamesWhatIsMissing() throws {
        let dir = TemporaryDirectory()
        let db = try LevelDB(path: dir.child("db"))
        defer { db.close() }
        let store = try DocumentStore(database: db, schema: try DocumentSchema(json: Data(Self.schemaJSON.utf8)))
        let none = expectError(.schema) { try store.fetch(LengthRequest("other", lengths: 0...3)) }
        #expect(none?.message == "collection \"other\" has no index of this kind (LengthIndexMaintainer)")
        let unknown = expectError(.schema) { try store.fetch(LengthRequest("words", lengths: 0...3, index: "nope")) }
        #expect(
            unknown?.message
                == "collection \"words\" has no index \"nope\" of this kind (LengthIndexMaintainer); its indexes of this kind: by_length"
        )
        let nowhere = expectError(.schema) { try store.fetch(LengthRequest("nowhere", lengths: 0...3)) }
        #expect(nowhere?.message == "no collection \"nowhere\"; declared: other, words")
    }
}
