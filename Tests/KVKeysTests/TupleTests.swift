import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@Suite struct TupleEncodingTests {
    /// `Tuple.encoded` against the bytes of Python's `fdb.tuple.pack` (shared/REFERENCE.md,
    /// FoundationDB's design/tuple.md).
    @Test(
        arguments: [
            (Tuple(), ""),
            ([nil], "00"),
            ([.bytes([])], "0100"),
            ([.bytes([0])], "0100ff00"),
            ([""], "0200"),
            (["a\u{0}b"], "026100ff6200"),
            (["é"], "02c3a900"),
            ([0], "14"), ([1], "1501"), ([-1], "13fe"), ([255], "15ff"), ([-255], "1300"),
            ([256], "160100"), ([-256], "12feff"), ([-5551212], "11ab4b93"),
            ([.int(.max)], "1c7fffffffffffffff"), ([.int(.min)], "0c7fffffffffffffff"),
            ([.uint(.max)], "1d08ffffffffffffffff"), ([.uint(.max - 1)], "1cfffffffffffffffe"),
            (
                [.largeInteger(try! LargeInteger(isNegative: false, magnitude: [1, 0, 0, 0, 0, 0, 0, 0, 0]))],
                "1d09010000000000000000"
            ),
            (
                [.largeInteger(try! LargeInteger(isNegative: true, magnitude: [1, 0, 0, 0, 0, 0, 0, 0, 0]))],
                "0bf6feffffffffffffffff"
            ),
            (
                [.largeInteger(try! LargeInteger(isNegative: true, magnitude: [UInt8](repeating: 0xFF, count: 8)))],
                "0bf70000000000000000"
            ),
            ([0.0], "218000000000000000"), ([-0.0], "217fffffffffffffff"),
            ([1.5], "21bff8000000000000"), ([-1.5], "214007ffffffffffff"),
            ([.double(.infinity)], "21fff0000000000000"), ([.double(-.infinity)], "21000fffffffffffff"),
            ([.float(1.5)], "20bfc00000"), ([.float(-42)], "203dd7ffff"),
            ([false], "26"), ([true], "27"),
            ([.tuple([])], "0500"), ([.tuple([nil])], "0500ff00"), ([.tuple(["a", nil])], "0502610000ff00"),
            ([.tuple([.bytes(Array("foo\u{0}bar".utf8)), nil, .tuple([])])], "0501666f6f00ff6261720000ff050000"),
            ([.uuid(UUID(uuidString: "12345678-1234-5678-1234-567812345678")!)], "3012345678123456781234567812345678"),
            (["dep", "Perth", 1700000000], "026465700002506572746800186553f100")
        ] as [(Tuple, String)])
    func encodingMatchesFoundationDBVectors(tuple: Tuple, hex: String) throws {
        #expect(tuple.encoded.hex == hex)
        let decoded = try Tuple(decoding: tuple.encoded)
        #expect(decoded.encoded.hex == hex)
        #expect(decoded == tuple)
    }

    @Test func integersDecodeToTheirCanonicalCase() throws {
        #expect(try Tuple(decoding: Tuple([.uint(5)]).encoded).elements.first.map { "\($0)" } == "5")
        if case .int(5) = try Tuple(decoding: Tuple([.uint(5)]).encoded)[0] {} else { Issue.record("not .int") }
        if case .uint(.max) = try Tuple(decoding: Tuple([.uint(.max)]).encoded)[0] {} else { Issue.record("not .uint") }
        // The spec's 8-byte form of UInt64.max, as other bindings write it, decodes too.
        if case .uint(.max) = try Tuple(decoding: hexBytes("1cffffffffffffffff"))[0] {
        } else {
            Issue.record("1c ff… did not decode")
        }
        #expect(Tuple([.uint(5)]) == Tuple([5]))
        #expect("\(try Tuple(decoding: hexBytes("1d09010000000000000000")))" == "(18446744073709551616,)")
        #expect("\(try Tuple(decoding: hexBytes("0bf6feffffffffffffffff")))" == "(-18446744073709551616,)")
    }

    @Test func descriptionIsReadable() {
        let t: Tuple = ["users", 42, -1.5, true, nil]
        #expect(t.description == "(\"users\", 42, -1.5, true, nil)")
        #expect(Tuple(["a"]).description == "(\"a\",)")
        #expect(
            Tuple([.bytes([0, 0xAB]), .tuple(["x\n\"", 1]), .float(2)]).description
                == "(0x00ab, (\"x\\n\\\"\", 1), Float(2.0))")
        #expect(Tuple().description == "()")
    }

    @Test func typedAccessorsReturnValuesAndNameMismatches() throws {
        let id = UUID()
        let t = Tuple("users", 42, 2.5, Float(1), true, [UInt8]([1]), id, Tuple("n"), TupleElement.null)
        #expect(try t.string(at: 0) == "users")
        #expect(try t.int(at: 1) == 42)
        #expect(try t.get(1, as: UInt8.self) == 42)
        #expect(try t.double(at: 2) == 2.5)
        #expect(try t.float(at: 3) == 1)
        #expect(try t.bool(at: 4))
        #expect(try t.bytes(at: 5) == [1])
        #expect(try t.uuid(at: 6) == id)
        #expect(try t.tuple(at: 7) == Tuple("n"))
        #expect(try t.isNull(at: 8))
        do {
            _ = try t.string(at: 1)
            Issue.record("read an integer as a string")
        } catch let error as KVDocsError {
            #expect(error.kind == .typeMismatch)
            #expect(
                error.message
                    == "element 1 of (\"users\", 42, 2.5, Float(1.0), true, 0x01, UUID(\(id.uuidString)), (\"n\",), nil) is an integer, not a string"
            )
        }
        do {
            _ = try t.int(at: 9)
            Issue.record("read past the end")
        } catch let error as KVDocsError {
            #expect(error.kind == .invalidArgument)
            #expect(error.message.contains("there is no element 9"))
        }
        #expect(throws: KVDocsError.self) { _ = try Tuple([300]).get(0, as: UInt8.self) }
        #expect(throws: KVDocsError.self) { _ = try Tuple([-1]).get(0, as: UInt64.self) }
    }

    @Test func malformedEncodingsThrowWithPositionAndReason() {
        let cases: [(String, String)] = [
            ("03", "byte 0: unknown type code 0x03"),
            ("1400ff", "byte 2: unknown type code 0xff"),
            ("0261", "byte 0: string is not terminated by 0x00"),
            ("14 0161", "byte 1: byte string is not terminated by 0x00"),
            ("16 01", "byte 0: integer needs 2 bytes, 1 remain"),
            ("21 0000", "byte 0: double needs 8 bytes, 2 remain"),
            ("05 0261 00", "byte 0: nested tuple is not terminated"),
            ("02 c328 00", "byte 0: string is not valid UTF-8"),
            ("1d", "byte 0: integer length needs 1 byte, 0 remain"),
            ("30 0102", "byte 0: UUID needs 16 bytes, 2 remain")
        ]
        for (hex, reason) in cases {
            do {
                let t = try Tuple(decoding: hexBytes(hex))
                Issue.record("\(hex) decoded as \(t)")
            } catch let error as KVDocsError {
                #expect(error.kind == .decoding)
                #expect(error.message.hasSuffix(reason), "\(hex): \(error.message)")
            } catch {
                Issue.record("\(error)")
            }
        }
    }

    @Test func deepNestingIsRejectedNotACrash() {
        let deep = [UInt8](repeating: 0x05, count: 100_000)
        #expect(throws: KVDocsError.self) { _ = try Tuple(decoding: deep) }
        let ok = [UInt8](repeating: 0x05, count: 100) + [UInt8](repeating: 0x00, count: 100)
        #expect((try? Tuple(decoding: ok)) != nil)
    }

    @Test func randomTuplesRoundTrip() throws {
        var rng = SplitMix64(seed: 11)
        for _ in 0..<5000 {
            let t = TupleGenerator.tuple(&rng)
            let bytes = t.encoded
            let decoded = try Tuple(decoding: bytes)
            #expect(decoded.encoded == bytes, "\(t)")
            #expect(decoded == t)
        }
    }

    /// Byte order of encodings equals tuple order, checked against an independent,
    /// value-based comparison (integers numerically, IEEE total order for floats, …).
    @Test func byteOrderMatchesTupleOrder() {
        var rng = SplitMix64(seed: 12)
        let tuples = (0..<3000).map { _ in TupleGenerator.tuple(&rng, maxLength: 3) }
        for _ in 0..<20_000 {
            let a = tuples.randomElement(using: &rng)!, b = tuples.randomElement(using: &rng)!
            let expected = ReferenceOrder.compare(a.elements, b.elements)
            let ea = a.encoded, eb = b.encoded
            let actual = ea == eb ? 0 : (ea.lexicographicallyPrecedes(eb) ? -1 : 1)
            #expect(actual == expected, "\(a) vs \(b)")
            #expect((a < b) == (expected < 0))
        }
    }

    @Test func garbageNeverCrashesTheDecoder() {
        var rng = SplitMix64(seed: 13)
        let alphabet: [UInt8] = [
            0x00, 0xFF, 0x01, 0x02, 0x05, 0x0B, 0x0C, 0x13, 0x14, 0x15, 0x1C, 0x1D, 0x20, 0x21, 0x26, 0x27, 0x30, 0x33,
            0x61, 0x80, 0xC3
        ]
        var decoded = 0
        for i in 0..<200_000 {
            let length = Int.random(in: 0...24, using: &rng)
            let bytes: [UInt8] = (0..<length).map { _ in
                i % 2 == 0 ? alphabet.randomElement(using: &rng)! : UInt8.random(in: 0...255, using: &rng)
            }
            do {
                let t = try Tuple(decoding: bytes)
                decoded += 1
                // What decodes re-encodes canonically and decodes to the same tuple.
                #expect(try Tuple(decoding: t.encoded) == t)
            } catch let error as KVDocsError {
                #expect(error.kind == .decoding)
            } catch {
                Issue.record("unexpected \(error)")
            }
        }
        #expect(decoded > 1000)
    }
}

