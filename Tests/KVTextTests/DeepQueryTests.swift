import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// Full-text queries of any length and nesting: long chains run without deep recursion;
/// nesting past TextQuery.maximumNesting or a tree deeper than TextQuery.maximumDepth is
/// an error naming the position, never a stack overflow.
@Suite struct DeepQueryTests {
    /// A store whose notes are "w0" … "w9", one word each, and "perth" for notes 3 and 7.
    static func withNotes(_ body: (DocumentCollection) throws -> Void) throws {
        try withTemporaryDatabase { db, _ throws in
            let notes = try TextSearchTests.store(db).collection("notes")
            for i in 0..<10 {
                try notes.insert([
                    "id": .string("n\(i)"), "bio": .string("w\(i)" + (i % 4 == 3 ? " perth" : "")), "title": "note"
                ])
            }
            try body(notes)
        }
    }

    static func ids(_ hits: [SearchHit]) -> [String] {
        hits.compactMap { if case .string(let s) = $0.id { s } else { nil } }.sorted()
    }

    /// `levels` levels, each of two parentheses (the inner with a column filter), adding an
    /// OR, an AND, a NOT and another AND to the tree (depth 4 × levels); only n1 matches.
    static func fourOperatorsPerLevel(_ levels: Int) -> String {
        nested(levels, core: "w1") { ("zz\($0) OR w1 AND (w1 AND bio: (", ")) NOT zz\($0)") }
    }

    /// `levels` levels of parentheses alternating OR and AND (depth `levels`); n3 and n7 match.
    static func alternating(_ levels: Int) -> String {
        nested(levels, core: "perth") { $0 % 2 == 0 ? ("zz\($0) OR (", ")") : ("perth AND (", ")") }
    }

    /// `core` wrapped in `levels` levels, level 0 innermost: `level(i)` gives the text before
    /// and after level i - 1.
    static func nested(_ levels: Int, core: String, _ level: (Int) -> (String, String)) -> String {
        let parts = (0..<levels).map(level)
        return parts.reversed().map(\.0).joined() + core + parts.map(\.1).joined()
    }

    /// The search's error, or nil when it succeeds; on a thread with a 512 KiB stack.
    static func searchError(_ notes: DocumentCollection, _ query: String) throws -> KVDocsError? {
        try onThread { () -> KVDocsError? in
            do {
                _ = try notes.search(query)
                return nil
            } catch let error as KVDocsError {
                return error
            }
        }
    }

    @Test func aHundredThousandTermOrQueryReturnsTheRightHits() throws {
        try Self.withNotes { notes in
            var rng = SplitMix64(seed: 4000)
            let query = ((0..<100_000).map { "x\($0)" } + ["w2", "perth"]).shuffled(using: &rng).joined(
                separator: " OR ")
            let hits = try onThread { try notes.search(query, options: SearchOptions(includeDocuments: false)) }
            #expect(Self.ids(hits) == ["n2", "n3", "n7"])
            // Terms that match nothing add nothing to a score (FTS5's bm25() adds 0 for each),
            // and they do not change the other terms' weights.
            let short = try notes.search("w2 OR perth", options: SearchOptions(includeDocuments: false))
            #expect(hits.map(\.id) == short.map(\.id))
            #expect(hits.map(\.score) == short.map(\.score))
        }
    }

