/// A parsed full-text query in SQLite FTS5's syntax.
///
/// - Terms separated by spaces must all match (implicit AND); `AND`, `OR`, `NOT` (upper
///   case only; `and` is a term) and parentheses combine expressions. Precedence: NOT,
///   then AND, then OR; an implicit AND binds tighter than any explicit operator, and joins
///   only phrases (`(a OR b) c` is an error, as in FTS5).
/// - `"a phrase"` matches consecutive tokens; `""` inside quotes is a quote; `+` joins
///   phrases (`one + two` = `"one two"`); a trailing `*` makes the last token a prefix.
/// - `column: phrase`, `{col1 col2}: phrase`, `- column: phrase` (every other column),
///   `column: (expression)` restrict matching to columns (names case-insensitive).
/// - `^phrase` matches only at the start of a column; `NEAR(a b, N)` matches phrases
///   within N tokens of each other (N defaults to 10).
/// - Barewords are runs of `A–Z a–z 0–9 _` and bytes ≥ 0x80; any other character outside
///   a string is a syntax error naming its position.
public indirect enum TextQuery: Sendable, Hashable {
    case phrase(Phrase)
    case near([Phrase], distance: Int, columns: ColumnFilter?)
    case and(TextQuery, TextQuery)
    case or(TextQuery, TextQuery)
    case not(TextQuery, TextQuery)

    /// A sequence of terms that must appear consecutively.
    public struct Phrase: Sendable, Hashable {
        /// The folded terms; empty for a phrase with no tokens, which matches nothing.
        public var terms: [String]
        /// Whether the last term is a prefix.
        public var prefix: Bool
        /// Whether the phrase must start a column.
        public var initial: Bool
        public var columns: ColumnFilter?
    }

    /// The columns (by index in the text index's field list) a phrase may match in.
    public struct ColumnFilter: Sendable, Hashable {
        public var allowed: Set<Int>
    }

    /// Every phrase of the query, in order (BM25 sums over them).
    public var phrases: [Phrase] {
        switch self {
        case .phrase(let p): return [p]
        case .near(let ps, _, _): return ps
        case .and(let a, let b), .or(let a, let b), .not(let a, let b): return a.phrases + b.phrases
        }
    }
}

extension TextQuery {
    /// Parses `text`, tokenizing its strings and barewords with `tokenizer`.
    /// - Throws: `.invalidArgument` with "syntax error near …" / "fts5: …" style messages
    ///   naming the byte position, or naming an unknown column.
    public static func parse(_ text: String, tokenizer: TextTokenizer, columns: [String]) throws -> TextQuery {
        var parser = TextQueryParser(text: Array(text.utf8), tokenizer: tokenizer, columns: columns)
        return try parser.parseQuery()
    }
}

/// A recursive-descent parser for FTS5's grammar (ext/fts5/fts5parse.y):
///   expr     := or
///   or       := and ("OR" and)*
///   and      := not ("AND" not)*
///   not      := primary ("NOT" primary)*
///   primary  := "(" expr ")" | colset ":" "(" expr ")" | implicit
///   implicit := cnearset cnearset*          (juxtaposition: AND, tighter than operators)
///   cnearset := [colset ":"] nearset
///   nearset  := ["^"] phrase ("+" phrase)* | "NEAR" "(" phrase+ ["," number] ")"
struct TextQueryParser {
    enum Token: Equatable {
        case word(String, Int)          // bareword or string (string flag), start
        case string(String, Int)
        case lparen(Int), rparen(Int), lbrace(Int), rbrace(Int), colon(Int), comma(Int)
        case plus(Int), star(Int), caret(Int), minus(Int)
        case end(Int)

        var position: Int {
            switch self {
            case .word(_, let p), .string(_, let p), .lparen(let p), .rparen(let p), .lbrace(let p), .rbrace(let p),
                 .colon(let p), .comma(let p), .plus(let p), .star(let p), .caret(let p), .minus(let p), .end(let p):
                return p
            }
        }
    }

    let text: [UInt8]
    let tokenizer: TextTokenizer
    let columns: [String]
    var tokens: [Token] = []
    var index = 0

    init(text: [UInt8], tokenizer: TextTokenizer, columns: [String]) {
        self.text = text
        self.tokenizer = tokenizer
        self.columns = columns
    }

    func error(_ message: String, at position: Int) -> KVDocsError {
        let near = String(decoding: text[min(position, text.count)...].prefix(20), as: UTF8.self)
        return KVDocsError(.invalidArgument, "fts5: syntax error at position \(position)" + (near.isEmpty ? " (end of query)" : " near \"\(near)\"") + ": \(message)")
    }