func hexBytes(_ hex: String) -> [UInt8] {
    let digits = Array(hex.replacingOccurrences(of: " ", with: ""))
    return stride(from: 0, to: digits.count, by: 2).compactMap { UInt8(String(digits[$0...$0 + 1]), radix: 16) }
}

/// Random tuples with every type and the boundary values of each.
enum TupleGenerator {
    static func element(_ rng: inout SplitMix64, depth: Int) -> TupleElement {
        switch Int.random(in: 0..<12, using: &rng) {
        case 0: return .null
        case 1:
            return .bytes(
                (0..<Int.random(in: 0...4, using: &rng)).map { _ in [0x00, 0xFF, 0x01, 0x7F].randomElement(using: &rng)!
                })
        case 2:
            return .string(
                String(
                    (0..<Int.random(in: 0...4, using: &rng)).map { _ in
                        ["a", "b", "\u{0}", "é", "😀", "Z"].randomElement(using: &rng)!
                    }))
        case 3 where depth < 3:
            return .tuple(Tuple((0..<Int.random(in: 0...3, using: &rng)).map { _ in element(&rng, depth: depth + 1) }))
        case 4:
            return .int(
                [
                    0, 1, -1, 255, -255, 256, -256, .max, .min, .max - 1, .min + 1,
                    Int64.random(in: .min ... .max, using: &rng), Int64.random(in: -70000...70000, using: &rng)
                ].randomElement(using: &rng)!)
        case 5:
            return .uint(
                [
                    UInt64.max, .max - 1, UInt64(Int64.max) + 1,
                    UInt64.random(in: UInt64(Int64.max)...UInt64.max, using: &rng)
                ].randomElement(using: &rng)!)
        case 6:
            let magnitude =
                [UInt8.random(in: 1...255, using: &rng)]
                + (0..<Int.random(in: 8...20, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            return .largeInteger(try! LargeInteger(isNegative: Bool.random(using: &rng), magnitude: magnitude))
        case 7:
            return .double(
                [
                    0.0, -0.0, 1.5, -1.5, .infinity, -.infinity, .nan, -Double.nan, .leastNonzeroMagnitude,
                    -.greatestFiniteMagnitude, Double.random(in: -1e6...1e6, using: &rng)
                ].randomElement(using: &rng)!)
        case 8:
            return .float(
                [0, -0.0, 1.5, -42, .infinity, -.infinity, .nan, Float.random(in: -100...100, using: &rng)]
                    .randomElement(using: &rng)!)
        case 9: return .bool(Bool.random(using: &rng))
        case 10:
            var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if Bool.random(using: &rng) { bytes = [UInt8](repeating: bytes[0] & 1 == 0 ? 0 : 0xFF, count: 16) }
            return .uuid(
                UUID(
                    uuid: (
                        bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8],
                        bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
                    )))
        default:
            return .versionstamp(try! Versionstamp(bytes: (0..<12).map { _ in UInt8.random(in: 0...255, using: &rng) }))
        }
    }

    static func tuple(_ rng: inout SplitMix64, maxLength: Int = 5) -> Tuple {
        Tuple((0..<Int.random(in: 0...maxLength, using: &rng)).map { _ in element(&rng, depth: 0) })
    }
}

/// The tuple order defined on values, written without the encoding (after Python's
/// `fdb.tuple.compare`): type code first, then the value.
enum ReferenceOrder {
    static func typeRank(_ e: TupleElement) -> Int {
        switch e {
        case .null: 0x00
        case .bytes: 0x01
        case .string: 0x02
        case .tuple: 0x05
        case .int, .uint, .largeInteger: 0x14
        case .float: 0x20
        case .double: 0x21
        case .bool: 0x26
        case .uuid: 0x30
        case .versionstamp: 0x33
        }
    }

