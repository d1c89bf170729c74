import Foundation

/// Tables, JSON and charts of a run.
struct Report {
    let bench: Bench
    let seconds: Double

    func find(_ section: String, _ name: String, _ variant: String) -> Measurement? {
        bench.results.first { $0.section == section && $0.name == name && $0.variant == variant }
    }

    /// A measurement's allocations per operation, or "—".
    static func allocations(_ m: Measurement?) -> String {
        guard let a = m?.extra[Bench.allocationsKey] else { return "—" }
        return a >= 100 ? String(format: "%.0f", a) : String(format: "%.1f", a)
    }

    static func us(_ v: Double) -> String {
        v >= 100 ? String(format: "%.0f", v) : (v >= 1 ? String(format: "%.2f", v) : String(format: "%.3f", v))
    }
    static func ops(_ v: Double) -> String {
        v >= 1e6
            ? String(format: "%.2fM", v / 1e6)
            : (v >= 1e3 ? String(format: "%.1fk", v / 1e3) : String(format: "%.0f", v))
    }

    /// A table comparing two variants per workload, with the ratio first/second.
    func comparison(_ section: String, _ a: String, _ b: String, title: String, ratioLabel: String) -> String {
        var lines = [
            "### \(title)", "", "| workload | \(a) µs/op | \(b) µs/op | \(ratioLabel) | \(a) ops/s | \(b) ops/s |",
            "|---|---:|---:|---:|---:|---:|"
        ]
        var names: [String] = []
        for m in bench.results where m.section == section && !names.contains(m.name) { names.append(m.name) }
        for name in names {
            let x = find(section, name, a), y = find(section, name, b)
            let ratio =
                (x != nil && y != nil)
                ? String(format: "%.2f×", x!.microsecondsPerOperation / y!.microsecondsPerOperation) : "—"
            lines.append(
                "| \(name) | \(x.map { Self.us($0.microsecondsPerOperation) } ?? "—") | \(y.map { Self.us($0.microsecondsPerOperation) } ?? "—") | \(ratio) | \(x.map { Self.ops($0.operationsPerSecond) } ?? "—") | \(y.map { Self.ops($0.operationsPerSecond) } ?? "—") |"
            )
        }
        return lines.joined(separator: "\n")
    }

    /// The text table: KVDocs, FTS5 through SQLite's C API and through GRDB, with KVDocs'
    /// ratio to the C side, and sizes on disk for the builds.
    func textTable() -> String {
        var lines = [
            "### Full text: KVDocs against SQLite FTS5 (same run)", "",
            "fts5-c: SQLite's C API, `MATCH ? ORDER BY rank LIMIT 10`, prepared statements; grdb: the same SQL through GRDB. Ratios are time per operation (below 1: KVDocs is faster). Sizes: KVDocs after a full compaction, FTS5 from dbstat; the index apart from the stored documents; as built (the queries run on these), then after each side's optimize (every segment merged into one).",
            "",
            "| workload | kvdocs µs/op | fts5-c µs/op | grdb µs/op | KVDocs / FTS5 | index MB (KVDocs / FTS5) | optimized MB (KVDocs / FTS5) |",
            "|---|---:|---:|---:|---:|---:|---:|"
        ]
        var names: [String] = []
        for m in bench.results where m.section == "text" && !names.contains(m.name) { names.append(m.name) }
        for name in names {
            let k = find("text", name, "kvdocs"), f = find("text", name, "fts5-c"), g = find("text", name, "grdb")
            let ratio =
                (k != nil && f != nil)
                ? String(format: "%.2f×", k!.microsecondsPerOperation / f!.microsecondsPerOperation) : "—"
            var size = ""
            if let a = k?.extra["index bytes"], let b = f?.extra["index bytes"] {
                size = String(format: "%.1f / %.1f (%.2f×)", a / 1e6, b / 1e6, a / b)
            }
            var optimized = ""
            if let a = k?.extra["index bytes, optimized"], let b = f?.extra["index bytes, optimized"] {
                optimized = String(format: "%.1f / %.1f (%.2f×)", a / 1e6, b / 1e6, a / b)
            }
            lines.append(
                "| \(name) | \(k.map { Self.us($0.microsecondsPerOperation) } ?? "—") | \(f.map { Self.us($0.microsecondsPerOperation) } ?? "—") | \(g.map { Self.us($0.microsecondsPerOperation) } ?? "—") | \(ratio) | \(size) | \(optimized) |"
            )
        }
        return lines.joined(separator: "\n")
    }

