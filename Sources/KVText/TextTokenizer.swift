/// A token of text: its folded form, its position among the column's tokens, and the
/// UTF-8 byte range it came from (for highlights and snippets).
public struct TextToken: Sendable, Hashable {
    /// The folded (and, with `porter`, stemmed) form of the token: what the index stores and queries match.
    public let term: String
    /// The token's position among the column's tokens, from 0.
    public let position: Int
    /// The UTF-8 byte offset in the text where the token starts.
    public let start: Int
    /// The UTF-8 byte offset in the text just past the token's end.
    public let end: Int
}

/// Splits text into terms the way SQLite FTS5's tokenizers do.
///
/// - `unicode61` (the default): tokens are maximal runs of token characters (Unicode
///   letters, numbers and private-use characters as of SQLite's Unicode 6.1 tables, and
///   code points those tables lack); combining diacritics continue a token but cannot start
///   one; tokens are case-folded and diacritics are removed from letters that carry one.
/// - `porter`: `unicode61`, then the Porter stemmer on each token of 3 to 64 bytes.
/// - `trigram`: every window of three consecutive characters (code points, spaces and
///   punctuation included) is a token, so queries match substrings in any script; case is
///   folded (diacritics kept) unless ``caseSensitive``. Text of fewer than three characters
///   has no tokens, so a query term or prefix of fewer than three characters matches
///   nothing, as in FTS5.
///
/// The character tables are derived from SQLite's own tokenizers
/// (`scripts/generate-unicode61-tables.py`, `scripts/generate-trigram-folds.py`).
public struct TextTokenizer: Sendable {
    /// The tokenizers FTS5 offers that KVDocs implements.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// FTS5's `unicode61`: case-folded, diacritics removed, no stemming.
        case unicode61
        /// FTS5's `porter`: `unicode61`, then the Porter stemmer on each token of 3 to 64 bytes.
        case porter
        /// FTS5's `trigram`: every three consecutive characters, for substring matching.
        case trigram
    }

    /// Which of FTS5's tokenizers this is.
    public let kind: Kind
    /// For `trigram`: whether case is kept (FTS5's `case_sensitive 1`); the other kinds
    /// always fold case.
    public let caseSensitive: Bool

    /// A tokenizer of `kind`.
    /// - Parameters:
    ///   - kind: `unicode61` (the default), `porter` or `trigram`.
    ///   - caseSensitive: for `trigram`, keep case instead of folding it; ignored by the others.
    public init(_ kind: Kind = .unicode61, caseSensitive: Bool = false) {
        self.kind = kind
        self.caseSensitive = kind == .trigram && caseSensitive
    }

    /// The tokens of `text`.
    public func tokens(_ text: String) -> [TextToken] {
        if kind == .trigram { return trigrams(text) }
        var result: [TextToken] = []
        var term: [UInt8] = []
        var start = -1
        var end = 0
        var offset = 0
        func finish() {
            guard start >= 0 else { return }
            let bytes = kind == .porter ? PorterStemmer.stem(term) : term
            result.append(
                TextToken(term: String(decoding: bytes, as: UTF8.self), position: result.count, start: start, end: end))
            term.removeAll(keepingCapacity: true)
            start = -1
        }
        for scalar in text.unicodeScalars {
            let width = UTF8.width(scalar)
            let value = scalar.value
            let cls: UInt8
            if value < 0x80 {
                cls = Self.isASCIITokenChar(value) ? 1 : 0
            } else {
                cls = Unicode61.shared.characterClass(value)
            }
            if cls == 1 || (cls == 2 && start >= 0) {
                if start < 0 { start = offset }
                if value < 0x80 {
                    term.append(UInt8(value >= 0x41 && value <= 0x5A ? value + 32 : value))
                } else {
                    let folded = Unicode61.shared.fold(value)
                    if folded != 0, let s = Unicode.Scalar(folded) { term.append(contentsOf: String(s).utf8) }
                }
                end = offset + width
            } else {
                finish()
            }
            offset += width
        }
        finish()
        return result
    }

    /// The trigram tokens of `text`: one per window of three characters.
    private func trigrams(_ text: String) -> [TextToken] {
        var result: [TextToken] = []
        // The last three characters: their folded UTF-8 and where each starts.
        var window: [(bytes: [UInt8], start: Int)] = []
        var offset = 0
        var term: [UInt8] = []
        for scalar in text.unicodeScalars {
            var value = scalar.value
            if !caseSensitive {
                if value >= 0x41 && value <= 0x5A {
                    value += 32
                } else if value >= 0x80 {
                    value = TrigramFolds.shared.fold(value)
                }
            }
            let folded = Unicode.Scalar(value) ?? scalar
            window.append((Array(String(folded).utf8), offset))
            offset += UTF8.width(scalar)
            if window.count > 3 { window.removeFirst() }
            if window.count == 3 {
                term.removeAll(keepingCapacity: true)
                for c in window { term += c.bytes }
                result.append(
                    TextToken(
                        term: String(decoding: term, as: UTF8.self), position: result.count, start: window[0].start,
                        end: offset))
            }
        }
        return result
    }

    /// The terms of `text`, folded (and stemmed with `porter`).
    public func terms(_ text: String) -> [String] { tokens(text).map(\.term) }

    @inline(__always)
    static func isASCIITokenChar(_ v: UInt32) -> Bool {
        (v >= 0x30 && v <= 0x39) || (v >= 0x41 && v <= 0x5A) || (v >= 0x61 && v <= 0x7A)
    }
}