    static func cmp<T: Comparable>(_ a: T, _ b: T) -> Int { a < b ? -1 : (a == b ? 0 : 1) }

    static func bytes(_ a: [UInt8], _ b: [UInt8]) -> Int { a == b ? 0 : (a.lexicographicallyPrecedes(b) ? -1 : 1) }

    /// An integer as (sign, magnitude bytes) compared numerically.
    static func integer(_ e: TupleElement) -> (Int, [UInt8]) {
        func be(_ v: UInt64) -> [UInt8] { Array(withUnsafeBytes(of: v.bigEndian, Array.init).drop { $0 == 0 }) }
        switch e {
        case .int(let i): return (i < 0 ? -1 : (i == 0 ? 0 : 1), be(i.magnitude))
        case .uint(let u): return (u == 0 ? 0 : 1, be(u))
        case .largeInteger(let l): return (l.isNegative ? -1 : 1, l.magnitude)
        default: return (0, [])
        }
    }

    static func magnitude(_ a: [UInt8], _ b: [UInt8]) -> Int {
        a.count != b.count ? cmp(a.count, b.count) : bytes(a, b)
    }

    static func totalOrder<F: BinaryFloatingPoint>(_ a: F, _ b: F) -> Int {
        if a.bitPattern == b.bitPattern { return 0 }
        return a.isTotallyOrdered(belowOrEqualTo: b) ? -1 : 1
    }

