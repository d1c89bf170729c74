import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

// MARK: - The reference: brute force in double precision, written independently of the library

/// The distance of the reference: Euclidean, `1 − cos` (1 when either vector is zero) or the
/// negated inner product, over the values as float32 stores them, in double precision.
private func referenceDistance(_ metric: VectorMetric, _ a: [Float], _ b: [Float]) -> Double {
    var dot = 0.0, na = 0.0, nb = 0.0, squared = 0.0
    for i in a.indices {
        let x = Double(a[i]), y = Double(b[i])
        dot += x * y
        na += x * x
        nb += y * y
        squared += (x - y) * (x - y)
    }
    switch metric {
    case .l2: return squared.squareRoot()
    case .dot: return -dot
    case .cosine: return na == 0 || nb == 0 ? 1 : 1 - dot / (na.squareRoot() * nb.squareRoot())
    }
}

/// A note of the model: an id, a folder (indexed), a rank (not indexed) and maybe a vector.
private struct Note {
    let id: String
    var folder: String
    var rank: Int
    var vector: [Double]?

    var document: JSONValue {
        var o: JSONObject = ["id": .string(id), "folder": .string(folder), "rank": .int(Int64(rank))]
        if let vector { o["embedding"] = .array(vector.map { .double($0) }) }
        return .object(o)
    }
    var stored: [Float]? { vector?.map { Float($0) } }
}

