import KVSupport

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
///   within N tokens of each other (N defaults to 10; digits past `Int.max` mean no bound).
/// - Barewords are runs of `A–Z a–z 0–9 _` and bytes ≥ 0x80; any other character outside
///   a string is a syntax error naming its position.
///
/// **Size limits.** A chain of one operator is one node with a list of operands, as in
/// FTS5 (`a OR b OR c`, `a OR (b OR c)` and `a b c` each make one node), so queries of
/// any number of terms (100,000 `OR`s, say) parse and run. Two things are bounded, and
/// past either the query is an `.invalidArgument` error naming the position:
/// - parentheses (including `column: (…)`) nest at most ``maximumNesting`` (256) levels;
/// - the expression tree is at most ``maximumDepth`` (256) levels deep, counted as FTS5
///   counts it (SQLITE_FTS5_MAX_EXPR_DEPTH): a phrase or NEAR group is depth 0, and each
///   AND, OR or NOT node is one more than its deepest operand, so only groups of different
///   operators nested in one another add up. (Unlike FTS5, a chain of NOTs is one node.)
///
/// Parsing, searching, comparing and hashing walk the tree with explicit stacks; only
/// releasing it recurses, once per level of depth. So a query at both limits runs in a
/// debug build on a thread with a 512 KiB stack (the default for a secondary thread on
/// Apple platforms; the tests run it on 512 KiB, and it also runs on 128 KiB). For
/// reference, SQLite 3.40's FTS5 parser fails sooner: at 97 levels of plain parentheses,
/// and at 14 with an OR, an AND and a NOT inside each ("fts5: parser stack overflow").
public enum TextQuery: Sendable {
    /// One phrase: its terms appear consecutively (`"a b"`, `a + b`, or a single term).
    case phrase(Phrase)
    /// `NEAR(p1 p2 …, distance)`: every phrase matches in one column, with at most
    /// `distance` tokens between them (10 by default), optionally only in `columns`.
    case near([Phrase], distance: Int, columns: ColumnFilter?)
    /// Every operand matches (`a AND b AND c`, or `a b c`); two or more operands.
    case and([TextQuery])
    /// Some operand matches (`a OR b OR c`); two or more operands.
    case or([TextQuery])
    /// The first operand matches and none of the others does (`a NOT b NOT c`).
    indirect case not(TextQuery, [TextQuery])

    /// The most levels of parentheses a query may nest.
    public static let maximumNesting = 256
    /// The deepest expression tree a query may make (FTS5's SQLITE_FTS5_MAX_EXPR_DEPTH).
    public static let maximumDepth = 256

    /// A sequence of terms that must appear consecutively.
    public struct Phrase: Sendable, Hashable {
        /// The folded terms; empty for a phrase with no tokens, which matches nothing.
        public var terms: [String]
        /// Whether the last term is a prefix.
        public var prefix: Bool
        /// Whether the phrase must start a column.
        public var initial: Bool
        /// The columns the phrase may match in; `nil` for every column.
        public var columns: ColumnFilter?
    }

    /// The columns (by index in the text index's field list) a phrase may match in.
    public struct ColumnFilter: Sendable, Hashable {
        /// The indexes, in the text index's field list, of the columns allowed.
        public var allowed: Set<Int>
    }

    /// Whether this is a phrase with no tokens, or a NEAR group of them: a query that
    /// matches nothing (FTS5's EOF node).
    var isEmpty: Bool {
        switch self {
        case .phrase(let p): return p.terms.isEmpty
        case .near(let ps, _, _): return ps.allSatisfy { $0.terms.isEmpty }
        case .and, .or, .not: return false
        }
    }

    /// Whether this is a phrase or NEAR group restricted to some columns.
    var hasColumnFilter: Bool {
        switch self {
        case .phrase(let p): return p.columns != nil
        case .near(let ps, _, let columns): return columns != nil || ps.contains { $0.columns != nil }
        case .and, .or, .not: return false
        }
    }

    /// Every phrase of the query, in order (BM25 sums over them).
    public var phrases: [Phrase] {
        preorder.flatMap { item -> [Phrase] in
            switch item {
            case .phrase(let p): return [p]
            case .near(let ps, _, _): return ps
            case .and, .or, .not: return []
            }
        }
    }

    /// A node of the tree without its operands: pre-order lists of these describe a query
    /// completely (each operator says how many operands follow it).
    enum Item: Hashable {
        case phrase(Phrase)
        case near([Phrase], distance: Int, columns: ColumnFilter?)
        case and(Int), or(Int), not(excluded: Int)
    }

    /// The nodes in pre-order (operands left to right), gathered without recursion.
    var preorder: [Item] {
        var items: [Item] = []
        var pending: [TextQuery] = [self]
        while let q = pending.popLast() {
            switch q {
            case .phrase(let p): items.append(.phrase(p))
            case .near(let ps, let d, let c): items.append(.near(ps, distance: d, columns: c))
            case .and(let operands):
                items.append(.and(operands.count))
                pending += operands.reversed()
            case .or(let operands):
                items.append(.or(operands.count))
                pending += operands.reversed()
            case .not(let base, let excluded):
                items.append(.not(excluded: excluded.count))
                pending += excluded.reversed()
                pending.append(base)
            }
        }
        return items
    }

    /// `.and` of the operands, an operand that is itself an `.and` spliced in (AND is
    /// associative, and splicing keeps the phrases' order); one operand alone as itself.
    static func all(_ operands: [TextQuery]) -> TextQuery {
        if operands.count == 1 { return operands[0] }
        var flat: [TextQuery] = []
        for q in operands {
            if case .and(let inner) = q { flat += inner } else { flat.append(q) }
        }
        return .and(flat)
    }

    /// `.or` of the operands, nested `.or`s spliced in; one operand alone as itself.
    static func any(_ operands: [TextQuery]) -> TextQuery {
        if operands.count == 1 { return operands[0] }
        var flat: [TextQuery] = []
        for q in operands {
            if case .or(let inner) = q { flat += inner } else { flat.append(q) }
        }
        return .or(flat)
    }

    /// `base NOT excluded[0] NOT excluded[1] …`; a base that is itself a NOT keeps its
    /// exclusions first (`(a NOT b) NOT c` is `a NOT b NOT c`).
    static func excluding(_ base: TextQuery, _ excluded: [TextQuery]) -> TextQuery {
        guard !excluded.isEmpty else { return base }
        if case .not(let inner, let earlier) = base { return .not(inner, earlier + excluded) }
        return .not(base, excluded)
    }
}

// Written out (through the pre-order list) so that comparing and hashing do not recurse.
extension TextQuery: Hashable {
    public static func == (lhs: TextQuery, rhs: TextQuery) -> Bool { lhs.preorder == rhs.preorder }
    public func hash(into hasher: inout Hasher) { hasher.combine(preorder) }
}

extension TextQuery {
    /// Parses `text`, tokenizing its strings and barewords with `tokenizer`.
    /// - Throws: `.invalidArgument` with "syntax error near …" / "fts5: …" style messages
    ///   naming the byte position, or naming an unknown column; past the size limits.
    public static func parse(_ text: String, tokenizer: TextTokenizer, columns: [String]) throws -> TextQuery {
        var parser = TextQueryParser(text: Array(text.utf8), tokenizer: tokenizer, columns: columns)
        return try parser.parseQuery()
    }
}
