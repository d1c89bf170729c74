import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// The byte-level JSON path against Python's `json` (exact float parsing, shortest repr,
/// arbitrary-precision integers), and the exactness guarantees it gives documents.
@Suite struct JSONNumberExactnessTests {
    static let numberSchema =
        #"{"collections": {"c": {"primaryKey": "id", "indexes": [{"name": "by_n", "fields": ["n"]}]}}}"#

    /// 100,000 doubles (subnormals, values near 2^53, 2^63 and 1e308, -0.0, long mantissas,
    /// integers beyond 64 bits) parse to the double Python parses, read back from their
    /// canonical text with the same bits (checked by Python too), and are found by `=`
    /// through their index after an import.
    @Test(.requires(.python))
    func hundredThousandDoublesParseStoreAndIndexExactly() throws {
        let lines = try runPython("Tests/python/json_reference.py", ["numbers", "100000", "17"]).split(separator: "\n")
        #expect(lines.count == 100_000)
        var file = ""
        var canonicalCheck = ""
        var expected: [(id: Int64, bits: UInt64, text: String)] = []
        for line in lines {
            let record = try JSONValue(parsing: String(line))
            guard case .int(let id)? = record["id"], case .string(let text)? = record["text"],
                case .string(let bitsHex)? = record["bits"], let bits = UInt64(bitsHex, radix: 16)
            else {
                Issue.record("bad reference line \(line)")
                return
            }
            let parsed = try JSONValue(parsing: text)
            guard case .double(let d) = parsed else {
                Issue.record("\(text) parsed as \(parsed), not a double")
                continue
            }
            #expect(d.bitPattern == bits, "\(text): got \(d) (\(String(d.bitPattern, radix: 16))), Python \(bitsHex)")
            let canonical = String(decoding: try parsed.canonicalBytes(), as: UTF8.self)
            let reread = try JSONValue(parsing: canonical)
            #expect(reread == parsed, "\(text) → \(canonical) → \(reread)")
            canonicalCheck += "\(bitsHex) \(canonical)\n"
            file += "{\"id\":\(id),\"n\":\(text)}\n"
            expected.append((id, bits, text))
        }
        #expect(try runPython("Tests/python/json_reference.py", ["check"], input: canonicalCheck) == "ok\n")

        try withTemporaryDatabase { db, _ throws in
            let store = try DocumentStore(database: db, schema: try DocumentSchema(json: Data(Self.numberSchema.utf8)))
            let dir = TemporaryDirectory()
            let path = dir.child("numbers.jsonl")
            try Data(file.utf8).write(to: URL(fileURLWithPath: path))
            #expect(try store.importJSONLines(into: "c", path: path) == 100_000)
            #expect(try store.verify().isClean)
            let c = try store.collection("c")
            // `verify` (clean above) proves every document's index entry is the encoding of
            // its stored value; `=` queries then look up a spread of 10,000 of them.
            for (position, (id, bits, text)) in expected.enumerated() where position % 10 == 0 {
                guard case .double(let stored)? = try c.get(id: .int(id))?["n"] else {
                    Issue.record("document \(id) lost its number \(text)")
                    continue
                }
                #expect(stored.bitPattern == bits, "document \(id): \(text) stored as \(stored)")
                let hits = try c.find(DocumentQuery().where("n", .equal(try JSONValue(parsing: text))))
                #expect(hits.contains { $0["id"] == .int(id) }, "document \(id) is not found by its own value \(text)")
            }
            // Every stored document reads back with the exact bits.
            var checked = 0
            for document in try c.find(DocumentQuery()) {
                guard case .int(let id)? = document["id"], case .double(let stored)? = document["n"] else { continue }
                #expect(
                    stored.bitPattern == expected[Int(id)].bits,
                    "document \(id): \(expected[Int(id)].text) stored as \(stored)")
                checked += 1
            }
            #expect(checked == expected.count)
        }
    }

    @Test(.requires(.python))
    func integersAtTheSixtyFourBitEdgesStayExact() throws {
        for line in try runPython("Tests/python/json_reference.py", ["integers", "2000", "3"]).split(separator: "\n") {
            guard case .string(let text)? = try JSONValue(parsing: String(line))["text"] else { continue }
            let value = try JSONValue(parsing: text)
            switch value {
            case .int(let i): #expect(String(i) == text)
            case .uint(let u): #expect(String(u) == text && u > UInt64(Int64.max))
            default: Issue.record("\(text) parsed as \(value)")
            }
            #expect(String(decoding: try value.canonicalBytes(), as: UTF8.self) == text)
        }
    }

    /// The issue's example: an integer beyond 64 bits is stored as its nearest double in
    /// the document and in its index entry alike, so `verify` is clean and `=` finds it.
    @Test func anIntegerBeyondSixtyFourBitsIsTheSameDoubleInDocumentAndIndex() throws {
        try withTemporaryDatabase { db, _ throws in
            let store = try DocumentStore(database: db, schema: try DocumentSchema(json: Data(Self.numberSchema.utf8)))
            let c = try store.collection("c")
            try c.insert(try JSONValue(parsing: #"{"id":1,"n":123456789012345678901234567890}"#))
            #expect(try store.verify().isClean)
            #expect(try c.get(id: 1)?["n"] == .double(123456789012345678901234567890.0))
            #expect(
                try c.count(
                    DocumentQuery().where("n", .equal(try JSONValue(parsing: "123456789012345678901234567890")))) == 1)
        }
    }

    @Test func decimalsBeyondDoubleRangeAreRejectedNamingTheValueAndField() throws {
        for text in [#"{"id":1,"a":{"n":1e400}}"#, #"{"id":1,"a":{"n":-2e308}}"#] {
            let error = #expect(throws: KVDocsError.self) { try JSONValue(parsing: text) }
            #expect(error?.kind == .decoding)
            #expect(error?.message.contains("beyond the range of a 64-bit double") == true)
            #expect(error?.message.contains("in a.n") == true, "\(error?.message ?? "")")
            #expect(error?.message.contains("(byte 17):") == true, "\(error?.message ?? "")")
        }
        // Underflow is not an error: the correctly rounded double is 0 (as Python's float()).
        #expect(try JSONValue(parsing: "1e-400") == .double(0))
    }

    @Test func decimalsKeepTheirShortestSpellingAndNegativeZeroItsSign() throws {
        let cases: [(String, String)] = [
            ("0.30000000000000004", "0.30000000000000004"), ("5.0", "5.0"), ("-0.0", "-0.0"), ("-0", "-0.0"),
            ("0", "0"),
            ("1E2", "100.0"), ("1e308", "1e+308"), ("2.5e-324", "5e-324"), ("0.1", "0.1"),
            ("9007199254740993", "9007199254740993"), ("18446744073709551615", "18446744073709551615"),
            ("-9223372036854775808", "-9223372036854775808"), ("18446744073709551616", "1.8446744073709552e+19")
        ]
        for (input, canonical) in cases {
            #expect(
                String(decoding: try JSONValue(parsing: input).canonicalBytes(), as: UTF8.self) == canonical, "\(input)"
            )
        }
        guard case .double(let negativeZero) = try JSONValue(parsing: "-0.0") else {
            Issue.record("-0.0 is not a double")
            return
        }
        #expect(negativeZero.sign == .minus)
    }
}

