import KVSupport

/// One block of a term's postings: up to ``PostingBlock/capacity`` documents, by document
/// number, with each one's term frequency, and a header that bounds the block's best BM25
/// contribution so a query can skip the block without decoding it.
///
/// Stored form (all varints): `count`, `lastDoc - firstDoc`, the number of impacts, each
/// impact as `frequency, length`, then for each entry `docDelta, frequency, norm` (the first
/// delta from the block's first document, which is in the key, is 0; the norm is the row's
/// length in one byte, rounded down, see ``TextLengths/norm(_:)``), so a row's best score
/// is bounded closely before its exact length is read.
///
/// **Invariant.** For every entry (document d, frequency f) some impact (F, L) has F ≥ f and
/// L ≤ length(d): a BM25 term contribution grows with f and shrinks with the length, so the
/// best contribution over the impacts bounds every entry's. Impacts may be looser than
/// that (removing entries keeps them), never tighter.
package struct PostingBlock: Equatable {
    /// The most documents a block holds.
    package static let capacity = 128
    /// The most impacts a header keeps; past it they collapse to (max frequency, min length).
    static let maximumImpacts = 8

    var firstDoc: Int
    var docs: [Int]
    var frequencies: [Int]
    var norms: [Int]
    var impacts: [Impact]

    package struct Impact: Equatable {
        var frequency: Int
        var length: Int

        package init(frequency: Int, length: Int) {
            self.frequency = frequency
            self.length = length
        }
    }

    var count: Int { docs.count }
    var lastDoc: Int { docs.last ?? firstDoc }

    package init(firstDoc: Int, docs: [Int], frequencies: [Int], norms: [Int], impacts: [Impact]) {
        self.firstDoc = firstDoc
        self.docs = docs
        self.frequencies = frequencies
        self.norms = norms
        self.impacts = impacts
    }

    /// The stored form: count, span, impacts, then each document's gap, frequency and norm.
    package func encoded() -> [UInt8] {
        Self.encode(
            count: docs.count, firstDoc: firstDoc, lastDoc: lastDoc, impacts: impacts,
            docs.indices.lazy.map { (doc: docs[$0], frequency: frequencies[$0], norm: norms[$0]) })
    }

    /// The stored form of a block of `count` entries (sorted by document, the first at
    /// `firstDoc`, the last at `lastDoc`) with these impacts: the one encoder of blocks,
    /// for a decoded block (``encoded()``) and for entries written straight from a build or
    /// a merge (`TextIndex.encodedBlock`).
    static func encode<Entries: Sequence>(
        count: Int, firstDoc: Int, lastDoc: Int, impacts: [Impact], _ entries: Entries
    ) -> [UInt8] where Entries.Element == (doc: Int, frequency: Int, norm: Int) {
        var out: [UInt8] = []
        out.reserveCapacity(8 + impacts.count * 3 + count * 3)
        Varint.append(count, to: &out)
        Varint.append(lastDoc - firstDoc, to: &out)
        Varint.append(impacts.count, to: &out)
        for i in impacts {
            Varint.append(i.frequency, to: &out)
            Varint.append(i.length, to: &out)
        }
        var previous = firstDoc
        for e in entries {
            Varint.append(e.doc - previous, to: &out)
            Varint.append(e.frequency, to: &out)
            Varint.append(e.norm, to: &out)
            previous = e.doc
        }
        return out
    }

    /// The Pareto frontier of `impacts` (no pair dominated by another: a higher frequency
    /// with a shorter length), at most ``maximumImpacts``.
    package static func frontier(_ impacts: [Impact]) -> [Impact] {
        // By frequency descending, then length ascending; keep a pair only when its length is
        // below every length kept so far.
        let sorted = impacts.sorted {
            $0.frequency != $1.frequency ? $0.frequency > $1.frequency : $0.length < $1.length
        }
        var kept: [Impact] = []
        for i in sorted where kept.last.map({ i.length < $0.length }) ?? true { kept.append(i) }
        if kept.count > maximumImpacts {
            return [Impact(frequency: kept.map(\.frequency).max() ?? 0, length: kept.map(\.length).min() ?? 0)]
        }
        return kept
    }
}

/// A block's header, decoded without its entries, and where the entries start.
struct PostingBlockHeader {
    let firstDoc: Int
    let lastDoc: Int
    let count: Int
    let impacts: [PostingBlock.Impact]
    let bodyStart: Int

    /// The largest token count and position arithmetic accepts in stored data.
    static let maximumValue = Int(UInt32.max)

    init(firstDoc: Int, lastDoc: Int, count: Int, impacts: [PostingBlock.Impact], bodyStart: Int) {
        self.firstDoc = firstDoc
        self.lastDoc = lastDoc
        self.count = count
        self.impacts = impacts
        self.bodyStart = bodyStart
    }

