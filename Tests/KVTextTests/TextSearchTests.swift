import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

let notesSchemaJSON = #"""
    {"collections": {"notes": {"primaryKey": "id", "indexes": [{"name": "by_year", "fields": ["year"]}],
      "text": [{"name": "body_text", "fields": ["bio", "title"]}]}}}
    """#

/// A generated corpus: mixed case, punctuation, digits and accented Latin words.
enum TextCorpus {
    static let words = [
        "station", "Station", "STATION", "train", "trains", "platform", "Perth", "perth", "Fremantle", "café", "CAFÉ",
        "cafe", "naïve", "résumé", "Résumé", "Élan", "elan", "straße", "Zürich", "zurich", "über", "2024", "11", "x9",
        "a1b2", "line", "lines", "lined", "zone", "zones", "départ", "depart", "arrival", "arrivals", "night",
        "express", "local", "city", "quiet", "the", "a", "of", "and", "to", "in", "on", "Ångström", "œuvre", "ÆON",
        "北京大学生", "東京駅", "서울역", "İstanbul", "ΣΟΦΊΑ"
    ]
    static let punctuation = [" ", " ", " ", " ", ", ", ". ", "! ", " - ", "'s ", " (", ") ", ": ", "; ", "/", "..."]

    static func text(_ rng: inout SplitMix64, words count: ClosedRange<Int>) -> String {
        var s = ""
        for _ in 0..<Int.random(in: count, using: &rng) {
            s += words.randomElement(using: &rng)! + punctuation.randomElement(using: &rng)!
        }
        return s
    }

    static func documents(_ count: Int, seed: UInt64) -> [JSONValue] {
        var rng = SplitMix64(seed: seed)
        return (0..<count).map { i in
            var o: JSONObject = ["id": .string(String(format: "d%05d", i)), "year": .int(Int64(2000 + i % 25))]
            if Int.random(in: 0..<10, using: &rng) > 0 { o["bio"] = .string(text(&rng, words: 3...40)) }
            if Int.random(in: 0..<4, using: &rng) > 0 { o["title"] = .string(text(&rng, words: 1...6)) }
            return .object(o)
        }
    }

    static func queries(_ rng: inout SplitMix64, _ docs: [JSONValue]) -> [String] {
        func word() -> String { words.randomElement(using: &rng)! }
        func bare() -> String {
            // Barewords must be FTS5 barewords: quote the ones with non-bareword characters.
            let w = word()
            return w.utf8.allSatisfy { TextQueryParser.isBareword($0) } && !["AND", "OR", "NOT"].contains(w)
                ? w : "\"\(w)\""
        }
        func phrase() -> String {
            // Consecutive words of a real document.
            let doc = docs.randomElement(using: &rng)!
            guard case .string(let text)? = doc["bio"] else { return "\"\(word()) \(word())\"" }
            let terms = TextTokenizer().terms(text)
            guard terms.count > 3 else { return "\"\(word())\"" }
            let start = Int.random(in: 0..<(terms.count - 2), using: &rng)
            return "\"" + terms[start..<start + Int.random(in: 2...3, using: &rng)].joined(separator: " ") + "\""
        }
        func prefix() -> String {
            let w = TextTokenizer().terms(word()).first ?? "st"
            return "\"\(w.prefix(Int.random(in: 1...3, using: &rng)))\"*"
        }
        func term() -> String {
            switch Int.random(in: 0..<6, using: &rng) {
            case 0: return phrase()
            case 1: return prefix()
            case 2: return "bio: " + bare()
            case 3: return ["title: ", "{bio title}: ", "- bio: ", "TITLE: "].randomElement(using: &rng)! + bare()
            default: return bare()
            }
        }
        // Phrases with no tokens, which FTS5 drops from implicit ANDs and NEAR groups only.
        var result = [
            #""" night"#, #"night """#, #"night AND """#, #"night OR """#, #""" NOT night"#, #"NEAR("" night)"#,
            #""..." express"#, #"NEAR(night "" express, 3)"#, #"("" "") OR city"#, #"title: "" night"#
        ]
        for _ in 0..<300 {
            switch Int.random(in: 0..<10, using: &rng) {
            case 8:
                result.append(
                    "NEAR(\(bare()) \(bare())\(Bool.random(using: &rng) ? "" : ", \(Int.random(in: 0...6, using: &rng))"))"
                )
            case 9:
                result.append(
                    "NEAR(\(phrase()) \(bare()) \(bare()), \(Int.random(in: 1...12, using: &rng))) OR \(bare())")
            case 0: result.append(bare())
            case 1: result.append("\(term()) \(term())")
            case 2: result.append("\(term()) AND \(term())")
            case 3: result.append("\(term()) OR \(term())")
            case 4: result.append("\(term()) NOT \(term())")
            case 5: result.append("(\(term()) OR \(term())) AND \(term())")
            case 6: result.append("\(term()) OR \(term()) \(term())")
            default: result.append(term())
            }
        }
        return result
    }
}

