import KVKeys
import KVStorage
import KVSupport

/// A term's posting list as one query reads it, across every segment: each block's
/// header and stored bytes, decoded block by block when needed, with its occurrence blocks
/// read on demand. Segments hold disjoint ranges of document numbers, so their blocks,
/// sorted by first document, form one list; the blocks that hold a row a tombstone names
/// are decoded when loaded and the row left out (their headers keep their impacts, which
/// stay an upper bound), and blocks left empty are dropped.
final class TermPostings {
    let term: String
    private(set) var headers: [PostingBlockHeader] = []
    private var bodies: [[UInt8]] = []
    /// Each block's segment, stored first document and the entries its occurrence block holds.
    private var sources: [(segment: Int, first: Int, stored: Int)] = []
    /// By block: the block once decoded.
    private var decoded: [PostingBlock?] = []
    /// By block, for blocks with rows left out: the stored entry of each remaining entry.
    private var storedEntries: [[Int]?] = []
    /// By block: its occurrence block once read, and where each entry lies in it.
    private var occurrenceBlocks: [(bytes: [UInt8], ranges: [Range<Int>])?] = []
    private var tombstones: [Int] = []
    private(set) var documentFrequency = 0

    init(term: String) { self.term = term }

    /// Adds a stored key (after the term: segment, and first document or nothing) and value.
    func add(_ key: (segment: Int, first: Int?), _ bytes: UnsafeRawBufferPointer) throws {
        guard let first = key.first else {
            tombstones += try TextTombstones.decode(bytes)
            return
        }
        let header = try PostingBlockHeader(firstDoc: first, bytes)
        headers.append(header)
        bodies.append(Array(bytes))
        sources.append((key.segment, first, header.count))
    }