@Suite struct JSONParserTests {
    /// Random documents from Python's `json.dumps` (escapes, surrogate pairs, control
    /// characters, NFC and NFD keys side by side, 64-bit integers, doubles) parse, and their
    /// canonical text reads back in Python as the same value, key for key.
    @Test(.requires(.python))
    func randomDocumentsRoundTripThroughPython() throws {
        let documents = try runPython("Tests/python/json_reference.py", ["documents", "3000", "5"]).split(
            separator: "\n", omittingEmptySubsequences: false
        ).dropLast()
        #expect(documents.count == 3000)
        var pairs = ""
        for text in documents {
            let value = try JSONValue(parsing: String(text))
            let canonical = try value.canonicalBytes()
            #expect(try JSONValue(parsing: canonical) == value)
            #expect(
                try JSONValue(parsing: canonical).canonicalBytes() == canonical, "canonical text is not a fixed point")
            pairs += text + "\n" + String(decoding: canonical, as: UTF8.self) + "\n"
        }
        #expect(try runPython("Tests/python/json_reference.py", ["equal"], input: pairs) == "ok\n")
    }

    @Test(arguments: [
        ("", 0, "empty input"),
        ("{", 1, "end of input"),
        ("[1,]", 3, "expected a JSON value"),
        ("{\"a\" 1}", 5, "expected ':'"),
        ("{\"a\":1,}", 7, "expected a string key"),
        ("01", 1, "leading zero"),
        ("1.", 2, "end of input in a number"),
        ("1.x", 2, "after the decimal point"),
        ("-", 1, "end of input"),
        ("1e", 2, "end of input in a number"),
        ("1e+x", 3, "in the exponent"),
        ("NaN", 0, "expected a JSON value"),
        ("Infinity", 0, "expected a JSON value"),
        ("tru", 3, "end of input"),
        ("\"a\u{01}b\"", 2, "control character"),
        ("\"\\x\"", 1, "invalid escape"),
        ("\"\\ud800\"", 1, "unpaired surrogate"),
        ("\"\\udc00\\ud800\"", 1, "unpaired surrogate"),
        ("\"\\ud800\\u0041\"", 1, "unpaired surrogate"),
        ("\"\\u12g4\"", 5, "hexadecimal"),
        ("\"abc", 0, "unterminated string"),
        ("[1] 2", 4, "after the JSON value"),
        ("{\"a\":[1,2 3]}", 10, "expected ',' or ']'")
    ])
    func malformedInputIsAnErrorWithItsByteOffset(text: String, offset: Int, problem: String) throws {
        let error = #expect(throws: KVDocsError.self) { try JSONValue(parsing: text) }
        #expect(error?.kind == .decoding)
        #expect(error?.message.contains("(byte \(offset)):") == true, "\(text): \(error?.message ?? "")")
        #expect(error?.message.contains(problem) == true, "\(text): \(error?.message ?? "")")
    }

    @Test func invalidUTF8IsAnErrorAtTheOffendingByte() throws {
        let cases: [[UInt8]] = [
            [0x22, 0x61, 0xFF, 0x22],  // not UTF-8 at all
            [0x22, 0x61, 0xC0, 0xAF, 0x22],  // overlong '/'
            [0x22, 0x61, 0xED, 0xA0, 0x80, 0x22],  // an encoded surrogate
            [0x22, 0x61, 0xF4, 0x90, 0x80, 0x80, 0x22],  // beyond U+10FFFF
            [0x22, 0x61, 0xE2, 0x82, 0x22]  // truncated sequence
        ]
        for bytes in cases {
            let error = #expect(throws: KVDocsError.self) { try JSONValue(parsing: bytes) }
            #expect(error?.message.contains("(byte 2):") == true, "\(bytes): \(error?.message ?? "")")
            #expect(error?.message.contains("invalid UTF-8") == true)
        }
    }

    @Test func escapesAndSurrogatePairsDecode() throws {
        let value = try JSONValue(parsing: #""a\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00\u0000""#)
        #expect(value == .string("a\"\\/\u{8}\u{c}\n\r\té😀\u{0}"))
        #expect(String(decoding: try value.canonicalBytes(), as: UTF8.self) == #""a\"\\/\b\f\n\r\té😀\u0000""#)
        // A byte order mark before the value is skipped.
        #expect(try JSONValue(parsing: [0xEF, 0xBB, 0xBF] + Array("[1]".utf8)) == [1])
    }

    /// Nesting up to the documented limit parses; one level more is an error, and 100,000
    /// levels are an error too, not a stack overflow (the parser keeps its own stack).
    @Test func nestingIsBoundedWithAClearError() throws {
        let limit = JSONValue.maximumDepth
        let deepest = String(repeating: "[", count: limit) + String(repeating: "]", count: limit)
        let value = try JSONValue(parsing: deepest)
        #expect(try value.canonicalBytes().count == 2 * limit)
        for depth in [limit + 1, 100_000] {
            let text = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            let error = #expect(throws: KVDocsError.self) { try JSONValue(parsing: text) }
            #expect(error?.message.contains("nest deeper than \(limit) levels") == true)
        }
        let objects = String(repeating: "{\"a\":", count: 100_000) + "1" + String(repeating: "}", count: 100_000)
        #expect(throws: KVDocsError.self) { try JSONValue(parsing: objects) }
        // A value built in code deeper than the limit cannot be stored: an error, not a crash.
        var built: JSONValue = 1
        for _ in 0...limit { built = .array([built]) }
        #expect(throws: KVDocsError.self) { try built.canonicalBytes() }
    }

    /// Documents at the nesting limit are parsed, written, compared, hashed, indexed and
    /// released on a secondary thread's 512 KiB stack, as apps run queries off the main
    /// thread.
    @Test func documentsAtTheNestingLimitFitASmallStack() throws {
        let limit = JSONValue.maximumDepth
        let arrays = String(repeating: "[", count: limit - 1) + "{\"id\":1}" + String(repeating: "]", count: limit - 1)
        let objects =
            "{\"id\":1,\"a\":" + String(repeating: "{\"a\":", count: limit - 2) + "1"
            + String(repeating: "}", count: limit - 1)
        for text in [arrays, objects] {
            let ok = try onThread {
                let value = try JSONValue(parsing: text)
                let canonical = try value.canonicalBytes()
                var hasher = Hasher()
                value.hash(into: &hasher)
                _ = ValueOrder.key(value)
                return try JSONValue(parsing: canonical) == value
            }
            #expect(ok)
        }
        // Stored as a field of a document, on the small stack too: at the JSON limit in a
        // field no index reads, and at the tuple limit in an indexed one (deeper is refused
        // there: an index entry's key nests a tuple per array level).
        let stored = try onThread { () -> Bool in
            try withPeopleStore { store, people throws in
                try people.insert(
                    try JSONValue(
                        parsing: "{\"id\":\"deep\",\"notes\":" + String(repeating: "[", count: limit - 2)
                            + String(repeating: "]", count: limit - 2) + "}"))
                let levels = Tuple.maximumNestingDepth
                try people.insert(
                    try JSONValue(
                        parsing: "{\"id\":\"deep2\",\"tags\":[" + String(repeating: "[", count: levels - 1)
                            + String(repeating: "]", count: levels - 1) + "]}"))
                _ = try people.find(
                    DocumentQuery(conditions: [QueryCondition(field: "tags[]", op: .greaterOrEqual(.array([])))]))
                return try store.verify().isClean
            }
        }
        #expect(stored)
    }

    /// Seeded garbage: mutations of valid documents never crash the parser, and whatever it
    /// accepts has a canonical text that parses back to the same value.
    @Test func mutatedDocumentsNeverCrashTheParser() throws {
        var rng = SplitMix64(seed: 99)
        let seeds = [
            #"{"a":[1,2.5,{"b":"c\u00e9"}],"d":null,"e":true,"f":-0.0}"#, #"[1e10,"x\"y",{},[]]"#, #""\ud83d\ude00""#
        ]
        for _ in 0..<20_000 {
            var bytes = Array(seeds[Int.random(in: 0..<seeds.count, using: &rng)].utf8)
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                let i = Int.random(in: 0..<bytes.count, using: &rng)
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: bytes[i] = UInt8.random(in: 0...255, using: &rng)
                case 1: bytes.remove(at: i)
                default:
                    let syntax = Array("{}[]\",:\\0-e.".utf8)
                    bytes.insert(syntax[Int.random(in: 0..<syntax.count, using: &rng)], at: i)
                }
                if bytes.isEmpty { bytes = [0x30] }
            }
            if let value = try? JSONValue(parsing: bytes) {
                #expect(try JSONValue(parsing: value.canonicalBytes()) == value)
            }
        }
    }
}

