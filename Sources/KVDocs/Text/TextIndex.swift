/// The stored form of one text index, under `("t", collection, index)`:
///
/// - `("p", term, id)` → the term's positions in the document: for each column with hits,
///   varints `column, count, position deltas…`;
/// - `("n", id)` → the document's token count in each column (a tuple of integers);
/// - `("s",)` → `(documents, tokens)`: the corpus statistics BM25 needs, kept exact.
struct TextIndexLayout {
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

/// What a document contributes to a text index.
struct TextDocument: Equatable {
    /// Term → column → positions.
    var postings: [String: [Int: [Int]]] = [:]
    /// Tokens per column.
    var lengths: [Int]

    var totalTokens: Int { lengths.reduce(0, +) }

    init(_ definition: TextIndexDefinition, _ document: JSONValue) {
        let tokenizer = TextTokenizer(definition.tokenizer)
        lengths = []
        for (column, text) in Self.columnTexts(definition, document).enumerated() {
            let tokens = tokenizer.tokens(text)
            lengths.append(tokens.count)
            for token in tokens { postings[token.term, default: [:]][column, default: []].append(token.position) }
        }
    }

    /// The text of each column: the string values at the field's path, joined by spaces
    /// (so an array of strings is one column); other JSON types are not indexed.
    static func columnTexts(_ definition: TextIndexDefinition, _ document: JSONValue) -> [String] {
        definition.fields.map { field in
            field.values(in: document).flatMap { value -> [String] in
                switch value {
                case .string(let s): return [s]
                case .array(let a): return a.compactMap { if case .string(let s) = $0 { s } else { nil } }
                default: return []
                }
            }.joined(separator: " ")
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