    mutating func lex() throws {
        var i = 0
        while i < text.count {
            let c = text[i]
            switch c {
            case 0x20, 0x09, 0x0A, 0x0D: i += 1
            case UInt8(ascii: "("): tokens.append(.lparen(i)); i += 1
            case UInt8(ascii: ")"): tokens.append(.rparen(i)); i += 1
            case UInt8(ascii: "{"): tokens.append(.lbrace(i)); i += 1
            case UInt8(ascii: "}"): tokens.append(.rbrace(i)); i += 1
            case UInt8(ascii: ":"): tokens.append(.colon(i)); i += 1
            case UInt8(ascii: ","): tokens.append(.comma(i)); i += 1
            case UInt8(ascii: "+"): tokens.append(.plus(i)); i += 1
            case UInt8(ascii: "*"): tokens.append(.star(i)); i += 1
            case UInt8(ascii: "^"): tokens.append(.caret(i)); i += 1
            case UInt8(ascii: "-"): tokens.append(.minus(i)); i += 1
            case UInt8(ascii: "\""):
                let start = i
                var value: [UInt8] = []
                i += 1
                var closed = false
                while i < text.count {
                    if text[i] == UInt8(ascii: "\"") {
                        if i + 1 < text.count && text[i + 1] == UInt8(ascii: "\"") {
                            value.append(UInt8(ascii: "\""))
                            i += 2
                            continue
                        }
                        closed = true
                        i += 1
                        break
                    }
                    value.append(text[i])
                    i += 1
                }
                guard closed else { throw error("unterminated string", at: start) }
                tokens.append(.string(String(decoding: value, as: UTF8.self), start))
            default:
                guard Self.isBareword(c) else { throw error("unexpected character", at: i) }
                let start = i
                while i < text.count && Self.isBareword(text[i]) { i += 1 }
                tokens.append(.word(String(decoding: text[start..<i], as: UTF8.self), start))
            }
        }
        tokens.append(.end(text.count))
    }

