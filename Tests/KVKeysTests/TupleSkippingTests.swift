import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// Skipping elements (how a scan finds the id at the end of an index key) agrees with
/// decoding them: the last element starts where the encoding of the others ends, and a
/// cut encoding is refused by both.
@Suite struct TupleSkippingTests {
    static func randomElement(_ rng: inout SplitMix64, depth: Int = 0) -> TupleElement {
        let pieces: [[UInt8]] = [[0], [0, 0xFF], [0xFF], [0x61], [0xC3, 0xA9], [0x00, 0x00]]
        func bytes() -> [UInt8] { (0..<Int(rng.next() % 5)).flatMap { _ in pieces[Int(rng.next() % 6)] } }
        switch rng.next() % (depth < 2 ? 5 : 4) {
        case 0:
            return .string(
                String(decoding: bytes().filter { $0 != 0xFF && $0 != 0xC3 && $0 != 0xA9 }, as: UTF8.self) + "é")
        case 1: return .bytes(bytes())
        case 2: return .int(Int64(bitPattern: rng.next()) >> Int64(rng.next() % 64))
        case 3: return nil
        default: return .tuple(Tuple((0..<Int(rng.next() % 3)).map { _ in randomElement(&rng, depth: depth + 1) }))
        }
    }

    @Test func theLastElementStartsWhereTheOthersEndAndCutEncodingsAreRefused() throws {
        var rng = SplitMix64(seed: 9)
        for _ in 0..<3000 {
            let elements = (0..<Int(1 + rng.next() % 4)).map { _ in Self.randomElement(&rng) }
            let encoded = Tuple(elements).encoded
            let others = Tuple(Array(elements.dropLast())).encoded.count
            let start = try encoded.withUnsafeBytes { try TupleDecoder.lastElementStart(of: $0, from: 0) }
            #expect(start == others, "\(elements)")
            for cut in 0..<encoded.count {
                let prefix = Array(encoded.prefix(cut))
                let decodes = (try? Tuple(decoding: prefix)) != nil
                let skips = prefix.withUnsafeBytes { bytes -> Bool in
                    do {
                        _ = try TupleDecoder.lastElementStart(of: bytes, from: 0)
                        return true
                    } catch { return false }
                }
                #expect(decodes == skips, "cut at \(cut) of \(encoded)")
            }
        }
    }
}
