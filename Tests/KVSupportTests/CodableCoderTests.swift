import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// The direct Codable path (`JSONValueEncoder`/`JSONValueDecoder`) against Foundation's
/// `JSONEncoder`/`JSONDecoder` with default strategies: the same JSON value, the same
/// decoded values, errors where Foundation has errors.
@Suite struct CodableCoderTests {
    struct Inner: Codable, Equatable {
        var name: String
        var score: Double?
        var tags: [String]
    }

    enum Kind: String, Codable, Equatable {
        case rail, bus
        case ferry = "ferry ⛴"
    }

    struct Everything: Codable, Equatable {
        var i: Int, i8: Int8, i16: Int16, i32: Int32, i64: Int64
        var u: UInt, u8: UInt8, u16: UInt16, u32: UInt32, u64: UInt64
        var d: Double, f: Float, b: Bool, s: String
        var optional: Int?
        var nulls: [Int?]
        var date: Date, data: Data, url: URL, decimal: Decimal
        var kind: Kind
        var inner: Inner
        var nested: [[Inner]]
        var byName: [String: Double]
        var byNumber: [Int: String]
        var empty: [String: Int]
    }

    /// A class hierarchy using superEncoder/superDecoder, as hand-written Codable does.
    class Base: Codable, Equatable {
        var x: Int
        init(x: Int) { self.x = x }
        static func == (a: Base, b: Base) -> Bool {
            a.x == b.x && type(of: a) == type(of: b) && (a as? Derived)?.y == (b as? Derived)?.y
        }
    }
    final class Derived: Base {
        var y: [String]
        init(x: Int, y: [String]) {
            self.y = y
            super.init(x: x)
        }
        enum Keys: String, CodingKey { case y }
        required init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: Keys.self)
            y = try c.decode([String].self, forKey: .y)
            try super.init(from: c.superDecoder())
        }
        override func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(y, forKey: .y)
            try super.encode(to: c.superEncoder())
        }
    }

    static func randomDouble(_ rng: inout SplitMix64) -> Double {
        switch Int.random(in: 0..<8, using: &rng) {
        case 0:
            return [0.0, -0.0, 1e308, 5e-324, 1.0, 0.1, 9007199254740993, -9007199254740992, 1e15, 123456789.0, 2.5e-8]
                .randomElement(using: &rng)!
        case 1: return Double(Int64.random(in: -1_000_000...1_000_000, using: &rng))
        case 2: return Double(Int64.random(in: -1_000_000...1_000_000, using: &rng)) / 100
        default:
            var d = Double.nan
            while !d.isFinite { d = Double(bitPattern: rng.next()) }
            return d
        }
    }

    static func randomString(_ rng: inout SplitMix64) -> String {
        let pieces = ["a", "é", "e\u{301}", "\"", "\\", "\n", "\u{0}", "\u{1F}", "😀", "ß", "/", "\u{2028}", "Z", " "]
        return (0..<Int.random(in: 0...6, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined()
    }

    static func inner(_ rng: inout SplitMix64) -> Inner {
        Inner(
            name: randomString(&rng), score: Bool.random(using: &rng) ? randomDouble(&rng) : nil,
            tags: (0..<Int.random(in: 0...3, using: &rng)).map { _ in randomString(&rng) })
    }

    static func everything(_ rng: inout SplitMix64) -> Everything {
        func pick<I: FixedWidthInteger>(_ t: I.Type) -> I {
            switch Int.random(in: 0..<4, using: &rng) {
            case 0: return .min
            case 1: return .max
            case 2: return 0
            default: return I(truncatingIfNeeded: rng.next())
            }
        }
        var f: Float = .nan
        while !f.isFinite {
            f =
                Bool.random(using: &rng)
                ? Float(bitPattern: UInt32(truncatingIfNeeded: rng.next()))
                : Float(Int.random(in: -1000...1000, using: &rng)) / 8
        }
        return Everything(
            i: pick(Int.self), i8: pick(Int8.self), i16: pick(Int16.self), i32: pick(Int32.self), i64: pick(Int64.self),
            u: pick(UInt.self), u8: pick(UInt8.self), u16: pick(UInt16.self), u32: pick(UInt32.self),
            u64: pick(UInt64.self),
            d: randomDouble(&rng), f: f, b: Bool.random(using: &rng), s: randomString(&rng),
            optional: Bool.random(using: &rng) ? Int(truncatingIfNeeded: rng.next()) : nil,
            nulls: (0..<Int.random(in: 0...3, using: &rng)).map { _ in
                Bool.random(using: &rng) ? nil : Int.random(in: -5...5, using: &rng)
            },
            date: Date(timeIntervalSinceReferenceDate: randomDouble(&rng).truncatingRemainder(dividingBy: 1e12)),
            data: Data((0..<Int.random(in: 0...9, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }),
            url: URL(
                string: ["https://example.org/a?b=c&d=%20", "file:///tmp/x", "rel/path"].randomElement(using: &rng)!)!,
            decimal: Decimal(string: ["12.50", "0", "-3", "1e10", "123456789.123456789"].randomElement(using: &rng)!)!,
            kind: [Kind.rail, .bus, .ferry].randomElement(using: &rng)!,
            inner: inner(&rng),
            nested: (0..<Int.random(in: 0...2, using: &rng)).map { _ in
                (0..<Int.random(in: 0...2, using: &rng)).map { _ in inner(&rng) }
            },
            byName: Dictionary(
                (0..<Int.random(in: 0...3, using: &rng)).map { n in ("k\(n)" + randomString(&rng), randomDouble(&rng))
                }, uniquingKeysWith: { $1 }),
            byNumber: Dictionary(
                (0..<Int.random(in: 0...3, using: &rng)).map { _ in
                    (Int.random(in: -9...9, using: &rng), randomString(&rng))
                }, uniquingKeysWith: { $1 }),
            empty: [:])
    }

    /// Foundation's encoder with the date strategy that matches `dates`.
    static func foundationEncoder(_ dates: DateStrategy) -> JSONEncoder {
        let encoder = JSONEncoder()
        switch dates {
        case .secondsSince1970: encoder.dateEncodingStrategy = .secondsSince1970
        case .millisecondsSince1970: encoder.dateEncodingStrategy = .millisecondsSince1970
        case .iso8601: encoder.dateEncodingStrategy = .iso8601
        case .secondsSince2001: encoder.dateEncodingStrategy = .deferredToDate
        }
        return encoder
    }

    @Test func encodingGivesWhatParsingJSONEncoderOutputGives() throws {
        var rng = SplitMix64(seed: 2026)
        for n in 0..<3000 {
            let value = Self.everything(&rng)
            // Every date strategy in turn, against JSONEncoder's matching one.
            let dates = DateStrategy.allCases[n % DateStrategy.allCases.count]
            let direct = try JSONValue(encoding: value, dates: dates)
            let viaFoundation = try JSONValue(parsing: Self.foundationEncoder(dates).encode(value))
            #expect(direct == viaFoundation, "\(value)")
            #expect(try direct.canonicalBytes() == viaFoundation.canonicalBytes())
        }
        let hierarchy: [Base] = [Base(x: 1), Derived(x: 2, y: ["a"])]
        for value in hierarchy {
            #expect(try JSONValue(encoding: value) == JSONValue(parsing: JSONEncoder().encode(value)))
        }
        #expect(
            try JSONValue(encoding: Derived(x: 2, y: ["a"]))
                == JSONValue(parsing: JSONEncoder().encode(Derived(x: 2, y: ["a"]))))
    }

    /// Hand-written `encode(to:)` that fills a nested container after adding a later member,
    /// writes one key twice (the last wins), nests unkeyed in keyed in unkeyed, and encodes a
    /// scalar through a single-value container inside a keyed one.
    struct Awkward: Encodable {
        enum Keys: String, CodingKey { case a, b, c, z }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Keys.self)
            var nested = c.nestedContainer(keyedBy: Keys.self, forKey: .b)
            try c.encode(1, forKey: .z)
            try nested.encode("late", forKey: .a)
            try c.encode("first", forKey: .a)
            try c.encode("second", forKey: .a)
            var list = c.nestedUnkeyedContainer(forKey: .c)
            var inner = list.nestedContainer(keyedBy: Keys.self)
            try list.encode(2.5)
            var deeper = inner.nestedUnkeyedContainer(forKey: .z)
            try deeper.encode(true)
            try inner.encode(Date(timeIntervalSinceReferenceDate: 5), forKey: .a)
            try list.encodeNil()
        }
    }

    @Test func containersFilledOutOfOrderEncodeAsJSONEncoderWritesThem() throws {
        let direct = try JSONValue(encoding: Awkward(), dates: .secondsSince2001)
        let viaFoundation = try JSONValue(parsing: Self.foundationEncoder(.secondsSince2001).encode(Awkward()))
        #expect(direct == viaFoundation)
        #expect(direct["a"] == "second" && direct["b"]?["a"] == "late")
    }

    @Test func decodingGivesWhatJSONDecoderGives() throws {
        var rng = SplitMix64(seed: 7)
        for _ in 0..<3000 {
            let value = Self.everything(&rng)
            let bytes = try JSONEncoder().encode(value)
            let parsed = try JSONValue(parsing: bytes)
            let direct = try JSONValueDecoder.decode(Everything.self, from: parsed)
            // What the Foundation path read from the stored (canonical) bytes. (A Decimal
            // longer than a double's precision is a double once stored, either way.)
            let viaFoundation = try JSONDecoder().decode(Everything.self, from: parsed.canonicalData())
            #expect(direct == viaFoundation)
            var exact = value
            exact.decimal = viaFoundation.decimal
            #expect(try JSONDecoder().decode(Everything.self, from: JSONEncoder().encode(exact)) == direct)
        }
        let derived = try JSONValueDecoder.decode(Derived.self, from: JSONValue(encoding: Derived(x: 3, y: ["b"])))
        #expect(derived.x == 3 && derived.y == ["b"])
    }

    /// Numbers into integer and float types: accepted and refused as JSONDecoder does.
    @Test func numbersConvertAsJSONDecoderConvertsThem() throws {
        let texts = [
            "1.8446744073709552e+19", "1.844674407370955e+19", "-9.223372036854776e+18", "9.007199254740992e+15",
            "9007199254740993", "1.2345678901234567e+18", "1e+300", "-1.5e+16",
            "1.0", "1e2", "1.5", "-0", "1E0", "100000000000000000000", "256", "-1", "18446744073709551615",
            "9223372036854775808", "-9223372036854775808", "1e39", "3.4028235e38", "0.1", "16777217", "1e-50"
        ]
        func agree<T: Decodable & Equatable>(_ type: T.Type) throws {
            for text in texts {
                // What JSONDecoder reads from the stored (canonical) spelling of the number.
                let foundation = try? JSONDecoder().decode(T.self, from: JSONValue(parsing: text).canonicalData())
                let direct = try? JSONValueDecoder.decode(T.self, from: JSONValue(parsing: text))
                #expect(
                    foundation == direct,
                    "\(T.self) from \(text): \(String(describing: foundation)) vs \(String(describing: direct))")
            }
        }
        try agree(Int.self)
        try agree(Int8.self)
        try agree(UInt8.self)
        try agree(Int64.self)
        try agree(UInt64.self)
        try agree(UInt.self)
        try agree(Int32.self)
        try agree(Float.self)
        try agree(Double.self)
    }

    @Test func decodingErrorsNameTheCodingPath() throws {
        let people = try TypedCollectionTestSupport.errors()
        #expect(people.count == 5)
        for (document, fragment) in people {
            let error = try #require(throws: KVDocsError.self) {
                _ = try TypedCollection<Everything>.value(document, dates: .secondsSince2001)
            }
            #expect(error.kind == .decoding)
            #expect(error.message.contains(fragment), "\(error.message)")
        }
    }

    @Test func nonFiniteNumbersCannotBeEncoded() throws {
        let error = try #require(throws: KVDocsError.self) { try JSONValue(encoding: ["x": Double.infinity]) }
        #expect(error.kind == .invalidArgument && error.message.contains("at x"))
        #expect(throws: KVDocsError.self) { try JSONValue(encoding: [Float.nan]) }
    }

    /// A typed collection stores exactly the value the Foundation path stored (in the
    /// binary form, which reads back as that value).
    @Test func typedWritesStoreTheSameValueAsBefore() throws {
        try withTemporaryDatabase { db, _ throws in
            let store = try DocumentStore(
                database: db, schema: try DocumentSchema(collections: ["things": CollectionSchema(primaryKey: "s")]))
            let things = try store.collection("things", of: Everything.self)
            var rng = SplitMix64(seed: 99)
            for n in 0..<200 {
                var value = Self.everything(&rng)
                value.s = "id\(n)"
                try things.insert(value)
                let stored = try db.get(Subspace().pack(["d", "things", .string(value.s)]))
                // The store's default date strategy is Unix seconds: JSONEncoder's .secondsSince1970.
                let storedValue = try #require(try stored.map { try BinaryJSON.decode($0) })
                #expect(
                    try storedValue.canonicalBytes()
                        == (try JSONValue(parsing: Self.foundationEncoder(.secondsSince1970).encode(value))
                            .canonicalBytes()))
                let decoder = JSONDecoder()
                decoder.dateDecodingStrategy = .secondsSince1970
                #expect(
                    try things.get(id: .string(value.s))
                        == (try decoder.decode(Everything.self, from: storedValue.canonicalData())))
            }
        }
    }
}

/// Documents that do not decode as `CodableCoderTests.Everything`, with what the error names.
enum TypedCollectionTestSupport {
    static func errors() throws -> [(JSONValue, String)] {
        let good = try JSONValue(encoding: CodableCoderTests.everything(&SplitMixHolder.rng))
        guard case .object(let o) = good else { return [] }
        func with(_ key: String, _ value: JSONValue?) -> JSONValue {
            var c = o
            c[key] = value
            return .object(c)
        }
        var inner = o["inner"].flatMap { if case .object(let i) = $0 { i } else { nil } } ?? JSONObject()
        inner["name"] = 5
        return [
            (with("i8", 300), "at i8"),
            (with("i", 1.5), "at i"),
            (with("s", nil), "no member \"s\""),
            (with("inner", .object(inner)), "at inner.name: expected String, found a number"),
            (with("b", .null), "at b: expected Bool, found null")
        ]
    }
}

enum SplitMixHolder {
    nonisolated(unsafe) static var rng = SplitMix64(seed: 1)
}