/// Object keys, field paths and names are compared by code points, never merged by
/// Unicode normalisation.
@Suite struct CodePointKeyTests {
    static let nfc = "caf\u{E9}"  // é as one code point
    static let nfd = "cafe\u{301}"  // e and a combining accent

    @Test func keysThatDifferOnlyInNormalisationAreTwoFields() throws {
        #expect(Self.nfc == Self.nfd)  // Swift's String equality is canonical equivalence
        let text = "{\"id\":2,\"\(Self.nfc)\":1,\"\(Self.nfd)\":2}"
        let value = try JSONValue(parsing: text)
        guard case .object(let o) = value else {
            Issue.record("not an object")
            return
        }
        #expect(o.count == 3)
        #expect(o[Self.nfc] == 1)
        #expect(o[Self.nfd] == 2)
        #expect(try JSONValue(parsing: value.canonicalBytes()) == value)

        try withPeopleStore { _, people throws in
            try people.insert(value)
            let stored = try people.get(id: 2)
            #expect(stored == value)
            #expect(stored?[Self.nfc] == 1 && stored?[Self.nfd] == 2)
        }
    }

    @Test func byteIdenticalDuplicateKeysKeepTheLastValue() throws {
        #expect(try JSONValue(parsing: #"{"a":1,"b":2,"a":3}"#) == ["a": 3, "b": 2])
        #expect(try JSONValue(parsing: #"{"a":1,"a":{"x":1},"a":[true]}"#) == ["a": [true]])
    }

