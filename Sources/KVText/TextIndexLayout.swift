import KVKeys
import KVStorage
import KVSupport

/// The stored form of one text index (format 3: immutable segments), under its subspace:
///
/// - `("s",)` → `(rows, tokens, next document number, next segment id)`: the corpus
///   statistics BM25 needs, kept exact, and the counters that number rows and segments;
/// - `("i", id)` → `(number,)` and `("d", number)` → `(id,)`: each row with tokens has a
///   dense document number, both ways; a row whose text changes takes a new number;
/// - `("p", term, segment, first)` → a ``PostingBlock`` of the term's rows in that segment
///   from document `first`; `("x", term, segment, first)` → the matching
///   ``OccurrenceBlock`` (absent with `detail=none`);
/// - `("p", term, segment)` → the term's tombstones in that segment: document numbers
///   whose posting, in an older segment, no longer counts (``TextTombstones``);
/// - `("n", block)` → the token counts of rows `block × 128 ..< (block + 1) × 128` (``TextLengths``);
/// - `("g", segment)` → the segment's record (``TextSegment``) and `("w", segment, k)` →
///   the k-th chunk of its sorted term list (``TextTermList``);
/// - `("m",)` → the merge in progress, if any (``TextMerge``).
///
/// Keys are term first, so one prefix scan reads a term's postings in every segment.
/// Segments hold disjoint ranges of document numbers (a row's postings are written once,
/// under the number it got in that batch; merges take runs of segments adjacent in age).
package struct TextIndexLayout: Sendable {
    package let subspace: Subspace

    package init(subspace: Subspace) { self.subspace = subspace }

    package var statistics: [UInt8] { subspace.pack(["s"]) }
    func number(_ id: TupleElement) -> [UInt8] { subspace.pack(["i", id]) }
    var allNumbers: Subspace { subspace["i"] }
    func row(_ doc: Int) -> [UInt8] { subspace.pack(["d", .int(Int64(doc))]) }
    package var allRows: Subspace { subspace["d"] }
    /// The key prefix of a term's posting blocks and tombstones, in every segment.
    func postingsPrefix(_ term: String) -> [UInt8] { subspace.pack(["p", .string(term)]) }
    package func postings(_ term: String) -> KeyRange { .prefix(postingsPrefix(term)) }
    package func block(_ term: String, _ segment: Int, _ firstDoc: Int) -> [UInt8] {
        Array(term.utf8).withUnsafeBufferPointer { postingKey(utf8: $0, segment, firstDoc) }
    }
    package func occurrences(_ term: String, _ segment: Int, _ firstDoc: Int) -> [UInt8] {
        Array(term.utf8).withUnsafeBufferPointer { postingKey(occurrences: true, utf8: $0, segment, firstDoc) }
    }
    /// ``tombstones(_:_:)``, ``block(_:_:_:)`` and ``occurrences(_:_:_:)`` for a term given
    /// as its UTF-8 bytes (`first` nil: the tombstones' key): the same bytes, without
    /// making the `String` or a `Tuple`.
    func postingKey(
        occurrences: Bool = false, utf8 term: UnsafeBufferPointer<UInt8>, _ segment: Int, _ firstDoc: Int?
    ) -> [UInt8] {
        var encoder = TupleEncoder(prefix: subspace.prefix, reserving: term.count + 24)
        // ("p" or "x") as a tuple string: 02 70 00 or 02 78 00.
        encoder.bytes.append(0x02)
        encoder.bytes.append(occurrences ? 0x78 : 0x70)
        encoder.bytes.append(0x00)
        encoder.appendString(utf8: term)
        encoder.appendInteger(segment)
        if let firstDoc { encoder.appendInteger(firstDoc) }
        return encoder.bytes
    }

    /// Every posting block of every term starting with `prefix` (bytewise).
    func postings(prefix: String) -> KeyRange {
        let encoded = subspace.pack(["p", .string(prefix)])
        return .prefix(Array(encoded.dropLast()))  // without the string's terminator
    }
    var allPostings: Subspace { subspace["p"] }
    var allOccurrences: Subspace { subspace["x"] }
    package func lengths(_ block: Int) -> [UInt8] { subspace.pack(["n", .int(Int64(block))]) }
    package var allLengths: Subspace { subspace["n"] }
    func segment(_ id: Int) -> [UInt8] { subspace.pack(["g", .int(Int64(id))]) }
    package var allSegments: Subspace { subspace["g"] }
    func termChunk(_ segment: Int, _ chunk: Int) -> [UInt8] {
        subspace.pack(["w", .int(Int64(segment)), .int(Int64(chunk))])
    }
    var allTermChunks: Subspace { subspace["w"] }
    package var merge: [UInt8] { subspace.pack(["m"]) }

    /// The non-negative integer whose tuple encoding starts `key` at `offset` (and ends
    /// before `limit`), moving `offset` past it.
    /// - Throws: `.corruption` for anything else.
    static func readNumber(_ key: UnsafeRawBufferPointer, at offset: inout Int) throws -> Int {
        guard offset < key.count else { throw KVDocsError(.corruption, "a text index key lacks a number") }
        let n = Int(key[offset]) - 0x14
        guard n >= 0, n <= 7, offset + 1 + n <= key.count else {
            throw KVDocsError(.corruption, "a text index key has a damaged number")
        }
        var value = 0
        for i in 0..<n { value = value << 8 | Int(key[offset + 1 + i]) }
        offset += 1 + n
        guard value <= TextDocument.maximumDocument else {
            throw KVDocsError(.corruption, "a text index key has a number out of range")
        }
        return value
    }

    /// The segment and (for a block; nil for tombstones) the first document of a posting
    /// key whose term ends at `offset`.
    /// - Throws: `.corruption` for a key of any other shape.
    static func postingKey(_ key: UnsafeRawBufferPointer, at offset: Int) throws -> (segment: Int, first: Int?) {
        var i = offset
        let segment = try readNumber(key, at: &i)
        if i == key.count { return (segment, nil) }
        let first = try readNumber(key, at: &i)
        guard i == key.count else { throw KVDocsError(.corruption, "a text posting key is too long") }
        return (segment, first)
    }

    /// The non-negative integer whose tuple encoding ends `key` at `offset` (a document number).
    /// - Throws: `.corruption` for anything else.
    static func documentNumber(_ key: UnsafeRawBufferPointer, at offset: Int) throws -> Int {
        guard offset < key.count else { throw KVDocsError(.corruption, "a text index key lacks its document number") }
        let code = Int(key[offset])
        let n = code - 0x14
        guard n >= 0, n <= 7, offset + 1 + n == key.count else {
            throw KVDocsError(.corruption, "a text index key has a damaged document number")
        }
        var value = 0
        for i in 0..<n { value = value << 8 | Int(key[offset + 1 + i]) }
        guard value <= TextDocument.maximumDocument else {
            throw KVDocsError(.corruption, "a text index key has a document number out of range")
        }
        return value
    }
}