    /// - Throws: `.corruption` for bytes that are not a posting block.
    init(firstDoc: Int, _ bytes: UnsafeRawBufferPointer) throws {
        var i = 0
        func read() throws -> Int {
            let v = try Varint.read(bytes, &i)
            guard v >= 0 && v <= TextDocument.maximumDocument else {
                throw KVDocsError(.corruption, "a text posting block holds an out-of-range number")
            }
            return v
        }
        count = try read()
        guard count >= 1 && count <= bytes.count else {
            throw KVDocsError(.corruption, "a text posting block has an impossible count (\(count))")
        }
        self.firstDoc = firstDoc
        lastDoc = firstDoc + (try read())
        let n = try read()
        guard n >= 1 && n <= PostingBlock.maximumImpacts else {
            throw KVDocsError(.corruption, "a text posting block has \(n) impacts")
        }
        var impacts: [PostingBlock.Impact] = []
        for _ in 0..<n { impacts.append(PostingBlock.Impact(frequency: try read(), length: try read())) }
        self.impacts = impacts
        bodyStart = i
    }

    /// The block's entries.
    /// - Throws: `.corruption` when they do not match the header.
    func decode(_ bytes: UnsafeRawBufferPointer) throws -> PostingBlock {
        var i = bodyStart
        var docs: [Int] = [], frequencies: [Int] = [], norms: [Int] = []
        docs.reserveCapacity(count)
        frequencies.reserveCapacity(count)
        norms.reserveCapacity(count)
        var previous = firstDoc
        for k in 0..<count {
            let delta = try Varint.read(bytes, &i)
            let f = try Varint.read(bytes, &i)
            let norm = try Varint.read(bytes, &i)
            guard delta >= 0, delta <= TextDocument.maximumDocument, k == 0 ? delta == 0 : delta > 0, f >= 1,
                f <= Self.maximumValue,
                norm >= 0, norm <= 255
            else {
                throw KVDocsError(.corruption, "a text posting block has a damaged entry")
            }
            previous += delta
            docs.append(previous)
            frequencies.append(f)
            norms.append(norm)
        }
        guard i == bytes.count, previous == lastDoc else {
            throw KVDocsError(.corruption, "a text posting block's entries do not match its header")
        }
        return PostingBlock(firstDoc: firstDoc, docs: docs, frequencies: frequencies, norms: norms, impacts: impacts)
    }
}

/// One block of a term's occurrences (columns, and positions with `detail=full`), aligned
/// with the posting block of the same first document: entry k belongs to the posting
/// block's k-th document. Stored form: for each entry, a varint byte length and the entry
/// (``TextDocument/encode(_:positions:)``).
package struct OccurrenceBlock {
    /// Each row's stored occurrences (slices of the block they were read from share its
    /// storage: a merge moves them without copying each one).
    package var entries: [ArraySlice<UInt8>]

    package func encoded() -> [UInt8] { Self.encode(entries) }

    /// The stored form of these entries: the one encoder of occurrence blocks.
    static func encode<Entries: Collection>(_ entries: Entries) -> [UInt8] where Entries.Element == ArraySlice<UInt8> {
        var out: [UInt8] = []
        out.reserveCapacity(entries.reduce(0) { $0 + $1.count + 2 })
        for e in entries {
            Varint.append(e.count, to: &out)
            out += e
        }
        return out
    }

    /// Where each entry lies in `bytes`.
    /// - Throws: `.corruption` when the entries do not fill the block or are not `count`.
    static func ranges(_ bytes: UnsafeRawBufferPointer, count: Int) throws -> [Range<Int>] {
        var i = 0
        var result: [Range<Int>] = []
        result.reserveCapacity(count)
        while i < bytes.count {
            let n = try Varint.read(bytes, &i)
            guard n >= 0, n <= bytes.count - i else {
                throw KVDocsError(.corruption, "a text occurrence block has a truncated entry")
            }
            result.append(i..<(i + n))
            i += n
        }
        guard result.count == count else {
            throw KVDocsError(.corruption, "a text occurrence block has \(result.count) entries for \(count) documents")
        }
        return result
    }

    /// - Throws: `.corruption` when the entries do not fill the block or are not `count`.
    package static func decode(_ bytes: [UInt8], count: Int) throws -> OccurrenceBlock {
        OccurrenceBlock(entries: try bytes.withUnsafeBytes { try ranges($0, count: count) }.map { bytes[$0] })
    }

    package init(entries: [ArraySlice<UInt8>]) {
        self.entries = entries
    }
}
