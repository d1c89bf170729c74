import KVSupport

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
        var result: [TextToken] = []
        forEachToken(in: text) { term, position, start, end in
            result.append(
                TextToken(term: String(decoding: term, as: UTF8.self), position: position, start: start, end: end))
        }
        return result
    }

    /// Calls `body` with each token of `text` in order: its term's UTF-8 bytes (valid only
    /// during the call), its position among the tokens, and the UTF-8 byte range it came
    /// from. Reads the text's UTF-8 in place and makes no `String` per token: what
    /// ``tokens(_:)`` returns, without the tokens.
    package func forEachToken(
        in text: String, _ body: (_ term: UnsafeBufferPointer<UInt8>, _ position: Int, _ start: Int, _ end: Int) -> Void
    ) {
        var text = text
        text.withUTF8 { utf8 in
            if kind == .trigram {
                trigrams(utf8, body)
            } else {
                words(utf8, body)
            }
        }
    }

    /// The code point of the valid UTF-8 sequence starting at `i`, and its width.
    @inline(__always)
    private static func scalar(_ utf8: UnsafeBufferPointer<UInt8>, at i: Int) -> (value: UInt32, width: Int) {
        let b0 = UInt32(utf8[i])
        if b0 < 0x80 { return (b0, 1) }
        if b0 < 0xE0 { return ((b0 & 0x1F) << 6 | UInt32(utf8[i + 1] & 0x3F), 2) }
        if b0 < 0xF0 {
            return ((b0 & 0x0F) << 12 | UInt32(utf8[i + 1] & 0x3F) << 6 | UInt32(utf8[i + 2] & 0x3F), 3)
        }
        return (
            (b0 & 0x07) << 18 | UInt32(utf8[i + 1] & 0x3F) << 12 | UInt32(utf8[i + 2] & 0x3F) << 6
                | UInt32(utf8[i + 3] & 0x3F), 4
        )
    }

    /// Appends the UTF-8 encoding of `value`, a code point (not a surrogate).
    @inline(__always)
    private static func appendUTF8(_ value: UInt32, to out: inout [UInt8]) { UTF8Bytes.appendUTF8(value, to: &out) }

    /// Whether `value` is a Unicode scalar (at most 0x10FFFF, not a surrogate).
    @inline(__always)
    private static func isScalar(_ value: UInt32) -> Bool { value < 0xD800 || (value >= 0xE000 && value <= 0x10FFFF) }

    /// The `unicode61` and `porter` tokens: maximal runs of token characters.
    private func words(
        _ utf8: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>, Int, Int, Int) -> Void
    ) {
        var term: [UInt8] = []
        term.reserveCapacity(64)
        var position = 0
        var start = -1
        var end = 0
        func finish() {
            guard start >= 0 else { return }
            if kind == .porter {
                PorterStemmer.stem(term).withUnsafeBufferPointer { body($0, position, start, end) }
            } else {
                term.withUnsafeBufferPointer { body($0, position, start, end) }
            }
            position += 1
            term.removeAll(keepingCapacity: true)
            start = -1
        }
        var offset = 0
        let count = utf8.count
        while offset < count {
            let byte = utf8[offset]
            if byte < 0x80 {
                // ASCII: letters and digits are token characters, folded to lower case.
                let v = UInt32(byte)
                if Self.isASCIITokenChar(v) {
                    if start < 0 { start = offset }
                    term.append(byte >= 0x41 && byte <= 0x5A ? byte + 32 : byte)
                    end = offset + 1
                } else {
                    finish()
                }
                offset += 1
                continue
            }
            let (value, width) = Self.scalar(utf8, at: offset)
            let cls = Unicode61.shared.characterClass(value)
            if cls == 1 || (cls == 2 && start >= 0) {
                if start < 0 { start = offset }
                let folded = Unicode61.shared.fold(value)
                if folded != 0, Self.isScalar(folded) { Self.appendUTF8(folded, to: &term) }
                end = offset + width
            } else {
                finish()
            }
            offset += width
        }
        finish()
    }

    /// The trigram tokens: one per window of three characters.
    private func trigrams(
        _ utf8: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>, Int, Int, Int) -> Void
    ) {
        // The last three characters, folded, and where each starts.
        var window: (UInt32, UInt32, UInt32) = (0, 0, 0)
        var starts: (Int, Int, Int) = (0, 0, 0)
        var seen = 0
        var position = 0
        var term: [UInt8] = []
        term.reserveCapacity(12)
        var offset = 0
        while offset < utf8.count {
            let (scalar, width) = Self.scalar(utf8, at: offset)
            var value = scalar
            if !caseSensitive {
                if value >= 0x41 && value <= 0x5A {
                    value += 32
                } else if value >= 0x80 {
                    value = TrigramFolds.shared.fold(value)
                }
            }
            if !Self.isScalar(value) { value = scalar }
            window = (window.1, window.2, value)
            starts = (starts.1, starts.2, offset)
            seen += 1
            offset += width
            if seen >= 3 {
                term.removeAll(keepingCapacity: true)
                Self.appendUTF8(window.0, to: &term)
                Self.appendUTF8(window.1, to: &term)
                Self.appendUTF8(window.2, to: &term)
                term.withUnsafeBufferPointer { body($0, position, starts.0, offset) }
                position += 1
            }
        }
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
