import KVDocs

/// The FTS5 query parser: operators, NEAR groups, phrases, prefixes, `^`, column filters,
/// parentheses nested near the limits, with each tokenizer.
struct FuzzQueries: FuzzChecks {
    /// The errors the parser documents.
    static let documentedKinds: Set<String> = [KVDocsError.Kind.invalidArgument.rawValue]

    let tokenizers = [
        TextTokenizer(.unicode61), TextTokenizer(.porter), TextTokenizer(.trigram),
        TextTokenizer(.trigram, caseSensitive: true)
    ]

    /// Parses with a tokenizer `r` picks.
    func check(_ bytes: [UInt8], _ r: inout FuzzRandom) -> FuzzResult {
        Self.check(bytes, tokenizer: r.pick(tokenizers))
    }

    static let columns = ["name", "bio", "title"]

    static let queries = [
        "river", "river station", "river OR station", "river AND station", "river NOT station", "\"river station\"",
        "riv*",
        "\"riv\"*", "^river", "^\"river station\"", "name: river", "bio:river", "{name bio}: river", "{name}: (a OR b)",
        "-name: river",
        "- {name title}: river", "NEAR(river station)", "NEAR(river station, 3)", "NEAR(a b c, 0)",
        "NEAR(\"a b\" c*, 10)",
        "name: NEAR(a b)", "(a OR b) AND (c NOT d)", "a OR b OR c", "a AND b AND c", "a NOT b NOT c", "a + b", "a + b*",
        "\"a\" + \"b c\"",
        "(a)", "((a))", "a (b OR c)", "(a OR b) c", "title: (x y) z", "\"\"", "\"a \"\"quoted\"\" b\"", "café",
        "Straße", "İstanbul",
        "ﬁnd", "中文文本", "😀", "a_b 123 x9", "NEAR", "NEAR(", "OR", "AND b", "a NOT", "(", ")", "a:", ":", "{", "}", "*",
        "^", "+", "-",
        "running runner runs", "NEAR(a, 9223372036854775807)", "NEAR(a b, 99999999999999999999999)",
        "bio: river", "NEAR(a b c)", "\"a\" * b", "name:\"x y\"*"
    ]

    static let dictionary =
        [
            " ", "  ", "\t", "\n", " AND ", " OR ", " NOT ", "AND", "OR", "NOT", "and", "or", "not", "NEAR", "NEAR(",
            "near(",
            "(", ")", "{", "}", ":", ",", "*", "^", "+", "-", "\"", "\"\"", "name", "bio", "title", "nope", "name:",
            "bio:",
            "{name bio}:", "-name:", "-{title}:", "a", "river", "é", "e\u{301}", "ß", "ﬁ", "İ", "中文", "😀", "x*", "^x",
            "NEAR(a b, 3)", "(a OR b)", ", 3)", ", 0)", ", -1)", ", x)"
        ] + FuzzMutator.numbers

    static func plan(_ r: inout FuzzRandom) -> FuzzPlan {
        FuzzPlan(
            mutator: FuzzMutator(corpus: queries.map { Array($0.utf8) }, dictionary: dictionary.map { Array($0.utf8) }),
            fresh: { r in Array(expression(&r, depth: 0).utf8) },
            valid: 10,
            deep: { r in
                let n = fuzzDepth(&r, limit: TextQuery.maximumNesting)
                switch r.below(4) {
                case 0: return fuzzNest("(", "a", ")", n, unclosed: r.chance(10))
                case 1:
                    // Alternating operators: each level adds one to the expression's depth.
                    let ops = [" OR (", " AND (", " NOT ("]
                    return Array(
                        ((0..<n).map { "t\($0 % 7)\(ops[$0 % 3])" }.joined() + "z" + String(repeating: ")", count: n))
                            .utf8)
                case 2: return fuzzNest("name: (", "a", ")", n)
                default: return fuzzNest("(a OR ", "b", ")", n)
                }
            },
            alphabet: FuzzPlan.textAlphabet)
    }

    static func phrase(_ r: inout FuzzRandom) -> String {
        var p: String
        switch r.below(4) {
        case 0:
            p =
                "\""
                + (0..<r.size(4)).map { _ in r.pick(["a", "river", "b c", "\"\"", "é", "x-y", "OR"]) }.joined(
                    separator: " ") + "\""
        case 1:
            p =
                r.pick(["a", "b", "river", "station", "running", "café", "x_1", "中文", "AND", "and"]) + " + "
                + r.pick(["c", "d*", "\"e f\""])
        default: p = r.pick(["a", "b", "c", "river", "station", "running", "café", "x_1", "中文", "ﬁ", "İ", "123"])
        }
        if r.chance(20) { p += "*" }
        if r.chance(10) { p = "^" + p }
        return p
    }

    static func expression(_ r: inout FuzzRandom, depth: Int) -> String {
        var e: String
        switch r.below(depth < 4 ? 8 : 4) {
        case 0, 1: e = phrase(&r)
        case 2:
            e =
                "NEAR(" + (0..<(1 + r.size(4))).map { _ in phrase(&r) }.joined(separator: " ")
                + (r.bool() ? ", \(r.pick(["0", "3", "10", "9223372036854775808"]))" : "") + ")"
        case 3: e = (0..<(2 + r.size(3))).map { _ in phrase(&r) }.joined(separator: " ")
        case 4: e = "(" + expression(&r, depth: depth + 1) + ")"
        default:
            e =
                expression(&r, depth: depth + 1) + r.pick([" AND ", " OR ", " NOT ", " "])
                + expression(&r, depth: depth + 1)
        }
        if r.chance(15) {
            e =
                r.pick(["name: ", "bio:", "{name bio}: ", "-title: ", "{title}:", "nope: "])
                + (e.contains(" ") ? "(\(e))" : e)
        }
        return e
    }

    static func check(_ bytes: [UInt8], tokenizer: TextTokenizer) -> FuzzResult {
        do {
            let query = try TextQuery.parse(
                String(decoding: bytes, as: UTF8.self), tokenizer: tokenizer, columns: columns)
            var hasher = Hasher()
            query.hash(into: &hasher)
            _ = hasher.finalize()
            guard query == query else { return .failed("a parsed query is not equal to itself") }
            _ = query.phrases
            return .accepted
        } catch {
            return FuzzResult.judge(error, kinds: documentedKinds)
        }
    }
}