private func schema(dimensions: Int, metric: VectorMetric) throws -> DocumentSchema {
    try DocumentSchema(
        json: Data(
            #"""
            {"collections": {"notes": {"primaryKey": "id", "indexes": [
              {"name": "by_folder", "fields": ["folder"]},
              {"name": "by_embedding", "type": "vector", "fields": ["embedding"], "dimensions": \#(dimensions), "metric": "\#(metric.rawValue)"}]}}}
            """#.utf8))
}

/// Checks hits against the brute force over `notes` (those `keep` takes): the same number,
/// each distance the reference's for that document, nearest first, ties by id, and the set
/// the reference's k nearest up to near ties (distances within 1e-9 relative, where either
/// order counts).
private func expectNearest(
    _ hits: [NearestHit], _ notes: [Note], query: [Float], k: Int, metric: VectorMetric,
    keep: (Note) -> Bool = { _ in true }, _ context: String
) {
    var expected: [(id: String, distance: Double)] = []
    for note in notes where keep(note) {
        guard let stored = note.stored else { continue }
        expected.append((note.id, referenceDistance(metric, stored, query)))
    }
    expected.sort { $0.distance != $1.distance ? $0.distance < $1.distance : $0.id < $1.id }
    let want = Array(expected.prefix(k))
    #expect(hits.count == want.count, "\(context)")
    let byID = Dictionary(expected.map { ($0.id, $0.distance) }, uniquingKeysWith: { a, _ in a })
    func close(_ a: Double, _ b: Double) -> Bool { abs(a - b) <= 1e-9 * max(1, abs(a), abs(b)) }
    for (i, hit) in hits.enumerated() {
        guard case .string(let id) = hit.id, let reference = byID[id] else {
            Issue.record("hit \(hit.id) is not a document the filter takes: \(context)")
            continue
        }
        #expect(close(hit.distance, reference), "\(id): \(hit.distance) vs \(reference), \(context)")
        if i < want.count { #expect(close(hit.distance, want[i].distance), "rank \(i), \(context)") }
        if i > 0, case .string(let previous) = hits[i - 1].id {
            // Nearest first; exactly equal distances by id.
            #expect(
                hits[i - 1].distance < hit.distance || (hits[i - 1].distance == hit.distance && previous < id),
                "order at \(i), \(context)")
        }
    }
    // Every reference hit clearly inside the k-th distance is returned.
    if let last = want.last {
        let returned = Set(hits.compactMap { if case .string(let s) = $0.id { s } else { nil } })
        for w in want where !close(w.distance, last.distance) {
            #expect(returned.contains(w.id), "\(w.id) missing, \(context)")
        }
    }
}

/// Random notes: clustered vectors, exact duplicates, zero vectors, near-duplicates (very
/// close distances), and notes without a vector.
private func makeNotes(_ rng: inout SplitMix64, count: Int, dimensions: Int) -> [Note] {
    func uniform() -> Double { Double(rng.next() >> 11) / Double(1 << 53) * 2 - 1 }
    let centres = (0..<4).map { _ in (0..<dimensions).map { _ in uniform() } }
    var notes: [Note] = []
    for i in 0..<count {
        let id = "n" + String(1000 + i)
        let folder = ["work", "home", "archive", "rare"][
            Int(rng.next() % 4) == 3 && rng.next() % 8 != 0 ? 0 : Int(rng.next() % 3)]
        var vector: [Double]?
        switch rng.next() % 12 {
        case 0: vector = nil
        case 1: vector = Array(repeating: 0, count: dimensions)
        case 2, 3: vector = notes.last?.vector ?? centres[0]  // an exact duplicate: a tie
        case 4: vector = (notes.last?.vector ?? centres[1]).map { $0 + uniform() * 1e-6 }  // very close
        default:
            let c = centres[Int(rng.next() % 4)]
            vector = c.map { $0 + uniform() * 0.3 }
        }
        notes.append(Note(id: id, folder: folder, rank: Int(rng.next() % 100), vector: vector))
    }
    return notes
}

@Suite struct VectorIndexTests {
    /// Exact nearest neighbours with and without filters agree with a brute force in double
    /// precision, for every metric, over every backend; dimensions that exercise the SIMD
    /// kernel's full strides, its 8-lane tail and its scalar tail.
    @Test(arguments: TestBackend.differential)
    func randomQueriesAgreeWithABruteForceInDoublePrecision(backend: TestBackend) throws {
        var rng = SplitMix64(seed: 50)
        let rounds = backend == .etcd ? 30 : 120
        for (dimensions, metric) in [(45, VectorMetric.cosine), (8, .l2), (3, .dot), (300, .l2)] {
            let notes = makeNotes(&rng, count: dimensions == 300 ? 400 : 700, dimensions: dimensions)
            try backend.withStore(schema: try schema(dimensions: dimensions, metric: metric)) { store throws in
                for start in stride(from: 0, to: notes.count, by: 100) {
                    try store.write { batch in
                        for n in notes[start..<min(start + 100, notes.count)] { try batch.insert("notes", n.document) }
                    }
                }
                for round in 0..<rounds {
                    // Queries: on a stored vector (a distance of 0, ties), a zero vector, random.
                    let query: [Float]
                    switch round % 5 {
                    case 0:
                        query =
                            notes[Int(rng.next() % UInt64(notes.count))].stored
                            ?? [Float](repeating: 1, count: dimensions)
                    case 1 where metric == .cosine: query = [Float](repeating: 0, count: dimensions)
                    default:
                        query = (0..<dimensions).map { _ in Float(Double(rng.next() >> 11) / Double(1 << 53) * 2 - 1) }
                    }
                    let k = [0, 1, 3, 10, 50, 2000][Int(rng.next() % 6)]
                    var filter = DocumentQuery()
                    var keep: (Note) -> Bool = { _ in true }
                    let context = "\(backend) \(metric) d\(dimensions) round \(round) k \(k)"
                    switch rng.next() % 4 {
                    case 0:
                        // Served by by_folder, selective: a pre-filter.
                        filter = filter.where("folder", .equal("rare"))
                        keep = { $0.folder == "rare" }
                    case 1:
                        // Not served by an index: the scan checks documents nearest first.
                        let bound = Int(rng.next() % 100)
                        filter = filter.where("rank", .less(.int(Int64(bound))))
                        keep = { $0.rank < bound }
                    case 2:
                        filter = filter.where("folder", .equal("work")).where("rank", .greaterOrEqual(50))
                        keep = { $0.folder == "work" && $0.rank >= 50 }
                    default: break
                    }
                    let hits = try store.read { try $0.nearest("notes", to: query, k: k, query: filter) }
                    expectNearest(hits, notes, query: query, k: k, metric: metric, keep: keep, context)
                    for hit in hits { #expect(hit.document["id"] == hit.id) }
                }
                #expect(try store.verify().isClean)
            }
        }
    }

    /// Random inserts, updates (of the vector, of other fields, removing the vector) and
    /// deletes, in batches, keep the blocks exactly what the documents imply (verify), the
    /// answers those of the brute force, and the same as after a rebuild.
    @Test func maintenanceUnderRandomWritesEqualsARebuiltIndex() throws {
        var rng = SplitMix64(seed: 51)
        // 512 dimensions: 31 vectors to a block, so that writes split, empty and rename blocks.
        let dimensions = 512
        var model: [String: Note] = [:]
        try withTemporaryDatabase { db, _ throws in
            let store = try DocumentStore(database: db, schema: try schema(dimensions: dimensions, metric: .l2))
            func randomVector() -> [Double]? {
                rng.next() % 6 == 0 ? nil : (0..<dimensions).map { _ in Double(rng.next() % 2000) / 1000 - 1 }
            }
            for round in 0..<60 {
                try store.write { batch in
                    for _ in 0..<Int(rng.next() % 30 + 1) {
                        let id = "n" + String(rng.next() % 300)
                        switch rng.next() % 5 {
                        case 0:
                            if model.removeValue(forKey: id) != nil { _ = try batch.delete("notes", id: .string(id)) }
                        case 1:
                            // Another field changes; the vector stays.
                            if var n = model[id] {
                                n.rank += 1
                                model[id] = n
                                try batch.upsert("notes", n.document)
                            }
                        default:
                            let n = Note(id: id, folder: "work", rank: 0, vector: randomVector())
                            model[id] = n
                            try batch.upsert("notes", n.document)
                        }
                    }
                }
                if round % 10 == 9 {
                    let report = try store.verify()
                    #expect(report.isClean, "round \(round): \(report)")
                }
            }
            let notes = Array(model.values)
            let queries = (0..<8).map { _ in (0..<dimensions).map { _ in Float(rng.next() % 2000) / 1000 - 1 } }
            let before = try queries.map { q in try store.read { try $0.nearest("notes", to: q, k: 7) } }
            for (q, hits) in zip(queries, before) {
                expectNearest(hits, notes, query: q, k: 7, metric: .l2, "after the writes")
            }
            try store.reindex(collection: "notes", index: "by_embedding")
            #expect(try store.verify().isClean)
            let after = try queries.map { q in try store.read { try $0.nearest("notes", to: q, k: 7) } }
            #expect(after == before)
            let count = try store.read {
                try $0.explainNearest("notes", to: queries[0], k: 1).vectors
            }
            #expect(count == notes.filter { $0.vector != nil }.count)
        }
    }

    /// The plan: no condition scans; a selective condition an index serves reads only its
    /// documents' vectors; a condition no index serves scans and checks documents nearest
    /// first, reading few of them.
    @Test func explainSaysWhetherTheConditionsPreFilterOrFilterTheScan() throws {
        try withTemporaryDatabase { db, _ throws in
            let store = try DocumentStore(database: db, schema: try schema(dimensions: 4, metric: .l2))
            try store.write { batch in
                for i in 0..<5000 {
                    let v: [Double] = [Double(i), 0, 0, 1]
                    let note = Note(id: "n\(i)", folder: i % 1000 == 7 ? "rare" : "work", rank: i % 10, vector: v)
                    try batch.insert("notes", note.document)
                }
            }
            let query: [Float] = [2500, 0, 0, 1]
            let plain = try store.read { try $0.explainNearest("notes", to: query, k: 3, search: .exact) }
            #expect(plain.strategy == .scan)
            #expect(plain.vectorsScanned == 5000)
            #expect(plain.hits == 3)
            #expect(plain.listsRead == nil)
            #expect(plain.description.contains("(l2, exact)"))
            // Approximate: the lists nearest the query (70 lists: trained on 5,000 vectors).
            let approximate = try store.read {
                try $0.explainNearest("notes", to: query, k: 3, search: .approximate(probes: 2))
            }
            #expect(approximate.strategy == .scan)
            #expect(approximate.lists == 70)
            #expect(approximate.listsRead == 2)
            #expect(approximate.vectorsScanned < 1000)
            #expect(approximate.description.contains("approximate: 2 of 70 lists read"))
            #expect(
                try store.read { try $0.nearest("notes", to: query, k: 3, search: .approximate(probes: 2)) }
                    .map(\.id) == ["n2500", "n2499", "n2501"])
            let rare = try store.read {
                try $0.explainNearest("notes", to: query, k: 3, query: DocumentQuery().where("folder", .equal("rare")))
            }
            #expect(rare.strategy == .candidates(index: "by_folder"))
            #expect(rare.candidates == 5)
            #expect(rare.vectorsScanned == 5)
            let hits = try store.read {
                try $0.nearest("notes", to: query, k: 3, query: DocumentQuery().where("folder", .equal("rare")))
            }
            #expect(hits.map(\.id) == ["n2007", "n3007", "n1007"])
            #expect(hits.map(\.distance) == [493, 507, 1493])
            // Half the documents match an unindexed condition: a scan checking few documents.
            let half = try store.read {
                try $0.explainNearest("notes", to: query, k: 3, query: DocumentQuery().where("rank", .less(5)))
            }
            #expect(half.strategy == .scanWithFilter)
            #expect(half.documentsChecked < 20)
            #expect(half.hits == 3)
            // Most documents match an indexed condition: a scan is cheaper than the lookups.
            let most = try store.read {
                try $0.explainNearest("notes", to: query, k: 3, query: DocumentQuery().where("folder", .equal("work")))
            }
            #expect(most.strategy == .scanWithFilter)
            #expect(most.description.contains("scan with filter"))
        }
    }

    /// Every vector of the wrong shape is refused with an error naming the document and the
    /// field, and nothing of the write (or of the import) is stored.
    @Test func badVectorsAreRefusedNamingTheDocumentAndNothingIsWritten() throws {
        try withTemporaryDatabase { db, directory throws in
            let store = try DocumentStore(database: db, schema: try schema(dimensions: 3, metric: .cosine))
            _ = try store.write { try $0.insert("notes", ["id": "ok", "embedding": [1, 2, 3]]) }
            let bad: [(JSONValue, String)] = [
                ([1, 2], "an array of 2 elements, not 3"),
                ([], "an array of 0 elements, not 3"),
                (.array(Array(repeating: 1, count: 100_000)), "an array of 100000 elements, not 3"),
                ([1, .double(1e39), 3], "beyond float32's range"),
                ([1, "2", 3], "element 1 is a string, not a number"),
                ([1, [2], 3], "element 1 is a array, not a number"),
                ("1, 2, 3", "a string, not an array of 3 numbers"),
                (["x": 1], "a object, not an array of 3 numbers")
            ]
            for (value, reason) in bad {
                let error = expectError(.invalidArgument) {
                    try store.write { batch in
                        try batch.insert("notes", ["id": "fine", "embedding": [0, 0, 1]])
                        try batch.insert("notes", ["id": "bad", "embedding": value])
                    }
                }
                let message = error?.message ?? ""
                #expect(message.contains("field embedding of document \"bad\""), "\(message)")
                #expect(message.contains(reason), "\(message)")
                #expect(try store.read { try $0.get("notes", id: "fine") } == nil)
            }
            // NaN and infinities (which JSON cannot spell, only a Swift value) are refused by
            // every write, before any index sees them, naming the document and the element.
            for (value, field): (JSONValue, String) in [
                ([1, .double(.nan), 3], "field embedding[1]"), ([1, 2, .double(-.infinity)], "field embedding[2]")
            ] {
                let error = expectError(.invalidArgument) {
                    try store.write { batch in
                        try batch.insert("notes", ["id": "fine", "embedding": [0, 0, 1]])
                        try batch.insert("notes", ["id": "bad", "embedding": value])
                    }
                }
                #expect(error?.message.contains("not a finite number") == true, "\(error?.message ?? "")")
                #expect(error?.message.contains("document \"bad\"") == true, "\(error?.message ?? "")")
                #expect(error?.message.contains(field) == true, "\(error?.message ?? "")")
                #expect(try store.read { try $0.get("notes", id: "fine") } == nil)
            }
            // An import with one bad line writes nothing.
            let path = (directory as NSString).deletingLastPathComponent + "/notes.jsonl"
            var lines = (0..<50).map { #"{"id": "i\#($0)", "embedding": [1, 0, \#($0)]}"# }
            lines.append(#"{"id": "broken", "embedding": [1, 0]}"#)
            try lines.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
            let error = expectError(.invalidArgument) { try store.importJSONLines(into: "notes", path: path) }
            #expect(error?.message.contains("document \"broken\"") == true, "\(error?.message ?? "")")
            #expect(try store.read { try $0.count("notes") } == 1)
            #expect(try store.read { try $0.explainNearest("notes", to: [1, 0, 0], k: 5).vectors } == 1)
            // A document without the field, or with null, is not in the index.
            try store.write { batch in
                try batch.insert("notes", ["id": "none"])
                try batch.insert("notes", ["id": "null", "embedding": nil])
            }
            let hits = try store.read { try $0.nearest("notes", to: [1, 0, 0], k: 5) }
            #expect(hits.map(\.id) == ["ok"])
            #expect(try store.verify().isClean)
        }
    }

    /// Declarations and queries that cannot work are refused, saying what is wrong.
    @Test func badDeclarationsAndQueriesAreClearErrors() throws {
        func declare(_ members: String) -> KVDocsError? {
            expectError(.schema) {
                try DocumentSchema(
                    json: Data(
                        #"{"collections": {"c": {"indexes": [{"name": "v", "type": "vector", \#(members)}]}}}"#.utf8))
            }
        }
        #expect(declare(#""fields": ["e"], "dimensions": 0"#)?.message.contains("from 1 to 8192") == true)
        #expect(declare(#""fields": ["e"], "dimensions": 9000"#)?.message.contains("from 1 to 8192") == true)
        #expect(declare(#""fields": ["e"]"#)?.message.contains("\"dimensions\"") == true)
        #expect(declare(#""fields": ["e"], "dimensions": 3, "metric": "hamming""#)?.message.contains("metric") == true)
        for storage in VectorStorage.allCases {
            _ = try DocumentSchema(
                json: Data(
                    #"{"collections": {"c": {"indexes": [{"name": "v", "type": "vector", "fields": ["e"], "dimensions": 3, "storage": "\#(storage.rawValue)"}]}}}"#
                        .utf8))
        }
        #expect(
            declare(#""fields": ["e"], "dimensions": 3, "storage": "int4""#)?.message.contains(
                #""storage" must be "float32", "float16", "int8" or "bit""#) == true)
        #expect(declare(#""fields": ["e[]"], "dimensions": 3"#)?.message.contains("[]") == true)
        #expect(declare(#""fields": ["e"], "dimensions": 3, "size": 2"#)?.message.contains("\"size\"") == true)
        try withTemporaryDatabase { db, _ throws in
            let store = try DocumentStore(database: db, schema: try schema(dimensions: 3, metric: .l2))
            _ = try store.write { try $0.insert("notes", ["id": "a", "embedding": [1, 2, 3]]) }
            try store.read { tx in
                #expect(
                    expectError(.invalidArgument) { try tx.nearest("notes", to: [1, 2], k: 1) }?.message
                        .contains("the query has 2") == true)
                expectError(.invalidArgument) { try tx.nearest("notes", to: [1, .nan, 2], k: 1) }
                expectError(.invalidArgument) { try tx.nearest("notes", to: [1, 2, 3], k: -1) }
                expectError(.invalidArgument) {
                    try tx.nearest("notes", to: [1, 2, 3], k: 1, query: DocumentQuery().limit(3))
                }
                expectError(.schema) { try tx.nearest("notes", to: [1, 2, 3], k: 1, index: "by_folder") }
                let none = try tx.nearest("notes", to: [1, 2, 3], k: 0)
                #expect(none.isEmpty)
            }
        }
    }

    /// A vector index declared in Swift is the one the JSON declares; typed requests decode
    /// their hits; a read sees the vectors of its snapshot.
    @Test func swiftDeclarationsTypedRequestsAndSnapshots() throws {
        struct Item: Codable, Equatable {
            var id: String
            var embedding: [Double]
        }
        var collection = CollectionSchema(primaryKey: "id")
        collection.definitions = [
            AnyIndexDefinition(
                VectorIndexDefinition(name: "by_embedding", field: "embedding", dimensions: 2, metric: .dot))
        ]
        let declared = try DocumentSchema(collections: ["items": collection])
        let fromJSON = try DocumentSchema(
            json: Data(
                #"{"collections": {"items": {"primaryKey": "id", "indexes": [{"name": "by_embedding", "type": "vector", "fields": ["embedding"], "dimensions": 2, "metric": "dot"}]}}}"#
                    .utf8))
        #expect(declared == fromJSON)
        try withTemporaryDatabase { db, _ throws in
            let store = try DocumentStore(database: db, schema: declared)
            try store.write { batch in
                try batch.insert("items", ["id": "a", "embedding": [1, 0]])
                try batch.insert("items", ["id": "b", "embedding": [2, 2]])
            }
            let typed = try store.fetch(.nearest("items", to: [1, 1], k: 2, as: Item.self))
            #expect(typed.map(\.value) == [Item(id: "b", embedding: [2, 2]), Item(id: "a", embedding: [1, 0])])
            #expect(typed.map(\.distance) == [-4, -1])
            try store.read { tx in
                _ = try store.write { try $0.insert("items", ["id": "c", "embedding": [5, 5]]) }
                // The transaction's snapshot predates c.
                #expect(try tx.nearest("items", to: [1, 1], k: 1).map(\.id) == ["b"])
            }
            let latest = try store.fetch(NearestRequest("items", to: [1, 1], k: 1))
            #expect(latest.map(\.id) == ["c"])
        }
    }

    /// The fixture written by the first vector layout (format 1, no lists) is rebuilt when
    /// it opens (its index to format 2), verifies clean, and answers as the code that wrote
    /// it did.
    @Test func theFormatOneFixtureIsRebuiltOnOpenAndAnswersAsItsWriterDid() throws {
        let dir = TemporaryDirectory()
        let path = dir.child("db")
        try FileManager.default.copyItem(
            atPath: packageRoot.appendingPathComponent("Tests/Fixtures/vector1-db").path, toPath: path)
        let db = try LevelDB(path: path)
        defer { db.close() }
        var built: [String] = []
        let store = try DocumentStore(database: db) { built.append("\($0.collection)/\($0.index)") }
        #expect(Set(built) == ["notes/by_embedding"])
        #expect(try store.verify().isClean)
        let all = try store.read { try $0.nearest("notes", to: [1, 0.2, 0, 0], k: 10) }
        #expect(all.map(\.id) == [2, 1, "a", "b", 5])
        #expect(all.map(\.distance)[3] == 1)
        let work = try store.read {
            try $0.nearest("notes", to: [1, 0.2, 0, 0], k: 10, query: DocumentQuery().where("folder", .equal("work")))
        }
        #expect(work.map(\.id) == [1, "a", "b"])
        #expect(abs(work[0].distance - (1 - 1 / 1.04.squareRoot())) < 1e-7)
    }

    /// In a layered store the nearest are those of the merged documents (the user's edits
    /// and deletes over the base), and they follow a replaced base.
    @Test func aLayeredStoreAnswersOverTheMergedDocumentsAndFollowsANewBase() throws {
        let dir = TemporaryDirectory("vector-layers")
        let dimensions = 40
        let schema = try schema(dimensions: dimensions, metric: .cosine)
        var rng = SplitMix64(seed: 52)
        func makeBase(_ path: String, count: Int) throws -> [String: Note] {
            let notes = makeNotes(&rng, count: count, dimensions: dimensions)
            let db = try LevelDB(path: path)
            defer { db.close() }
            let store = try DocumentStore(database: db, schema: schema)
            try store.write { batch in for n in notes { try batch.insert("notes", n.document) } }
            return Dictionary(notes.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        }
        let base = try makeBase(dir.child("base"), count: 300)
        let layers = try LayeredDocumentStore(user: dir.child("user"), base: dir.child("base"), create: true)
        defer { layers.close() }
        var user: [String: Note?] = [:]
        for other in makeNotes(&rng, count: 150, dimensions: dimensions) {
            // Ids n1000… as the base's: edits of base notes, deletes, and new ones.
            if rng.next() % 4 == 0 {
                _ = try layers.store.collection("notes").delete(id: .string(other.id))
                user[other.id] = .some(nil)
            } else {
                try layers.store.collection("notes").upsert(other.document)
                user[other.id] = .some(other)
            }
        }
        func merged(_ base: [String: Note]) -> [Note] {
            var all = base
            for (id, note) in user { all[id] = note }
            return Array(all.values)
        }
        func check(_ base: [String: Note], _ context: String) throws {
            for round in 0..<20 {
                let query = (0..<dimensions).map { _ in Float(Double(rng.next() % 2000) / 1000 - 1) }
                let filter = round % 2 == 0 ? DocumentQuery() : DocumentQuery().where("folder", .equal("home"))
                let hits = try layers.store.read { try $0.nearest("notes", to: query, k: 12, query: filter) }
                expectNearest(
                    hits, merged(base), query: query, k: 12, metric: .cosine,
                    keep: { round % 2 == 0 || $0.folder == "home" }, "\(context) round \(round)")
            }
            #expect(try layers.store.verify().isClean)
        }
        try check(base, "over the first base")
        let next = try makeBase(dir.child("base2"), count: 200)
        try layers.replaceBase(with: dir.child("base2"))
        try check(next, "over the new base")
    }

    /// An observed nearest request is woken by writes to its collection and follows them.
    @Test func anObservedNearestRequestFollowsWrites() async throws {
        let dir = TemporaryDirectory()
        let db = try LevelDB(path: dir.child("db"))
        defer { db.close() }
        let store = try DocumentStore(database: db, schema: try schema(dimensions: 2, metric: .l2))
        try store.collection("notes").insert(["id": "a", "embedding": [0, 0]])
        var values = store.observe(NearestRequest("notes", to: [1, 1], k: 1)).makeAsyncIterator()
        #expect(try await values.next()?.map(\.id) == ["a"])
        try store.collection("notes").insert(["id": "b", "embedding": [1, 1]])
        #expect(try await values.next()?.map(\.id) == ["b"])
        try store.collection("notes").update(["id": "b", "embedding": [9, 9]])
        #expect(try await values.next()?.map(\.id) == ["a"])
    }

    /// A replicated collection's vector index follows its revisions: an edit, a deletion and
    /// a conflict's winner.
    @Test func aReplicatedCollectionKeepsItsVectorIndexExact() throws {
        let schema = try DocumentSchema(
            json: Data(
                #"""
                {"collections": {"notes": {"replicated": true, "indexes": [
                  {"name": "by_embedding", "type": "vector", "fields": ["embedding"], "dimensions": 2}]}}}
                """#.utf8))
        try withTemporaryDatabase { db, _ throws in
            let store = try DocumentStore(database: db, schema: schema)
            let notes = try store.collection("notes")
            try notes.insert(["_id": "a", "embedding": [0, 0]])
            try notes.insert(["_id": "b", "embedding": [5, 5]])
            guard let b = try notes.get(id: "b") else {
                Issue.record("b was not stored")
                return
            }
            var edited = b
            if case .object(var o) = b {
                o["embedding"] = [1, 1]
                edited = .object(o)
            }
            try notes.update(edited)
            var hits = try store.read { try $0.nearest("notes", to: [1, 1], k: 2) }
            #expect(hits.map(\.id) == ["b", "a"])
            #expect(hits.first?.distance == 0)
            _ = try notes.delete(id: "b")
            hits = try store.read { try $0.nearest("notes", to: [1, 1], k: 2) }
            #expect(hits.map(\.id) == ["a"])
            #expect(try store.verify().isClean)
        }
    }
}

extension VectorIndexTests {
    /// A vector index goes where the store goes: a dump loaded into a new database answers
    /// the same; a salvage quarantines a damaged document and rebuilds the index without its
    /// vector; a data migration's writes maintain it.
    @Test func dumpLoadSalvageAndMigrationsKeepTheIndexExact() throws {
        let dir = TemporaryDirectory("vector-everywhere")
        var rng = SplitMix64(seed: 55)
        let notes = makeNotes(&rng, count: 200, dimensions: 16)
        let schema = try schema(dimensions: 16, metric: .l2)
        let query = (0..<16).map { _ in Float(Double(rng.next() % 2000) / 1000 - 1) }
        let db = try LevelDB(path: dir.child("db"))
        let store = try DocumentStore(database: db, schema: schema)
        try store.write { batch in for n in notes { try batch.insert("notes", n.document) } }
        let before = try store.read { try $0.nearest("notes", to: query, k: 15) }
        expectNearest(before, notes, query: query, k: 15, metric: .l2, "before")

        // Dump and load.
        try db.dump(to: dir.child("dump.jsonl"))
        let copy = try LevelDB(path: dir.child("copy"))
        try copy.load(from: dir.child("dump.jsonl"))
        let loaded = try DocumentStore(database: copy)
        #expect(try loaded.read { try $0.nearest("notes", to: query, k: 15) } == before)
        #expect(try loaded.verify().isClean)
        copy.close()

        // A damaged document: quarantined by a salvage, its vector gone from the index.
        guard case .string(let victim) = before[0].id else {
            Issue.record("the nearest has no string id")
            return
        }
        try db.put(Layout(root: Subspace()).document("notes", .string(victim)), Array("not a document".utf8))
        let report = try store.salvage()
        #expect(report.quarantined.count == 1)
        let salvaged = try store.read { try $0.nearest("notes", to: query, k: 15) }
        expectNearest(salvaged, notes.filter { $0.id != victim }, query: query, k: 15, metric: .l2, "after salvage")
        #expect(try store.verify().isClean)
        db.close()

        // A data migration that removes every vector of the "home" folder.
        var migrator = DocumentMigrator()
        try migrator.register("no vectors at home") { migration in
            for document in try migration.fetch(.find("notes", DocumentQuery().where("folder", .equal("home")))) {
                guard case .object(var o) = document else { continue }
                o["embedding"] = nil
                try migration.upsert("notes", .object(o))
            }
        }
        let reopened = try LevelDB(path: dir.child("db"))
        defer { reopened.close() }
        let migrated = try DocumentStore(database: reopened, migrator: migrator)
        let after = try migrated.read { try $0.nearest("notes", to: query, k: 15) }
        let remaining = notes.filter { $0.id != victim && $0.folder != "home" }
        expectNearest(after, remaining, query: query, k: 15, metric: .l2, "after the migration")
        #expect(try migrated.verify().isClean)
    }
}
