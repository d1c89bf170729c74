import Foundation
import KVDocs

/// Clustered unit vectors in the manner of text embeddings: 100 random directions, each
/// vector one of them plus Gaussian noise, normalized; the queries drawn the same way. Each
/// vector has a bucket (0–99, uniform) for filtered queries of 1%, 10% and 50%.
struct VectorBenchData {
    let count: Int
    let dimensions: Int
    var vectors: [Float]
    var queries: [Float]
    var buckets: [Int32]

    init(count: Int, dimensions: Int, queries queryCount: Int, seed: UInt64) {
        var rng = BenchRandom(seed: seed)
        func normal() -> Double {
            // Box-Muller: two uniforms in (0, 1].
            let u = (Double(rng.next() >> 11) + 1) / Double(1 << 53)
            let v = Double(rng.next() >> 11) / Double(1 << 53)
            return (-2 * log(u)).squareRoot() * cos(2 * Double.pi * v)
        }
        func unit(_ values: [Double]) -> [Float] {
            let norm = values.reduce(0) { $0 + $1 * $1 }.squareRoot()
            return values.map { Float($0 / norm) }
        }
        let centres = (0..<100).map { _ in unit((0..<dimensions).map { _ in normal() }) }
        func draw() -> [Float] {
            let c = centres[Int(rng.next() % 100)]
            return unit(c.map { Double($0) + 0.03 * normal() })
        }
        self.count = count
        self.dimensions = dimensions
        vectors = []
        vectors.reserveCapacity(count * dimensions)
        buckets = []
        buckets.reserveCapacity(count)
        for _ in 0..<count {
            vectors += draw()
            buckets.append(Int32(rng.next() % 100))
        }
        queries = []
        for _ in 0..<queryCount { queries += draw() }
    }

    func vector(_ i: Int) -> ArraySlice<Float> { vectors[(i * dimensions)..<((i + 1) * dimensions)] }
    func query(_ i: Int) -> [Float] { Array(queries[(i * dimensions)..<((i + 1) * dimensions)]) }

    /// The exact top k (cosine distance of unit vectors in double precision, ties by id) of
    /// query `q` among the vectors `keep` takes.
    func exactTop(_ q: Int, k: Int, keep: (Int) -> Bool) -> [Int] {
        let query = self.query(q).map(Double.init)
        var scored: [(Double, Int)] = []
        vectors.withUnsafeBufferPointer { v in
            for i in 0..<count where keep(i) {
                var dot = 0.0, norm = 0.0
                for j in 0..<dimensions {
                    let x = Double(v[i * dimensions + j])
                    dot += x * query[j]
                    norm += x * x
                }
                let qn = query.reduce(0) { $0 + $1 * $1 }.squareRoot()
                scored.append((1 - dot / (norm.squareRoot() * qn), i))
            }
        }
        scored.sort { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }
        return scored.prefix(k).map(\.1)
    }
}