/// The parsed character tables (see `Unicode61Tables`).
final class Unicode61: Sendable {
    static let shared = Unicode61()

    private let runStarts: [UInt32]
    private let runClasses: [UInt8]
    private let foldMap: [UInt32: UInt32]

    private init() {
        var starts: [UInt32] = []
        var classes: [UInt8] = []
        for item in Unicode61Tables.classRuns.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
            let parts = item.split(separator: ":")
            guard parts.count == 2, let cp = UInt32(parts[0], radix: 16), let c = UInt8(parts[1]) else { continue }
            starts.append(cp)
            classes.append(c)
        }
        runStarts = starts
        runClasses = classes
        foldMap = Self.foldPairs(Unicode61Tables.folds)
    }

    /// 0: separator, 1: token character, 2: continues a token only.
    func characterClass(_ cp: UInt32) -> UInt8 {
        // The last run starting at or before cp.
        var lo = 0, hi = runStarts.count - 1
        guard hi >= 0, cp >= runStarts[0] else { return 0 }
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if runStarts[mid] <= cp { lo = mid } else { hi = mid - 1 }
        }
        return runClasses[lo]
    }

    /// A generated fold table ("from:to" in hexadecimal, separated by spaces or lines).
    static func foldPairs(_ table: String) -> [UInt32: UInt32] {
        var folds: [UInt32: UInt32] = [:]
        for item in table.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
            let parts = item.split(separator: ":")
            guard parts.count == 2, let from = UInt32(parts[0], radix: 16), let to = UInt32(parts[1], radix: 16) else {
                continue
            }
            folds[from] = to
        }
        return folds
    }

    /// The folded code point; 0 when the character is dropped.
    func fold(_ cp: UInt32) -> UInt32 { foldMap[cp] ?? cp }
}

/// The trigram tokenizer's case folding (see `TrigramFoldTable`).
final class TrigramFolds: Sendable {
    static let shared = TrigramFolds()
    private let foldMap: [UInt32: UInt32]

    private init() { foldMap = Unicode61.foldPairs(TrigramFoldTable.folds) }

    /// The folded code point.
    func fold(_ cp: UInt32) -> UInt32 { foldMap[cp] ?? cp }
}

/// What a text index records of each occurrence (FTS5's `detail` option). Scores,
/// highlights and snippets are the same in every mode; the modes differ in size and in
/// the queries they allow, as in FTS5.
public enum TextDetail: String, Sendable, Hashable, CaseIterable {
    /// Columns and token positions: every query works (the default).
    case full
    /// Columns without positions: phrases of several terms, `^` and `NEAR` are errors
    /// ("phrase queries are not supported (detail!=full)").
    case column
    /// Neither: in addition, column filters are errors ("column queries are not
    /// supported (detail=none)"). Terms, prefixes and boolean queries work.
    case none
}