    /// The documents table: every variant's µs/op and KVDocs' ratios to both SQLite columns.
    func documentsTable() -> String {
        let variants = ["kvdocs", "kvdocs-untyped", "sqlite-c", "grdb", "leveldb-floor"]
        var lines = [
            "### Documents: KVDocs against SQLite (C API and GRDB, WAL)", "",
            "kvdocs: typed (`Codable`); kvdocs-untyped: `JSONValue` documents; sqlite-c: SQLite's C API, prepared statements; grdb: GRDB records. Ratios are time per operation (below 1: KVDocs is faster). Indexes: KVDocs `city`, `age` (each entry ordered by id after its value), unique `email`; SQLite (both sides) `(city, id)`, `(age, id)`, unique `(email)`, as a SQLite user declares them for these queries; covering rows: `(city, id, …)` and `(age, id, …)` with every column. The range ordered by id has no natural index on any side: each filters the age range and orders the matches by id. floor: LevelDB's C API alone doing KVDocs' physical work. Reads: on the same database, the reads KVDocs' plan does (a seek and the limit's index entries, then a get per returned document), with no planning, snapshot or parsing. Writes: KVDocs' own write batches of the same run replayed byte for byte on a fresh database with KVDocs' options, one `leveldb_write` per KVDocs batch (each document's record, its index entries put or deleted, its change record; the sequence record), each after the gets KVDocs makes (the document's key; each new unique entry), with no encoding or validation; updates and deletes on a compacted database preloaded with the same documents. results.json also holds each insert floor's batches timed without the gets (`writes_only_us`).",
            "",
            "Allocations: heap allocations per operation made by the measuring thread (its `malloc`, `calloc`, `realloc` and aligned allocations, counted by CAllocationCount; not LevelDB's or SQLite's background threads), as kvdocs / untyped / floor / sqlite-c.",
            "",
            "| workload | kvdocs µs | untyped µs | sqlite-c µs | grdb µs | floor µs | kvdocs / floor | untyped / floor | kvdocs / sqlite-c | untyped / sqlite-c | floor / sqlite-c | allocations per op |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        ]
        var names: [String] = []
        for m in bench.results where m.section == "documents" && !names.contains(m.name) { names.append(m.name) }
        for name in names {
            let measured = variants.map { find("documents", name, $0) }
            let us = measured.map { $0?.microsecondsPerOperation }
            func ratio(_ a: Double?, _ b: Double?) -> String {
                (a != nil && b != nil) ? String(format: "%.2f×", a! / b!) : "—"
            }
            let allocations = [0, 1, 4, 2].map { Self.allocations(measured[$0]) }.joined(separator: " / ")
            lines.append(
                "| \(name) | " + us.map { $0.map(Self.us) ?? "—" }.joined(separator: " | ")
                    + " | \(ratio(us[0], us[4])) | \(ratio(us[1], us[4])) | \(ratio(us[0], us[2])) | \(ratio(us[1], us[2])) | \(ratio(us[4], us[2])) | \(allocations) |"
            )
        }
        let sizes = bench.results.filter { $0.section == "documents" && $0.extra["bytes_on_disk"] != nil }
        if !sizes.isEmpty {
            lines += [
                "",
                "Space after compaction: "
                    + sizes.map {
                        "\($0.name) \($0.variant): \(String(format: "%.1f", ($0.extra["bytes_on_disk"] ?? 0) / 1e6)) MB"
                    }.joined(separator: "; ")
            ]
        }
        if let note = bench.notes["documents: floor of the typed writes"] {
            lines += ["", "Floor of the writes: \(note)."]
        }
        return lines.joined(separator: "\n")
    }

    /// How costs grow with the collection's size: µs/op per size and side.
    func scalingTable() -> String {
        let rows = bench.results.filter { $0.section == "scaling" }
        var names: [String] = []
        for m in rows where !names.contains(m.name) { names.append(m.name) }
        var lines = [
            "### Scaling with collection size (3 indexes)", "",
            "| workload | documents | kvdocs µs/op | sqlite-c µs/op | kvdocs / sqlite-c |", "|---|---:|---:|---:|---:|"
        ]
        for name in names {
            let sizes = Set(rows.filter { $0.name == name }.compactMap { $0.extra["documents"] }).sorted()
            for size in sizes {
                let k = rows.first { $0.name == name && $0.variant == "kvdocs" && $0.extra["documents"] == size }
                let c = rows.first { $0.name == name && $0.variant == "sqlite-c" && $0.extra["documents"] == size }
                let ratio =
                    (k != nil && c != nil)
                    ? String(format: "%.2f×", k!.microsecondsPerOperation / c!.microsecondsPerOperation) : "—"
                lines.append(
                    "| \(name) | \(Int(size)) | \(k.map { Self.us($0.microsecondsPerOperation) } ?? "—") | \(c.map { Self.us($0.microsecondsPerOperation) } ?? "—") | \(ratio) |"
                )
            }
        }
        return lines.joined(separator: "\n")
    }

    func tuningTable() -> String {
        var lines = [
            "### Tuning matrix (Swift wrapper)", "", "| workload | setting | µs/op | ops/s | relative | notes |",
            "|---|---|---:|---:|---:|---|"
        ]
        var names: [String] = []
        for m in bench.results where m.section == "tuning" && !names.contains(m.name) { names.append(m.name) }
        for name in names {
            let rows = bench.results.filter { $0.section == "tuning" && $0.name == name }
            let base = rows.first?.microsecondsPerOperation ?? 1
            for m in rows {
                let notes = m.extra.map { "\($0.key): \(Self.ops($0.value))" }.sorted().joined(separator: ", ")
                lines.append(
                    "| \(name) | \(m.variant) | \(Self.us(m.microsecondsPerOperation)) | \(Self.ops(m.operationsPerSecond)) | \(String(format: "%.2f×", m.microsecondsPerOperation / base)) | \(notes) |"
                )
            }
        }
        return lines.joined(separator: "\n")
    }

    func markdown() -> String {
        var parts = [
            "## kvbench results", "",
            "N = \(bench.n) keys (16-byte keys, 100-byte values, half compressible), median of \(bench.repeats) repeats; \(String(format: "%.0f", seconds)) s in all; \(Self.machine()).",
            ""
        ]
        if bench.results.contains(where: { $0.section == "raw" }) {
            parts.append(
                comparison(
                    "raw", "swift", "c", title: "Swift wrapper against LevelDB's C API (same run)",
                    ratioLabel: "Swift / C"))
            parts.append("")
        }
        if bench.results.contains(where: { $0.section == "tuning" }) {
            parts.append(tuningTable())
            parts.append("")
        }
        if bench.results.contains(where: { $0.section == "documents" }) {
            parts.append(documentsTable())
            parts.append("")
        }
        if bench.results.contains(where: { $0.section == "scaling" }) {
            parts.append(scalingTable())
            parts.append("")
        }
        if bench.results.contains(where: { $0.section == "text" }) {
            parts.append(textTable())
            parts.append("")
        }
        if bench.results.contains(where: { $0.section == "vector" }) {
            parts.append(vectorTable())
            parts.append("")
        }
        if bench.results.contains(where: { $0.section == "import" }) {
            var lines = [
                "### Import", "",
                "leveldb-floor: the import's own write batches (1000 documents each: records, index entries, change records, the sequence record) replayed byte for byte through LevelDB's C API, after a get per document as KVDocs checks for an existing id; no parsing or encoding.",
                "",
                "| workload | variant | total seconds | documents/s | µs/document | / sqlite-c | / floor | allocations per document |",
                "|---|---|---:|---:|---:|---:|---:|---:|"
            ]
            for m in bench.results where m.section == "import" {
                let sqlite = find("import", m.name, "sqlite-c"), floor = find("import", m.name, "leveldb-floor")
                let ratio =
                    sqlite.map { String(format: "%.2f×", m.microsecondsPerOperation / $0.microsecondsPerOperation) }
                    ?? "—"
                let floorRatio =
                    floor.map { String(format: "%.2f×", m.microsecondsPerOperation / $0.microsecondsPerOperation) }
                    ?? "—"
                lines.append(
                    "| \(m.name) | \(m.variant) | \(String(format: "%.3f", m.seconds)) | \(Self.ops(m.operationsPerSecond)) | \(Self.us(m.microsecondsPerOperation)) | \(ratio) | \(floorRatio) | \(Self.allocations(m)) |"
                )
            }
            parts.append(lines.joined(separator: "\n"))
            parts.append("")
        }
        if bench.results.contains(where: { $0.section == "geo" }) {
            parts.append(geoTable())
            parts.append("")
        }
        if bench.results.contains(where: { $0.section == "apps" }) {
            parts.append(appsTable())
            parts.append("")
        }
        if bench.results.contains(where: { $0.section == "layers" }) {
            var lines = [
                "### Layered databases: opening a user database over a shipped base", "",
                "| open | milliseconds |", "|---|---:|"
            ]
            for m in bench.results where m.section == "layers" && !m.name.hasPrefix("replace") {
                lines.append("| \(m.name) | \(String(format: "%.2f", m.seconds * 1000)) |")
            }
            lines += [
                "",
                "### Layered databases: replacing the base under the user's documents (against inserting them into a new store)",
                "",
                "| user documents | replace (ms) | µs per user document | peak MB | insert (ms) | replace / insert |",
                "|---:|---:|---:|---:|---:|---:|"
            ]
            for m in bench.results where m.section == "layers" && m.name.hasPrefix("replace") && m.variant == "kvdocs" {
                let imported = bench.results.first {
                    $0.section == "layers" && $0.name == m.name && $0.variant == "import"
                }
                lines.append(
                    "| \(m.operations) | \(String(format: "%.1f", m.seconds * 1000)) | \(String(format: "%.1f", m.microsecondsPerOperation)) | "
                        + "\(String(format: "%.0f", m.extra["peak MB over the start"] ?? 0)) | \(imported.map { String(format: "%.1f", $0.seconds * 1000) } ?? "—") | "
                        + "\(imported.map { String(format: "%.2f×", m.seconds / $0.seconds) } ?? "—") |")
            }
            parts.append(lines.joined(separator: "\n"))
            parts.append("")
        }
        if bench.results.contains(where: { $0.section == "etcd" }) {
            parts.append(
                comparison(
                    "etcd", "etcd (3 members)", "leveldb",
                    title: "Over etcd: three members on loopback against single-node LevelDB (same run)",
                    ratioLabel: "etcd / LevelDB"))
        }
        if bench.results.contains(where: { $0.section == "sync" }) {
            parts.append(Self.syncTable(bench.results))
            parts.append("")
        }
        parts.append("### Peak resident memory per section")
        parts.append("")
        parts.append("| section | peak RSS (MB) |")
        parts.append("|---|---:|")
        for (s, mb) in bench.peakMemory.sorted(by: { $0.key < $1.key }) {
            parts.append("| \(s) | \(String(format: "%.0f", mb)) |")
        }
        return parts.joined(separator: "\n")
    }

    /// The geo table: KVDocs against SQLite's R*Tree and a brute-force scan, with the
    /// candidates read per hit.
    func geoTable() -> String {
        var lines = [
            "### Geo: KVDocs' geo index against SQLite's R*Tree (same run)", "",
            "rtree: SQLite's R*Tree module through the C API, a bounding-box query of the circle, an exact haversine filter and a sort (k-nearest: widening circles, as KVDocs). brute: every point scanned in memory. Candidates: entries (rows) read per hit. Ratios are time per query (below 1: KVDocs is faster).",
            "",
            "| workload | kvdocs µs | rtree µs | brute µs | kvdocs / rtree | hits per query | candidates per hit (kvdocs / rtree) | kvdocs candidates per hit, centres near a stop |",
            "|---|---:|---:|---:|---:|---:|---:|---:|"
        ]
        var names: [String] = []
        for m in bench.results where m.section == "geo" && !names.contains(m.name) { names.append(m.name) }
        for name in names {
            let k = find("geo", name, "kvdocs"), r = find("geo", name, "rtree"), b = find("geo", name, "brute")
            let ratio =
                (k != nil && r != nil)
                ? String(format: "%.2f×", k!.microsecondsPerOperation / r!.microsecondsPerOperation) : "—"
            let hits = k?.extra["hits per query"].map { String(format: "%.1f", $0) } ?? "—"
            var candidates = "—"
            if let a = k?.extra["candidates per hit"], let c = r?.extra["candidates per hit"] {
                candidates = String(format: "%.2f / %.2f", a, c)
            }
            let nearStop = k?.extra["candidates per hit, centres near a stop"].map { String(format: "%.2f", $0) } ?? "—"
            lines.append(
                "| \(name) | \(k.map { Self.us($0.microsecondsPerOperation) } ?? "—") | \(r.map { Self.us($0.microsecondsPerOperation) } ?? "—") | \(b.map { Self.us($0.microsecondsPerOperation) } ?? "—") | \(ratio) | \(hits) | \(candidates) | \(nearStop) |"
            )
        }
        return lines.joined(separator: "\n")
    }

    func vectorTable() -> String {
        var lines = [
            "### Vectors: KVDocs' exact and approximate k-nearest against numpy's brute force, sqlite-vec and hnswlib (same run)",
            "",
            "384-dimensional unit vectors in 100 clusters, cosine, k = 10, one thread. numpy: the floor, one matrix-vector product and an argpartition per query (OpenBLAS on one thread). sqlite-vec: its `vec0` virtual table, brute force, the bucket a metadata column. hnswlib (M 16, ef_construction 200): approximate (HNSW). KVDocs approximate: the inverted file's lists nearest the query (probes), float32 lists unless the variant names a quantized storage. Recall: the share of the exact top 10 (double precision) returned. Build: µs per vector inserted (KVDocs: the documents, their bucket index and the vector index with its lists, then a compaction).",
            "",
            "| workload | kvdocs | numpy | sqlite-vec | hnswlib | kvdocs / numpy | kvdocs / sqlite-vec | recall (kvdocs / sqlite-vec / hnswlib) |",
            "|---|---:|---:|---:|---:|---:|---:|---:|"
        ]
        var names: [String] = []
        for m in bench.results where m.section == "vector" && !names.contains(m.name) { names.append(m.name) }
        var variants: [String] = []
        for m in bench.results
        where m.section == "vector" && m.variant.hasPrefix("kvdocs") && !variants.contains(m.variant) {
            variants.append(m.variant)
        }
        for name in names {
            for variant in variants.dropFirst() {
                guard let q = find("vector", name, variant) else { continue }
                let recall = q.extra["recall"].map { String(format: "%.3f", $0) } ?? "—"
                let value =
                    name.hasPrefix("build")
                    ? String(format: "%.1f µs", q.microsecondsPerOperation)
                    : String(format: "%.3f ms", q.microsecondsPerOperation / 1000)
                lines.append(
                    "| \(name), \(variant.dropFirst("kvdocs ".count)) lists | \(value) | — | — | — | — | — | \(name.hasPrefix("build") ? "—" : "\(recall) / — / —") |"
                )
            }
            let k = find("vector", name, "kvdocs"), n = find("vector", name, "numpy")
            let v = find("vector", name, "sqlite-vec"), h = find("vector", name, "hnswlib")
            let build = name.hasPrefix("build")
            func cell(_ m: Measurement?) -> String {
                guard let m else { return "—" }
                return build
                    ? String(format: "%.1f µs", m.microsecondsPerOperation)
                    : String(format: "%.3f ms", m.microsecondsPerOperation / 1000)
            }
            func ratio(_ a: Measurement?, _ b: Measurement?) -> String {
                guard let a, let b, b.seconds > 0 else { return "—" }
                return String(
                    format: "%.2f×",
                    a.seconds / Double(max(a.operations, 1)) / (b.seconds / Double(max(b.operations, 1))))
            }
            func recall(_ m: Measurement?) -> String { m?.extra["recall"].map { String(format: "%.3f", $0) } ?? "—" }
            lines.append(
                "| \(name) | \(cell(k)) | \(cell(n)) | \(cell(v)) | \(cell(h)) | \(ratio(k, n)) | \(ratio(k, v)) | \(build ? "—" : "\(recall(k)) / \(recall(v)) / \(recall(h))") |"
            )
        }
        for variant in variants {
            if let b = find("vector", names.first { $0.hasPrefix("build") } ?? "", variant),
                let index = b.extra["index bytes per vector"], let raw = b.extra["raw bytes per vector"]
            {
                lines.append("")
                lines.append(
                    String(
                        format:
                            "Size (%@): the vector index takes %.0f bytes per vector on disk (after compaction), the raw float32 vector %.0f.",
                        variant, index, raw))
            }
        }
        let plans = bench.notes.filter { $0.key.hasPrefix("vector plan ") }.sorted { $0.key < $1.key }
        if !plans.isEmpty {
            lines.append("")
            lines.append("KVDocs' plans (`explainNearest` of the first query):")
            lines.append("")
            for (key, plan) in plans {
                lines.append(
                    "- \(key.dropFirst("vector plan ".count)): " + plan.replacingOccurrences(of: "\n", with: "; "))
            }
        }
        return lines.joined(separator: "\n")
    }

    /// The key of `Bench.notes` holding the KVDocs plan of an apps row, before the row's name.
    static let appsPlanKey = "apps row plan: "

    /// The apps table: typed KVDocs against SQLite's C API on two app workloads, then the
    /// plan each side used for each query (a KVDocs full scan shows as `SCAN`).
    func appsTable() -> String {
        var lines = [
            "### Apps: typed KVDocs against SQLite's C API (same run)", "",
            "athletes: a typed collection with indexes `(country, points)` and unique `licence`; SQLite `athlete(id INTEGER PRIMARY KEY, licence TEXT UNIQUE, …)` with `(country, points)`. stations: typed collections, a geo index on `location` and `(station, time)`; SQLite an R*Tree of the stations (bounding box of the 1.5 km circle, exact haversine on the candidates, the nearest kept), the station's row, and `departure(station, time)`; neither side shares one snapshot between the two reads (KVDocs runs each typed read as its own read transaction, SQLite each statement in its own transaction). Each side's answers are checked equal before timing. Inserts: one run, batches of 1000. Ratios are time per operation (below 1: KVDocs is faster).",
            "",
            "floor: LevelDB's C API alone doing the physical work of KVDocs' operation: for an insert, KVDocs' own write batches replayed byte for byte (each document's record, index entries and change record, the sequence record; one `leveldb_write` per batch of 1000), after a get per document and per unique entry, as KVDocs checks; for a query, on the database KVDocs just queried, the reads of KVDocs' plan (the ranges `explain` reports: a seek and the entries read, then a get per document returned), with no planning, snapshot, decoding or encoding.",
            "",
            "grdb: the same table and index through GRDB (Codable records, a read or write per request; the athletes only).",
            "",
            "| workload | kvdocs µs/op | sqlite-c µs/op | grdb µs/op | kvdocs / sqlite-c | kvdocs / grdb | floor µs/op | kvdocs / floor | floor / sqlite-c | allocations per op (kvdocs / floor / sqlite-c / grdb) | operations (kvdocs / sqlite-c) | kvdocs plan |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
        ]
        var names: [String] = []
        for m in bench.results where m.section == "apps" && !names.contains(m.name) { names.append(m.name) }
        for name in names {
            let k = find("apps", name, "kvdocs"), s = find("apps", name, "sqlite-c"),
                f = find("apps", name, "leveldb-floor"), g = find("apps", name, "grdb")
            let ratio =
                (k != nil && s != nil)
                ? String(format: "%.2f×", k!.microsecondsPerOperation / s!.microsecondsPerOperation) : "—"
            let floorRatio =
                (f != nil && s != nil)
                ? String(format: "%.2f×", f!.microsecondsPerOperation / s!.microsecondsPerOperation) : "—"
            let overFloor =
                (k != nil && f != nil)
                ? String(format: "%.2f×", k!.microsecondsPerOperation / f!.microsecondsPerOperation) : "—"
            let allocations = [k, f, s, g].map(Self.allocations).joined(separator: " / ")
            let overGRDB =
                (k != nil && g != nil)
                ? String(format: "%.2f×", k!.microsecondsPerOperation / g!.microsecondsPerOperation) : "—"
            lines.append(
                "| \(name) | \(k.map { Self.us($0.microsecondsPerOperation) } ?? "—") | \(s.map { Self.us($0.microsecondsPerOperation) } ?? "—") | \(g.map { Self.us($0.microsecondsPerOperation) } ?? "—") | \(ratio) | \(overGRDB) | "
                    + "\(f.map { Self.us($0.microsecondsPerOperation) } ?? "—") | \(overFloor) | \(floorRatio) | \(allocations) | "
                    + "\(k.map { String($0.operations) } ?? "—") / \(s.map { String($0.operations) } ?? "—") | \(bench.notes[Self.appsPlanKey + name] ?? "—") |"
            )
        }
        let plans = bench.notes.filter { $0.key.hasPrefix("apps: ") }.sorted { $0.key < $1.key }
        if !plans.isEmpty {
            lines += ["", "Plans used:", ""]
            for (name, plan) in plans {
                lines.append("- \(name.dropFirst("apps: ".count)):")
                lines += ["", "  ```"] + plan.split(separator: "\n").map { "  " + $0 } + ["  ```", ""]
            }
        }
        return lines.joined(separator: "\n")
    }

    func json() throws -> Data {
        struct Output: Encodable {
            let n: Int, repeats: Int, quick: Bool, seconds: Double, machine: String
            let results: [Measurement]
            let peakMemoryMB: [String: Double]
            let notes: [String: String]
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(
            Output(
                n: bench.n, repeats: bench.repeats, quick: bench.quick, seconds: seconds, machine: Self.machine(),
                results: bench.results, peakMemoryMB: bench.peakMemory, notes: bench.notes))
    }

    static func machine() -> String {
        let cpu =
            (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?.split(separator: "\n")
            .first { $0.hasPrefix("model name") }.map {
                $0.split(separator: ":").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            } ?? "unknown CPU"
        return
            "\(ProcessInfo.processInfo.activeProcessorCount) cores, \(cpu), \(ProcessInfo.processInfo.physicalMemory >> 30) GiB"
    }

    /// Draws charts with matplotlib (Benchmarks/plot.py) when a Python with it is available.
    static func drawCharts(json: String, output: String) {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("plot.py").path
        let pythons = [
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(".venv/bin/python3")
                .path, "/usr/bin/python3"
        ]
        for python in pythons where FileManager.default.isExecutableFile(atPath: python) {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: python)
            p.arguments = [script, json, output]
            do {
                try p.run()
                p.waitUntilExit()
                if p.terminationStatus == 0 { return }
            } catch { continue }
        }
        FileHandle.standardError.write(
            Data("charts skipped: no Python with matplotlib (scripts/install-deps installs it)\n".utf8))
    }

    /// The sync table: documents per second and their ratio to the direct write, then the
    /// latencies and the catch-up.
    static func syncTable(_ results: [Measurement]) -> String {
        let rows = results.filter { $0.section == "sync" }
        var lines = [
            "### Sync: replication over CouchDB's protocol (KVDocsSync)", "",
            "direct write: the target storing the same revisions with `bulkWriteReplicated` in batches of 500, the work every replication ends with. Over loopback: KVDocs' `SyncServer` (Hummingbird) and `HTTPPeer` (AsyncHTTPClient) on 127.0.0.1. Idle continuous: the time from a write on the source until the target has it, the median of the deliveries.",
            "",
            "| workload | variant | documents/s | µs per document | / direct write |", "|---|---|---:|---:|---:|"
        ]
        for m in rows where !m.name.hasPrefix("idle") {
            let direct = rows.first { $0.name == m.name && $0.variant == "direct write" }
            let ratio = direct.map { String(format: "%.2f×", m.seconds / $0.seconds) } ?? "—"
            lines.append(
                "| \(m.name) | \(m.variant) | \(Report.ops(m.operationsPerSecond)) | \(Report.us(m.microsecondsPerOperation)) | \(ratio) |"
            )
        }
        lines += ["", "| idle continuous replication | milliseconds to deliver a write |", "|---|---:|"]
        for m in rows where m.name.hasPrefix("idle") {
            lines.append("| \(m.variant) | \(String(format: "%.2f", m.seconds * 1000)) |")
        }
        return lines.joined(separator: "\n")
    }
}