extension Bench {
    /// Vector search: KVDocs' exact k-nearest (a vector index of cosine, float32) against
    /// numpy's brute force (the floor: a matrix-vector product per query) and sqlite-vec's
    /// `vec0`, and hnswlib's build and recall for scale; unfiltered and filtered at 1%, 10%
    /// and 50%. The references run in Python (`Benchmarks/vector_reference.py`) on the same
    /// vectors, after KVDocs, in the same run.
    func runVector() throws {
        let count = vectorCount
        let dimensions = 384, k = 10
        let queryCount = quick ? 10 : 50
        let data = VectorBenchData(count: count, dimensions: dimensions, queries: queryCount, seed: 5050)
        let label = count >= 1_000_000 ? "\(count / 1_000_000)M" : "\(count / 1000)k"

        // KVDocs: the documents hold an id, a bucket (indexed) and the embedding; an index of
        // float32 lists, then one of each quantized storage (built after the float32 rows).
        func build(_ storage: VectorStorage) throws -> (LevelDB, DocumentStore, VectorPlan) {
            let path = freshPath("vector-kvdocs-\(storage.rawValue)")
            // Table files of 64 MiB: LevelDB maps at most 1,000 table files into memory and
            // reads the others with pread (a copy per block); a million vectors and their
            // documents take 6.6 GB, 3,300 files of the default 2 MiB.
            var options = LevelDBOptions()
            options.maxFileSize = 64 << 20
            let db = try LevelDB(path: path, options: options)
            let schema = try DocumentSchema(
                json: Data(
                    #"""
                    {"collections": {"items": {"indexes": [{"name": "by_bucket", "fields": ["bucket"]},
                      {"name": "by_embedding", "type": "vector", "fields": ["embedding"], "dimensions": \#(dimensions), "metric": "cosine", "storage": "\#(storage.rawValue)"}]}}}
                    """#.utf8))
            let store = try DocumentStore(database: db, schema: schema)
            let started = now()
            var i = 0
            while i < count {
                let end = min(count, i + 1000)
                try store.write { batch in
                    for j in i..<end {
                        try batch.insert(
                            "items",
                            [
                                "id": .int(Int64(j)), "bucket": .int(Int64(data.buckets[j])),
                                "embedding": .array(data.vector(j).map { .double(Double($0)) })
                            ])
                    }
                }
                i = end
            }
            try db.compact()
            let build = now() - started
            let layout = try store.read { tx in
                try tx.explainNearest("items", to: data.query(0), k: 1, search: .approximate(probes: 1))
            }
            let indexRange = KeyRange.prefix(Subspace().pack(["x", "vector", "items", "by_embedding"]))
            let indexBytes = Double(try db.approximateSize(of: indexRange))
            let variant = storage == .float32 ? "kvdocs" : "kvdocs \(storage.rawValue)"
            results.append(
                Measurement(
                    section: "vector", name: "build \(label) × \(dimensions)", variant: variant, operations: count,
                    seconds: build,
                    extra: [
                        "index bytes per vector": indexBytes / Double(count),
                        "raw bytes per vector": Double(dimensions * 4), "vectors": Double(layout.vectors)
                    ]))
            return (db, store, layout)
        }
        let (db, store, layout) = try build(.float32)
        defer { db.close() }

        // The references, on the same vectors.
        let files = freshPath("vector-files")
        try FileManager.default.createDirectory(atPath: files, withIntermediateDirectories: true)
        try data.vectors.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: files + "/vectors.f32")) }
        try data.queries.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: files + "/queries.f32")) }
        try data.buckets.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: files + "/buckets.i32")) }

        let filters: [(name: String, query: DocumentQuery, keep: (Int) -> Bool)] = [
            ("", DocumentQuery(), { _ in true }),
            ("1%", DocumentQuery().where("bucket", .equal(7)), { data.buckets[$0] == 7 }),
            ("10%", DocumentQuery().where("bucket", .less(10)), { data.buckets[$0] < 10 }),
            ("50%", DocumentQuery().where("bucket", .less(50)), { data.buckets[$0] < 50 })
        ]
        var exact: [String: [[Int]]] = [:]
        for filter in filters {
            exact[filter.name] = (0..<queryCount).map { data.exactTop($0, k: k, keep: filter.keep) }
        }
        let queries = (0..<queryCount).map(data.query)
        for filter in filters {
            let name =
                filter.name.isEmpty ? "exact top \(k), \(label)" : "exact top \(k), \(label), filter \(filter.name)"
            var found: [[Int]] = []
            var plan: VectorPlan?
            try measure("vector", name, "kvdocs") {
                found = []
                let start = now()
                try store.read { tx in
                    for q in queries {
                        let hits = try tx.nearest(
                            "items", to: q, k: k, query: filter.query, search: .exact, includeDocuments: false)
                        found.append(hits.map { if case .int(let id) = $0.id { Int(id) } else { -1 } })
                    }
                }
                let seconds = now() - start
                plan = try store.read {
                    try $0.explainNearest("items", to: queries[0], k: k, query: filter.query, search: .exact)
                }
                return (seconds, queryCount, ["recall": Self.recall(found, exact[filter.name] ?? [])])
            }
            if let plan { notes["vector plan " + name] = plan.description }
        }

        // Approximate: the lists nearest the query, at several probes (unfiltered), and at the
        // default probes with each filter; "fewest hits" is the smallest count any query got.
        func approximate(_ store: DocumentStore, _ runs: [(filter: Int, probes: Int?)], variant: String) throws {
            for (f, probes) in runs {
                let filter = filters[f]
                var name = "approximate top \(k), \(label)"
                if !filter.name.isEmpty { name += ", filter \(filter.name)" }
                name += probes.map { ", probes \($0)" } ?? ", default probes"
                var found: [[Int]] = []
                var plan: VectorPlan?
                try measure("vector", name, variant) {
                    found = []
                    let start = now()
                    try store.read { tx in
                        for q in queries {
                            let hits = try tx.nearest(
                                "items", to: q, k: k, query: filter.query, search: .approximate(probes: probes),
                                includeDocuments: false)
                            found.append(hits.map { if case .int(let id) = $0.id { Int(id) } else { -1 } })
                        }
                    }
                    let seconds = now() - start
                    plan = try store.read {
                        try $0.explainNearest(
                            "items", to: queries[0], k: k, query: filter.query, search: .approximate(probes: probes))
                    }
                    return (
                        seconds, queryCount,
                        [
                            "recall": Self.recall(found, exact[filter.name] ?? []),
                            "fewest hits": Double(found.map(\.count).min() ?? 0), "lists": Double(plan?.lists ?? 0),
                            "lists read": Double(plan?.listsRead ?? 0)
                        ]
                    )
                }
                if let plan { notes["vector plan \(variant) " + name] = plan.description }
            }
        }
        let lists = layout.lists ?? 0
        var runs: [(filter: Int, probes: Int?)] = [1, 2, 4, 8, 16, 32].filter { $0 < lists }.map { (0, $0) }
        runs += [(0, nil), (1, nil), (2, nil), (3, nil)]
        try approximate(store, runs, variant: "kvdocs")
        // The quantized lists: the same searches read fewer bytes (and keep the float32 values).
        // (Not at a million vectors: three more builds of several minutes each.)
        if !quick, count < 1_000_000 {
            for storage in [VectorStorage.float16, .int8, .bit] {
                let (db, store, _) = try build(storage)
                defer { db.close() }
                try approximate(store, [(0, 2), (0, nil), (2, nil)], variant: "kvdocs \(storage.rawValue)")
            }
        }

        // Python: numpy, sqlite-vec and (but in --quick) hnswlib.
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("vector_reference.py").path
        let python = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(".venv/bin/python3").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments =
            [script, files, "\(count)", "\(dimensions)", "\(queryCount)", "\(k)"] + (quick ? [] : ["--hnsw"])
        let pipe = Pipe()
        process.standardOutput = pipe
        do {
            try process.run()
        } catch {
            FileHandle.standardError.write(
                Data("  vector: the references did not run (\(error)); scripts/install-deps installs them\n".utf8))
            return
        }
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0,
            let reference = try JSONSerialization.jsonObject(with: output) as? [String: Any]
        else {
            FileHandle.standardError.write(
                Data("  vector: the references failed; scripts/install-deps installs numpy, sqlite-vec, hnswlib\n".utf8)
            )
            return
        }
        func record(_ name: String, _ variant: String, ms: Any?, ids: Any?, exactName: String) {
            guard let ms = ms as? Double else { return }
            var extra: [String: Double] = [:]
            if let ids = ids as? [[Int]] { extra["recall"] = Self.recall(ids, exact[exactName] ?? []) }
            let m = Measurement(
                section: "vector", name: name, variant: variant, operations: queryCount,
                seconds: ms / 1000 * Double(queryCount), extra: extra)
            results.append(m)
            FileHandle.standardError.write(
                Data(
                    String(
                        format: "  %-10@ %-38@ %-14@ %10.3f µs/op\n", "vector", name, variant,
                        m.microsecondsPerOperation
                    )
                    .utf8))
        }
        let numpy = reference["numpy"] as? [String: Any]
        let vec = reference["sqlite_vec"] as? [String: Any]
        record("exact top \(k), \(label)", "numpy", ms: numpy?["ms_per_query"], ids: numpy?["ids"], exactName: "")
        record("exact top \(k), \(label)", "sqlite-vec", ms: vec?["ms_per_query"], ids: vec?["ids"], exactName: "")
        if let filtered = vec?["filtered"] as? [String: [String: Any]] {
            for name in ["1%", "10%", "50%"] {
                record(
                    "exact top \(k), \(label), filter \(name)", "sqlite-vec", ms: filtered[name]?["ms_per_query"],
                    ids: filtered[name]?["ids"], exactName: name)
            }
        }
        if let us = vec?["us_per_insert"] as? Double {
            results.append(
                Measurement(
                    section: "vector", name: "build \(label) × \(dimensions)", variant: "sqlite-vec", operations: count,
                    seconds: us / 1e6 * Double(count)))
        }
        if let hnsw = reference["hnswlib"] as? [String: Any] {
            if let us = hnsw["us_per_insert"] as? Double {
                results.append(
                    Measurement(
                        section: "vector", name: "build \(label) × \(dimensions)", variant: "hnswlib",
                        operations: count, seconds: us / 1e6 * Double(count)))
            }
            for (ef, figures) in (hnsw["ef"] as? [String: [String: Double]] ?? [:]).sorted(by: { $0.key < $1.key }) {
                guard let ms = figures["ms_per_query"] else { continue }
                results.append(
                    Measurement(
                        section: "vector", name: "approximate top \(k), \(label), ef \(ef)", variant: "hnswlib",
                        operations: queryCount, seconds: ms / 1000 * Double(queryCount),
                        extra: ["recall": figures["recall"] ?? 0]))
            }
        }
        if let version = vec?["version"] as? String { notes["sqlite-vec version"] = version }
    }

    /// The share of `expected`'s ids that `found` holds, over all queries.
    static func recall(_ found: [[Int]], _ expected: [[Int]]) -> Double {
        var hit = 0, total = 0
        for (f, e) in zip(found, expected) {
            hit += Set(f).intersection(e).count
            total += e.count
        }
        return total == 0 ? 1 : Double(hit) / Double(total)
    }
}
