import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// The binary form of stored documents: every value round-trips exactly, typed decoding
/// from it agrees with decoding from the value, and damaged bytes give errors.
@Suite struct BinaryJSONTests {
    /// Random values with every case, non-ASCII keys and strings, and objects large enough
    /// for 2- and 4-byte offsets.
    static func randomValue(_ rng: inout SplitMix64, depth: Int = 0) -> JSONValue {
        switch Int.random(in: 0..<(depth < 4 ? 12 : 8), using: &rng) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &rng))
        case 2: return .int(Int64(bitPattern: rng.next()) >> Int64.random(in: 0...63, using: &rng))
        case 3: return .uint(rng.next() | (1 << 63))
        case 4: return .double(Double(bitPattern: rng.next() & ~(0x7FF << 52)) * (Bool.random(using: &rng) ? 1 : -1))
        case 5:
            return .double(
                [0.0, -0.0, 5e-324, 1.7976931348623157e308, 0.1, 0.30000000000000004][
                    Int.random(in: 0..<6, using: &rng)])
        case 6: return .string(randomString(&rng))
        case 7:
            return .int(
                [
                    0, -1, 127, -128, 128, -129, 32767, -32768, 32768, Int64(Int32.max), Int64(Int32.min),
                    Int64(Int32.max) + 1, .max, .min
                ][Int.random(in: 0..<14, using: &rng)])
        case 8, 9:
            return .array((0..<Int.random(in: 0...4, using: &rng)).map { _ in randomValue(&rng, depth: depth + 1) })
        case 10 where Int.random(in: 0..<20, using: &rng) == 0:
            // Large: offsets of 2 or 4 bytes.
            let n = Int.random(in: 20...400, using: &rng)
            return .object(
                JSONObject(
                    (0..<n).map {
                        (
                            "k\($0)" + randomString(&rng),
                            JSONValue.string(String(repeating: "x", count: Int.random(in: 0...300, using: &rng)))
                        )
                    }))
        default:
            return .object(
                JSONObject(
                    (0..<Int.random(in: 0...5, using: &rng)).map { _ in
                        (randomString(&rng), randomValue(&rng, depth: depth + 1))
                    }))
        }
    }

    static func varint(_ n: Int) -> [UInt8] {
        var n = n, bytes: [UInt8] = []
        while n >= 0x80 {
            bytes.append(UInt8(n & 0x7F) | 0x80)
            n >>= 7
        }
        return bytes + [UInt8(n)]
    }

    static func randomString(_ rng: inout SplitMix64) -> String {
        let pieces = [
            "a", "Z", "", "é", "e\u{301}", "ø", "😀", "\0", "\"", "\\", "\n", "日本", "\u{7F}", "\u{FFFF}", "\u{10FFFF}"
        ]
        return (0..<Int.random(in: 0...4, using: &rng)).map { _ in pieces[Int.random(in: 0..<pieces.count, using: &rng)]
        }.joined()
    }

    @Test func everyValueRoundTripsExactlyDoublesByTheirBits() throws {
        var rng = SplitMix64(seed: 11)
        for _ in 0..<3000 {
            let value = Self.randomValue(&rng)
            let bytes = try BinaryJSON.encode(value)
            #expect(bytes.first == BinaryJSON.marker)
            let back = try BinaryJSON.decode(bytes)
            #expect(back == value)
            // Same canonical text: doubles keep their bits (-0.0 its sign), integers their case.
            #expect(try back.canonicalBytes() == value.canonicalBytes())
        }
        for d in [-0.0, 0.0, 5e-324, -1.7976931348623157e308] {
            guard case .double(let back) = try BinaryJSON.decode(BinaryJSON.encode(.double(d))) else {
                Issue.record("not a double")
                continue
            }
            #expect(back.bitPattern == d.bitPattern)
        }
        #expect(try BinaryJSON.decode(BinaryJSON.encode(.int(1))) != .double(1))
        #expect(try BinaryJSON.decode(BinaryJSON.encode(.uint(UInt64.max))) == .uint(UInt64.max))
    }

    /// A key cache shared by many decodes (as the documents of one request share it) changes
    /// no value: documents of one shape, of changing shapes, with keys that differ from the
    /// cached ones only past a common prefix or in length, and damaged bytes after a
    /// successful decode all decode as they do without it.
    @Test func decodingWithASharedKeyCacheGivesTheSameValues() throws {
        var rng = SplitMix64(seed: 23)
        let cache = BinaryJSON.KeyCache()
        var shapes: [JSONValue] = [
            ["id": "a", "name": "Ada", "age": 36, "city": "Oslo"],
            ["id": "b", "name": "Bo", "age": 41, "city": "Bergen"],
            ["id": "c", "nam": "Cy", "agee": 1, "city": ["x": "y"]],
            ["id": "d", "name": ["first": "Di", "last": "Ng"], "nameé": 2],
            [:],
            ["k": ["k": ["k": "k"]]]
        ]
        for _ in 0..<2000 { shapes.append(Self.randomValue(&rng)) }
        for (n, value) in shapes.enumerated() {
            let bytes = try BinaryJSON.encode(value)
            let cached = try bytes.withUnsafeBufferPointer { try BinaryJSON.decode(buffer: $0, keys: cache) }
            #expect(cached == value, "value \(n)")
            #expect(try cached.canonicalBytes() == value.canonicalBytes())
            // The same value again, now that the cache holds its keys.
            let again = try bytes.withUnsafeBufferPointer { try BinaryJSON.decode(buffer: $0, keys: cache) }
            #expect(again == value, "value \(n), decoded again")
        }
        // A key whose bytes are not UTF-8 is refused even where the cache has a key of that length.
        let good = try BinaryJSON.encode(["ab": 1])
        _ = try good.withUnsafeBufferPointer { try BinaryJSON.decode(buffer: $0, keys: cache) }
        var bad = good
        guard let at = bad.firstIndex(of: UInt8(ascii: "a")) else {
            Issue.record("no key byte")
            return
        }
        bad[at] = 0xFF
        #expect(throws: KVDocsError.self) {
            try bad.withUnsafeBufferPointer { try BinaryJSON.decode(buffer: $0, keys: cache) }
        }
    }

    /// Integers take the fewest bytes that hold them; small objects 1-byte offsets.
    @Test func numbersAndOffsetsTakeTheFewestBytes() throws {
        #expect(try BinaryJSON.encode(.int(-128)).count == 3)
        #expect(try BinaryJSON.encode(.int(128)).count == 4)
        #expect(try BinaryJSON.encode(.int(Int64(Int32.min))).count == 6)
        #expect(try BinaryJSON.encode(.int(.min)).count == 10)
        let small: JSONValue = ["a": 1, "b": "x"]
        #expect(try BinaryJSON.encode(small)[1] == BinaryJSON.Tag.object1)
        let big = JSONValue.object(JSONObject((0..<300).map { ("k\($0)", JSONValue.string("value")) }))
        #expect(try BinaryJSON.encode(big)[1] == BinaryJSON.Tag.object2)
    }

    /// Nesting: the same limit as JSON text, writing and reading.
    @Test func nestingDeeperThanTheLimitIsRefusedBothWays() throws {
        func nested(_ depth: Int) -> JSONValue { (0..<depth).reduce(JSONValue.null) { inner, _ in .array([inner]) } }
        let deepest = nested(JSONValue.maximumDepth)
        #expect(try BinaryJSON.decode(BinaryJSON.encode(deepest)) == deepest)
        let error = try #require(throws: KVDocsError.self) { try BinaryJSON.encode(nested(JSONValue.maximumDepth + 1)) }
        #expect(error.kind == .invalidArgument && error.message.contains("deeper"))
        // Bytes that nest one level deeper (made by hand) are refused on reading.
        let inner = Array(try BinaryJSON.encode(deepest).dropFirst())
        let bytes = [BinaryJSON.marker, BinaryJSON.Tag.array, 1] + Self.varint(inner.count) + inner
        let read = try #require(throws: KVDocsError.self) { try BinaryJSON.decode(bytes) }
        #expect(read.kind == .decoding && read.message.contains("deeper"))
        #expect(throws: KVDocsError.self) { try BinaryJSON.encode(.double(.nan)) }
    }

    /// Every truncation, and every single-byte change, of encoded documents is an error or
    /// a value (never a crash); a truncation is always an error, naming a byte offset.
    @Test func damagedBytesGiveAnErrorNeverACrash() throws {
        var rng = SplitMix64(seed: 3)
        for _ in 0..<150 {
            let bytes = try BinaryJSON.encode(Self.randomValue(&rng))
            for n in 0..<bytes.count {
                let error = try #require(throws: KVDocsError.self) { try BinaryJSON.decode(bytes[..<n]) }
                #expect(error.kind == .decoding && error.message.contains("byte"))
            }
            for _ in 0..<20 {
                var damaged = bytes
                let i = Int.random(in: 0..<damaged.count, using: &rng)
                damaged[i] = UInt8.random(in: 0...255, using: &rng)
                if let value = try? BinaryJSON.decode(damaged) {
                    // Whatever it read is a well-formed value (keys in order, writable).
                    #expect(try BinaryJSON.decode(BinaryJSON.encode(value)) == value)
                }
                _ = try? BinaryJSONDecoder.decode(
                    CodableCoderTests.Everything.self, from: damaged, dates: .secondsSince1970)
            }
        }
        // Keys out of order are damage (lookups depend on the order).
        var swapped = try BinaryJSON.encode(["a": 1, "b": 2])
        if let a = swapped.firstIndex(of: UInt8(ascii: "a")), let b = swapped.firstIndex(of: UInt8(ascii: "b")) {
            swapped.swapAt(a, b)
        }
        let error = try #require(throws: KVDocsError.self) { try BinaryJSON.decode(swapped) }
        #expect(error.message.contains("out of order"))
    }

    /// Typed decoding straight from the bytes gives what decoding the value gives: the same
    /// values, and the same errors with the same coding paths.
    @Test func typedDecodingFromTheBytesAgreesWithDecodingTheValue() throws {
        var rng = SplitMix64(seed: 7)
        for _ in 0..<2000 {
            let value = try JSONValue(encoding: CodableCoderTests.everything(&rng))
            let bytes = try BinaryJSON.encode(value)
            for dates in [DateStrategy.secondsSince1970, .secondsSince2001, .millisecondsSince1970, .iso8601] {
                // The same value, or the same error (dates of another strategy).
                let direct = Result {
                    try JSONValueDecoder.decode(CodableCoderTests.Everything.self, from: value, dates: dates)
                }
                let fromBytes = Result {
                    try BinaryJSONDecoder.decode(CodableCoderTests.Everything.self, from: bytes, dates: dates)
                }
                switch (direct, fromBytes) {
                case (.success(let a), .success(let b)): #expect(a == b)
                case (.failure(let a), .failure(let b)): #expect("\(a)" == "\(b)")
                default: Issue.record("\(dates): \(direct) vs \(fromBytes)")
                }
            }
            #expect(try BinaryJSONDecoder.decode(JSONValue.self, from: bytes, dates: .secondsSince1970) == value)
            #expect(
                try BinaryJSONDecoder.decode([String: JSONValue].self, from: bytes, dates: .secondsSince1970)
                    == JSONValueDecoder.decode([String: JSONValue].self, from: value))
        }
        for (document, _) in try TypedCollectionTestSupport.errors() {
            let fromValue = try #require(throws: KVDocsError.self) {
                _ = try DocumentStore.decodeStored(
                    CodableCoderTests.Everything.self, document, dates: .secondsSince1970)
            }
            let fromBytes = try #require(throws: KVDocsError.self) {
                _ = try DocumentStore.decodeStored(
                    CodableCoderTests.Everything.self, bytes: BinaryJSON.encode(document), dates: .secondsSince1970)
            }
            #expect(fromBytes.kind == .decoding && fromBytes.message == fromValue.message)
        }
        // Numbers convert alike, scalars at the top level too.
        for text in [
            "1.0", "1e2", "1.5", "-0", "300", "18446744073709551615", "-9223372036854775808", "1e39", "16777217",
            "null", "\"s\"", "[1,2]", "{}"
        ] {
            let value = try JSONValue(parsing: text)
            let bytes = try BinaryJSON.encode(value)
            func agree<T: Decodable & Equatable>(_ type: T.Type) {
                let a = try? JSONValueDecoder.decode(T.self, from: value)
                let b = try? BinaryJSONDecoder.decode(T.self, from: bytes, dates: .secondsSince2001)
                #expect(a == b, "\(T.self) from \(text)")
            }
            agree(Int.self)
            agree(Int8.self)
            agree(UInt64.self)
            agree(Float.self)
            agree(Double.self)
            agree(String.self)
            agree([Int].self)
            agree(Int?.self)
            agree([String: Int].self)
            agree(Bool.self)
        }
    }

    /// An object built from members in any order holds them in code-point (UTF-8 byte)
    /// order, and of byte-identical keys the last one, like a model that sorts stably and
    /// keeps the last: for small objects (sorted in place) and large ones alike.
    /// Keys compare by their UTF-8 bytes (code-point order), not by Swift's `<` (canonical
    /// equivalence): against the bytes' lexicographic order, for random and awkward keys.
    @Test func keysCompareByTheirUTF8Bytes() {
        var rng = SplitMix64(seed: 5)
        var keys = ["", "a", "b", "ab", "é", "e\u{301}", "\u{FFFF}", "😀", "\0", "aaaaaaaaaaaaaaaa", "aaaaaaaaaaaaaaab"]
        for _ in 0..<300 { keys.append(Self.randomString(&rng)) }
        for a in keys {
            for b in keys.prefix(60) {
                let expected =
                    Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8))
                    ? -1 : (Array(a.utf8) == Array(b.utf8) ? 0 : 1)
                #expect(
                    JSONObject.compareKeys(a, b).signum() == expected, "\(a.debugDescription) \(b.debugDescription)")
            }
        }
    }

    @Test func objectsSortTheirMembersAndKeepTheLastOfEqualKeys() {
        var rng = SplitMix64(seed: 41)
        for _ in 0..<3000 {
            let pairs: [(String, JSONValue)] = (0..<Int.random(in: 0...48, using: &rng)).map { n in
                (Self.randomString(&rng), .int(Int64(n)))
            }
            var model: [(String, JSONValue)] = []
            for (key, value) in pairs.enumerated().sorted(by: { a, b in
                Array(a.element.0.utf8).lexicographicallyPrecedes(Array(b.element.0.utf8))
                    || (Array(a.element.0.utf8) == Array(b.element.0.utf8) && a.offset < b.offset)
            }).map(\.element) {
                if let last = model.last, Array(last.0.utf8) == Array(key.utf8) {
                    model[model.count - 1] = (key, value)
                } else {
                    model.append((key, value))
                }
            }
            let object = JSONObject(pairs)
            #expect(object.map { Array($0.key.utf8) } == model.map { Array($0.0.utf8) })
            #expect(object.map(\.value) == model.map(\.1))
        }
    }

    /// Selecting fields straight from the bytes (reading only the members on the fields'
    /// paths) gives what projecting the decoded document gives, for paths that exist, that
    /// miss, that cross a non-object, and that overlap (`a` and `a.b`).
    @Test func projectingFromTheBytesAgreesWithProjectingTheValue() throws {
        var rng = SplitMix64(seed: 31)
        func path(in value: JSONValue) -> [String] {
            var names: [String] = []
            var current: JSONValue? = value
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                if case .object(let o)? = current, !o.isEmpty, Int.random(in: 0..<5, using: &rng) > 0 {
                    let member = o[Int.random(in: 0..<o.count, using: &rng)]
                    names.append(member.key)
                    current = member.value
                } else {
                    names.append(Self.randomString(&rng))
                    current = nil
                }
            }
            return names
        }
        for _ in 0..<3000 {
            var fields = JSONObject()
            for _ in 0..<Int.random(in: 0...8, using: &rng) {
                let nested: JSONValue =
                    Bool.random(using: &rng)
                    ? Self.randomValue(&rng)
                    : .object(
                        JSONObject(
                            (0..<Int.random(in: 0...4, using: &rng)).map { _ in
                                (Self.randomString(&rng), Self.randomValue(&rng, depth: 2))
                            }))
                fields[Self.randomString(&rng)] = nested
            }
            let document = JSONValue.object(fields)
            var selected = (0..<Int.random(in: 1...4, using: &rng)).map { _ in path(in: document) }
            if let first = selected.first, first.count > 1, Bool.random(using: &rng) { selected.append([first[0]]) }
            let bytes = try BinaryJSON.encode(document)
            #expect(
                try FieldPath.project(binary: bytes, onto: selected) == FieldPath.project(document, onto: selected),
                "\(selected) of \(document)")
        }
    }

    /// A second reader of the format, written from its description in Python
    /// (`Examples/python/read_kvdocs.py`, through plyvel), reads every document of a store
    /// as the store does: the format is what the documentation says it is.
    @Test(.requires(.plyvel, .fdbTuple))
    func pythonReadsTheBinaryFormAsDescribed() throws {
        let dir = TemporaryDirectory()
        let path = dir.child("db")
        var expected: [JSONValue] = []
        do {
            let db = try LevelDB(path: path)
            let store = try DocumentStore(
                database: db, schema: try DocumentSchema(collections: ["things": CollectionSchema(primaryKey: "id")]))
            var rng = SplitMix64(seed: 21)
            try store.write { batch in
                for n in 0..<400 {
                    var fields = JSONObject()
                    for _ in 0..<Int.random(in: 0...6, using: &rng) {
                        fields[Self.randomString(&rng)] = Self.randomValue(&rng)
                    }
                    fields["id"] = .int(Int64(n))
                    try batch.insert("things", .object(fields))
                    expected.append(.object(fields))
                }
            }
            db.close()
        }
        let lines = try runPython("Examples/python/read_kvdocs.py", [path, "--json"]).split(separator: "\n")
        var read: [Int64: JSONValue] = [:]
        for line in lines {
            let entry = try JSONValue(parsing: String(line))
            guard case .array(let key)? = entry["key"], key.first == "d", key.count == 3, case .int(let id) = key[2]
            else { continue }
            read[id] = entry["value"]
        }
        #expect(read.count == expected.count)
        for (n, document) in expected.enumerated() {
            #expect(read[Int64(n)] == document, "document \(n)")
        }
    }
}
