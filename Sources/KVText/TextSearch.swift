import Foundation
import KVKeys
import KVStorage
import KVSupport

/// A phrase instance: where a phrase matched.
package struct PhraseInstance: Hashable {
    package let column: Int
    let start: Int
    let length: Int
}

/// A query compiled for evaluation one document at a time: its nodes in pre-order, each
/// with the range of phrases below it, so a document is evaluated with one pass over a
/// flat list and no recursion, whatever the query's depth.
struct CompiledQuery {
    enum Kind { case phrase, near, and, or, not }
    struct Node {
        let kind: Kind
        let operands: Int
        /// The phrases of the subtree (contiguous in ``TextQuery/phrases`` order).
        let phrases: Range<Int>
    }

    let nodes: [Node]
    let phrases: [TextQuery.Phrase]
    /// For each phrase: whether every match of the query matches it (so it can drive the
    /// candidates), and whether it can add to a score (not below a NOT's excluded side).
    let required: [Bool]
    let contributes: [Bool]
    /// For each phrase: the NEAR group it belongs to (its phrases' range), if any.
    let nearGroup: [Range<Int>?]
    let nearDistance: [Int]
    let nearColumns: [TextQuery.ColumnFilter?]

    init(_ query: TextQuery) {
        let items = query.preorder
        var nodes: [Node] = []
        var phrases: [TextQuery.Phrase] = []
        var required: [Bool] = [], contributes: [Bool] = []
        var nearGroup: [Range<Int>?] = [], nearDistance: [Int] = [], nearColumns: [TextQuery.ColumnFilter?] = []
        // Open operator nodes: where they are, how many operands are still to come, where
        // their phrases start, and their own flags.
        struct Open {
            let node: Int
            let kind: Kind
            let operands: Int
            var left: Int
            let start: Int
            let required: Bool
            let contributes: Bool
        }
        var open: [Open] = []
        for item in items {
            // The flags this node inherits from its parent and its place among the operands.
            var isRequired = true, isContributing = true
            if let parent = open.last {
                let operand = parent.operands - parent.left
                isContributing = parent.contributes && !(parent.kind == .not && operand > 0)
                isRequired = parent.required && (parent.kind == .and || (parent.kind == .not && operand == 0))
            }
            let first = phrases.count
            var operatorOperands: Int?
            switch item {
            case .phrase(let p):
                phrases.append(p)
                required.append(isRequired)
                contributes.append(isContributing)
                nearGroup.append(nil)
                nearDistance.append(0)
                nearColumns.append(nil)
                nodes.append(Node(kind: .phrase, operands: 0, phrases: first..<phrases.count))
            case .near(let ps, let distance, let columns):
                for p in ps {
                    phrases.append(p)
                    required.append(isRequired)
                    contributes.append(isContributing)
                }
                for _ in ps {
                    nearGroup.append(first..<phrases.count)
                    nearDistance.append(distance)
                    nearColumns.append(columns)
                }
                nodes.append(Node(kind: .near, operands: 0, phrases: first..<phrases.count))
            case .and(let n):
                nodes.append(Node(kind: .and, operands: n, phrases: first..<first))
                open.append(
                    Open(
                        node: nodes.count - 1, kind: .and, operands: n, left: n, start: first, required: isRequired,
                        contributes: isContributing))
                operatorOperands = n
            case .or(let n):
                nodes.append(Node(kind: .or, operands: n, phrases: first..<first))
                open.append(
                    Open(
                        node: nodes.count - 1, kind: .or, operands: n, left: n, start: first, required: isRequired,
                        contributes: isContributing))
                operatorOperands = n
            case .not(let excluded):
                nodes.append(Node(kind: .not, operands: excluded + 1, phrases: first..<first))
                open.append(
                    Open(
                        node: nodes.count - 1, kind: .not, operands: excluded + 1, left: excluded + 1, start: first,
                        required: isRequired, contributes: isContributing))
                operatorOperands = excluded + 1
            }
            // A leaf, or an operator with no operands, is complete: close the operators it completes.
            var completed = operatorOperands == nil || operatorOperands == 0
            if operatorOperands == 0 { open.removeLast() }
            while completed, var parent = open.popLast() {
                parent.left -= 1
                if parent.left == 0 {
                    let n = nodes[parent.node]
                    nodes[parent.node] = Node(kind: n.kind, operands: n.operands, phrases: parent.start..<phrases.count)
                } else {
                    open.append(parent)
                    completed = false
                }
            }
        }
        self.nodes = nodes
        self.phrases = phrases
        self.required = required
        self.contributes = contributes
        self.nearGroup = nearGroup
        self.nearDistance = nearDistance
        self.nearColumns = nearColumns
    }