    static func isBareword(_ c: UInt8) -> Bool {
        c >= 0x80 || (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == UInt8(ascii: "_")
    }

    var current: Token { tokens[index] }

    func isKeyword(_ word: String) -> Bool {
        if case .word(let w, _) = current, w == word { return true }
        return false
    }

    mutating func parseQuery() throws -> TextQuery {
        try lex()
        let query = try parseOr()
        guard case .end = current else { throw error("unexpected token", at: current.position) }
        return query
    }

    mutating func parseOr() throws -> TextQuery {
        var left = try parseAnd()
        while isKeyword("OR") {
            index += 1
            left = .or(left, try parseAnd())
        }
        return left
    }

    mutating func parseAnd() throws -> TextQuery {
        var left = try parseNot()
        while isKeyword("AND") {
            index += 1
            left = .and(left, try parseNot())
        }
        return left
    }

    mutating func parseNot() throws -> TextQuery {
        var left = try parsePrimary()
        while isKeyword("NOT") {
            index += 1
            left = .not(left, try parsePrimary())
        }
        return left
    }

    /// Whether the current token can start a phrase group (for juxtaposition).
    func startsNearset() -> Bool {
        switch current {
        case .string, .lbrace, .minus, .caret: return true
        case .word(let w, _): return !["AND", "OR", "NOT"].contains(w)
        default: return false
        }
    }

    mutating func parsePrimary() throws -> TextQuery {
        if case .lparen = current {
            index += 1
            let inner = try parseOr()
            guard case .rparen = current else { throw error("expected \")\"", at: current.position) }
            index += 1
            return inner
        }
        guard startsNearset() else {
            throw error(isKeyword("AND") || isKeyword("OR") || isKeyword("NOT") ? "an operator needs an expression before it" : "expected a term, a phrase or \"(\"", at: current.position)
        }
        var left = try parseCNearset()
        while startsNearset() {
            left = .and(left, try parseCNearset())
        }
        return left
    }

    /// `[colset :] nearset`, or `colset : ( expr )`.
    mutating func parseCNearset() throws -> TextQuery {
        let save = index
        if let filter = try parseColumnFilter() {
            if case .lparen = current {
                index += 1
                let inner = try parseOr()
                guard case .rparen = current else { throw error("expected \")\"", at: current.position) }
                index += 1
                return Self.restrict(inner, filter)
            }
            guard startsNearsetBody() else { throw error("a column filter needs a phrase", at: current.position) }
            return Self.restrict(try parseNearset(), filter)
        }
        index = save
        return try parseNearset()
    }

    func startsNearsetBody() -> Bool {
        switch current {
        case .string, .caret: return true
        case .word(let w, _): return !["AND", "OR", "NOT"].contains(w)
        default: return false
        }
    }

    /// A column filter followed by ":", or nil (position unchanged) when there is none.
    mutating func parseColumnFilter() throws -> TextQuery.ColumnFilter? {
        let start = index
        var excluded = false
        if case .minus = current { excluded = true; index += 1 }
        var names: [(String, Int)] = []
        var braces = false
        switch current {
        case .lbrace:
            braces = true
            index += 1
            while true {
                switch current {
                case .word(let w, let p), .string(let w, let p): names.append((w, p)); index += 1
                case .rbrace: index += 1
                default: throw error("expected a column name or \"}\"", at: current.position)
                }
                if case .rbrace = tokens[index - 1] { break }
            }
        case .word(let w, let p), .string(let w, let p):
            index += 1
            names.append((w, p))
        default:
            if excluded { throw error("expected a column name after \"-\"", at: current.position) }
            return nil
        }
        guard case .colon = current else {
            if excluded || braces {
                throw error("expected \":\" after a column filter", at: current.position)
            }
            index = start
            return nil
        }
        index += 1
        var named = Set<Int>()
        for (name, position) in names {
            guard let column = columns.firstIndex(where: { $0.lowercased() == name.lowercased() }) else {
                throw KVDocsError(.invalidArgument, "fts5: no such column: \(name) (at position \(position); columns: \(columns.joined(separator: ", ")))")
            }
            named.insert(column)
        }
        return TextQuery.ColumnFilter(allowed: excluded ? Set(columns.indices).subtracting(named) : named)
    }

    /// `["^"] phrase ("+" phrase)*` or `NEAR(...)`.
    mutating func parseNearset() throws -> TextQuery {
        if case .word("NEAR", _) = current, case .lparen = tokens[index + 1] {
            index += 2
            var phrases: [TextQuery.Phrase] = []
            var distance = 10
            while true {
                if case .rparen = current { break }
                if case .comma = current {
                    index += 1
                    guard case .word(let n, _) = current, !n.isEmpty, n.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                        throw error("expected a number after \",\" in NEAR", at: current.position)
                    }
                    // Digits past Int.max saturate: a distance beyond any column is no bound.
                    distance = Int(n) ?? .max
                    index += 1
                    guard case .rparen = current else { throw error("expected \")\"", at: current.position) }
                    break
                }
                phrases.append(try parsePhraseChain(allowCaret: false))
            }
            guard !phrases.isEmpty else { throw error("NEAR needs at least one phrase", at: current.position) }
            index += 1
            return .near(phrases, distance: distance, columns: nil)
        }
        var initial = false
        if case .caret = current { initial = true; index += 1 }
        var phrase = try parsePhraseChain(allowCaret: false)
        phrase.initial = initial
        return .phrase(phrase)
    }

    /// One phrase, possibly several joined with "+".
    mutating func parsePhraseChain(allowCaret: Bool) throws -> TextQuery.Phrase {
        var terms: [String] = []
        var prefix = false
        while true {
            let text: String
            switch current {
            case .word(let w, _), .string(let w, _): text = w
            default: throw error("expected a term or a phrase", at: current.position)
            }
            index += 1
            if prefix { throw error("\"*\" must end a phrase", at: current.position) }
            terms += tokenizer.terms(text)
            if case .star = current {
                prefix = true
                index += 1
            }
            guard case .plus = current else { break }
            index += 1
        }
        return TextQuery.Phrase(terms: terms, prefix: prefix && !terms.isEmpty, initial: false, columns: nil)
    }

    /// Applies a column filter to every phrase inside (an inner filter intersects it).
    static func restrict(_ q: TextQuery, _ filter: TextQuery.ColumnFilter) -> TextQuery {
        func apply(_ p: TextQuery.Phrase) -> TextQuery.Phrase {
            var p = p
            p.columns = combine(p.columns, filter)
            return p
        }
        switch q {
        case .phrase(let p): return .phrase(apply(p))
        case .near(let ps, let d, let c): return .near(ps.map(apply), distance: d, columns: combine(c, filter))
        case .and(let a, let b): return .and(restrict(a, filter), restrict(b, filter))
        case .or(let a, let b): return .or(restrict(a, filter), restrict(b, filter))
        case .not(let a, let b): return .not(restrict(a, filter), restrict(b, filter))
        }
    }

    /// Nested filters: a phrase may match only in columns both allow.
    static func combine(_ inner: TextQuery.ColumnFilter?, _ outer: TextQuery.ColumnFilter) -> TextQuery.ColumnFilter {
        guard let inner else { return outer }
        return TextQuery.ColumnFilter(allowed: inner.allowed.intersection(outer.allowed))
    }
}
