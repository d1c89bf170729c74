import CBench
import Foundation
import GRDB
import KVDocs

/// Realistic text for the text section: a Zipf-distributed vocabulary of 50,000 words
/// (short words common, long ones rare) and lengths that vary as titles and bodies do.
struct TextBenchCorpus {
    let titles: [String]
    let bodies: [String]
    let vocabulary: [String]

    init(count: Int, seed: UInt64) {
        var rng = BenchRandom(seed: seed)
        let syllables = [
            "ka", "lo", "mi", "ra", "te", "su", "no", "vi", "pe", "da", "ri", "zo", "fu", "ne", "ba", "sto", "tra",
            "en", "or", "il"
        ]
        var seen = Set<String>()
        var vocabulary: [String] = []
        while vocabulary.count < 50_000 {
            // Common words are short: the rank sets how many syllables a word may have.
            let maxSyllables = 1 + min(5, vocabulary.count / 400 + Int(rng.next() % 2))
            let n = 1 + Int(rng.next() % UInt64(maxSyllables))
            let w = (0..<n).map { _ in syllables[Int(rng.next() % UInt64(syllables.count))] }.joined()
            if seen.insert(w).inserted { vocabulary.append(w) }
        }
        var total = 0.0
        let cumulative = (1...vocabulary.count).map { r -> Double in
            total += 1 / pow(Double(r), 1.0)
            return total
        }
        func word() -> String {
            let u = Double(rng.next() % 1_000_000_007) / 1_000_000_007 * total
            var lo = 0, hi = cumulative.count - 1
            while lo < hi {
                let mid = (lo + hi) / 2
                if cumulative[mid] <= u { lo = mid + 1 } else { hi = mid }
            }
            return vocabulary[lo]
        }
        var titles: [String] = [], bodies: [String] = []
        titles.reserveCapacity(count)
        bodies.reserveCapacity(count)
        for _ in 0..<count {
            titles.append((0..<(2 + Int(rng.next() % 11))).map { _ in word() }.joined(separator: " "))
            // Most bodies are a few sentences; one in ten is an article.
            let long = rng.next() % 10 == 0
            let length = long ? 150 + Int(rng.next() % 350) : 8 + Int(rng.next() % 70)
            bodies.append((0..<length).map { _ in word() }.joined(separator: " "))
        }
        self.titles = titles
        self.bodies = bodies
        self.vocabulary = vocabulary
    }
}

/// Strings as a C array (duplicated once, freed with the object).
final class CStrings {
    let pointer: UnsafeMutablePointer<UnsafePointer<CChar>?>
    let count: Int
    init(_ strings: [String]) {
        count = strings.count
        pointer = .allocate(capacity: max(1, count))
        for (i, s) in strings.enumerated() { pointer[i] = UnsafePointer(strdup(s)) }
    }
    deinit {
        for i in 0..<count { free(UnsafeMutablePointer(mutating: pointer[i])) }
        pointer.deallocate()
    }
}

extension Bench {
    /// The corpus sizes of the text section.
    var textSizes: [Int] { quick ? [2_000] : textSizeOverride ?? [20_000, 200_000, 1_000_000] }

    static func sizeLabel(_ n: Int) -> String { n >= 1_000_000 ? "\(n / 1_000_000)M" : "\(n / 1000)k" }

    /// Full text against FTS5 (SQLite's C API, `ORDER BY rank LIMIT 10`) and GRDB, at each
    /// corpus size: build time per document, size on disk, and top-10 query time by kind.
    func runText() throws {
        for size in textSizes { try runText(size: size) }
    }