    /// Whether the query matches a row, given which phrases report instances there
    /// (`reported`) and, for each phrase of a NEAR group, whether its group matches
    /// (`nearMatched`; for other phrases the same as `reported`). On return `reported`
    /// holds the phrases whose instances count in the row's score and highlights.
    ///
    /// This follows what FTS5 reports through `xInst`, which is not simply "the phrases of
    /// the sub-expressions that match": a failing AND reports nothing below it (FTS5 zeroes
    /// its position lists), a NOT whose excluded side matches reports nothing, but a NEAR
    /// group that does not match in a row where all its terms occur keeps reporting the
    /// position lists its test left behind (the phrases tested before the one that failed,
    /// and the others' lists from an earlier row), under an OR or a NOT that matches.
    /// `stack` is scratch space, reused between calls.
    func evaluate(_ reported: inout [Bool], nearMatched: [Bool], stack: inout [Bool]) -> Bool {
        stack.removeAll(keepingCapacity: true)
        for node in nodes.reversed() {
            var matched: Bool
            switch node.kind {
            case .phrase:
                matched = reported[node.phrases.lowerBound]
            case .near:
                matched = nearMatched[node.phrases.lowerBound]
            case .and:
                matched = true
                for _ in 0..<node.operands { matched = (stack.popLast() ?? false) && matched }
                if !matched { for i in node.phrases { reported[i] = false } }
            case .or:
                matched = false
                for _ in 0..<node.operands { matched = (stack.popLast() ?? false) || matched }
            case .not:
                let base = stack.popLast() ?? false
                var excluded = false
                for _ in 1..<max(node.operands, 1) where stack.popLast() ?? false { excluded = true }
                matched = base && !excluded
                if excluded { for i in node.phrases { reported[i] = false } }
            }
            stack.append(matched)
        }
        return stack.last ?? false
    }
}

extension TextSearcher {
    /// Trims each phrase's instances of a NEAR group to those that take part in a match, as
    /// FTS5 trims the phrases' position lists (fts5_expr.c, `fts5ExprNearIsMatch`), in
    /// place; all left empty when the group does not match, and returns whether it does.
    /// Positions are compared as `column << 32 | offset`; a set of current instances
    /// matches when each phrase's instance ends within `distance` tokens of the latest start
    /// among them. After each match the phrase whose next instance comes first moves on, so
    /// the instances kept, and the counts BM25 gives the phrases, are FTS5's. `lengths`
    /// holds each phrase's number of terms; `out` is scratch space (as many lists), reused
    /// between calls.
    static func nearMatch(
        _ lists: inout [[PhraseInstance]], _ out: inout [[PhraseInstance]], lengths: [Int], distance: Int
    ) -> Bool {
        let n = lists.count
        guard n > 1 else { return lists.first.map { !$0.isEmpty } ?? false }
        func clear(_ l: inout [[PhraseInstance]]) { for i in l.indices { l[i].removeAll(keepingCapacity: true) } }
        guard lists.allSatisfy({ !$0.isEmpty }), out.count == n, lengths.count == n else {
            clear(&lists)
            return false
        }
        clear(&out)
        // FTS5 parses the distance into an int.
        let near = Int64(min(max(distance, 0), Int(Int32.max)))
        func position(_ i: PhraseInstance) -> Int64 { Int64(i.column) << 32 | Int64(i.start) }
        let end = Int64.max
        // The current instance of each phrase; n is at most a few, so a fixed walk is enough.
        var at = Array(repeating: 0, count: n)
        func current(_ i: Int) -> Int64 { position(lists[i][at[i]]) }
        func lookahead(_ i: Int) -> Int64 { at[i] + 1 < lists[i].count ? position(lists[i][at[i] + 1]) : end }
        search: while true {
            var latest = current(0)
            var matched: Bool
            repeat {
                matched = true
                for i in 0..<n {
                    let earliest = latest - Int64(lengths[i]) - near
                    if current(i) < earliest || current(i) > latest {
                        matched = false
                        while current(i) < earliest {
                            at[i] += 1
                            if at[i] == lists[i].count { break search }
                        }
                        latest = max(latest, current(i))
                    }
                }
            } while !matched
            for i in 0..<n where out[i].last != lists[i][at[i]] { out[i].append(lists[i][at[i]]) }
            var next = 0
            for i in 1..<n where lookahead(i) < lookahead(next) { next = i }
            at[next] += 1
            if at[next] == lists[next].count { break }
        }
        guard !out[0].isEmpty else {
            clear(&lists)
            return false
        }
        for i in 0..<n { swap(&lists[i], &out[i]) }
        return true
    }