    @Test func aHundredThousandTermAndNotAndImplicitChainsRun() throws {
        try Self.withNotes { notes in
            let many = Array(repeating: "perth", count: 100_000)
            let excluded = (0..<100_000).map { "x\($0)" } + ["w7"]
            let results = try onThread {
                [
                    Self.ids(try notes.search(many.joined(separator: " AND "))),
                    Self.ids(try notes.search(many.joined(separator: " "))),
                    Self.ids(try notes.search("perth NOT " + excluded.joined(separator: " NOT "))),
                    Self.ids(try notes.search("note NOT " + excluded.joined(separator: " NOT ")))
                ]
            }
            #expect(
                results == [["n3", "n7"], ["n3", "n7"], ["n3"], ["n0", "n1", "n2", "n3", "n4", "n5", "n6", "n8", "n9"]])
        }
    }

    /// Regrouping, flattened chains, long chains and nesting give FTS5's hits, scores and
    /// highlights (the queries stay within what SQLite 3.40's parser accepts). No NEAR:
    /// its BM25 scores differ from FTS5's, before these changes as after.
    @Test func groupedAndLongChainsAgreeWithSQLiteFTS5() throws {
        try withTemporaryDatabase { db, _ throws in
            let notes = try TextSearchTests.store(db).collection("notes")
            let docs = TextCorpus.documents(300, seed: 5)
            for doc in docs { try notes.insert(doc) }
            let words = (0..<1_000).map { "w\($0)" }
            let queries = [
                "(station OR train) OR perth", "station OR (train OR perth)", "station OR train OR perth",
                "(station AND train) AND perth", "station AND (train AND perth)", "station train AND perth city",
                "(station NOT train) NOT perth", "station NOT (train OR perth)",
                "(station OR city) NOT train NOT (perth AND zone)",
                "bio: (station OR title: (train OR city))", "- bio: (station AND (city OR night))",
                "{bio title}: (\"night express\" OR perth)",
                "station OR (train AND (perth OR (city AND (night OR zone))))",
                (words + ["station", "perth"]).joined(separator: " OR "),
                "station " + Array(repeating: "train", count: 300).joined(separator: " "),
                "station NOT " + words.prefix(200).joined(separator: " NOT ") + " NOT perth",
                String(repeating: "(", count: 90) + "station OR perth" + String(repeating: ")", count: 90)
            ]
            let spec: JSONValue = [
                "tokenizer": "unicode61", "columns": ["bio", "title"], "docs": .array(docs),
                "queries": .array(queries.map { .string($0) })
            ]
            let output = try runPython(
                "Tests/python/fts5_tool.py", ["search"],
                input: String(decoding: try spec.canonicalData(), as: UTF8.self))
            let references = try output.split(separator: "\n").map {
                try JSONDecoder().decode(TextSearchTests.Reference.self, from: Data($0.utf8))
            }
            try #require(references.count == queries.count)
            for (query, reference) in zip(queries, references) {
                let label = String(query.prefix(60))
                guard let ids = reference.ids, let scores = reference.scores else {
                    Issue.record("\(label): FTS5 failed: \(reference.error ?? "?")")
                    continue
                }
                let hits = try notes.search(query, options: SearchOptions(highlight: .init(open: "[", close: "]")))
                let ours = hits.map { if case .string(let s) = $0.id { s } else { "" } }
                #expect(Set(ours) == Set(ids), "\(label): hit sets differ")
                let theirs = Dictionary(
                    zip(ids, zip(scores, reference.highlights ?? [])), uniquingKeysWith: { a, _ in a })
                for (id, hit) in zip(ours, hits) {
                    guard let (score, highlights) = theirs[id] else { continue }
                    #expect(
                        abs(hit.score - score) <= 1e-9 * max(1, abs(score)),
                        "\(label): \(id) scores \(hit.score), FTS5 \(score)")
                    #expect(
                        [hit.highlights["bio"] ?? "", hit.highlights["title"] ?? ""] == highlights.map { $0 ?? "" },
                        "\(label): highlights of \(id)")
                }
            }
        }
    }

    @Test func queriesAtTheLimitsRunOnASmallStack() throws {
        try Self.withNotes { notes in
            let nesting = TextQuery.maximumNesting, depth = TextQuery.maximumDepth
            let cases: [(String, [String])] = [
                (
                    String(repeating: "(", count: nesting) + "perth" + String(repeating: ")", count: nesting),
                    ["n3", "n7"]
                ),
                (
                    String(repeating: "bio: (", count: nesting) + "perth" + String(repeating: ")", count: nesting),
                    ["n3", "n7"]
                ),
                (Self.fourOperatorsPerLevel(depth / 4), ["n1"]),
                (Self.alternating(depth), ["n3", "n7"])
            ]
            for (query, expected) in cases {
                let hits = try onThread {
                    try notes.search(query, options: SearchOptions(highlight: .init(open: "[", close: "]")))
                }
                #expect(Self.ids(hits) == expected, "\(query.prefix(40))")
            }
            // The parsed form too: comparing, hashing and releasing it stay within the stack.
            let (equal, phrases) = try onThread {
                let tokenizer = TextTokenizer()
                let a = try TextQuery.parse(
                    Self.fourOperatorsPerLevel(depth / 4), tokenizer: tokenizer, columns: ["bio", "title"])
                let b = try TextQuery.parse(
                    Self.fourOperatorsPerLevel(depth / 4), tokenizer: tokenizer, columns: ["bio", "title"])
                return (a == b && a.hashValue == b.hashValue, a.phrases.count)
            }
            #expect(equal)
            #expect(phrases == depth + 1)
        }
    }

    @Test(arguments: [TextQuery.maximumNesting + 1, 5_000, 100_000])
    func parenthesesNestedPastTheLimitAreAnErrorNamingThePosition(levels: Int) throws {
        try Self.withNotes { notes in
            let cases = [
                String(repeating: "(", count: levels) + "perth" + String(repeating: ")", count: levels),
                String(repeating: "(", count: levels),
                String(repeating: "bio:(", count: levels) + "perth" + String(repeating: ")", count: levels),
                Self.fourOperatorsPerLevel(levels),
                Self.alternating(levels)
            ]
            for query in cases {
                // The first "(" past the limit.
                let opens = query.utf8.indices.filter { query.utf8[$0] == UInt8(ascii: "(") }
                let position = query.utf8.distance(from: query.utf8.startIndex, to: opens[TextQuery.maximumNesting])
                let error = try Self.searchError(notes, query)
                #expect(error?.kind == .invalidArgument)
                let message = error?.message ?? "accepted"
                #expect(message.hasPrefix("fts5: syntax error at position \(position) near \"("), "\(message)")
                #expect(
                    message.hasSuffix("parentheses nested more than \(TextQuery.maximumNesting) levels deep"),
                    "\(message)")
            }
        }
    }

    @Test func anExpressionTreeDeeperThanTheLimitIsAnError() throws {
        try Self.withNotes { notes in
            let depth = TextQuery.maximumDepth
            // 129 levels of parentheses, each adding an OR and an AND: depth 258.
            let twoPerLevel = Self.nested(depth / 2 + 1, core: "perth") { ("zz\($0) OR perth AND (", ")") }
            for query in [Self.fourOperatorsPerLevel(depth / 4 + 1), twoPerLevel] {
                let error = try Self.searchError(notes, query)
                #expect(error?.kind == .invalidArgument)
                let message = error?.message ?? "accepted"
                #expect(message.hasPrefix("fts5: syntax error at position "), "\(message)")
                #expect(message.hasSuffix("the expression tree is too large (maximum depth \(depth))"), "\(message)")
            }
            // Chains of one operator do not add depth, however they are grouped.
            let grouped = String(repeating: "(x OR ", count: 200) + "perth" + String(repeating: ")", count: 200)
            #expect(Self.ids(try onThread { try notes.search(grouped) }) == ["n3", "n7"])
        }
    }

    /// As FTS5's grammar (`expr ::= colset COLON LP expr RP`; an implicit AND joins only
    /// `[colset :] nearset`s), a column-filtered parenthesis cannot take part in an implicit
    /// AND on either side; with an operator it is fine.
    @Test func aFilteredParenthesisNextToAPhraseWithoutAnOperatorIsAnError() throws {
        try Self.withNotes { notes in
            let rejected: [(String, Int)] = [
                ("w1 bio: (perth OR w2)", 8),
                ("w1 - {bio title} : (perth OR NEAR(w1 perth))", 19),
                ("bio: (perth) w3", 13),
                ("w1 OR bio: (perth) w3", 19)
            ]
            for (query, position) in rejected {
                let error = try Self.searchError(notes, query)
                #expect(error?.kind == .invalidArgument, "\(query)")
                #expect(
                    (error?.message ?? "accepted").hasPrefix("fts5: syntax error at position \(position) "),
                    "\(query): \(error?.message ?? "accepted")")
            }
            for query in [
                "w3 AND bio: (perth OR w2)", "bio: (perth) AND w3", "w1 NOT bio: (w2)", "w3 OR - {bio title} : (perth)"
            ] {
                #expect(try Self.searchError(notes, query) == nil, "\(query)")
            }
        }
    }
}