@Suite struct TextSearchTests {
    static func store(_ db: LevelDB, tokenizer: String = "unicode61", detail: String = "full") throws -> DocumentStore {
        try DocumentStore(database: db, schema: try schema(tokenizer: tokenizer, detail: detail))
    }

    static func schema(tokenizer: String = "unicode61", detail: String = "full") throws -> DocumentSchema {
        let json = notesSchemaJSON.replacingOccurrences(
            of: #""fields": ["bio", "title"]}"#,
            with: #""fields": ["bio", "title"], "tokenizer": "\#(tokenizer)", "detail": "\#(detail)"}"#)
        return try DocumentSchema(json: Data(json.utf8))
    }

    /// Every tokenizer and `detail` mode over LevelDB; one read as over a network
    /// (``RoundTripStore``) and one over etcd, when the tests have it (the storage is what
    /// differs, not the text logic).
    static var fts5Cases: [(TestBackend, String, String)] {
        let all = [
            ("unicode61", "full"), ("porter", "full"), ("trigram", "full"), ("trigram case_sensitive 1", "full"),
            ("unicode61", "column"), ("porter", "none"), ("trigram", "column")
        ]
        let remote = TestBackend.differential.contains(.etcd) ? [("porter", "full")] : []
        return all.map { (TestBackend.leveldb, $0.0, $0.1) } + [(TestBackend.roundTrips, "porter", "full")]
            + remote.map { (.etcd, $0.0, $0.1) }
    }

    struct Reference: Decodable {
        var ids: [String]?
        var scores: [Double]?
        var highlights: [[String?]]?
        var snippets: [String?]?
        var error: String?
    }

    /// The same corpus and queries in KVDocs and SQLite FTS5, for each tokenizer and
    /// `detail` mode: equal hit sets, BM25 scores equal to FTS5's bm25(), the same top-10
    /// order except among equal scores, the same highlights and snippets, and the same errors for the
    /// queries a `detail` mode refuses.
    @Test(.requires(.sqliteFTS5), arguments: fts5Cases)
    func searchAgreesWithSQLiteFTS5(backend: TestBackend, tokenizer: String, detail: String) throws {
        try backend.withStore(schema: try Self.schema(tokenizer: tokenizer, detail: detail)) { store throws in
            let notes = try store.collection("notes")
            let docs = TextCorpus.documents(2500, seed: 61)
            let dir = TemporaryDirectory()
            let file = dir.child("docs.jsonl")
            try Data(docs.map { String(decoding: try $0.canonicalData(), as: UTF8.self) }.joined(separator: "\n").utf8)
                .write(to: URL(fileURLWithPath: file))
            try store.importJSONLines(into: "notes", path: file)
            var rng = SplitMix64(seed: 62)
            let queries = TextCorpus.queries(&rng, docs)
            let spec: JSONValue = [
                "tokenizer": .string(tokenizer), "detail": .string(detail), "columns": ["bio", "title"],
                "docs": .array(docs), "queries": .array(queries.map { .string($0) })
            ]
            let output = try runPython(
                "Tests/python/fts5_tool.py", ["search"],
                input: String(decoding: try spec.canonicalData(), as: UTF8.self))
            let references = try output.split(separator: "\n").map {
                try JSONDecoder().decode(Reference.self, from: Data($0.utf8))
            }
            try #require(references.count == queries.count)
            var compared = 0, nonEmpty = 0
            for (query, reference) in zip(queries, references) {
                let hits: [SearchHit]
                do {
                    hits = try notes.search(query, options: SearchOptions(includeDocuments: false))
                } catch {
                    #expect(reference.error != nil, "\(query): we failed (\(error)), FTS5 did not")
                    if let theirs = reference.error, theirs.contains("detail"), let ours = error as? KVDocsError {
                        #expect(ours.message == theirs, "\(query): our error \(ours.message), FTS5's \(theirs)")
                    }
                    continue
                }
                guard let ids = reference.ids, let scores = reference.scores else {
                    Issue.record("\(query): FTS5 failed (\(reference.error ?? "?")), we did not")
                    continue
                }
                compared += 1
                if !ids.isEmpty { nonEmpty += 1 }
                let ours = hits.map {
                    $0.id.compactDescription.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                }
                #expect(Set(ours) == Set(ids), "\(query): hit sets differ (\(ours.count) vs \(ids.count))")
                let theirScore = Dictionary(zip(ids, scores), uniquingKeysWith: { a, _ in a })
                for hit in hits {
                    let id = hit.id.compactDescription.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                    guard let s = theirScore[id] else { continue }
                    #expect(
                        abs(hit.score - s) <= 1e-9 * max(1, abs(s)), "\(query): \(id) scores \(hit.score), FTS5 \(s)")
                }
                // Top-10 order: equal except where FTS5's scores tie.
                for (k, id) in ours.prefix(10).enumerated() where k < ids.count && id != ids[k] {
                    let tie = abs((theirScore[id] ?? .nan) - scores[k]) <= 1e-9 * max(1, abs(scores[k]))
                    #expect(tie, "\(query): rank \(k) is \(id), FTS5 has \(ids[k])")
                }
                // Highlights of the first hits.
                let theirHighlights = Dictionary(zip(ids, reference.highlights ?? []), uniquingKeysWith: { a, _ in a })
                let theirSnippets = Dictionary(zip(ids, reference.snippets ?? []), uniquingKeysWith: { a, _ in a })
                let options = SearchOptions(
                    limit: 3, highlight: .init(open: "[", close: "]"),
                    snippet: .init(markers: .init(open: "[", close: "]"), ellipsis: "...", tokens: 8))
                for hit in try notes.search(query, options: options) {
                    let id = hit.id.compactDescription.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                    // Snippets of NEAR queries can rest on the positions a failed NEAR test
                    // left behind in FTS5, which its snippet() reads past the row (not compared).
                    if !query.contains("NEAR("), let theirs = theirSnippets[id] {
                        #expect(hit.snippet == (theirs ?? ""), "\(query): snippet of \(id)")
                    }
                    guard let theirs = theirHighlights[id] else { continue }
                    for (column, name) in ["bio", "title"].enumerated() {
                        let expected = theirs[column] ?? ""
                        #expect((hit.highlights[name] ?? "") == expected, "\(query): highlight of \(id).\(name)")
                    }
                }
            }
            // detail=column refuses phrases (every trigram query of three characters or more
            // is one), detail=none column filters as well.
            let expected = detail == "full" ? (250, 150) : tokenizer.hasPrefix("trigram") ? (20, 8) : (80, 60)
            #expect(compared > expected.0 && nonEmpty > expected.1, "\(compared) compared, \(nonEmpty) with hits")
            #expect(try store.verify().isClean)
        }
    }

