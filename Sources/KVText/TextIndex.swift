import KVKeys
import KVStorage
import KVSupport

/// One full-text index in a subspace of an ordered key-value store: tokenizing, postings,
/// corpus statistics and ranking.
///
/// The text layer knows rows, not documents: a row is identified by a tuple element and
/// has one text per column. Which documents and fields feed it is the document layer's
/// business (``TextIndexMaintainer``). Reads go through a ``KeyValueReader``; writes are
/// collected in a ``TextIndexChanges`` for the whole write batch and then added, once per
/// term, to the ``WriteBatch`` that the caller commits with whatever else the write changes.
package struct TextIndex: Sendable {
    package let layout: TextIndexLayout
    package let tokenizer: TextTokenizer
    /// The column names, for column filters in queries (`title : word`).
    let columns: [String]
    /// What is stored of each occurrence.
    let detail: TextDetail

    package init(subspace: Subspace, tokenizer: TextTokenizer, columns: [String], detail: TextDetail = .full) {
        self.layout = TextIndexLayout(subspace: subspace)
        self.tokenizer = tokenizer
        self.columns = columns
        self.detail = detail
    }

    /// What a row with these column texts contributes.
    package func contribution(_ texts: [String]) -> TextDocument {
        TextDocument(tokenizer: tokenizer, texts: texts)
    }

    /// The stored occurrences of term `i` of a row's ``TextDocument/terms``, as this
    /// index's detail keeps them.
    func occurrences(of document: TextDocument, term i: Int) -> [UInt8] {
        detail == .none ? [] : document.encodedOccurrences(ofTerm: i, positions: detail == .full)
    }

    /// The corpus statistics: (rows, tokens, the next document number, the next segment id).
    package func statistics(_ reader: some KeyValueReader) throws -> TextStatistics {
        guard let bytes = try reader.value(forKey: layout.statistics) else { return TextStatistics() }
        let t = try Tuple(decoding: bytes)
        guard t.count == 4 else {
            throw KVDocsError(.corruption, "the statistics of text index \(layout.subspace) are damaged (\(t))")
        }
        let values = TextStatistics(
            documents: try t.int(at: 0), tokens: try t.int(at: 1), nextDoc: try t.int(at: 2),
            nextSegment: try t.int(at: 3))
        guard values.documents >= 0, values.tokens >= 0, values.nextDoc >= 0,
            values.nextDoc <= TextDocument.maximumDocument,
            values.nextSegment >= 0, values.nextSegment < TextSegment.maximumID
        else {
            throw KVDocsError(.corruption, "the statistics of text index \(layout.subspace) are out of range (\(t))")
        }
        return values
    }

    /// The stored form of the statistics.
    package func statisticsValue(_ s: TextStatistics) -> [UInt8] {
        Tuple([.int(Int64(s.documents)), .int(Int64(s.tokens)), .int(Int64(s.nextDoc)), .int(Int64(s.nextSegment))])
            .encoded
    }

    /// Records in `changes` what changes when row `id` goes from `old` to `new` (`nil`:
    /// absent). Document-number mappings are written at once through `put`/`delete`;
    /// postings and lengths wait for ``apply(_:reader:put:delete:)``.
    ///
    /// A row whose text changes gets a new document number: its old number's postings are
    /// cancelled by tombstones and the new ones written under the new number, so a document
    /// number's postings never change once written (segments stay immutable and never
    /// overlap in document numbers).
    /// - Throws: `.corruption` when a row with tokens has no document number.
    package func update(
        id: TupleElement, old before: TextDocument?, new after: TextDocument?, changes: TextIndexChanges,
        reader: some KeyValueReader, put: ([UInt8], [UInt8]) -> Void, delete: ([UInt8]) -> Void
    ) throws {
        if before == after { return }
        changes.documents = changes.documents.saturatingAdd((after == nil ? 0 : 1) - (before == nil ? 0 : 1))
        let oldLength = before?.totalTokens ?? 0, newLength = after?.totalTokens ?? 0
        changes.tokens = changes.tokens.saturatingAdd(newLength - oldLength)
        changes.statisticsChanged = true
        let idKey = ByteKey(Tuple([id]).encoded)
        if let before, oldLength > 0 {
            let stored: Int?
            if let local = changes.numbers[idKey] {
                stored = local
            } else {
                stored = try documentNumber(of: id, reader)
            }
            guard let doc = stored else {
                throw KVDocsError(
                    .corruption, "text index \(layout.subspace) has no document number for row \(id); reindex it")
            }
            for term in before.terms { changes.record(term, doc, .remove) }
            changes.lengths[doc] = 0
            delete(layout.row(doc))
            if after == nil || newLength == 0 {
                delete(layout.number(id))
                changes.numbers[idKey] = .some(nil)
            }
        }
        if let after, newLength > 0 {
            let doc = changes.nextDoc
            guard doc < TextDocument.maximumDocument else {
                throw KVDocsError(
                    .invalidArgument, "text index \(layout.subspace) has used every document number; reindex it")
            }
            changes.nextDoc += 1
            put(layout.number(id), Tuple([.int(Int64(doc))]).encoded)
            put(layout.row(doc), idKey.bytes)
            changes.numbers[idKey] = doc
            for (i, term) in after.terms.enumerated() {
                changes.record(
                    term, doc,
                    .put(
                        TextIndexChanges.Posting(
                            frequency: after.frequency(ofTerm: i), length: newLength,
                            occurrences: occurrences(of: after, term: i))))
            }
            changes.lengths[doc] = newLength
        }
    }

    /// The document number of row `id`, or nil.
    package func documentNumber(of id: TupleElement, _ reader: some KeyValueReader) throws -> Int? {
        guard let bytes = try reader.value(forKey: layout.number(id)) else { return nil }
        let n = try Tuple(decoding: bytes).int(at: 0)
        guard n >= 0 && n < TextDocument.maximumDocument else {
            throw KVDocsError(.corruption, "text index \(layout.subspace): row \(id) has document number \(n)")
        }
        return n
    }

    /// Adds to the batch, through `put` and `delete`, every posting and length change
    /// recorded in `changes` as one new segment (keys never written before; no existing
    /// block is read or rewritten), and empties them. Reads the state before the batch
    /// through `reader`.
    package func apply(
        _ changes: TextIndexChanges, reader: some KeyValueReader, put: ([UInt8], [UInt8]) -> Void,
        delete: ([UInt8]) -> Void
    ) throws {
        try writeSegment(changes, reader: reader, put: put)
        changes.terms.removeAll(keepingCapacity: true)
        var byBlock: [Int: [(Int, Int)]] = [:]
        for (doc, length) in changes.lengths {
            byBlock[doc / TextLengths.blockSize, default: []].append((doc % TextLengths.blockSize, length))
        }
        for (block, slots) in byBlock {
            var lengths = try reader.value(forKey: layout.lengths(block)).map { try TextLengths.decode($0) } ?? []
            for (slot, length) in slots {
                if lengths.count <= slot { lengths += Array(repeating: 0, count: slot + 1 - lengths.count) }
                lengths[slot] = length
            }
            while lengths.last == 0 { lengths.removeLast() }
            if lengths.isEmpty {
                delete(layout.lengths(block))
            } else {
                put(layout.lengths(block), TextLengths.encode(lengths))
            }
        }
        changes.lengths.removeAll(keepingCapacity: true)
        changes.pending = 0
    }

    /// Whether `docs` (ascending) holds `doc`, and where it is or would go.
    static func search(_ docs: [Int], _ doc: Int) -> (found: Bool, at: Int) {
        var lo = 0, hi = docs.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if docs[mid] < doc { lo = mid + 1 } else { hi = mid }
        }
        return (lo < docs.count && docs[lo] == doc, lo)
    }
}

