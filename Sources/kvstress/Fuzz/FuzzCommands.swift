import KVDocs
import KVReplCore

/// kvrepl's command parser: every command with its options, key literals (tuples nested
/// near the limit), JSON values, numbers at the 64-bit limits, open quotes.
struct FuzzCommands: FuzzChecks {
    func check(_ bytes: [UInt8], _ r: inout FuzzRandom) -> FuzzResult { Self.check(bytes) }

    /// How many of kvrepl's commands no seed line names.
    var outcomes: [String: Int] {
        let covered = Set(
            Self.lines.compactMap { line in line.split(separator: " ").first.map { $0.lowercased() } })
        return ["command names without a corpus line": ShellCommand.names.filter { !covered.contains($0) }.count]
    }

    static let lines = [
        "get k", "get \"a\\x00b\\n\\t\\\"\"", "get 0x00ff", "get (\"dep\", \"Perth\", 1700000000)",
        "get (1, -2.5, true, false, null, nil, 0xff, (\"nested\", (1,)), 9223372036854775807, 18446744073709551615, 1e300)",
        "put k v", "put k some words here", "put \"k\" \"v\\n\"", "put (1) 0x00", "put k (\"t\", 1)", "PUT K V",
        "del k", "del (\"a\",)", "del 0x",
        "scan", "scan p", "scan \"p\" --from a --to z --reverse --limit 10 --keys-only --count",
        "scan --from (1) --to (2)",
        "scan --limit 9223372036854775807", "scan ( \"dep\" ) --reverse --keys-only",
        "delrange p", "delrange --from a --to b --limit 5 --reverse", "delrange (\"x\", 1)",
        "stats", "property leveldb.stats", "property leveldb.num-files-at-level0",
        "size", "size --from a --to b", "compact", "compact --from (\"a\") --to (\"b\")",
        "snapshot", "release", "dump out.jsonl", "dump \"a file.jsonl\"", "load in.jsonl", "load \"x\\\\y.jsonl\"",
        "keyspaces", "keyspaces load k.json", "sync", "sync on", "sync off", "repair",
        "help", "help find", "help bogus", "quit", "exit",
        "schema", "schema load s.json", "collections", "indexes people",
        "insert people {\"id\": 1, \"name\": \"x\", \"tags\": [\"a\", \"b\"], \"n\": {\"x\": [1, 2.5, -0, 1e10, null, true]}}",
        "upsert people {\"id\": \"x\\u00e9\\ud83d\\ude00\", \"age\": 18446744073709551615, \"s\": \"a\\\"b\"}",
        "doc people 1", "doc people \"a\"", "doc people -9223372036854775808", "remove people 1",
        "remove people \"x y\"",
        "import people p.jsonl", "import people \"x y.jsonl\"", "export people out.jsonl",
        "find people", "find people where age >= 30 and name prefix \"a\" order by age desc limit 10 offset 5",
        "find people where age>30", "find people where tags[] in (1, \"x\", null, [1], {\"a\": 1})",
        "find people where a.b = {\"c\": [1]} order by a.b asc", "find people where x != -9223372036854775808 limit 0",
        "find people where age<=1 and age<2 and age==3 and a.b.c > \"z\"",
        "count people", "count people where age < 3", "count people where name prefix \"\"",
        "explain find people where age = 1 order by name", "explain find people",
        "search people \"river OR station\" limit 5 highlight", "search people 'it''s'", "search people river",
        "search people \"NEAR(a b, 3)\" limit 9223372036854775807", "search people '{name bio}: (a OR b*) NOT ^c'",
        "terms people", "terms people bio_text", "terms people bio_text ri limit 3", "terms people \"pre fix\" limit 0",
        "verify", "verify people", "reindex people", "reindex people by_age", "salvage", "salvage q",
        "changes", "changes since 5 limit 10", "changes since 9223372036854775807 limit 1",
        "# a comment", "", "   ",
        "get (\"a\", 1, -2.5, true, null)", "put k some value", "put (\"k\") 0x00ff",
        "scan --prefix p --limit 10 --reverse", "scan --from a --to z --keys-only --count", "delrange --prefix x",
        "size a z", "dump out.txt", "load in.txt", "insert people {\"id\": 1, \"a\": [1, 2.5, \"x\", {\"b\": null}]}",
        "upsert people {\"id\": \"x\"}", "import people file.jsonl",
        "find people where tags[] in [1, 2, 3] and a.b between 1 and 9223372036854775807",
        "count people where age != 3", "changes since 5 limit 9223372036854775807"
    ]

