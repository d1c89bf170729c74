/// One full-text index in a subspace of an ordered key-value store: tokenizing, postings,
/// corpus statistics and ranking.
///
/// The text layer knows rows, not documents: a row is identified by a tuple element and
/// has one text per column. Which documents and fields feed it is the document layer's
/// business (``TextIndexMaintainer``). Reads go through a ``KeyValueReader``; writes are
/// added to a ``WriteBatch`` that the caller commits with whatever else the write changes.
struct TextIndex: Sendable {
    let layout: TextIndexLayout
    let tokenizer: TextTokenizer
    /// The column names, for column filters in queries (`title : word`).
    let columns: [String]

    init(subspace: Subspace, tokenizer: TextTokenizer, columns: [String]) {
        self.layout = TextIndexLayout(subspace: subspace)
        self.tokenizer = tokenizer
        self.columns = columns
    }

    /// What a row with these column texts contributes.
    func contribution(_ texts: [String]) -> TextDocument {
        TextDocument(tokenizer: tokenizer, texts: texts)
    }

    /// Adds to `batch` what changes when row `id` goes from `old` to `new` (`nil`: absent),
    /// returning the change in (rows, tokens) for the corpus statistics.
    func update(id: TupleElement, old before: TextDocument?, new after: TextDocument?,
                put: ([UInt8], [UInt8]) -> Void, delete: ([UInt8]) -> Void) -> (documents: Int, tokens: Int) {
        if before == after { return (0, 0) }
        if let before {
            for term in before.postings.keys where after?.postings[term] == nil { delete(layout.posting(term.text, id)) }
            if after == nil { delete(layout.lengths(id)) }
        }
        if let after {
            for (term, columns) in after.postings where before?.postings[term] != columns {
                put(layout.posting(term.text, id), TextDocument.encode(columns))
            }
            if before?.lengths != after.lengths { put(layout.lengths(id), Tuple(after.lengths.map { .int(Int64($0)) }).encoded) }
        }
        return ((after == nil ? 0 : 1) - (before == nil ? 0 : 1), (after?.totalTokens ?? 0) - (before?.totalTokens ?? 0))
    }

    /// The corpus statistics: (rows, tokens).
    func statistics(_ reader: some KeyValueReader) throws -> (documents: Int, tokens: Int) {
        guard let bytes = try reader.value(forKey: layout.statistics) else { return (0, 0) }
        let t = try Tuple(decoding: bytes)
        return (try t.int(at: 0), try t.int(at: 1))
    }

    /// The stored form of the statistics.
    func statisticsValue(documents: Int, tokens: Int) -> [UInt8] {
        Tuple([.int(Int64(documents)), .int(Int64(tokens))]).encoded
    }

    /// The entries a row implies (key → value), for verification.
    func entries(id: TupleElement, _ contribution: TextDocument) -> [([UInt8], [UInt8])] {
        contribution.postings.map { (layout.posting($0.key.text, id), TextDocument.encode($0.value)) }
            + [(layout.lengths(id), Tuple(contribution.lengths.map { .int(Int64($0)) }).encoded)]
    }
}

/// The stored form of one text index, under its subspace:
///
/// - `("p", term, id)` → the term's positions in the row: for each column with hits,
///   varints `column, count, position deltas…`;
/// - `("n", id)` → the row's token count in each column (a tuple of integers);
/// - `("s",)` → `(rows, tokens)`: the corpus statistics BM25 needs, kept exact.
struct TextIndexLayout: Sendable {
    let subspace: Subspace