    @Test func stringValuesAndIdsCompareByCodePoints() throws {
        #expect(JSONValue.string(Self.nfc) != JSONValue.string(Self.nfd))
        #expect(Set([JSONValue.string(Self.nfc), .string(Self.nfd)]).count == 2)
        try withPeopleStore { _, people throws in
            // Two ids, two documents; a unique index tells their values apart too.
            try people.insert(["id": .string(Self.nfc), "email": .string(Self.nfc)])
            try people.insert(["id": .string(Self.nfd), "email": .string(Self.nfd)])
            #expect(try people.count() == 2)
            #expect(try people.get(id: .string(Self.nfd))?["email"] == .string(Self.nfd))
            #expect(
                try people.find(DocumentQuery().where("email", .equal(.string(Self.nfd)))).map { $0["id"] } == [
                    .string(Self.nfd)
                ])
            #expect(throws: KVDocsError.self) { try people.insert(["id": "x", "email": .string(Self.nfd)]) }
        }
    }

    @Test func fieldPathsAndIndexesSelectTheExactKey() throws {
        let schema = try DocumentSchema(
            json: Data(
                """
                {"collections": {"c": {"primaryKey": "id", "indexes": [{"name": "by_nfd", "fields": ["\(Self.nfd)"]}]}}}
                """.utf8))
        #expect(try FieldPath(Self.nfc) != FieldPath(Self.nfd))
        try withTemporaryDatabase { db, _ throws in
            let store = try DocumentStore(database: db, schema: schema)
            let c = try store.collection("c")
            try c.insert(
                try JSONValue(parsing: "{\"id\":1,\"\(Self.nfc)\":\"composed\",\"\(Self.nfd)\":\"decomposed\"}"))
            #expect(try c.find(DocumentQuery().where(try FieldPath(Self.nfd), .equal("decomposed"))).count == 1)
            #expect(try c.find(DocumentQuery().where(try FieldPath(Self.nfd), .equal("composed"))).isEmpty)
            #expect(try c.find(DocumentQuery().where(try FieldPath(Self.nfc), .equal("composed"))).count == 1)
            #expect(try store.verify().isClean)
        }
    }

    @Test func schemaNamesAreLookedUpByCodePointsAndAmbiguousOnesRejected() throws {
        let schema = try DocumentSchema(json: Data("{\"collections\": {\"\(Self.nfc)\": {}}}".utf8))
        #expect(try schema.collection(Self.nfc).primaryKey == "id")
        #expect(throws: KVDocsError.self) { try schema.collection(Self.nfd) }
        let ambiguous = "{\"collections\": {\"\(Self.nfc)\": {}, \"\(Self.nfd)\": {}}}"
        let error = #expect(throws: KVDocsError.self) { try DocumentSchema(json: Data(ambiguous.utf8)) }
        #expect(error?.message.contains("differ only in Unicode normalisation") == true)
        let indexes =
            "{\"collections\": {\"c\": {\"indexes\": [{\"name\": \"\(Self.nfc)\", \"fields\": [\"a\"]}, {\"name\": \"\(Self.nfd)\", \"fields\": [\"b\"]}]}}}"
        let indexError = #expect(throws: KVDocsError.self) { try DocumentSchema(json: Data(indexes.utf8)) }
        #expect(indexError?.message.contains("differ only in Unicode normalisation") == true)
    }
}

