import KVDocs
import Testing

/// The term table (an open-addressing table over one arena of bytes) against a dictionary
/// keyed by the same bytes.
@Suite struct TermTableTests {
    static func randomTerm(_ rng: inout SplitMix64) -> [UInt8] {
        // Short terms from a small alphabet (so that many repeat), zero bytes, and a few long
        // ones (past the eight bytes the hash reads at a time).
        let length = rng.next() % 10 == 0 ? Int(rng.next() % 40) : Int(rng.next() % 5)
        return (0..<length).map { _ in [0x61, 0x62, 0x00, 0xC3, 0xA9][Int(rng.next() % 5)] }
    }

    @Test func numbersTermsInFirstSeenOrderAsADictionaryDoes() {
        var rng = SplitMix64(seed: 31)
        var table = TermTable(capacity: 2)
        for round in 0..<3 {
            var model: [[UInt8]: Int] = [:]
            var order: [[UInt8]] = []
            for _ in 0..<(round == 1 ? 20_000 : 3_000) {
                let term = Self.randomTerm(&rng)
                let expected = model[term] ?? order.count
                if model[term] == nil {
                    model[term] = expected
                    order.append(term)
                }
                #expect(term.withUnsafeBufferPointer { table.number(of: $0) } == expected)
            }
            #expect(table.count == order.count)
            for (i, term) in order.enumerated() { #expect(Array(table.bytes(i)) == term) }
            table.removeAll()
            #expect(table.count == 0)
        }
    }
}
