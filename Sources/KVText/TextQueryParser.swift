import KVSupport

/// A parser for FTS5's grammar (ext/fts5/fts5parse.y):
///   expr     := or
///   or       := and ("OR" and)*
///   and      := not ("AND" not)*
///   not      := primary ("NOT" primary)*
///   primary  := "(" expr ")" | colset ":" "(" expr ")" | implicit
///   implicit := cnearset cnearset*          (juxtaposition: AND, tighter than operators)
///   cnearset := [colset ":"] nearset
///   nearset  := ["^"] phrase ("+" phrase)* | "NEAR" "(" phrase+ ["," number] ")"
///
/// It does not recurse: the groups open at the current token are an explicit stack (of
/// at most ``TextQuery/maximumNesting`` + 1), each holding its unfinished OR, AND, NOT
/// and juxtaposition lists. As in FTS5, a `colset : ( expr )` group is a whole primary:
/// it takes no part in a juxtaposition (`a col: (b)` and `col: (b) a` are errors).
package struct TextQueryParser {
    enum Token: Equatable {
        case word(String, Int)  // bareword or string (string flag), start
        case string(String, Int)
        case lparen(Int)
        case rparen(Int)
        case lbrace(Int)
        case rbrace(Int)
        case colon(Int)
        case comma(Int)
        case plus(Int)
        case star(Int)
        case caret(Int)
        case minus(Int)
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
    /// Whether a phrase with no tokens but a column filter was left out of an implicit AND
    /// (FTS5 has still parsed its filter, which `detail=none` refuses).
    var droppedColumnFilter = false
    var index = 0

    init(text: [UInt8], tokenizer: TextTokenizer, columns: [String]) {
        self.text = text
        self.tokenizer = tokenizer
        self.columns = columns
    }

    func error(_ message: String, at position: Int) -> KVDocsError {
        let near = String(decoding: text[min(position, text.count)...].prefix(20), as: UTF8.self)
        return KVDocsError(
            .invalidArgument,
            "fts5: syntax error at position \(position)" + (near.isEmpty ? " (end of query)" : " near \"\(near)\"")
                + ": \(message)")
    }

    mutating func lex() throws {
        var i = 0
        while i < text.count {
            let c = text[i]
            switch c {
            case 0x20, 0x09, 0x0A, 0x0D: i += 1
            case UInt8(ascii: "("):
                tokens.append(.lparen(i))
                i += 1
            case UInt8(ascii: ")"):
                tokens.append(.rparen(i))
                i += 1
            case UInt8(ascii: "{"):
                tokens.append(.lbrace(i))
                i += 1
            case UInt8(ascii: "}"):
                tokens.append(.rbrace(i))
                i += 1
            case UInt8(ascii: ":"):
                tokens.append(.colon(i))
                i += 1
            case UInt8(ascii: ","):
                tokens.append(.comma(i))
                i += 1
            case UInt8(ascii: "+"):
                tokens.append(.plus(i))
                i += 1
            case UInt8(ascii: "*"):
                tokens.append(.star(i))
                i += 1
            case UInt8(ascii: "^"):
                tokens.append(.caret(i))
                i += 1
            case UInt8(ascii: "-"):
                tokens.append(.minus(i))
                i += 1
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

    package static func isBareword(_ c: UInt8) -> Bool {
        c >= 0x80 || (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
            || c == UInt8(ascii: "_")
    }

    var current: Token { tokens[index] }

    func isKeyword(_ word: String) -> Bool {
        if case .word(let w, _) = current, w == word { return true }
        return false
    }

    /// A parsed operand with its depth (FTS5's `iHeight`).
    struct Node {
        var query: TextQuery
        var depth: Int
    }

    /// A group being parsed: the whole query, or one opened by "(".
    struct Group {
        /// The finished operands of the group's OR chain.
        var or: [Node] = []
        /// The finished operands of the current AND chain.
        var and: [Node] = []
        /// The current NOT chain: its first operand and the excluded ones.
        var base: Node?
        var excluded: [Node] = []
        /// The current juxtaposition chain.
        var implicit: [Node] = []
        /// The columns every phrase in the group is restricted to (this group's column
        /// filter intersected with the enclosing groups'), applied as phrases are parsed.
        var filter: TextQuery.ColumnFilter?
        /// `nil` for the whole query; for a group opened by "(" (with or without a column
        /// filter), what it is once closed: a whole operand, as in FTS5's grammar.
        var filtered: Bool?
    }

    /// Where the parser is in the grammar.
    enum State {
        /// At the start of a primary.
        case primary
        /// After a cnearset of a juxtaposition chain.
        case chain
        /// After a whole primary.
        case operand(Node)
    }

    mutating func parseQuery() throws -> TextQuery {
        try lex()
        var groups = [Group()]
        var state = State.primary
        while true {
            switch state {
            case .primary:
                if case .lparen = current {
                    try open(&groups, filter: groups[groups.count - 1].filter, filtered: false)
                    continue
                }
                guard startsNearset() else {
                    throw error(
                        isKeyword("AND") || isKeyword("OR") || isKeyword("NOT")
                            ? "an operator needs an expression before it" : "expected a term, a phrase or \"(\"",
                        at: current.position)
                }
                state = try parseCNearset(&groups)
            case .chain:
                if startsNearset() {
                    state = try parseCNearset(&groups)
                } else {
                    var chain = groups[groups.count - 1].implicit
                    groups[groups.count - 1].implicit = []
                    // As FTS5's implicit AND, a phrase with no tokens (`""`, or a trigram
                    // term of fewer than three characters) is left out of the chain, unless
                    // nothing else is in it: `"" night` is `night`.
                    if chain.count > 1 {
                        let kept = chain.filter { !$0.query.isEmpty }
                        if chain.contains(where: { $0.query.isEmpty && $0.query.hasColumnFilter }) {
                            droppedColumnFilter = true
                        }
                        chain = kept.isEmpty ? [chain[0]] : kept
                    }
                    state = .operand(try combine(chain, TextQuery.all))
                }
            case .operand(let node):
                // Taken out of the stack (not copied), so appending to its lists stays O(1).
                var group = groups.removeLast()
                if group.base == nil { group.base = node } else { group.excluded.append(node) }
                if isKeyword("NOT") {
                    index += 1
                    groups.append(group)
                    state = .primary
                    continue
                }
                if let base = group.base { group.and.append(try excluding(base, group.excluded)) }
                group.base = nil
                group.excluded = []
                if isKeyword("AND") {
                    index += 1
                    groups.append(group)
                    state = .primary
                    continue
                }
                group.or.append(try combine(group.and, TextQuery.all))
                group.and = []
                if isKeyword("OR") {
                    index += 1
                    groups.append(group)
                    state = .primary
                    continue
                }
                // The group's expression is complete: close it.
                let expression = try combine(group.or, TextQuery.any)
                guard group.filtered != nil else {
                    guard case .end = current else { throw error("unexpected token", at: current.position) }
                    return expression.query
                }
                guard case .rparen = current else { throw error("expected \")\"", at: current.position) }
                index += 1
                // `( expr )` and `colset : ( expr )` are whole operands (fts5parse.y: `expr ::=
                // colset COLON LP expr RP`), so an operator must follow: `col: (a) b` is an error.
                state = .operand(expression)
            }
        }
    }

    /// Opens a group at the current "(".
    /// - Throws: past ``TextQuery/maximumNesting`` levels.
    mutating func open(_ groups: inout [Group], filter: TextQuery.ColumnFilter?, filtered: Bool) throws {
        // groups[0] is the whole query, so groups.count - 1 parentheses are open.
        guard groups.count <= TextQuery.maximumNesting else {
            throw error("parentheses nested more than \(TextQuery.maximumNesting) levels deep", at: current.position)
        }
        groups.append(Group(filter: filter, filtered: filtered))
        index += 1
    }

    /// `[colset :] nearset`, appended to the juxtaposition chain (next: `.chain`), or
    /// `colset : (`, opening a group (next: `.primary`).
    mutating func parseCNearset(_ groups: inout [Group]) throws -> State {
        let enclosing = groups[groups.count - 1].filter
        let save = index
        if let own = try parseColumnFilter() {
            let filter = Self.combine(own, enclosing)
            if case .lparen = current {
                // FTS5's implicit AND joins only `[colset :] nearset`s (fts5parse.y: `exprlist
                // ::= exprlist cnearset`); `colset : ( expr )` is an expr, so `a col: (b)` is an
                // error there.
                guard groups[groups.count - 1].implicit.isEmpty else {
                    throw error(
                        "a column filter with \"(\" needs an operator before it (an implicit AND joins only phrases and NEAR groups)",
                        at: current.position)
                }
                try open(&groups, filter: filter, filtered: true)
                return .primary
            }
            guard startsNearsetBody() else { throw error("a column filter needs a phrase", at: current.position) }
            groups[groups.count - 1].implicit.append(Node(query: try parseNearset(filter: filter), depth: 0))
            return .chain
        }
        index = save
        groups[groups.count - 1].implicit.append(Node(query: try parseNearset(filter: enclosing), depth: 0))
        return .chain
    }

    /// One node of `operands` (made by `make`, which splices operands of its own kind),
    /// or the single operand itself.
    /// - Throws: when the node would be deeper than ``TextQuery/maximumDepth``.
    func combine(_ operands: [Node], _ make: ([TextQuery]) -> TextQuery) throws -> Node {
        if operands.count == 1 { return operands[0] }
        let query = make(operands.map(\.query))
        // A spliced operand's operands are one level shallower than it.
        let spliced: (TextQuery) -> Bool = { operand in
            switch (query, operand) {
            case (.and, .and), (.or, .or): return true
            default: return false
            }
        }
        let depth = 1 + (operands.map { spliced($0.query) ? $0.depth - 1 : $0.depth }.max() ?? 0)
        return try checked(Node(query: query, depth: depth))
    }

    /// `base NOT excluded…` (a NOT chain), or `base` alone.
    func excluding(_ base: Node, _ excluded: [Node]) throws -> Node {
        guard !excluded.isEmpty else { return base }
        let query = TextQuery.excluding(base.query, excluded.map(\.query))
        // A NOT base is merged into the new node, its operands one level shallower than it.
        var baseDepth = base.depth
        if case .not = base.query { baseDepth -= 1 }
        let depth = 1 + max(baseDepth, excluded.map(\.depth).max() ?? 0)
        return try checked(Node(query: query, depth: depth))
    }

    func checked(_ node: Node) throws -> Node {
        guard node.depth <= TextQuery.maximumDepth else {
            throw error(
                "the expression tree is too large (maximum depth \(TextQuery.maximumDepth))", at: current.position)
        }
        return node
    }

    /// Whether the current token can start a phrase group (for juxtaposition).
    func startsNearset() -> Bool {
        switch current {
        case .string, .lbrace, .minus, .caret: return true
        case .word(let w, _): return !["AND", "OR", "NOT"].contains(w)
        default: return false
        }
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
        if case .minus = current {
            excluded = true
            index += 1
        }
        var names: [(String, Int)] = []
        var braces = false
        switch current {
        case .lbrace:
            braces = true
            index += 1
            while true {
                switch current {
                case .word(let w, let p), .string(let w, let p):
                    names.append((w, p))
                    index += 1
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
                throw KVDocsError(
                    .invalidArgument,
                    "fts5: no such column: \(name) (at position \(position); columns: \(columns.joined(separator: ", ")))"
                )
            }
            named.insert(column)
        }
        return TextQuery.ColumnFilter(allowed: excluded ? Set(columns.indices).subtracting(named) : named)
    }

    /// `["^"] phrase ("+" phrase)*` or `NEAR(...)`, matching only in `filter`'s columns.
    mutating func parseNearset(filter: TextQuery.ColumnFilter?) throws -> TextQuery {
        if case .word("NEAR", _) = current, case .lparen = tokens[index + 1] {
            index += 2
            var phrases: [TextQuery.Phrase] = []
            var distance = 10
            while true {
                if case .rparen = current { break }
                if case .comma = current {
                    index += 1
                    guard case .word(let n, _) = current, !n.isEmpty, n.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 })
                    else {
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
            // As FTS5's nearsets, a phrase with no tokens is dropped when another remains.
            if phrases.count > 1 {
                let kept = phrases.filter { !$0.terms.isEmpty }
                phrases = kept.isEmpty ? [phrases[0]] : kept
            }
            if let filter { for i in phrases.indices { phrases[i].columns = filter } }
            return .near(phrases, distance: distance, columns: filter)
        }
        var initial = false
        if case .caret = current {
            initial = true
            index += 1
        }
        var phrase = try parsePhraseChain(allowCaret: false)
        phrase.initial = initial
        phrase.columns = filter
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

    /// The intersection of two column filters (`nil`: every column).
    static func combine(_ inner: TextQuery.ColumnFilter?, _ outer: TextQuery.ColumnFilter?) -> TextQuery.ColumnFilter? {
        guard let inner else { return outer }
        guard let outer else { return inner }
        return TextQuery.ColumnFilter(allowed: inner.allowed.intersection(outer.allowed))
    }
}