    static let dictionary: [String] =
        ShellCommand.names + [
            " ", "  ", "\t", "--from", "--to", "--reverse", "--limit", "--keys-only", "--count", "--bogus", "-", "--",
            " where ", " and ", " order by ", " asc", " desc", " limit ", " offset ", " in ", " prefix ", " since ",
            " highlight",
            " load ", " on", " off", "explain find ", "=", "==", "!=", "<", "<=", ">", ">=", "=>",
            "true", "false", "null", "nil", "0x", "0xZZ", "0x0", "0x00ff", "\"", "'", "''", "\\", "\\x", "\\xZ", "\\x4",
            "\\n", "\\0", "\\u",
            "(", ")", "()", "(,)", "(1,)", ",", "[", "]", "{", "}", "{}", "[]", ":", "\"a\": ", "\"\\ud800\"",
            "\"\\u00", "a.b", "tags[]",
            "a..b", "[]x", ".", "#", "people", "nobody", "by_age", "bio_text", "é", "\u{0}", "\u{2028}", "\r\n", "\n"
        ] + FuzzMutator.numbers

    static func plan(_ r: inout FuzzRandom) -> FuzzPlan {
        FuzzPlan(
            mutator: FuzzMutator(corpus: lines.map { Array($0.utf8) }, dictionary: dictionary.map { Array($0.utf8) }),
            fresh: { r in Array(freshLine(&r).utf8) },
            valid: 10,
            deep: { r in
                switch r.below(5) {
                case 0:
                    return Array("get ".utf8)
                        + fuzzNest("(", "1", ")", fuzzDepth(&r, limit: Tuple.maximumNestingDepth + 1))
                case 1:
                    return Array("put (\"k\", ".utf8)
                        + fuzzNest("(", "\"v\"", ")", fuzzDepth(&r, limit: Tuple.maximumNestingDepth)) + [0x29]
                case 2:
                    return Array("insert people {\"id\": 1, \"a\": ".utf8)
                        + fuzzNest("[", "1", "]", fuzzDepth(&r, limit: JSONValue.maximumDepth - 1)) + [0x7D]
                case 3:
                    return Array("find people where a = ".utf8)
                        + fuzzNest(
                            "{\"a\":", "1", "}", fuzzDepth(&r, limit: JSONValue.maximumDepth), unclosed: r.chance(20))
                default:
                    return Array("search people \"".utf8)
                        + fuzzNest("(", "a", ")", fuzzDepth(&r, limit: TextQuery.maximumNesting)) + [0x22]
                }
            },
            alphabet: FuzzPlan.textAlphabet)
    }