    @Test func malformedQueriesGiveErrorsNamingThePosition() throws {
        try withTemporaryDatabase { db, _ throws in
            let notes = try Self.store(db).collection("notes")
            try notes.insert(["id": "a", "bio": "one two"])
            let cases: [(String, String)] = [
                ("AND one", "position 0"), ("one OR", "position 6"), ("NOT one", "position 0"), ("()", "position 1"),
                ("\"one", "unterminated string"), ("one.two", "position 3"), ("(one OR two) three", "position 13"),
                ("bio:", "position 4"), ("nosuch: one", "no such column: nosuch"), ("one (two)", "position 4")
            ]
            for (query, fragment) in cases {
                do {
                    _ = try notes.search(query)
                    Issue.record("accepted \(query)")
                } catch let error as KVDocsError {
                    #expect(error.kind == .invalidArgument)
                    #expect(error.message.contains(fragment), "\(query): \(error.message)")
                }
            }
        }
    }

    @Test func updatesAndDeletesKeepPostingsExact() throws {
        try withTemporaryDatabase { db, _ throws in
            let store = try Self.store(db)
            let notes = try store.collection("notes")
            var rng = SplitMix64(seed: 71)
            let docs = TextCorpus.documents(300, seed: 72)
            for _ in 0..<900 {
                let doc = docs.randomElement(using: &rng)!
                var changed = doc
                if case .object(var o) = doc, Bool.random(using: &rng) {
                    o["bio"] = .string(TextCorpus.text(&rng, words: 0...10))
                    changed = .object(o)
                }
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: try notes.delete(id: doc["id"] ?? .null)
                default: try notes.upsert(changed)
                }
            }
            #expect(try store.verify().isClean)
            // Inject damage: verify sees it, reindex repairs it.
            let layout = store.textLayout("notes", "body_text")
            try db.put(
                layout.block("ghost", 0, 999_999),
                PostingBlock(
                    firstDoc: 999_999, docs: [999_999], frequencies: [1], norms: [1],
                    impacts: [.init(frequency: 1, length: 1)]
                ).encoded())
            try db.put(layout.statistics, Tuple([1, 1, 1]))
            let report = try store.verify()
            #expect(!report.isClean && report.problems.contains { $0.contains("statistics") })
            #expect(report.problems.contains { $0.contains("ghost") && $0.contains("999999") }, "\(report)")
            try store.reindex(collection: "notes", index: "body_text")
            #expect(try store.verify().isClean)
        }
    }

    @Test func searchRunsAgainstASnapshotAndInsideReadTransactions() throws {
        try withTemporaryDatabase { db, _ throws in
            let store = try Self.store(db)
            let notes = try store.collection("notes")
            try notes.insert(["id": "a", "bio": "night express to Perth", "year": 2020])
            try store.read { tx throws in
                #expect(try tx.search("notes", "perth").count == 1)
                try notes.insert(["id": "b", "bio": "Perth local", "year": 2021])
                try notes.delete(id: "a")
                #expect(try tx.search("notes", "perth").map(\.id) == ["a"])
                #expect(try tx.find("notes", DocumentQuery().where("year", .greaterOrEqual(2020))).count == 1)
            }
            #expect(try notes.search("perth").map(\.id) == ["b"])
        }
    }

    @Test func highlightAndSnippetMarkMatches() throws {
        try withTemporaryDatabase { db, _ throws in
            let notes = try Self.store(db).collection("notes")
            try notes.insert([
                "id": "a", "title": "Night trains",
                "bio":
                    "The night express leaves Perth at ten. It stops at every station between Perth and Fremantle, then runs express to the coast."
            ])
            let hit = try #require(
                try notes.search(
                    "\"night express\" OR perth",
                    options: SearchOptions(
                        highlight: .init(open: "<b>", close: "</b>"),
                        snippet: .init(markers: .init(open: "<b>", close: "</b>"), ellipsis: "…", tokens: 8))
                ).first)
            #expect(
                hit.highlights["bio"]
                    == "The <b>night express</b> leaves <b>Perth</b> at ten. It stops at every station between <b>Perth</b> and Fremantle, then runs express to the coast."
            )
            #expect(hit.highlights["title"] == "Night trains")
            #expect(hit.snippet == "The <b>night express</b> leaves <b>Perth</b> at ten. It…")
            #expect(hit.score < 0)
        }
    }
}
