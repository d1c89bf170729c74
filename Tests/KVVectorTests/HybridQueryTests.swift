import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// Hybrid queries: reciprocal rank fusion of a text list and a vector list, each filtered
/// by the conditions (and a geo radius) before it is cut, against a model built from the
/// text search (checked against FTS5 elsewhere), a brute-force vector ranking in double
/// precision and haversine distances.
@Suite struct HybridQueryTests {
    static let schemaJSON = #"""
        {"collections": {"notes": {"primaryKey": "id", "indexes": [
          {"name": "by_folder", "fields": ["folder"]},
          {"name": "by_loc", "fields": ["loc"], "type": "geo"},
          {"name": "by_embedding", "type": "vector", "fields": ["embedding"], "dimensions": 6}],
          "text": [{"name": "body", "fields": ["body"]}]}}}
        """#

    @Test func randomHybridQueriesAgreeWithAModelOfTheirLists() throws {
        var rng = SplitMix64(seed: 54)
        func uniform() -> Double { Double(rng.next() >> 11) / Double(1 << 53) }
        let words = ["train", "station", "coffee", "platform", "bus", "ferry", "night", "express", "late", "quiet"]
        struct Note {
            let id: String
            let folder: String
            let body: String
            let vector: [Float]
            let lat: Double, lon: Double
        }
        let notes = (0..<400).map { i in
            Note(
                id: "n\(1000 + i)", folder: ["work", "home", "rare"][Int(rng.next() % 3)],
                body: (0..<(2 + Int(rng.next() % 6))).map { _ in words[Int(rng.next() % UInt64(words.count))] }
                    .joined(separator: " "),
                vector: (0..<6).map { _ in Float(uniform() * 2 - 1) }, lat: uniform() * 0.2, lon: uniform() * 0.2)
        }
        try withTemporaryDatabase { db, _ throws in
            let store = try DocumentStore(database: db, schema: try DocumentSchema(json: Data(Self.schemaJSON.utf8)))
            try store.write { batch in
                for n in notes {
                    try batch.insert(
                        "notes",
                        [
                            "id": .string(n.id), "folder": .string(n.folder), "body": .string(n.body),
                            "embedding": .array(n.vector.map { .double(Double($0)) }),
                            "loc": ["lat": .double(n.lat), "lon": .double(n.lon)]
                        ])
                }
            }
            let byID = Dictionary(uniqueKeysWithValues: notes.map { ($0.id, $0) })
            for round in 0..<60 {
                let text: String? = round % 3 == 2 ? nil : words[Int(rng.next() % UInt64(words.count))]
                let vector: [Float]? = round % 3 == 1 ? nil : (0..<6).map { _ in Float(uniform() * 2 - 1) }
                let folder: String? = rng.next() % 2 == 0 ? "work" : nil
                let near: (GeoPoint, Double)? =
                    rng.next() % 3 == 0 ? (try GeoPoint(latitude: 0.1, longitude: 0.1), 6000) : nil
                let k = [1, 5, 20][Int(rng.next() % 3)]
                let depth = [5, 30][Int(rng.next() % 2)]
                var conditions = DocumentQuery()
                if let folder { conditions = conditions.where("folder", .equal(.string(folder))) }
                func keep(_ n: Note) throws -> Bool {
                    if let folder, n.folder != folder { return false }
                    if let (center, radius) = near {
                        let point = try GeoPoint(latitude: n.lat, longitude: n.lon)
                        if center.distance(to: point) > radius { return false }
                    }
                    return true
                }
                // The model's lists.
                var textList: [String] = []
                if let text {
                    let all = try store.read {
                        try $0.search("notes", text, options: SearchOptions(includeDocuments: false))
                    }
                    for hit in all {
                        guard case .string(let id) = hit.id, let n = byID[id], try keep(n) else { continue }
                        if textList.count < max(k, depth) { textList.append(id) }
                    }
                }
                var vectorList: [String] = []
                if let vector {
                    var scored: [(Double, String)] = []
                    for n in notes where try keep(n) {
                        var sum = 0.0
                        for i in 0..<6 {
                            sum += (Double(n.vector[i]) - Double(vector[i])) * (Double(n.vector[i]) - Double(vector[i]))
                        }
                        scored.append((sum, n.id))
                    }
                    scored.sort { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }
                    vectorList = scored.prefix(max(k, depth)).map(\.1)
                }
                var scores: [String: Double] = [:]
                for (r, id) in textList.enumerated() { scores[id, default: 0] += 1 / (60 + Double(r + 1)) }
                for (r, id) in vectorList.enumerated() { scores[id, default: 0] += 1 / (60 + Double(r + 1)) }
                let expected = scores.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.prefix(k)

                var query = HybridQuery(text: text, vector: vector, k: k, conditions: conditions, depth: depth)
                if let near { query.near = (near.0, near.1) }
                let hits = try store.read { try $0.hybrid("notes", query) }
                let context =
                    "round \(round): text \(text ?? "-") vector \(vector != nil) folder \(folder ?? "-") near \(near != nil) k \(k) depth \(depth)"
                #expect(hits.map(\.id) == expected.map { .string($0.key) }, "\(context)")
                for (hit, want) in zip(hits, expected) {
                    #expect(abs(hit.score - want.value) < 1e-12, "\(context)")
                    #expect(hit.textRank == textList.firstIndex(of: want.key).map { $0 + 1 }, "\(context)")
                    #expect(hit.vectorRank == vectorList.firstIndex(of: want.key).map { $0 + 1 }, "\(context)")
                    #expect(hit.document["id"] == hit.id)
                }
            }
            try store.read { tx in
                expectError(.invalidArgument) { try tx.hybrid("notes", HybridQuery(k: 3)) }
                expectError(.invalidArgument) {
                    try tx.hybrid("notes", HybridQuery(text: "train", k: 3, conditions: DocumentQuery().limit(2)))
                }
            }
        }
    }
}

extension HybridQueryTests {
    /// A hybrid request is fetched by every reader and observed: a write that changes the
    /// fused order wakes it.
    @Test func anObservedHybridRequestFollowsWrites() async throws {
        let dir = TemporaryDirectory()
        let db = try LevelDB(path: dir.child("db"))
        defer { db.close() }
        let store = try DocumentStore(database: db, schema: try DocumentSchema(json: Data(Self.schemaJSON.utf8)))
        let notes = try store.collection("notes")
        try notes.insert(["id": "a", "body": "night train", "embedding": [1, 0, 0, 0, 0, 0]])
        let request = HybridRequest("notes", HybridQuery(text: "train", vector: [0, 1, 0, 0, 0, 0], k: 2))
        #expect(try await store.fetch(request).map(\.id) == ["a"])
        var values = store.observe(request).makeAsyncIterator()
        #expect(try await values.next()?.map(\.id) == ["a"])
        try notes.insert(["id": "b", "body": "train train", "embedding": [0, 1, 0, 0, 0, 0]])
        #expect(try await values.next()?.map(\.id) == ["b", "a"])
    }
}
