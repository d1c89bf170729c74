import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// A text index in a store that bounds its transactions (as etcd does, here LevelDB behind
/// a store refusing larger batches): index builds, the merges later writes do and
/// `optimize` all stay within the bound, and searches answer as in an unbounded store.
@Suite struct BoundedTextMergeTests {
    static let plain = #"{"collections": {"notes": {"primaryKey": "id"}}}"#
    static let indexed =
        #"{"collections": {"notes": {"primaryKey": "id", "text": [{"name": "body_text", "fields": ["body"]}]}}}"#

    static func note(_ random: inout SplitMix64, id: Int) -> JSONValue {
        let words = ["river", "station", "harbour", "train", "coffee", "garden", "market", "tower", "bridge"]
        let count = 1 + Int(random.next() % 10)
        let body = (0..<count).map { _ in words[Int(random.next() % 9)] + "\(random.next() % 4)" }
        return ["id": .int(Int64(id)), "body": .string(body.joined(separator: " "))]
    }

    static func answers(_ store: DocumentStore) throws -> [String] {
        try ["river0", "harbour1 OR coffee2", "\"train0 station1\"", "gard*", "tower3 NOT bridge2"].map { text in
            let hits = try store.collection("notes").search(text, options: SearchOptions(limit: 10_000))
            return "\(text): " + hits.map { "\($0.id) \($0.score)" }.joined(separator: ", ")
        }
    }

    @Test(arguments: [96, 128, 400])
    func mergesBuildsAndOptimizeStayWithinTheBoundAndAnswerAsUnbounded(bound: Int) throws {
        let dir = TemporaryDirectory()
        let boundedDatabase = try LevelDB(path: dir.child("bounded"))
        let unboundedDatabase = try LevelDB(path: dir.child("unbounded"))
        defer {
            boundedDatabase.close()
            unboundedDatabase.close()
        }
        let limited = ConflictInjectingStore(boundedDatabase, plan: .exactly(0))
        limited.maximumBatch = bound
        let bounded = try DocumentStore(store: limited, schema: try DocumentSchema(json: Data(Self.plain.utf8)))
        let unbounded = try DocumentStore(
            database: unboundedDatabase, schema: try DocumentSchema(json: Data(Self.plain.utf8)))
        var random = SplitMix64(seed: UInt64(bound))
        var first: [JSONValue] = []
        for id in 0..<300 { first.append(Self.note(&random, id: id)) }
        for store in [bounded, unbounded] {
            for note in first { try store.collection("notes").insert(note) }
            // A build over what is there: in a bounded store, in many small segments.
            try store.apply(try DocumentSchema(json: Data(Self.indexed.utf8)))
        }
        #expect(try Self.answers(bounded) == Self.answers(unbounded))
        // Writes one at a time, each with its merge step: every batch must fit the bound.
        for step in 0..<400 {
            let id = Int(random.next() % 400)
            let note = Self.note(&random, id: id)
            let delete = random.next() % 4 == 0
            for store in [bounded, unbounded] {
                let notes = try store.collection("notes")
                if delete { _ = try notes.delete(id: .int(Int64(id))) } else { _ = try notes.upsert(note) }
            }
            if step % 100 == 99 { #expect(try Self.answers(bounded) == Self.answers(unbounded), "step \(step)") }
        }
        #expect(try bounded.verify().isClean)
        let steps = try bounded.optimize(collection: "notes")
        #expect(steps > 0)
        try unbounded.optimize(collection: "notes")
        #expect(try Self.answers(bounded) == Self.answers(unbounded))
        #expect(try bounded.verify().isClean)
    }
}