    /// Orders the blocks, checks they do not overlap and leaves out the rows tombstones name.
    /// - Throws: `.corruption` for overlapping blocks.
    func finish() throws {
        if !zip(headers, headers.dropFirst()).allSatisfy({ $0.0.firstDoc < $0.1.firstDoc }) {
            let order = headers.indices.sorted { headers[$0].firstDoc < headers[$1].firstDoc }
            headers = order.map { headers[$0] }
            bodies = order.map { bodies[$0] }
            sources = order.map { sources[$0] }
        }
        decoded = Array(repeating: nil, count: headers.count)
        storedEntries = Array(repeating: nil, count: headers.count)
        occurrenceBlocks = Array(repeating: nil, count: headers.count)
        for (a, b) in zip(headers, headers.dropFirst()) where b.firstDoc <= a.lastDoc {
            throw KVDocsError(
                .corruption,
                "the posting blocks of text term \"\(term)\" overlap (documents \(a.firstDoc)...\(a.lastDoc) and \(b.firstDoc))"
            )
        }
        documentFrequency = headers.reduce(0) { $0 + $1.count }
        guard !tombstones.isEmpty else { return }
        tombstones.sort()
        var keep = Array(repeating: true, count: headers.count)
        for b in headers.indices {
            let header = headers[b]
            // The tombstones within the block's range, if any.
            var lo = 0, hi = tombstones.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if tombstones[mid] < header.firstDoc { lo = mid + 1 } else { hi = mid }
            }
            guard lo < tombstones.count, tombstones[lo] <= header.lastDoc else { continue }
            let block = try bodies[b].withUnsafeBytes { try header.decode($0) }
            var kept: [Int] = []
            for (e, doc) in block.docs.enumerated() {
                while lo < tombstones.count && tombstones[lo] < doc { lo += 1 }
                if lo < tombstones.count && tombstones[lo] == doc { continue }
                kept.append(e)
            }
            documentFrequency -= block.count - kept.count
            guard let firstKept = kept.first, let lastKept = kept.last else {
                keep[b] = false
                continue
            }
            let filtered = PostingBlock(
                firstDoc: block.docs[firstKept], docs: kept.map { block.docs[$0] },
                frequencies: kept.map { block.frequencies[$0] },
                norms: kept.map { block.norms[$0] }, impacts: block.impacts)
            headers[b] = PostingBlockHeader(
                firstDoc: block.docs[firstKept], lastDoc: block.docs[lastKept], count: kept.count,
                impacts: header.impacts, bodyStart: header.bodyStart)
            decoded[b] = filtered
            storedEntries[b] = kept
        }
        if keep.contains(false) {
            // Blocks left empty are dropped (every per-block array alike).
            func kept<T>(_ a: [T]) -> [T] { a.indices.compactMap { keep[$0] ? a[$0] : nil } }
            headers = kept(headers)
            bodies = kept(bodies)
            sources = kept(sources)
            decoded = kept(decoded)
            storedEntries = kept(storedEntries)
            occurrenceBlocks = kept(occurrenceBlocks)
        }
    }

    /// The posting lists of `term`.
    static func load(_ term: String, layout: TextIndexLayout, reader: any KeyValueReader) throws -> TermPostings {
        let list = TermPostings(term: term)
        let prefix = layout.postingsPrefix(term)
        let scan = try reader.scan(.prefix(prefix), order: .forward)
        while try scan.next({ k, v in try list.add(TextIndexLayout.postingKey(k, at: prefix.count), v) }) != nil {}
        try list.finish()
        return list
    }

    /// The posting lists of every term starting with `prefix`, in term order.
    static func load(prefix: String, layout: TextIndexLayout, reader: any KeyValueReader) throws -> [TermPostings] {
        var lists: [TermPostings] = []
        let base = layout.allPostings.prefix.count
        let scan = try reader.scan(layout.postings(prefix: prefix), order: .forward)
        while try scan.next({ k, v -> Void in
            // The key after the "p": the term (a tuple string), the segment, the first document.
            guard base < k.count, k[base] == 0x02 else {
                throw KVDocsError(.corruption, "a text posting key lacks its term")
            }
            var end = base + 1
            while end < k.count && !(k[end] == 0 && (end + 1 == k.count || k[end + 1] != 0xFF)) {
                end += k[end] == 0 ? 2 : 1
            }
            guard end < k.count,
                case .string(let term) = try Tuple(decoding: UnsafeRawBufferPointer(rebasing: k[base...end])).elements
                    .first
            else {
                throw KVDocsError(.corruption, "a text posting key has a damaged term")
            }
            if lists.last?.term.hasSameCodePoints(as: term) != true {
                try lists.last?.finish()
                lists.append(TermPostings(term: term))
            }
            try lists[lists.count - 1].add(TextIndexLayout.postingKey(k, at: end + 1), v)
        }) != nil {}
        try lists.last?.finish()
        return lists.filter { $0.blockCount > 0 }
    }

    var blockCount: Int { headers.count }

    func block(_ b: Int) throws -> PostingBlock {
        if let block = decoded[b] { return block }
        let block = try bodies[b].withUnsafeBytes { try headers[b].decode($0) }
        decoded[b] = block
        return block
    }

    /// The first block, from `start`, whose last document is at least `doc` (`blockCount` if none).
    func blockIndex(atLeast doc: Int, from start: Int) -> Int {
        var lo = start, hi = headers.count
        // Gallop, then bisect: most calls move a block or two.
        var step = 1
        while lo + step < hi && headers[lo + step - 1].lastDoc < doc {
            lo += step
            step *= 2
        }
        hi = min(hi, lo + step)
        while lo < hi {
            let mid = (lo + hi) / 2
            if headers[mid].lastDoc < doc { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// Reads the occurrence blocks of every block with one scan of the term's occurrence
    /// keys, for an evaluation that visits every row (a column filter on one term) and
    /// would otherwise read them one lookup at a time. Blocks whose occurrences are
    /// missing are left to ``occurrences(block:entry:layout:reader:)``, which reports them.
    /// - Throws: storage errors, `.corruption` for damaged keys or occurrence blocks.
    func prefetchOccurrences(layout: TextIndexLayout, reader: any KeyValueReader) throws {
        guard occurrenceBlocks.contains(where: { $0 == nil }) else { return }
        var blockOf: [Int: [Int: Int]] = [:]
        for (b, source) in sources.enumerated() where occurrenceBlocks[b] == nil {
            blockOf[source.segment, default: [:]][source.first] = b
        }
        let prefix = layout.subspace.pack(["x", .string(term)])
        let scan = try reader.scan(.prefix(prefix), order: .forward)
        while try scan.next({ k, v -> Void in
            let key = try TextIndexLayout.postingKey(k, at: prefix.count)
            guard let first = key.first, let b = blockOf[key.segment]?[first] else { return }
            let bytes = Array(v)
            occurrenceBlocks[b] = (
                bytes, try bytes.withUnsafeBytes { try OccurrenceBlock.ranges($0, count: sources[b].stored) }
            )
        }) != nil {}
    }

    /// The stored occurrences of entry `entry` of block `b`.
    func occurrences(block b: Int, entry: Int, layout: TextIndexLayout, reader: any KeyValueReader) throws
        -> ArraySlice<UInt8>
    {
        let source = sources[b]
        if occurrenceBlocks[b] == nil {
            guard let bytes = try reader.value(forKey: layout.occurrences(term, source.segment, source.first)) else {
                throw KVDocsError(
                    .corruption,
                    "text term \"\(term)\" has a posting block at \(source.first) in segment \(source.segment) without occurrences; reindex it"
                )
            }
            occurrenceBlocks[b] = (
                bytes, try bytes.withUnsafeBytes { try OccurrenceBlock.ranges($0, count: source.stored) }
            )
        }
        guard let block = occurrenceBlocks[b] else { return [] }
        let stored = storedEntries[b].map { $0[entry] } ?? entry
        return block.bytes[block.ranges[stored]]
    }
}
