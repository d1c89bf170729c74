import Foundation
import KVDocs
import Testing

/// A row's contribution, held flat, against the plain model of it: term → column →
/// positions, built from the tokens one by one.
@Suite struct TextDocumentTests {
    static func model(_ tokenizer: TextTokenizer, _ texts: [String]) -> [String: [Int: [Int]]] {
        var model: [String: [Int: [Int]]] = [:]
        for (column, text) in texts.enumerated() {
            for token in tokenizer.tokens(text) {
                model[token.term, default: [:]][column, default: []].append(token.position)
            }
        }
        return model
    }

    static func randomTexts(_ rng: inout SplitMix64) -> [String] {
        let words = ["a", "b", "cat", "Cat", "dog", "é", "e\u{301}", "ü", "ǖ", "x y", "中文", "..", "zz"]
        return (0..<Int.random(in: 0...4, using: &rng)).map { _ in
            (0..<Int.random(in: 0...20, using: &rng)).map { _ in words[Int.random(in: 0..<words.count, using: &rng)] }
                .joined(separator: " ")
        }
    }

    @Test func termsFrequenciesPlacesAndStoredOccurrencesEqualTheModel() {
        var rng = SplitMix64(seed: 7)
        for kind in [TextTokenizer.Kind.unicode61, .porter, .trigram] {
            let tokenizer = TextTokenizer(kind)
            for _ in 0..<400 {
                let texts = Self.randomTexts(&rng)
                let document = TextDocument(tokenizer: tokenizer, texts: texts)
                let model = Self.model(tokenizer, texts)
                #expect(document.terms.count == model.count)
                #expect(document.totalTokens == texts.reduce(0) { $0 + tokenizer.tokens($1).count })
                for (i, term) in document.terms.enumerated() {
                    guard let columns = model[term.text] else {
                        Issue.record("term \(term.text) is not in the model")
                        continue
                    }
                    #expect(document.frequency(ofTerm: i) == columns.values.reduce(0) { $0 + $1.count })
                    let places = columns.keys.sorted().flatMap { c in (columns[c] ?? []).map { (c, $0) } }
                    #expect(document.places(ofTerm: i).map { [$0.column, $0.position] } == places.map { [$0.0, $0.1] })
                    for positions in [true, false] {
                        #expect(
                            document.encodedOccurrences(ofTerm: i, positions: positions)
                                == TextDocument.encode(columns, positions: positions))
                    }
                }
            }
        }
    }

    @Test func rowsAreEqualExactlyWhenTheirTermsOccurAtTheSamePlaces() {
        var rng = SplitMix64(seed: 8)
        let tokenizer = TextTokenizer()
        var samples: [[String]] = [
            ["cat dog", "dog"], ["dog cat", "dog"], ["cat dog", "dog "], ["cat  dog", "dog"], ["cat", "dog dog"], []
        ]
        for _ in 0..<200 { samples.append(Self.randomTexts(&rng)) }
        for a in samples {
            for b in samples.prefix(40) {
                let same =
                    Self.model(tokenizer, a) == Self.model(tokenizer, b)
                    && a.map { tokenizer.tokens($0).count } == b.map { tokenizer.tokens($0).count }
                #expect(
                    (TextDocument(tokenizer: tokenizer, texts: a) == TextDocument(tokenizer: tokenizer, texts: b))
                        == same, "\(a) against \(b)")
            }
        }
    }

    /// The build writes blocks straight from its entries; the bytes are those of the block
    /// types the readers decode.
    @Test func blocksWrittenFromEntriesEqualTheBlockTypesEncodings() throws {
        var rng = SplitMix64(seed: 9)
        for _ in 0..<500 {
            var doc = Int.random(in: 0..<1000, using: &rng)
            let entries: [TextEntry] = (0..<Int.random(in: 1...PostingBlock.capacity, using: &rng)).map { _ in
                doc += Int.random(in: 1...50, using: &rng)
                let length = Int.random(in: 1...5000, using: &rng)
                let norm = TextLengths.norm(length)
                return TextEntry(
                    doc: doc, frequency: Int.random(in: 1...40, using: &rng), norm: norm,
                    length: TextLengths.length(ofNorm: norm),
                    occurrences: ArraySlice(
                        (0..<Int.random(in: 0...9, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }))
            }
            let chunk = entries[...]
            let block = PostingBlock(
                firstDoc: entries[0].doc, docs: entries.map(\.doc), frequencies: entries.map(\.frequency),
                norms: entries.map(\.norm),
                impacts: PostingBlock.frontier(
                    entries.map { PostingBlock.Impact(frequency: $0.frequency, length: $0.length) }))
            #expect(TextIndex.encodedBlock(chunk) == block.encoded())
            #expect(
                TextIndex.encodedOccurrences(chunk) == OccurrenceBlock(entries: entries.map(\.occurrences)).encoded())
            let decoded = try OccurrenceBlock.decode(TextIndex.encodedOccurrences(chunk), count: entries.count)
            #expect(decoded.entries.map { Array($0) } == entries.map { Array($0.occurrences) })
        }
    }
}