/// A text index's corpus statistics and counters (`("s",)`).
package struct TextStatistics: Equatable {
    package var documents = 0
    package var tokens = 0
    var nextDoc = 0
    var nextSegment = 0

    package init(documents: Int = 0, tokens: Int = 0, nextDoc: Int = 0, nextSegment: Int = 0) {
        self.documents = documents
        self.tokens = tokens
        self.nextDoc = nextDoc
        self.nextSegment = nextSegment
    }
}

/// What one write batch changes in a text index, collected document by document and
/// applied once per term at the end of the batch (or when a long build flushes).
package final class TextIndexChanges {
    /// A row's occurrences of one term: its frequency, the row's length (for the block's
    /// impacts) and the stored occurrences.
    struct Posting {
        var frequency: Int
        var length: Int
        var occurrences: [UInt8]
    }

    enum Change {
        case put(Posting)
        case remove
    }

    var documents: Int
    var tokens: Int
    var nextDoc: Int
    /// The id the next segment (written by a batch or a merge) takes.
    var nextSegment: Int
    package var statisticsChanged = false
    /// The segments and the merge in progress, as read at the batch's start and changed by
    /// it (nil until the first segment is written).
    var structure: TextStructure?
    /// Postings written in segments by this batch (the merge budget grows with it).
    var written = 0
    /// Document numbers given or taken in this batch, by the row id's tuple encoding
    /// (`.some(nil)`: the row lost its number).
    var numbers: [ByteKey: Int?] = [:]
    /// Term → its changes in the order recorded (document, change).
    var terms: [TextTerm: [(Int, Change)]] = [:]
    /// Document → its new length (0: gone).
    var lengths: [Int: Int] = [:]
    /// Postings recorded since the last apply (to decide when a long build flushes).
    package var pending = 0

    package init(_ stored: TextStatistics) {
        documents = stored.documents
        tokens = stored.tokens
        nextDoc = stored.nextDoc
        nextSegment = stored.nextSegment
    }

    package var statistics: TextStatistics {
        TextStatistics(documents: documents, tokens: tokens, nextDoc: nextDoc, nextSegment: nextSegment)
    }

    func record(_ term: TextTerm, _ doc: Int, _ change: Change) {
        terms[term, default: []].append((doc, change))
        pending += 1
    }
}

