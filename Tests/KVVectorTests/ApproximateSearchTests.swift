import Foundation
import KVDocs
import KVDocsTestSupport
import KVDocuments
import KVVector
import Testing

/// Clustered vectors (as embeddings are): `clusters` random centres, each vector a centre
/// plus noise, by id `v0`, `v1`, …; a `tag` 0–99 (not indexed) for filters.
private func clustered(
    _ rng: inout SplitMix64, count: Int, dimensions: Int, clusters: Int, noise: Double = 0.15
) -> [(id: String, tag: Int, vector: [Float])] {
    func uniform() -> Double { Double(rng.next() >> 11) / Double(1 << 53) * 2 - 1 }
    let centres = (0..<clusters).map { _ in (0..<dimensions).map { _ in uniform() } }
    return (0..<count).map { i in
        let c = centres[Int(rng.next() % UInt64(clusters))]
        return ("v\(i)", Int(rng.next() % 100), c.map { Float($0 + uniform() * noise) })
    }
}

private func schema(dimensions: Int, metric: VectorMetric, storage: VectorStorage = .float32) throws -> DocumentSchema {
    try DocumentSchema(
        json: Data(
            #"""
            {"collections": {"items": {"primaryKey": "id", "indexes": [
              {"name": "by_vector", "type": "vector", "fields": ["vector"], "dimensions": \#(dimensions), "metric": "\#(metric.rawValue)", "storage": "\#(storage.rawValue)"}]}}}
            """#.utf8))
}

private func document(_ item: (id: String, tag: Int, vector: [Float])) -> JSONValue {
    ["id": .string(item.id), "tag": .int(Int64(item.tag)), "vector": .array(item.vector.map { .double(Double($0)) })]
}

/// The exact k nearest ids by a brute force in double precision (ties by id).
private func bruteForce(
    _ items: [(id: String, tag: Int, vector: [Float])], _ query: [Float], k: Int, metric: VectorMetric,
    keep: (Int) -> Bool = { _ in true }
) -> [String] {
    func distance(_ v: [Float]) -> Double {
        var dot = 0.0, nv = 0.0, nq = 0.0, sq = 0.0
        for i in v.indices {
            let a = Double(v[i]), b = Double(query[i])
            dot += a * b
            nv += a * a
            nq += b * b
            sq += (a - b) * (a - b)
        }
        switch metric {
        case .l2: return sq
        case .dot: return -dot
        case .cosine: return nv == 0 || nq == 0 ? 1 : 1 - dot / (nv.squareRoot() * nq.squareRoot())
        }
    }
    var scored: [(id: String, distance: Double)] = []
    for item in items where keep(item.tag) { scored.append((item.id, distance(item.vector))) }
    scored.sort { $0.distance != $1.distance ? $0.distance < $1.distance : $0.id < $1.id }
    return scored.prefix(k).map(\.id)
}

@Suite struct ApproximateSearchTests {
    /// An index past 1,024 vectors keeps about √n lists; an approximate search with the
    /// default probes finds most of the exact 10 nearest (recall measured, generous bound on
    /// small data), with or without a filter no index serves, never fewer than k when k
    /// match; every list probed is the exact answer.
    @Test(arguments: TestBackend.differential)
    func approximateSearchFindsMostOfTheExactNearestAndEveryListGivesTheExactOnes(backend: TestBackend) throws {
        var rng = SplitMix64(seed: 500)
        for (metric, dimensions) in [(VectorMetric.cosine, 24), (.l2, 17), (.dot, 9)] {
            let items = clustered(&rng, count: 1500, dimensions: dimensions, clusters: 30)
            try backend.withStore(schema: try schema(dimensions: dimensions, metric: metric)) { store throws in
                for start in stride(from: 0, to: items.count, by: 300) {
                    try store.write { batch in
                        for item in items[start..<(start + 300)] { try batch.insert("items", document(item)) }
                    }
                }
                let plan = try store.read { try $0.explainNearest("items", to: items[0].vector, k: 10) }
                // Trained at 1,200 vectors (the first batch past 1,024): √1200 lists.
                #expect(plan.lists == 34, "\(metric)")
                #expect(plan.listsRead == VectorSearchMode.defaultProbes(lists: 34))
                #expect(plan.vectorsScanned < items.count / 2)
                #expect(plan.description.contains("approximate: 4 of 34 lists read"))
                var found = 0
                var wanted = 0
                for round in 0..<(backend == .etcd ? 12 : 24) {
                    let base = items[Int(rng.next() % UInt64(items.count))].vector
                    let query = base.map { $0 + Float(Double(rng.next() % 1000) / 10000 - 0.05) }
                    let k = 10
                    let bound = [100, 30, 5][round % 3]
                    let filter =
                        bound == 100 ? DocumentQuery() : DocumentQuery().where("tag", .less(.int(Int64(bound))))
                    let exact = bruteForce(items, query, k: k, metric: metric) { $0 < bound }
                    let hits = try store.read { try $0.nearest("items", to: query, k: k, query: filter) }
                    // Never fewer than k when k match.
                    #expect(hits.count == min(k, exact.count), "\(metric) round \(round)")
                    #expect(
                        hits.allSatisfy { hit in
                            items.first { .string($0.id) == hit.id }.map { $0.tag < bound } ?? false
                        })
                    found +=
                        Set(hits.compactMap { if case .string(let s) = $0.id { s } else { nil } })
                        .intersection(exact).count
                    wanted += exact.count
                    // Every list read: the exact answer.
                    let all = try store.read {
                        try $0.nearest(
                            "items", to: query, k: k, query: filter, search: .approximate(probes: 34),
                            includeDocuments: false)
                    }
                    #expect(all.map(\.id) == exact.map { .string($0) }, "\(metric) round \(round), all lists")
                    let exactHits = try store.read {
                        try $0.nearest("items", to: query, k: k, query: filter, search: .exact, includeDocuments: false)
                    }
                    #expect(exactHits.map(\.id) == exact.map { .string($0) }, "\(metric) round \(round), exact")
                }
                let recall = Double(found) / Double(wanted)
                #expect(recall >= 0.8, "\(backend) \(metric): recall@10 \(recall)")
                #expect(try store.verify().isClean)
            }
        }
    }

    /// Lists of quantized codes (which keep the float32 values): without a filter, the
    /// candidates of best estimates are rescored with their float32 values (recall measured,
    /// every distance exact); with a filter the codes bound the distances and every list read
    /// gives the exact nearest; for every metric, with zero vectors, duplicates and
    /// near-duplicates; writes keep the lists verified.
    @Test(arguments: [VectorStorage.float16, .int8, .bit])
    func quantizedListsRescoreWithTheirFloat32Values(storage: VectorStorage) throws {
        var rng = SplitMix64(seed: 503)
        for (metric, dimensions) in [(VectorMetric.cosine, 20), (.l2, 33), (.dot, 8)] {
            var items = clustered(&rng, count: 1300, dimensions: dimensions, clusters: 8)
            for i in stride(from: 0, to: items.count, by: 50) {
                items[i].vector = [Float](repeating: 0, count: dimensions)  // zero vectors
                if i + 1 < items.count { items[i + 1].vector = items[i + 2].vector }  // duplicates
                if i + 3 < items.count { items[i + 3].vector = items[i + 2].vector.map { $0 * 1.000_001 } }
            }
            let byID = Dictionary(items.map { ($0.id, $0.vector) }, uniquingKeysWith: { a, _ in a })
            try withTemporaryDatabase { db, _ throws in
                let store = try DocumentStore(
                    database: db, schema: try schema(dimensions: dimensions, metric: metric, storage: storage))
                try store.write { batch in for item in items { try batch.insert("items", document(item)) } }
                let plan = try store.read { try $0.explainNearest("items", to: items[5].vector, k: 5) }
                let lists = try #require(plan.lists)
                var found = 0, wanted = 0
                for round in 0..<20 {
                    let query = items[Int(rng.next() % UInt64(items.count))].vector.map {
                        $0 + Float(Double(rng.next() % 1000) / 20000)
                    }
                    let k = [1, 10, 40][round % 3]
                    let exact = bruteForce(items, query, k: k, metric: metric)
                    let all = try store.read {
                        try $0.nearest(
                            "items", to: query, k: k, search: .approximate(probes: lists), includeDocuments: false)
                    }
                    #expect(all.count == k)
                    found += Set(all.map(\.id)).intersection(exact.map { .string($0) }).count
                    wanted += k
                    // Each distance exact, nearest first.
                    let reference = try store.read {
                        try $0.nearest("items", to: query, k: items.count, search: .exact, includeDocuments: false)
                    }
                    let distances = Dictionary(reference.map { ($0.id, $0.distance) }, uniquingKeysWith: { a, _ in a })
                    for (i, hit) in all.enumerated() {
                        #expect(distances[hit.id] == hit.distance, "\(storage) \(metric) \(hit.id)")
                        if i > 0 { #expect(all[i - 1].distance <= hit.distance) }
                    }
                    #expect(distances.count == byID.count)
                    // With a filter: bounds from the codes, exact within the lists read.
                    let filtered = try store.read {
                        try $0.nearest(
                            "items", to: query, k: k, query: DocumentQuery().where("tag", .less(50)),
                            search: .approximate(probes: lists), includeDocuments: false)
                    }
                    let exactFiltered = bruteForce(items, query, k: k, metric: metric) { $0 < 50 }
                    #expect(filtered.map(\.id) == exactFiltered.map { .string($0) }, "\(storage) \(metric) \(round)")
                }
                // Rescoring 4k (at least k + 64) of the best estimates finds nearly all of them.
                let recall = Double(found) / Double(wanted)
                #expect(recall >= (storage == .bit ? 0.7 : 0.95), "\(storage) \(metric): recall \(recall)")
                // Writes that move vectors, then verify (which compares each list block with the
                // one its values make).
                try store.write { batch in
                    for item in items.prefix(200) {
                        try batch.upsert("items", document((item.id, item.tag, items[Int(rng.next() % 1300)].vector)))
                    }
                }
                let report = try store.verify()
                #expect(report.isClean, "\(report)")
            }
        }
    }

    /// Random inserts, updates that move vectors between lists, removals and deletes, across
    /// the first training and a retraining at 4× the count: verify (every vector once in
    /// the list of its nearest centroid, with its values) stays clean, and a search of every
    /// list stays exact.
    @Test func listsUnderRandomWritesAndRetrainingStayWhereTheirCentroidsPlaceThem() throws {
        var rng = SplitMix64(seed: 501)
        let dimensions = 12
        var model: [String: (id: String, tag: Int, vector: [Float])] = [:]
        let pool = clustered(&rng, count: 6000, dimensions: dimensions, clusters: 12)
        try withTemporaryDatabase { db, _ throws in
            let store = try DocumentStore(database: db, schema: try schema(dimensions: dimensions, metric: .l2))
            var trainings: Set<Int> = []
            for round in 0..<40 {
                try store.write { batch in
                    // Inserts only at first (past 1,024, then past 4× the first training).
                    guard round >= 20 else {
                        for item in pool[(round * 300)..<(round * 300 + 300)] {
                            model[item.id] = item
                            try batch.insert("items", document(item))
                        }
                        return
                    }
                    for _ in 0..<60 {
                        let item = pool[Int(rng.next() % 6000)]
                        switch rng.next() % 6 {
                        case 0:
                            if model.removeValue(forKey: item.id) != nil {
                                _ = try batch.delete("items", id: .string(item.id))
                            }
                        case 1:
                            // The vector removed, the document kept.
                            if model.removeValue(forKey: item.id) != nil {
                                try batch.upsert("items", ["id": .string(item.id), "vector": .null])
                            }
                        case 2:
                            // Moved: another pool vector under this id.
                            let other = pool[Int(rng.next() % 6000)]
                            let moved = (item.id, item.tag, other.vector)
                            model[item.id] = moved
                            try batch.upsert("items", document(moved))
                        default:
                            model[item.id] = item
                            try batch.upsert("items", document(item))
                        }
                    }
                }
                let centroids = try store.read { tx in
                    try tx.store.catalog().maintainers(of: "items").compactMap { $0 as? VectorIndexMaintainer }.first
                        .flatMap { try $0.index.centroids(tx.reader) }
                }
                if let centroids { trainings.insert(centroids.trainedOn) }
                if round % 5 == 4 {
                    let report = try store.verify()
                    #expect(report.isClean, "round \(round): \(report)")
                    let items = Array(model.values)
                    let query = pool[Int(rng.next() % 6000)].vector
                    let hits = try store.read {
                        try $0.nearest("items", to: query, k: 12, search: .approximate(probes: 4096))
                    }
                    #expect(hits.map(\.id) == bruteForce(items, query, k: 12, metric: .l2).map { .string($0) })
                }
            }
            // Trained once past 1,024 and again past 4× that.
            #expect(trainings.count >= 2, "\(trainings)")
        }
    }

    /// A vector missing from its list, or in the wrong one, is reported by verify naming
    /// the document; reindex repairs it.
    @Test func verifyReportsAVectorMissingFromItsListAndReindexRepairsIt() throws {
        var rng = SplitMix64(seed: 502)
        let items = clustered(&rng, count: 1500, dimensions: 6, clusters: 10)
        try withTemporaryDatabase { db, _ throws in
            let store = try DocumentStore(database: db, schema: try schema(dimensions: 6, metric: .cosine))
            try store.write { batch in for item in items { try batch.insert("items", document(item)) } }
            #expect(try store.verify().isClean)
            let maintainer = try #require(
                try store.catalog().maintainers(of: "items").compactMap { $0 as? VectorIndexMaintainer }.first)
            // Remove the first list block, behind the index's back.
            let cursor = try db.scan(.prefix(maintainer.index.listsPrefix), order: .forward)
            let key = try #require(try cursor.next { k, _ in Array(k) })
            try db.delete(key)
            let report = try store.verify()
            #expect(!report.isClean)
            #expect(report.danglingEntries > 0)
            #expect(
                report.problems.contains { $0.contains("in the lists of vector index by_vector of \"items\"") },
                "\(report.problems)")
            try store.reindex(collection: "items", index: "by_vector")
            #expect(try store.verify().isClean)
        }
    }
}