    /// The instances of `phrase` in one row, given each of its terms' occurrences there
    /// (column → positions; for a prefix term, the union over the terms it expands to).
    static func instances(_ phrase: TextQuery.Phrase, _ occurrences: [[Int: [Int]]]) -> [PhraseInstance] {
        guard let first = occurrences.first else { return [] }
        var found: [PhraseInstance] = []
        for (column, starts) in first {
            if let filter = phrase.columns, !filter.allowed.contains(column) { continue }
            let rest = occurrences.dropFirst().map { Set($0[column] ?? []) }
            for start in starts where !phrase.initial || start == 0 {
                if rest.enumerated().allSatisfy({ $0.element.contains(start + $0.offset + 1) }) {
                    found.append(PhraseInstance(column: column, start: start, length: occurrences.count))
                }
            }
        }
        return found.sorted { ($0.column, $0.start) < ($1.column, $1.start) }
    }
}

/// Evaluates queries against one text index through one reader: reads postings in blocks,
/// keeps the best `limit` rows in a bounded heap and skips blocks whose best possible
/// score cannot enter it.
package struct TextSearcher {
    let index: TextIndex
    let reader: any KeyValueReader
    var layout: TextIndexLayout { index.layout }
    /// Lengths blocks read so far.
    private var lengthBlocks: [Int: [Int]] = [:]
    /// Row ids by document number, read so far (tuple encodings, for ties and results).
    private var rowIDs: [Int: [UInt8]] = [:]
    /// What the last search did: rows scored exactly, and candidates and runs of rows
    /// skipped by their bounds (for tests that check pruning happens).
    var work = Work()
    /// For each phrase of a NEAR group of several phrases, what it reports in the rows
    /// where it reports instances (what FTS5's test of the group left in its position
    /// list), and whether the group matches there; ``nearState(for:)`` gives highlights
    /// the rows they show.
    var nearRecords: [Int: NearRecord] = [:]

    /// The instances a NEAR group's phrase reports, in flat storage: row `docs[k]` reports
    /// `instances[ranges[k]]`; a list left over from an earlier row is stored once.
    struct NearRecord {
        var docs: [Int] = []
        var ranges: [Range<Int>] = []
        var matched: [Bool] = []
        var instances: [PhraseInstance] = []
    }

    /// What NEAR groups of several phrases report in rows `docs`, by phrase, for highlights.
    struct NearState {
        var instances: [Int: [PhraseInstance]] = [:]
        var matched: Set<Int> = []
    }

    /// ``nearRecords`` for the rows `docs` only (the hits to highlight).
    func nearState(for docs: [Int]) -> [Int: NearState] {
        var result: [Int: NearState] = [:]
        for (phrase, record) in nearRecords {
            var state = NearState()
            for doc in docs {
                let k = TextIndex.search(record.docs, doc).at
                guard k < record.docs.count, record.docs[k] == doc else { continue }
                state.instances[doc] = Array(record.instances[record.ranges[k]])
                if record.matched[k] { state.matched.insert(doc) }
            }
            result[phrase] = state
        }
        return result
    }

    package struct Work: Equatable {
        package var scored = 0
        var skippedRows = 0
        package var skippedRuns = 0

        package init(scored: Int = 0, skippedRows: Int = 0, skippedRuns: Int = 0) {
            self.scored = scored
            self.skippedRows = skippedRows
            self.skippedRuns = skippedRuns
        }
    }

    init(index: TextIndex, reader: any KeyValueReader) {
        self.index = index
        self.reader = reader
    }

    /// The token count of document `doc`.
    mutating func length(_ doc: Int) throws -> Int {
        let block = doc / TextLengths.blockSize
        if lengthBlocks[block] == nil {
            lengthBlocks[block] =
                try reader.value(forKey: layout.lengths(block)).map { try TextLengths.decode($0) } ?? []
        }
        let slot = doc % TextLengths.blockSize
        guard let lengths = lengthBlocks[block], slot < lengths.count else { return 0 }
        return lengths[slot]
    }

    /// The rows one range read fetches when reads are round trips.
    static let rowReadAhead = 256

    /// The tuple encoding of document `doc`'s row id.
    /// - Throws: `.corruption` when the number has no row.
    mutating func rowID(_ doc: Int) throws -> [UInt8] {
        if let id = rowIDs[doc] { return id }
        if reader.readsAreRoundTrips {
            // Over a network, the rows of the next numbers too, in one range read: a query
            // whose hits tie with the best kept reads the rows of every hit.
            let cursor = try reader.scan(
                KeyRange(lower: .included(layout.row(doc)), upper: .excluded(layout.row(doc + Self.rowReadAhead))),
                order: .forward)
            let base = layout.allRows.prefix.count
            while let (number, id) = try cursor.next({ k, v -> (Int, [UInt8]) in
                var i = base
                return (try TextIndexLayout.readNumber(k, at: &i), Array(v))
            }) {
                rowIDs[number] = id
            }
            if let id = rowIDs[doc] { return id }
        }
        guard let id = try reader.value(forKey: layout.row(doc)) else {
            throw KVDocsError(
                .corruption, "text index \(layout.subspace): document number \(doc) has no row; reindex it")
        }
        rowIDs[doc] = id
        return id
    }
}

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

