import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// Parsed objects keep their members in code-point order of the keys, the last of
/// byte-identical keys winning: checked against a model (a stable sort of the UTF-8 bytes)
/// on random objects whose keys share long prefixes, hold NUL and multi-byte characters,
/// repeat, and number from 0 to 40 members (both sides of the small-object path).
@Suite struct JSONObjectOrderTests {
    static let alphabet: [String] = ["a", "b", "", "\u{0}", "é", "e\u{301}", "z", "A", "😀", "ab"]

    static func randomKey(_ rng: inout SplitMix64) -> String {
        // Keys often share their first eight bytes, so the prefixes tie and the strings decide.
        let stem = ["", "abcdefgh", "abcdefg", "abcdefgh\u{0}", "pppppppp"][Int(rng.next() % 5)]
        let tail = (0..<Int(rng.next() % 4)).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] }
        return stem + tail.joined()
    }

    @Test func parsedMembersAreInCodePointOrderAndTheLastDuplicateWins() throws {
        var rng = SplitMix64(seed: 4711)
        for round in 0..<3000 {
            let count = Int(rng.next() % 41)
            let pairs = (0..<count).map { i in (Self.randomKey(&rng), i) }
            let text =
                "{" + pairs.map { "\(JSONValue.string($0.0).compactDescription):\($0.1)" }.joined(separator: ",") + "}"
            guard case .object(let parsed) = try JSONValue(parsing: Data(text.utf8)) else {
                Issue.record("not an object: \(text)")
                continue
            }
            // The model: the last value of each distinct key (by bytes), sorted by bytes.
            var last: [[UInt8]: Int] = [:]
            for (key, value) in pairs { last[Array(key.utf8)] = value }
            let expected = last.sorted { $0.key.lexicographicallyPrecedes($1.key) }
            #expect(parsed.map { Array($0.key.utf8) } == expected.map(\.key), "round \(round): \(text)")
            #expect(
                parsed.map { $0.value } == expected.map { JSONValue.int(Int64($0.value)) }, "round \(round): \(text)")
        }
    }
}
