import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@Suite struct TextTokenizerTests {
    @Test func unicode61SplitsFoldsAndRemovesDiacritics() {
        let t = TextTokenizer()
        #expect(
            t.terms("Héllo, WORLD! it's 2024-11-21 naïve Straße İstanbul ǖ e\u{301}") == [
                "hello", "world", "it", "s", "2024", "11", "21", "naive", "straße", "istanbul", "ǖ", "e"
            ])
        #expect(t.terms("") == [])
        #expect(t.terms("under_score a.b") == ["under", "score", "a", "b"])
        let tokens = t.tokens("  Ab  cd")
        #expect(tokens.map(\.start) == [2, 6] && tokens.map(\.end) == [4, 8] && tokens.map(\.position) == [0, 1])
        // A combining mark cannot start a token.
        #expect(t.terms("\u{301}x") == ["x"])
    }

    static func randomText(_ rng: inout SplitMix64) -> String {
        let pieces = [
            "a", "Z", "é", "É", "ß", "ǖ", "\u{301}", "\u{308}", " ", ".", "-", "_", "9", "٣", "中文", "😀", "\u{E000}",
            "Ⅻ", "ﬁ", "ı", "İ", "ǅ", "\u{2028}", "Ω", "ω", "ꙮ", "\u{10FFFD}", "\u{1F600}", "ǆ", "Ǳ", "ῼ", "ﹰ", "ℌ", "'",
            "\t"
        ]
        return String(
            (0..<Int.random(in: 0...12, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined())
    }

    /// Random strings of awkward characters tokenized here and by SQLite FTS5's unicode61.
    @Test(.requires(.sqliteFTS5))
    func unicode61AgreesWithSQLiteFTS5() throws {
        var rng = SplitMix64(seed: 51)
        var inputs = (0..<3000).map { _ in Self.randomText(&rng) }
        // Every BMP code point once, between letters.
        for base in stride(from: 0x80, to: 0x10000, by: 64) {
            var line = ""
            for value in UInt32(base)..<UInt32(base + 64) {
                guard let scalar = Unicode.Scalar(value) else { continue }
                line += "q"
                line.unicodeScalars.append(scalar)
                line += "q "
            }
            inputs.append(line)
        }
        let input =
            inputs.map { String(decoding: try! JSONEncoder().encode($0), as: UTF8.self) }.joined(separator: "\n") + "\n"
        let output = try runPython("Tests/python/fts5_tool.py", ["tokenize", "unicode61"], input: input)
        let expected = output.split(separator: "\n").map {
            try! JSONDecoder().decode([String].self, from: Data($0.utf8))
        }
        try #require(expected.count == inputs.count)
        var mismatches = 0
        for (text, terms) in zip(inputs, expected) where TextTokenizer().terms(text) != terms {
            mismatches += 1
            if mismatches <= 5 {
                Issue.record(
                    "\(text.unicodeScalars.map { String($0.value, radix: 16) }): ours \(TextTokenizer().terms(text)), FTS5 \(terms)"
                )
            }
        }
        #expect(mismatches == 0)
    }

    /// The porter tokenizer against FTS5's on a word list (the words of this repository's
    /// English word list, plus suffix variants).
    @Test(.requires(.sqliteFTS5))
    func porterAgreesWithSQLiteFTS5OnAWordList() throws {
        let list = try String(contentsOf: packageRoot.appendingPathComponent("Tests/python/words.txt"), encoding: .utf8)
        var words = list.split(separator: "\n").map(String.init)
        let suffixes = [
            "s", "es", "ed", "ing", "ly", "ness", "ation", "ational", "izer", "fulness", "ousness", "iveness", "ement",
            "able", "ible", "ize", "ism", "logi", "bli", "y", "ies", "sses", "eed", "ll"
        ]
        words += words.prefix(400).flatMap { w in suffixes.map { w + $0 } }
        let input = words.map { "\"\($0)\"" }.joined(separator: "\n") + "\n"
        let output = try runPython("Tests/python/fts5_tool.py", ["tokenize", "porter"], input: input)
        let expected = output.split(separator: "\n").map {
            try! JSONDecoder().decode([String].self, from: Data($0.utf8))
        }
        try #require(expected.count == words.count)
        let porter = TextTokenizer(.porter)
        var mismatches = 0
        for (word, stems) in zip(words, expected) where porter.terms(word) != stems {
            mismatches += 1
            if mismatches <= 10 { Issue.record("\(word): ours \(porter.terms(word)), FTS5 \(stems)") }
        }
        #expect(mismatches == 0)
        #expect(words.count > 5000)
    }
}

@Suite struct TrigramTokenizerTests {
    /// FTS5's trigram examples (SQLite 3.40): substrings in any script, case folded unless
    /// case_sensitive, and queries of fewer than three characters matching nothing.
    @Test func trigramMatchesSubstringsAsFTS5Does() throws {
        for caseSensitive in [false, true] {
            try withTemporaryDatabase { db, _ throws in
                let tokenizer = caseSensitive ? "trigram case_sensitive 1" : "trigram"
                let schema =
                    #"{"collections": {"n": {"primaryKey": "id", "text": [{"name": "t", "fields": ["x"], "tokenizer": "\#(tokenizer)"}]}}}"#
                let store = try DocumentStore(database: db, schema: try DocumentSchema(json: Data(schema.utf8)))
                let n = try store.collection("n")
                for (id, text) in [(1, "Hello World"), (2, "HELLO"), (3, "北京大学生"), (4, "ab")] {
                    try n.insert(["id": .int(Int64(id)), "x": .string(text)])
                }
                func ids(_ q: String) throws -> Set<Int64> {
                    Set(try n.search(q).compactMap { if case .int(let i) = $0.id { i } else { nil } })
                }
                #expect(try ids("hel") == (caseSensitive ? [] : [1, 2]))
                #expect(try ids("Hel") == (caseSensitive ? [1] : [1, 2]))
                #expect(try ids("HEL") == (caseSensitive ? [2] : [1, 2]))
                #expect(try ids(#""llo W""#) == (caseSensitive ? [1] : [1]))
                #expect(try ids("京大学") == [3])
                #expect(try ids("ab").isEmpty && ids("北京").isEmpty && ids("lo*").isEmpty)
                #expect(try ids("ab OR 大学生") == [3])
                #expect(try ids("ab 大学生") == [3])  // an implicit AND leaves the empty phrase out
                #expect(try ids("ab AND 大学生").isEmpty)
                let hit = try #require(
                    try n.search("京大学", options: SearchOptions(highlight: .init(open: "[", close: "]"))).first)
                #expect(hit.highlights["x"] == "北[京大学]生")
                #expect(try store.verify().isClean)
            }
        }
    }

    @Test func trigramTokensAreEveryThreeCharacters() {
        let tokens = TextTokenizer(.trigram).tokens("Ab c😀")
        #expect(tokens.map(\.term) == ["ab ", "b c", " c😀"])
        #expect(tokens.map(\.start) == [0, 1, 2])
        #expect(tokens.map(\.end) == [3, 4, 8])
        #expect(TextTokenizer(.trigram, caseSensitive: true).terms("ÀÉÎx") == ["ÀÉÎ", "ÉÎx"])
        #expect(TextTokenizer(.trigram).terms("ÀÉÎx") == ["àéî", "éîx"])
        #expect(TextTokenizer(.trigram).terms("ab").isEmpty)
    }
}