    func posting(_ term: String, _ id: TupleElement) -> [UInt8] { subspace.pack(["p", .string(term), id]) }
    func postings(_ term: String) -> KeyRange { .prefix(subspace.pack(["p", .string(term)])) }
    /// Every term starting with `prefix` (bytewise).
    func postings(prefix: String) -> KeyRange {
        let encoded = subspace.pack(["p", .string(prefix)])
        return .prefix(Array(encoded.dropLast()))  // without the string's terminator
    }
    var allPostings: Subspace { subspace["p"] }
    func lengths(_ id: TupleElement) -> [UInt8] { subspace.pack(["n", id]) }
    var allLengths: Subspace { subspace["n"] }
    var statistics: [UInt8] { subspace.pack(["s"]) }
}

/// What a row contributes to a text index.
struct TextDocument: Equatable {
    /// Term → column → positions.
    var postings: [TextTerm: [Int: [Int]]] = [:]
    /// Tokens per column.
    var lengths: [Int]

    var totalTokens: Int { lengths.reduce(0, +) }

    init(tokenizer: TextTokenizer, texts: [String]) {
        lengths = []
        for (column, text) in texts.enumerated() {
            let tokens = tokenizer.tokens(text)
            lengths.append(tokens.count)
            for token in tokens { postings[TextTerm(token.term), default: [:]][column, default: []].append(token.position) }
        }
    }

    static func encode(_ columns: [Int: [Int]]) -> [UInt8] {
        var out: [UInt8] = []
        for column in columns.keys.sorted() {
            let positions = columns[column] ?? []
            Varint.append(column, to: &out)
            Varint.append(positions.count, to: &out)
            var previous = 0
            for p in positions {
                Varint.append(p - previous, to: &out)
                previous = p
            }
        }
        return out
    }

    /// The largest token position a posting may hold. Real positions are far smaller (a
    /// column of 2^32 tokens would be a document of tens of gigabytes); the bound keeps
    /// position arithmetic (`start + length`, `start + offset`) from overflowing on a
    /// damaged posting.
    static let maximumPosition = Int(UInt32.max)

    /// - Throws: `.corruption` for bytes that are not a posting.
    static func decode(_ bytes: UnsafeRawBufferPointer) throws -> [(column: Int, positions: [Int])] {
        var result: [(Int, [Int])] = []
        var i = 0
        while i < bytes.count {
            let column = try Varint.read(bytes, &i)
            let count = try Varint.read(bytes, &i)
            guard count <= bytes.count else { throw KVDocsError(.corruption, "text posting has an impossible count") }
            var positions: [Int] = []
            positions.reserveCapacity(count)
            var previous = 0
            for _ in 0..<count {
                // Both are at most maximumPosition here, so the sum cannot overflow.
                previous += min(try Varint.read(bytes, &i), maximumPosition + 1)
                guard previous <= maximumPosition else {
                    throw KVDocsError(.corruption, "text posting has a token position past \(maximumPosition)")
                }
                positions.append(previous)
            }
            result.append((column, positions))
        }
        return result
    }
}

/// LEB128 variable-length unsigned integers.
enum Varint {
    static func append(_ value: Int, to out: inout [UInt8]) {
        var v = UInt64(max(0, value))
        while v >= 0x80 {
            out.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    static func read(_ bytes: UnsafeRawBufferPointer, _ i: inout Int) throws -> Int {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while i < bytes.count {
            let b = bytes[i]
            i += 1
            value |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 { return Int(truncatingIfNeeded: value) }
            shift += 7
            if shift > 56 { break }
        }
        throw KVDocsError(.corruption, "truncated or overlong varint in a text posting")
    }
}

/// A term as a dictionary key, compared by code points: two terms that Swift's `String`
/// would call equal (canonically equivalent spellings the tokenizer does not fold, such as
/// precomposed and conjoining Hangul) are two terms, as they are two posting keys.
struct TextTerm: Hashable, Sendable {
    let text: String
    init(_ text: String) { self.text = text }
    static func == (a: TextTerm, b: TextTerm) -> Bool { a.text.hasSameCodePoints(as: b.text) }
    func hash(into hasher: inout Hasher) { JSONValue.hashCodePoints(text, into: &hasher) }
}