/// A position in a term's posting list.
struct PostingCursor {
    let list: TermPostings
    private(set) var blockIndex = 0
    private(set) var entry = 0
    private var block: PostingBlock?
    /// The current document, `Int.max` past the end.
    private(set) var doc = -1

    init(_ list: TermPostings) { self.list = list }

    var frequency: Int { block?.frequencies[entry] ?? 0 }
    /// The current row's length, rounded down (``TextLengths/norm(_:)``).
    var normLength: Int { TextLengths.length(ofNorm: block?.norms[entry] ?? 0) }

    /// Moves to the first document at or after `target`.
    mutating func advance(to target: Int) throws {
        if doc >= target { return }
        if let b = block, blockIndex < list.blockCount, list.headers[blockIndex].lastDoc >= target {
            // Within the current block: gallop from the current entry.
            var lo = entry, step = 1
            while lo + step < b.docs.count && b.docs[lo + step] < target {
                lo += step
                step *= 2
            }
            var hi = min(b.docs.count - 1, lo + step)
            while lo < hi {
                let mid = (lo + hi) / 2
                if b.docs[mid] < target { lo = mid + 1 } else { hi = mid }
            }
            entry = lo
            doc = b.docs[lo]
            return
        }
        let next = list.blockIndex(atLeast: target, from: block == nil ? 0 : blockIndex)
        guard next < list.blockCount else {
            blockIndex = list.blockCount
            block = nil
            doc = .max
            return
        }
        blockIndex = next
        let b = try list.block(next)
        block = b
        entry = TextIndex.search(b.docs, target).at
        doc = b.docs[entry]
    }