    func runText(size: Int) throws {
        let label = Self.sizeLabel(size)
        let corpus = TextBenchCorpus(count: size, seed: 21)
        let schema = try DocumentSchema(
            json: Data(
                #"{"collections": {"notes": {"primaryKey": "id", "text": [{"name": "t", "fields": ["title", "body"]}]}}}"#
                    .utf8))

        // Building: 1000 documents per transaction on both sides.
        let kvPath = freshPath("text-kv")
        let db = try KVDocs.LevelDB(path: kvPath)
        defer { db.close() }
        let store = try DocumentStore(database: db, schema: schema)
        let build = try measure("text", "build index [\(label)]", "kvdocs", repeats: 1) {
            let start = now()
            for first in stride(from: 0, to: size, by: 1000) {
                try store.write { b in
                    for i in first..<min(first + 1000, size) {
                        try b.insert(
                            "notes",
                            [
                                "id": .int(Int64(i)), "title": .string(corpus.titles[i]),
                                "body": .string(corpus.bodies[i])
                            ])
                    }
                }
            }
            return (now() - start, size, [:])
        }
        let ftsPath = freshPath("text-fts") + ".sqlite"
        var error: UnsafeMutablePointer<CChar>?
        guard let fts = cf_open(ftsPath, &error) else {
            throw BenchError("fts5: " + (error.map { String(cString: $0) } ?? "open failed"))
        }
        defer { cf_close(fts) }
        let titles = CStrings(corpus.titles), bodies = CStrings(corpus.bodies)
        let ftsBuild = try measure("text", "build index [\(label)]", "fts5-c", repeats: 1) {
            (try c { cf_insert(fts, titles.pointer, bodies.pointer, Int32(size), 1000, $0) }, size, [:])
        }

        // Size on disk: KVDocs after a full compaction (what LevelDB converges to), FTS5
        // after a checkpoint; the index apart from the stored documents on both sides.
        try db.compact()
        let textRange = Subspace(["t", "notes", "t"]).range
        let kvIndex = Double(try db.approximateSize(of: textRange))
        let kvTotal = directorySize(kvPath)
        var ftsContent = 0.0
        let ftsIndex = cf_index_bytes(fts, &ftsContent)
        results[results.count - 2].extra = ["index bytes": kvIndex, "total bytes": kvTotal]
        results[results.count - 1].extra = ["index bytes": ftsIndex, "total bytes": ftsIndex + ftsContent]
        FileHandle.standardError.write(
            Data(
                String(
                    format:
                        "  text       size [%@]: index %.1f MB (FTS5 %.1f MB, %.2f×), total %.1f MB (FTS5 %.1f MB); build %.2f× FTS5\n",
                    label, kvIndex / 1e6, ftsIndex / 1e6, kvIndex / ftsIndex, kvTotal / 1e6,
                    (ftsIndex + ftsContent) / 1e6,
                    build.seconds / ftsBuild.seconds
                ).utf8))

        // Queries drawn from the corpus.
        var rng = BenchRandom(seed: 22)
        let v = corpus.vocabulary
        func body() -> [Substring] {
            while true {
                let words = corpus.bodies[Int(rng.next() % UInt64(size))].split(separator: " ")
                if words.count >= 8 { return words }
            }
        }
        func rank(_ range: Range<Int>) -> String { v[range.lowerBound + Int(rng.next() % UInt64(range.count))] }
        let kinds: [(String, () -> String)] = [
            ("term (rare)", { rank(5_000..<50_000) }),
            ("term (common)", { rank(100..<1_000) }),
            ("term (very common)", { rank(0..<20) }),
            (
                "AND, 2 terms",
                {
                    let w = body()
                    return "\(w[1]) \(w[6])"
                }
            ),
            (
                "AND, 3 terms",
                {
                    let w = body()
                    return "\(w[0]) \(w[3]) \(w[7])"
                }
            ),
            (
                "OR, 2 terms",
                {
                    let w = body()
                    return "\(w[2]) OR \(w[5])"
                }
            ),
            (
                "OR, 3 terms",
                {
                    let w = body()
                    return "\(w[2]) OR \(w[4]) OR \(rank(20..<2_000))"
                }
            ),
            (
                "phrase",
                {
                    let w = body()
                    return "\"\(w[3]) \(w[4])\""
                }
            ),
            (
                "prefix",
                {
                    let w = body()
                    return String(w[2].prefix(4)) + "*"
                }
            ),
            ("column filter", { "title: " + rank(0..<500) }),
            (
                "NOT",
                {
                    let w = body()
                    return "\(w[1]) NOT \(w[5])"
                }
            )
        ]
        let count = quick ? 20 : 100
        let collection = try store.collection("notes")
        let grdb = try DatabaseQueue(path: ftsPath)
        for (kind, make) in kinds {
            let queries = (0..<count).map { _ in make() }
            let cQueries = CStrings(queries)
            var ours: [[Int64]] = []
            try measureAlternating(
                "text", "query: \(kind), top 10 [\(label)]",
                [
                    (
                        "kvdocs",
                        {
                            var found: [[Int64]] = []
                            let start = now()
                            for q in queries {
                                let hits = try collection.search(
                                    q, options: SearchOptions(limit: 10, includeDocuments: false))
                                found.append(hits.map { if case .int(let i) = $0.id { i } else { -1 } })
                            }
                            let seconds = now() - start
                            ours = found
                            return (seconds, queries.count, [:])
                        }
                    ),
                    (
                        "fts5-c",
                        {
                            var rows: Int32 = 0
                            return (
                                try self.c {
                                    cf_query(fts, cQueries.pointer, Int32(queries.count), 10, nil, &rows, $0)
                                }, queries.count, [:]
                            )
                        }
                    ),
                    (
                        "grdb",
                        {
                            let start = now()
                            try grdb.read { db in
                                for q in queries {
                                    _ = try Row.fetchAll(
                                        db,
                                        sql: "SELECT rowid, rank FROM notes WHERE notes MATCH ? ORDER BY rank LIMIT 10",
                                        arguments: [q])
                                }
                            }
                            return (now() - start, queries.count, [:])
                        }
                    )
                ])
            // The same answers: FTS5's rowids are the ids.
            var theirs = [Int64](repeating: -1, count: queries.count * 10)
            var rows: Int32 = 0
            _ = try c { cf_query(fts, cQueries.pointer, Int32(queries.count), 10, &theirs, &rows, $0) }
            var differing = 0
            for (i, list) in ours.enumerated() where list != Array(theirs[(i * 10)..<(i * 10 + 10)].filter { $0 >= 0 })
            { differing += 1 }
            results[results.count - 3].extra = ["differing top-10 lists": Double(differing)]
            if differing > 0 {
                FileHandle.standardError.write(
                    Data(
                        "  warning: \(differing) of \(queries.count) \(kind) queries gave a different top 10 than FTS5 (ties?)\n"
                            .utf8))
            }
        }

        // Sizes after each side's optimize (every segment merged into one), once the queries
        // ran on the indexes as built.
        let kvOptimize = now()
        try store.optimize(collection: "notes")
        let kvOptimizeSeconds = now() - kvOptimize
        try db.compact()
        let kvOptimized = Double(try db.approximateSize(of: textRange))
        let ftsOptimize = now()
        var optimizeError: UnsafeMutablePointer<CChar>?
        guard cf_optimize(fts, &optimizeError) == 0 else {
            defer { free(optimizeError) }
            throw BenchError("fts5 optimize: " + (optimizeError.map { String(cString: $0) } ?? "failed"))
        }
        let ftsOptimizeSeconds = now() - ftsOptimize
        let ftsOptimized = cf_index_bytes(fts, &ftsContent)
        if let k = results.lastIndex(where: {
            $0.section == "text" && $0.name == "build index [\(label)]" && $0.variant == "kvdocs"
        }) {
            results[k].extra["index bytes, optimized"] = kvOptimized
            results[k].extra["optimize seconds"] = kvOptimizeSeconds
        }
        if let f = results.lastIndex(where: {
            $0.section == "text" && $0.name == "build index [\(label)]" && $0.variant == "fts5-c"
        }) {
            results[f].extra["index bytes, optimized"] = ftsOptimized
            results[f].extra["optimize seconds"] = ftsOptimizeSeconds
        }
        FileHandle.standardError.write(
            Data(
                String(
                    format:
                        "  text       optimized [%@]: index %.1f MB (FTS5 %.1f MB, %.2f×); optimize %.1f s (FTS5 %.1f s)\n",
                    label, kvOptimized / 1e6, ftsOptimized / 1e6, kvOptimized / ftsOptimized, kvOptimizeSeconds,
                    ftsOptimizeSeconds
                ).utf8))
    }
}