/// The token counts of rows, by document number, in blocks of ``blockSize``: each block a
/// list of varints (0 for a slot without a row), trailing zeros dropped.
package enum TextLengths {
    static let blockSize = 128

    /// A length in one byte, rounded down: exact below 128, then 3 significant bits
    /// after the leading one (so at most 1/8 below), 255 past 2^23.
    package static func norm(_ length: Int) -> Int {
        guard length >= 128 else { return max(0, length) }
        let e = Int.bitWidth - 1 - length.leadingZeroBitCount  // 7 or more
        let code = 128 + (e - 7) * 8 + (length >> (e - 3)) & 7
        return min(code, 255)
    }

    /// The smallest length with norm `norm` (never more than the length it came from).
    package static func length(ofNorm norm: Int) -> Int {
        guard norm >= 128 else { return norm }
        let e = (norm - 128) / 8 + 7
        return (8 + (norm - 128) % 8) << (e - 3)
    }

    static func encode(_ lengths: [Int]) -> [UInt8] {
        var out: [UInt8] = []
        for l in lengths { Varint.append(l, to: &out) }
        return out
    }

    /// - Throws: `.corruption` for bytes that are not a length block.
    static func decode(_ bytes: [UInt8]) throws -> [Int] {
        try bytes.withUnsafeBytes { raw in
            var i = 0
            var result: [Int] = []
            while i < raw.count {
                let v = try Varint.read(raw, &i)
                guard v >= 0 && v <= TextDocument.maximumPosition, result.count < blockSize else {
                    throw KVDocsError(.corruption, "a text length block is damaged")
                }
                result.append(v)
            }
            return result
        }
    }
}

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
    /// A term's tombstones in a segment; also the key prefix of its blocks there.
    func tombstones(_ term: String, _ segment: Int) -> [UInt8] {
        subspace.pack(["p", .string(term), .int(Int64(segment))])
    }
    package func block(_ term: String, _ segment: Int, _ firstDoc: Int) -> [UInt8] {
        subspace.pack(["p", .string(term), .int(Int64(segment)), .int(Int64(firstDoc))])
    }
    package func occurrences(_ term: String, _ segment: Int, _ firstDoc: Int) -> [UInt8] {
        subspace.pack(["x", .string(term), .int(Int64(segment)), .int(Int64(firstDoc))])
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

/// What a row contributes to a text index: its distinct terms and where each occurs.
///
/// Held flat, with no collection per term: `terms` in the order of their first occurrence,
/// and every occurrence packed as `column << 32 | position`, grouped by term (in `terms`'
/// order) and in document order within a group (column, then position). Two rows with the
/// same terms at the same places are equal, since the order of first occurrences follows
/// from the places.
package struct TextDocument: Equatable {
    /// The distinct terms, in the order of their first occurrence.
    package private(set) var terms: [TextTerm] = []
    /// Occurrences grouped by term; group `i` is `occurrences[starts[i]..<starts[i + 1]]`.
    private var occurrences: [UInt64] = []
    private var starts: [Int] = [0]
    /// Tokens per column.
    var lengths: [Int]

    package var totalTokens: Int { lengths.reduce(0, +) }

    package init(tokenizer: TextTokenizer, texts: [String]) {
        // Each token's term number, then a counting sort groups the occurrences by term.
        let columns = texts.map { tokenizer.tokens($0) }
        lengths = columns.map(\.count)
        let total = lengths.reduce(0, +)
        var numbers: [TextTerm: Int] = [:]
        numbers.reserveCapacity(total)
        terms.reserveCapacity(total)
        var tokens: [(term: Int, occurrence: UInt64)] = []
        tokens.reserveCapacity(total)
        for (column, found) in columns.enumerated() {
            for token in found {
                let term = TextTerm(token.term)
                let number: Int
                if let known = numbers[term] {
                    number = known
                } else {
                    number = terms.count
                    numbers[term] = number
                    terms.append(term)
                }
                tokens.append((number, UInt64(column) << 32 | UInt64(UInt32(truncatingIfNeeded: token.position))))
            }
        }
        var counts = [Int](repeating: 0, count: terms.count + 1)
        for token in tokens { counts[token.term + 1] += 1 }
        for i in terms.indices { counts[i + 1] += counts[i] }
        starts = counts
        var next = Array(counts.dropLast())
        occurrences = [UInt64](repeating: 0, count: tokens.count)
        for token in tokens {
            occurrences[next[token.term]] = token.occurrence
            next[token.term] += 1
        }
    }

    /// How many times term `i` of ``terms`` occurs.
    package func frequency(ofTerm i: Int) -> Int { starts[i + 1] - starts[i] }

    /// The columns and positions of term `i` of ``terms``, in document order.
    package func places(ofTerm i: Int) -> some RandomAccessCollection<(column: Int, position: Int)> {
        occurrences[starts[i]..<starts[i + 1]].lazy.map { (Int($0 >> 32), Int($0 & 0xFFFF_FFFF)) }
    }

    /// The stored occurrences of term `i` of ``terms`` (``encode(_:positions:)``'s form).
    package func encodedOccurrences(ofTerm i: Int, positions withPositions: Bool) -> [UInt8] {
        var out: [UInt8] = []
        var k = starts[i]
        let end = starts[i + 1]
        while k < end {
            let column = occurrences[k] >> 32
            var last = k
            while last + 1 < end && occurrences[last + 1] >> 32 == column { last += 1 }
            Varint.append(Int(column), to: &out)
            Varint.append(last - k + 1, to: &out)
            if withPositions {
                var previous = 0
                for j in k...last {
                    let p = Int(occurrences[j] & 0xFFFF_FFFF)
                    Varint.append(p - previous, to: &out)
                    previous = p
                }
            }
            k = last + 1
        }
        return out
    }

    /// The stored occurrences of a term: for each column with hits, varints `column,
    /// count`, then (with `positions`) the position deltas.
    package static func encode(_ columns: [Int: [Int]], positions withPositions: Bool = true) -> [UInt8] {
        var out: [UInt8] = []
        for column in columns.keys.sorted() {
            let positions = columns[column] ?? []
            Varint.append(column, to: &out)
            Varint.append(positions.count, to: &out)
            guard withPositions else { continue }
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
    /// The largest document number (2^40): past it a text index must be rebuilt.
    static let maximumDocument = 1 << 40

    /// The number of occurrences stored in `bytes` that lie in `allowed` columns, without
    /// decoding positions into arrays (for column filters that need no positions).
    /// - Throws: `.corruption` for bytes that are not occurrences.
    static func count(_ bytes: UnsafeRawBufferPointer, positions withPositions: Bool, allowed: ColumnMask?) throws
        -> Int
    {
        var total = 0
        var i = 0
        while i < bytes.count {
            let column = try Varint.read(bytes, &i)
            let count = try Varint.read(bytes, &i)
            guard count >= 1, count <= (withPositions ? bytes.count : maximumPosition) else {
                throw KVDocsError(.corruption, "text posting has an impossible count")
            }
            if allowed?.contains(column) ?? true { total += count }
            if withPositions {
                for _ in 0..<count { _ = try Varint.read(bytes, &i) }
            }
        }
        return total
    }

    /// The columns of stored occurrences, each with its count and (when `positions`) its
    /// positions.
    /// - Throws: `.corruption` for bytes that are not occurrences.
    static func decode(_ bytes: UnsafeRawBufferPointer, positions withPositions: Bool = true) throws -> [(
        column: Int, count: Int, positions: [Int]
    )] {
        var result: [(Int, Int, [Int])] = []
        var i = 0
        while i < bytes.count {
            let column = try Varint.read(bytes, &i)
            let count = try Varint.read(bytes, &i)
            guard count >= 1, count <= (withPositions ? bytes.count : maximumPosition) else {
                throw KVDocsError(.corruption, "text posting has an impossible count")
            }
            guard withPositions else {
                result.append((column, count, []))
                continue
            }
            var positions: [Int] = []
            positions.reserveCapacity(count)
            var previous = 0
            for k in 0..<count {
                // Both are at most maximumPosition here, so the sum cannot overflow.
                let delta = min(try Varint.read(bytes, &i), maximumPosition + 1)
                guard k == 0 || delta > 0 else {
                    throw KVDocsError(.corruption, "text posting repeats a token position")
                }
                previous += delta
                guard previous <= maximumPosition else {
                    throw KVDocsError(.corruption, "text posting has a token position past \(maximumPosition)")
                }
                positions.append(previous)
            }
            result.append((column, count, positions))
        }
        return result
    }
}

/// LEB128 variable-length unsigned integers.
package enum Varint {
    package static func append(_ value: Int, to out: inout [UInt8]) {
        var v = UInt64(max(0, value))
        while v >= 0x80 {
            out.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    /// The varint at `i` of `bytes` (raw bytes or a slice of stored ones); moves `i` past it.
    package static func read<Bytes: RandomAccessCollection>(_ bytes: Bytes, _ i: inout Int) throws -> Int
    where Bytes.Element == UInt8, Bytes.Index == Int {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while i < bytes.endIndex {
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
package struct TextTerm: Hashable, Sendable {
    package let text: String
    init(_ text: String) { self.text = text }
    package static func == (a: TextTerm, b: TextTerm) -> Bool { a.text.hasSameCodePoints(as: b.text) }
    package func hash(into hasher: inout Hasher) { JSONValue.hashCodePoints(text, into: &hasher) }
}
