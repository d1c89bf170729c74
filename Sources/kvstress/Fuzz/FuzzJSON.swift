import Foundation
import KVDocs

/// The JSON parser: nesting near and past the limit, numbers at the limits, escapes,
/// surrogates, invalid UTF-8. A parsed value's canonical form must parse back to an equal
/// value and be stable.
struct FuzzJSON: FuzzChecks {
    /// The errors the parser documents.
    static let documentedKinds: Set<String> = [KVDocsError.Kind.decoding.rawValue]

    /// One input in four is checked thoroughly.
    func check(_ bytes: [UInt8], _ r: inout FuzzRandom) -> FuzzResult { Self.check(bytes, thorough: r.chance(25)) }

    static let documents = [
        #"{"a": 1, "b": [true, false, null, -0.5e10, "x\u00e9\ud83d\ude00"], "c": {"d": 18446744073709551615, "e": -9223372036854775808}}"#,
        "[]", "{}", "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u0000\\u001f\"", "-0", "0", "1.7976931348623157e308", "4.9e-324",
        "[1, 2.5, -3e-7, 1E+2]",
        "{\"é\": 1, \"e\\u0301\": 2, \"a\": 3, \"a\": 4}", " \t\r\n[ 1 , { \"k\" : [ ] } ] \n",
        "\u{FEFF}{\"bom\": true}",
        "\"\\uD834\\uDD1E\"", "\"\u{10FFFF}\u{0080}\"", "123456789012345678901234567890", "0.1", "1e-400", "true",
        "null",
        "[[[[[[[[[[\"deep\"]]]]]]]]]]", "{\"a\": {\"b\": {\"c\": {\"d\": [1, {\"e\": null}]}}}}",
        "-9223372036854775808", String(repeating: "[", count: 250) + String(repeating: "]", count: 250)
    ]

    static let dictionary =
        [
            "{", "}", "[", "]", ",", ":", "\"", "\\", "\\u", "\\u0000", "\\ud800", "\\udc00", "\\ud83d\\ude00",
            "\\uDBFF\\uDFFF",
            "\\x", "\\'", "true", "false", "null", "nul", "tru", " ", "\t", "\n", "\r", "\u{FEFF}", "\"k\": ", "[1,",
            "{\"a\":",
            "e", "E", "e+", "e-", ".", "-", "+", "0"
        ] + FuzzMutator.numbers

    static func plan(_ r: inout FuzzRandom) -> FuzzPlan {
        FuzzPlan(
            mutator: FuzzMutator(
                corpus: documents.map { Array($0.utf8) }, dictionary: dictionary.map { Array($0.utf8) }),
            fresh: { r in value(&r, depth: 0) },
            valid: 10,
            deep: { r in
                let n = fuzzDepth(&r, limit: JSONValue.maximumDepth)
                switch r.below(4) {
                case 0: return fuzzNest("[", r.bool() ? "" : "1", "]", n, unclosed: r.chance(10))
                case 1: return fuzzNest("{\"a\":", "1", "}", n, unclosed: r.chance(10))
                case 2: return fuzzNest("[{\"k\":", "[]", "}]", n / 2)
                default: return fuzzNest("[1,", "2", "]", n)
                }
            },
            alphabet: Array("{}[]\",:0123456789.eE+- truefalsn\\u".utf8))
    }

    /// Valid JSON numbers at and past the limits.
    static let numbers = [
        "0", "-0", "-0.0", "1.0", "0.5", "1e5", "1E+2", "1e-7", "9223372036854775807", "9223372036854775808",
        "-9223372036854775808", "-9223372036854775809", "18446744073709551615", "18446744073709551616",
        "1e308", "1e309", "-1e309", "1e-400", "4.9e-324", "2.2250738585072014e-308", "1.7976931348623157e308",
        "1.7976931348623159e308", "0.30000000000000004", "123456789012345678901234567890",
        String(repeating: "9", count: 400), "0." + String(repeating: "0", count: 400) + "1", "1e-2147483649"
    ]

    static let stringPieces = [
        "a", "é", "\\u00e9", "\\ud83d\\ude00", "\\ud800", "\\udc00x", "\\n", "\\\"", "\\\\", "\\/", "\\b\\f\\r\\t",
        "\\u0000", "😀", "\u{10FFFF}", "e\u{301}", " ", "\\u2028", "\u{2028}", "\\uFFFF", "\\uFEFF"
    ]

    /// JSON text (not necessarily canonical: spacing, escapes, number spellings vary).
    static func value(_ r: inout FuzzRandom, depth: Int) -> [UInt8] {
        func space(_ r: inout FuzzRandom) -> String { r.chance(70) ? "" : r.pick([" ", "\n", "\t", "\r\n ", "  "]) }
        switch r.below(depth < 4 ? 9 : 6) {
        case 0: return Array(r.pick(["true", "false", "null"]).utf8)
        case 1, 2: return Array((r.chance(60) ? String(Int64(r.below(2000)) - 1000) : r.pick(numbers)).utf8)
        case 3, 4: return Array(("\"" + (0..<r.size(6)).map { _ in r.pick(stringPieces) }.joined() + "\"").utf8)
        case 5: return Array(r.pick(["[]", "{}", "\"\"", "0", "-0.0"]).utf8)
        case 6:
            let elements = (0..<r.size(5)).map { _ in String(decoding: value(&r, depth: depth + 1), as: UTF8.self) }
            return Array(("[" + space(&r) + elements.joined(separator: "," + space(&r)) + space(&r) + "]").utf8)
        default:
            let members = (0..<r.size(5)).map { _ -> String in
                let key = "\"" + (0..<r.size(3)).map { _ in r.pick(stringPieces + ["id", "k", "a.b"]) }.joined() + "\""
                return key + space(&r) + ":" + space(&r) + String(decoding: value(&r, depth: depth + 1), as: UTF8.self)
            }
            return Array(("{" + space(&r) + members.joined(separator: "," + space(&r)) + "}").utf8)
        }
    }

    /// Parses; a parsed value's canonical form parses back to an equal value and is
    /// stable. `thorough` also parses the text as a `String` and the pretty form.
    static func check(_ bytes: [UInt8], thorough: Bool) -> FuzzResult {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: bytes)
        } catch {
            if thorough, let text = String(validating: bytes, as: UTF8.self), let parsed = try? JSONValue(parsing: text)
            {
                return .failed(
                    "the bytes are rejected but the same text as a String parses, to \(parsed.compactDescription.prefix(200))"
                )
            }
            return FuzzResult.judge(error, kinds: documentedKinds)
        }
        let problem = FuzzResult.after("writing or re-parsing the canonical form") { () -> String? in
            let canonical = try value.canonicalData()
            let again = try JSONValue(parsing: canonical)
            guard again == value else {
                return "the canonical form \(FuzzShow.escaped(Array(canonical))) parses to a different value"
            }
            guard try again.canonicalData() == canonical else {
                return "the canonical form is not stable: \(FuzzShow.escaped(Array(canonical)))"
            }
            if thorough {
                if let text = String(validating: bytes, as: UTF8.self), try JSONValue(parsing: text) != value {
                    return "the text parsed as a String gives a different value"
                }
                let pretty = try value.prettyText()
                guard try JSONValue(parsing: pretty) == value else {
                    return "the pretty form parses to a different value"
                }
            }
            return nil
        }
        return problem.map { .failed($0) } ?? .accepted
    }
}