    static func element(_ a: TupleElement, _ b: TupleElement) -> Int {
        let r = cmp(typeRank(a), typeRank(b))
        if r != 0 { return r }
        switch (a, b) {
        case (.null, .null): return 0
        case (.bytes(let x), .bytes(let y)): return bytes(x, y)
        case (.string(let x), .string(let y)): return bytes(Array(x.utf8), Array(y.utf8))
        case (.tuple(let x), .tuple(let y)): return compare(x.elements, y.elements)
        case (.float(let x), .float(let y)): return totalOrder(x, y)
        case (.double(let x), .double(let y)): return totalOrder(x, y)
        case (.bool(let x), .bool(let y)): return cmp(x ? 1 : 0, y ? 1 : 0)
        case (.uuid(let x), .uuid(let y)):
            return bytes(withUnsafeBytes(of: x.uuid, Array.init), withUnsafeBytes(of: y.uuid, Array.init))
        case (.versionstamp(let x), .versionstamp(let y)): return bytes(x.bytes, y.bytes)
        default:
            let (sa, ma) = integer(a), (sb, mb) = integer(b)
            if sa != sb { return cmp(sa, sb) }
            return sa >= 0 ? magnitude(ma, mb) : -magnitude(ma, mb)
        }
    }

    static func compare(_ a: [TupleElement], _ b: [TupleElement]) -> Int {
        for (x, y) in zip(a, b) {
            let r = element(x, y)
            if r != 0 { return r }
        }
        return cmp(a.count, b.count)
    }
}

extension BinaryFloatingPoint {
    var bitPattern: UInt64 {
        if let d = self as? Double { return d.bitPattern }
        if let f = self as? Float { return UInt64(f.bitPattern) }
        return 0
    }
}
