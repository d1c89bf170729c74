import Foundation
import KVDocs

/// The tuple decoder: random tuples (nested, integers at the 64-bit limits and beyond,
/// NaNs and infinities, strings with NULs, bytes, UUIDs, versionstamps) encoded and mutated.
struct FuzzTuples: FuzzChecks {
    /// The errors the decoder documents.
    static let documentedKinds: Set<String> = [KVDocsError.Kind.decoding.rawValue]

    let subspace = Subspace(Tuple([.string("dep")]))

    func check(_ bytes: [UInt8], _ r: inout FuzzRandom) -> FuzzResult { Self.check(bytes, subspace: subspace) }

    static func plan(_ r: inout FuzzRandom) -> FuzzPlan {
        let corpus = (0..<300).map { _ in randomTuple(&r, depth: 0).encoded }
        // Type codes, escapes, lengths.
        let dictionary: [[UInt8]] = [
            [0x00], [0x00, 0xFF], [0x01], [0x02], [0x05], [0x05, 0x00], [0x0B], [0x0B, 0xF6], [0x0C], [0x13], [0x14],
            [0x15], [0x1C], [0x1D], [0x1D, 0x09], [0x1D, 0xFF], [0x20], [0x21], [0x26], [0x27], [0x30], [0x33],
            [0x1C, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], [0x0C, 0, 0, 0, 0, 0, 0, 0, 0],
            [0x1C, 0x80, 0, 0, 0, 0, 0, 0, 0], [0x0C, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
            [0x21, 0x7F, 0xF8, 0, 0, 0, 0, 0, 0], [0x21, 0xFF, 0xF8, 0, 0, 0, 0, 0, 1], [0x02, 0xED, 0xA0, 0x80, 0x00]
        ]
        return FuzzPlan(
            mutator: FuzzMutator(corpus: corpus, dictionary: dictionary),
            fresh: { r in
                var t = randomTuple(&r, depth: 0)
                if r.chance(20) { t = Tuple(t.elements + randomTuple(&r, depth: 0).elements) }
                return t.encoded
            },
            valid: 10,
            deep: { r in
                let n = fuzzDepth(&r, limit: Tuple.maximumNestingDepth)
                var bytes = [UInt8](repeating: 0x05, count: n)
                if r.bool() { bytes += randomTuple(&r, depth: 3).encoded }
                if r.chance(20) { bytes += [0x00, 0xFF] }
                return bytes + [UInt8](repeating: 0x00, count: r.chance(90) ? n : r.below(n + 1))
            },
            alphabet: [
                0x00, 0xFF, 0x01, 0x02, 0x05, 0x0B, 0x0C, 0x14, 0x1C, 0x1D, 0x20, 0x21, 0x26, 0x27, 0x30, 0x33, 0x80,
                0x7F
            ])
    }

    static func randomTuple(_ r: inout FuzzRandom, depth: Int) -> Tuple {
        Tuple((0..<r.size(depth == 0 ? 8 : 5)).map { _ in randomElement(&r, depth: depth) })
    }

    static func randomElement(_ r: inout FuzzRandom, depth: Int) -> TupleElement {
        switch r.below(depth < 4 ? 15 : 14) {
        case 0: return .null
        case 1: return .bytes((0..<r.size(10)).map { _ in r.pick([0x00, 0xFF, 0x00, r.byte()]) })
        case 2:
            return .string(
                r.pick([
                    "", "a", "a\u{0}b", "\u{0}", "\u{0}\u{0}", "é", "e\u{301}", "😀", "\u{10FFFF}", "\u{FFFD}", "x y",
                    "\u{7F}\u{80}"
                ]))
        case 3:
            return .string(String(String.UnicodeScalarView((0..<r.size(8)).map { _ in r.pick(FuzzMutator.scalars) })))
        case 4:
            return .int(
                r.pick([
                    Int64.min, Int64.min + 1, -1, 0, 1, 255, 256, -255, -256, 65535, -65536, Int64.max, Int64.max - 1,
                    Int64(bitPattern: r.next()) >> UInt64(r.below(64))
                ]))
        case 5: return .uint(r.pick([UInt64.max, UInt64.max - 1, UInt64(Int64.max) + 1, r.next() | (1 << 63)]))
        case 6:
            let count = r.pick([9, 9, 10, 16, 32, 254, 255, 8])
            let magnitude = [UInt8(1 + r.below(255))] + r.bytes(count - 1)
            return (try? LargeInteger(isNegative: r.bool(), magnitude: magnitude)).map { .largeInteger($0) } ?? .null
        case 7:
            return .float(
                r.pick([
                    Float.nan, -Float.nan, .signalingNaN, .infinity, -.infinity, 0, -0.0, .leastNonzeroMagnitude,
                    .greatestFiniteMagnitude, 1.25, Float(bitPattern: UInt32(truncatingIfNeeded: r.next()))
                ]))
        case 8:
            return .double(
                r.pick([
                    Double.nan, -Double.nan, .signalingNaN, .infinity, -.infinity, 0, -0.0, .leastNonzeroMagnitude,
                    .leastNormalMagnitude, .greatestFiniteMagnitude, 1.5, -2.5e-300, Double(bitPattern: r.next())
                ]))
        case 9: return .bool(r.bool())
        case 10:
            let b = r.bytes(16)
            return .uuid(
                UUID(
                    uuid: (
                        b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                        b[15]
                    )))
        case 11: return (try? Versionstamp(bytes: r.bytes(Versionstamp.length))).map { .versionstamp($0) } ?? .null
        case 12: return .int(Int64(r.below(2000)) - 1000)
        case 13:
            return .string(String(decoding: (0..<r.size(12)).map { _ in UInt8(0x20 + r.below(95)) }, as: UTF8.self))
        default: return .tuple(randomTuple(&r, depth: depth + 1))
        }
    }

    /// Decodes; a decoded tuple must encode to bytes that decode to an equal tuple, print,
    /// and unpack alike from a subspace.
    static func check(_ bytes: [UInt8], subspace: Subspace) -> FuzzResult {
        let tuple: Tuple
        do {
            tuple = try Tuple(decoding: bytes)
        } catch {
            if let unpacked = try? subspace.unpack(subspace.prefix + bytes) {
                return .failed("decoding failed but Subspace.unpack decoded \(unpacked)")
            }
            return FuzzResult.judge(error, kinds: documentedKinds)
        }
        let problem = FuzzResult.after("decoding the re-encoded tuple") { () -> String? in
            let encoded = tuple.encoded
            let again = try Tuple(decoding: encoded)
            guard again == tuple, again.count == tuple.count, again.encoded == encoded else {
                return "decode, encode, decode changed the tuple: \(tuple) became \(again)"
            }
            _ = tuple.description
            let unpacked = try subspace.unpack(subspace.pack(tuple))
            guard unpacked == tuple else { return "Subspace.unpack(pack(t)) is \(unpacked), not \(tuple)" }
            let fromInput = try subspace.unpack(subspace.prefix + bytes)
            guard fromInput == tuple else { return "Subspace.unpack gives \(fromInput), decoding \(tuple)" }
            return nil
        }
        return problem.map { .failed($0) } ?? .accepted
    }
}