    /// The block that holds the first document at or after `target` without decoding it:
    /// its index and last document, or nil past the end.
    func shallow(_ target: Int) -> (block: Int, lastDoc: Int)? {
        let b = list.blockIndex(atLeast: target, from: min(blockIndex, list.blockCount))
        return b < list.blockCount ? (b, list.headers[b].lastDoc) : nil
    }
}

/// A phrase term's rows across its posting lists: one list, or for a prefix every term it
/// expands to, kept as a min-heap by current document so a step costs a few comparisons
/// whatever the number of lists.
struct TermRowCursor {
    private var heap: [PostingCursor]
    /// The rows of all the lists (an upper bound on distinct rows for a prefix).
    let documentFrequency: Int

    /// - Throws: storage or `.corruption` errors reading the first blocks.
    init(_ lists: [TermPostings]) throws {
        var heap: [PostingCursor] = []
        heap.reserveCapacity(lists.count)
        for list in lists {
            var cursor = PostingCursor(list)
            try cursor.advance(to: 0)
            if cursor.doc != .max { heap.append(cursor) }
        }
        documentFrequency = lists.reduce(0) { $0 + $1.documentFrequency }
        self.heap = heap
        if heap.count > 1 { for i in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(i) } }
    }

    /// The current row, `Int.max` past the end.
    var doc: Int { heap.isEmpty ? .max : heap[0].doc }

    /// Moves to the first row at or after `target`.
    mutating func advance(to target: Int) throws {
        while !heap.isEmpty && heap[0].doc < target {
            try heap[0].advance(to: target)
            if heap[0].doc == .max {
                heap.swapAt(0, heap.count - 1)
                heap.removeLast()
            }
            siftDown(0)
        }
    }

    /// Appends the stored occurrences of each list's entry on the current row to `entries`.
    /// - Throws: storage errors, `.corruption` for a block without occurrences.
    func appendOccurrences(to entries: inout [ArraySlice<UInt8>], layout: TextIndexLayout, reader: any KeyValueReader)
        throws
    {
        guard !heap.isEmpty else { return }
        try appendOccurrences(0, heap[0].doc, &entries, layout, reader)
    }

    /// Whether an entry on the current row has positions in a column of `allowed`.
    /// - Throws: storage errors, `.corruption` for damaged occurrences.
    func hasOccurrences(in allowed: ColumnMask, layout: TextIndexLayout, reader: any KeyValueReader) throws -> Bool {
        var entries: [ArraySlice<UInt8>] = []
        try appendOccurrences(to: &entries, layout: layout, reader: reader)
        return try entries.contains { try StoredPositions.hasColumn($0, in: allowed) }
    }

    /// The sum of the lists' frequencies on the current row.
    var currentFrequency: Int {
        guard !heap.isEmpty else { return 0 }
        return frequency(0, heap[0].doc)
    }

    // The lists on the current row are the heap's top and the entries below it on the same row.
    private func appendOccurrences(
        _ i: Int, _ doc: Int, _ entries: inout [ArraySlice<UInt8>], _ layout: TextIndexLayout,
        _ reader: any KeyValueReader
    ) throws {
        guard i < heap.count, heap[i].doc == doc else { return }
        entries.append(
            try heap[i].list.occurrences(
                block: heap[i].blockIndex, entry: heap[i].entry, layout: layout, reader: reader))
        try appendOccurrences(2 * i + 1, doc, &entries, layout, reader)
        try appendOccurrences(2 * i + 2, doc, &entries, layout, reader)
    }

    private func frequency(_ i: Int, _ doc: Int) -> Int {
        guard i < heap.count, heap[i].doc == doc else { return 0 }
        return heap[i].frequency + frequency(2 * i + 1, doc) + frequency(2 * i + 2, doc)
    }

    private mutating func siftDown(_ start: Int) {
        var i = start
        while true {
            let l = 2 * i + 1, r = l + 1
            var m = i
            if l < heap.count && heap[l].doc < heap[m].doc { m = l }
            if r < heap.count && heap[r].doc < heap[m].doc { m = r }
            if m == i { return }
            heap.swapAt(i, m)
            i = m
        }
    }
}