@Suite struct SharedSequenceTests {
    /// The issue's scenario: two stores on one database used to keep their own last
    /// sequence in memory, so id 1's change record was overwritten.
    @Test func twoStoresOnOneDatabaseNeverReuseASequenceNumber() throws {
        try withTemporaryDatabase { db, _ throws in
            let store1 = try DocumentStore(database: db, schema: try peopleSchema())
            let store2 = try DocumentStore(database: db)
            try store1.collection("people").insert(["id": 1])
            try store2.collection("people").insert(["id": 2])
            try store1.collection("people").insert(["id": 3])
            let changes = try store1.changes()
            #expect(changes.map(\.sequence) == [1, 2, 3])
            #expect(changes.map(\.id) == [1, 2, 3])
            #expect(try store1.lastSequence == 3 && store2.lastSequence == 3)
        }
    }

    @Test func manyThreadsOnTwoStoresGetGapFreeUniqueSequences() throws {
        try withTemporaryDatabase { db, _ throws in
            let stores = [try DocumentStore(database: db, schema: try peopleSchema()), try DocumentStore(database: db)]
            let threads = 8, perThread = 50
            DispatchQueue.concurrentPerform(iterations: threads) { t in
                for i in 0..<perThread {
                    let store = stores[(t + i) % 2]
                    _ = try? store.collection("people").insert(["id": .string("t\(t)-\(i)")])
                }
            }
            let changes = try stores[0].changes()
            #expect(changes.count == threads * perThread)
            #expect(changes.map(\.sequence) == Array(1...Int64(threads * perThread)))
            #expect(Set(changes.map(\.id)).count == threads * perThread)
        }
    }
}