    /// A command line from templates: `K` a key literal, `J` a JSON value, `N` a number,
    /// `W` a word, `F` a field path, `O` an operator, `Q` a quoted query.
    static func freshLine(_ r: inout FuzzRandom) -> String {
        let template = r.pick([
            "get K", "put K K", "put K W W", "del K", "scan K --from K --to K --limit N",
            "scan --reverse --keys-only --count --limit N",
            "delrange K --limit N", "size --from K --to K", "compact --to K", "property W", "dump W", "load W",
            "keyspaces load W",
            "sync W", "help W", "schema load W", "indexes W", "insert W J", "upsert W J", "doc W J", "remove W J",
            "import W W",
            "export W W", "find W where F O J and F O J order by F desc limit N offset N",
            "find W where F in (J, J, J)",
            "find W where F prefix J", "count W where F O J", "explain find W where F O J order by F asc",
            "search W Q limit N highlight",
            "terms W W W limit N", "verify W", "reindex W W", "salvage W", "changes since N limit N"
        ])
        var out = ""
        for c in template {
            switch c {
            case "K": out += key(&r, depth: 0)
            case "J": out += json(&r)
            case "N": out += r.chance(70) ? String(r.below(100)) : r.pick(FuzzMutator.numbers)
            case "W":
                out += r.pick(["people", "by_age", "bio_text", "x.jsonl", "\"a b\"", "on", "off", "find", "é", "W"])
            case "F": out += r.pick(["age", "name", "a.b", "tags[]", "a.b[].c", "x", "", "a..b", "[]"])
            case "O": out += r.pick(["=", "!=", "<", "<=", ">", ">=", "prefix", "in", "==", "~"])
            case "Q":
                out += r.pick(["\"river OR station\"", "'a b'", "river", "\"NEAR(a b, 3)\"", "\"col: x\"", "'\"'"])
            default: out.append(c)
            }
        }
        return out
    }

    static func key(_ r: inout FuzzRandom, depth: Int) -> String {
        switch r.below(depth < 3 ? 6 : 5) {
        case 0: return r.pick(["k", "a", "dep", "é", "x-y"])
        case 1: return r.pick(["\"k\"", "\"a\\x00\\xff\"", "\"\\n\\t\\r\\0\\\"\\\\\\'\"", "\"é\""])
        case 2: return r.pick(["0x", "0x00", "0xff00", "0XAB", "0x0"])
        case 3, 4:
            let elements = (0..<r.size(5)).map { _ -> String in
                r.chance(20)
                    ? key(&r, depth: depth + 1)
                    : r.pick(
                        ["\"s\"", "1", "-2.5", "true", "false", "null", "nil", "0xff", "1e10"] + FuzzMutator.numbers)
            }
            return "(" + elements.joined(separator: r.pick([", ", ",", " , "]))
                + (elements.count == 1 && r.bool() ? ",)" : ")")
        default: return "(" + key(&r, depth: depth + 1) + ")"
        }
    }

    static func json(_ r: inout FuzzRandom) -> String { String(decoding: FuzzJSON.value(&r, depth: 2), as: UTF8.self) }

    /// Parses the line. A `scan` or `delrange` gives its key range; the key of a `get`,
    /// `put` or `del` written as a tuple literal decodes as a tuple (the parser limits
    /// nesting to what the decoder reads back).
    static func check(_ bytes: [UInt8]) -> FuzzResult {
        let line = String(decoding: bytes, as: UTF8.self)
        let command: ShellCommand?
        do {
            command = try ShellCommand.parse(line)
        } catch {
            return FuzzResult.judge(error, kinds: nil, commandErrors: true)
        }
        if let options = command?.scanOptions { _ = options.range }
        if let key = command?.key {
            // The first argument, after the command's name and blanks.
            let text = Array(line.utf8)
            func blank(_ p: Int) -> Bool { text[p] == 0x20 || text[p] == 0x09 }
            var p = 0
            while p < text.count, blank(p) { p += 1 }
            while p < text.count, !blank(p) { p += 1 }
            while p < text.count, blank(p) { p += 1 }
            guard p < text.count, text[p] == UInt8(ascii: "(") else { return .accepted }
            do {
                let tuple = try Tuple(decoding: key)
                guard tuple.encoded == key else { return .failed("the tuple key \(tuple) re-encodes differently") }
            } catch {
                return .failed(
                    "the tuple key literal gives bytes the tuple decoder rejects: \(FuzzShow.escaped(String(describing: error)))"
                )
            }
        }
        return .accepted
    }
}