@Suite struct TypedExactnessTests {
    struct Reading: Codable, Equatable {
        var id: Int64
        var value: Double
        var count: UInt64
        var label: String
    }

    /// Typed collections go through `JSONEncoder`/`JSONDecoder` at the edges and the exact
    /// parser in between: random doubles (any finite bit pattern), 64-bit extremes and
    /// code-point-distinct labels come back identical.
    @Test func codableValuesRoundTripBitForBit() throws {
        let schema = try DocumentSchema(
            json: Data(
                #"{"collections": {"r": {"primaryKey": "id", "indexes": [{"name": "by_value", "fields": ["value"]}]}}}"#
                    .utf8))
        try withTemporaryDatabase { db, _ throws in
            let store = try DocumentStore(database: db, schema: schema)
            let readings = try store.collection("r", of: Reading.self)
            var rng = SplitMix64(seed: 5)
            var written: [Reading] = []
            for i in 0..<2000 {
                var d = Double(bitPattern: rng.next())
                while !d.isFinite { d = Double(bitPattern: rng.next()) }
                let special: [Double] = [
                    -0.0, 0.30000000000000004, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 9007199254740992
                ]
                if i < special.count { d = special[i] }
                let reading = Reading(
                    id: Int64(i), value: d, count: i % 2 == 0 ? UInt64.max : UInt64(i),
                    label: i % 2 == 0 ? CodePointKeyTests.nfc : CodePointKeyTests.nfd)
                try readings.insert(reading)
                written.append(reading)
            }
            #expect(try store.verify().isClean)
            for reading in written {
                let back = try readings.get(id: .int(reading.id))
                #expect(
                    back?.value.bitPattern == reading.value.bitPattern,
                    "\(reading.value) came back as \(String(describing: back?.value))")
                #expect(back?.count == reading.count)
                #expect(back?.label.utf8.elementsEqual(reading.label.utf8) == true)
            }
        }
    }
}
