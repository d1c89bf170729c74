import KVKeys
import KVStorage
import KVSupport

/// A segment of a text index: the postings one batch (or one merge) wrote, under keys no
/// earlier write used. Stored under `("g", id)` as varints `order, level, postings,
/// tombstones, chunks`.
///
/// `order` places segments by age: a batch's segment takes its own id, a merge's output
/// the order of its oldest input. Segments sorted by order hold ascending, disjoint ranges
/// of document numbers, and their levels never increase from the oldest to the newest
/// (merges take a run of segments of one level, adjacent in age, as FTS5's levels do).
package struct TextSegment: Equatable {
    var id: Int
    var order: Int
    var level: Int
    /// Postings (term, row) it holds.
    var postings: Int
    /// Tombstones it holds.
    package var tombstones: Int
    /// Chunks of its term list.
    var chunks: Int

    /// Segment ids and orders stay below this (2^40).
    static let maximumID = 1 << 40

    func encoded() -> [UInt8] {
        var out: [UInt8] = []
        for v in [order, level, postings, tombstones, chunks] { Varint.append(v, to: &out) }
        return out
    }

    /// - Throws: `.corruption` for bytes that are not a segment record.
    init(id: Int, _ bytes: [UInt8]) throws {
        let values = try bytes.withUnsafeBytes { raw -> [Int] in
            var i = 0
            var values: [Int] = []
            while i < raw.count { values.append(try Varint.read(raw, &i)) }
            return values
        }
        guard values.count == 5, values.allSatisfy({ $0 >= 0 && $0 < Self.maximumID }), values[1] < 64 else {
            throw KVDocsError(.corruption, "the record of text segment \(id) is damaged")
        }
        self.init(
            id: id, order: values[0], level: values[1], postings: values[2], tombstones: values[3], chunks: values[4])
    }

    init(id: Int, order: Int, level: Int, postings: Int, tombstones: Int, chunks: Int) {
        self.id = id
        self.order = order
        self.level = level
        self.postings = postings
        self.tombstones = tombstones
        self.chunks = chunks
    }
}

/// The merge in progress (`("m",)`): a run of input segments being merged, term by term in
/// term order, into one output segment. Each step moves whole terms (reads their blocks
/// in every input, deletes them, writes the merged blocks under the output) and records
/// how far each input's term list has been read, all in one write batch, so a crash
/// leaves either the step done or not begun. The output's record is written, and the
/// inputs' records and term lists deleted, by the step that finishes.
struct TextMerge: Equatable {
    var output: Int
    var level: Int
    var order: Int
    /// Whether the run holds the oldest segment: then a tombstone whose posting is not in
    /// the run has no posting anywhere, and is dropped.
    var bottom: Bool
    var postings = 0
    var tombstones = 0
    var chunks = 0
    var inputs: [Input]

    struct Input: Equatable {
        var segment: Int
        var chunks: Int
        /// The next term to read: chunk and place in it.
        var chunk = 0
        var offset = 0
    }

    func encoded() -> [UInt8] {
        var out: [UInt8] = []
        for v in [output, level, order, bottom ? 1 : 0, postings, tombstones, chunks, inputs.count] {
            Varint.append(v, to: &out)
        }
        for i in inputs { for v in [i.segment, i.chunks, i.chunk, i.offset] { Varint.append(v, to: &out) } }
        return out
    }

    /// - Throws: `.corruption` for bytes that are not a merge state.
    init(_ bytes: [UInt8]) throws {
        let values = try bytes.withUnsafeBytes { raw -> [Int] in
            var i = 0
            var values: [Int] = []
            while i < raw.count { values.append(try Varint.read(raw, &i)) }
            return values
        }
        guard values.count >= 8, values.allSatisfy({ $0 >= 0 && $0 < TextSegment.maximumID }), values[7] >= 1,
            values.count == 8 + 4 * values[7]
        else {
            throw KVDocsError(.corruption, "the merge state of a text index is damaged")
        }
        output = values[0]
        level = values[1]
        order = values[2]
        bottom = values[3] == 1
        postings = values[4]
        tombstones = values[5]
        chunks = values[6]
        inputs = stride(from: 8, to: values.count, by: 4).map {
            Input(segment: values[$0], chunks: values[$0 + 1], chunk: values[$0 + 2], offset: values[$0 + 3])
        }
        guard inputs.allSatisfy({ $0.chunk <= $0.chunks }) else {
            throw KVDocsError(.corruption, "the merge state of a text index is damaged")
        }
    }

    init(output: Int, level: Int, order: Int, bottom: Bool, inputs: [Input]) {
        self.output = output
        self.level = level
        self.order = order
        self.bottom = bottom
        self.inputs = inputs
    }
}

/// A chunk of a segment's sorted term list: varints `count`, then each term as a byte
/// length and its UTF-8 bytes.
enum TextTermList {
    /// Terms per chunk written by a batch.
    static let chunkSize = 1024

    static func encode(_ terms: ArraySlice<[UInt8]>) -> [UInt8] {
        var out: [UInt8] = []
        Varint.append(terms.count, to: &out)
        for t in terms {
            Varint.append(t.count, to: &out)
            out += t
        }
        return out
    }

    /// - Throws: `.corruption` for bytes that are not a term list.
    static func decode(_ bytes: [UInt8]) throws -> [[UInt8]] {
        try bytes.withUnsafeBytes { raw in
            var i = 0
            let count = try Varint.read(raw, &i)
            guard count >= 0, count <= raw.count else {
                throw KVDocsError(.corruption, "a text segment's term list is damaged")
            }
            var terms: [[UInt8]] = []
            terms.reserveCapacity(count)
            for _ in 0..<count {
                let n = try Varint.read(raw, &i)
                guard n >= 0, n <= raw.count - i else {
                    throw KVDocsError(.corruption, "a text segment's term list is truncated")
                }
                terms.append(Array(raw[i..<(i + n)]))
                i += n
            }
            guard i == raw.count else {
                throw KVDocsError(.corruption, "a text segment's term list has trailing bytes")
            }
            return terms
        }
    }
}

/// A term's tombstones in one segment: ascending document numbers as varint deltas.
enum TextTombstones {
    static func encode(_ docs: [Int]) -> [UInt8] {
        var out: [UInt8] = []
        var previous = 0
        for d in docs {
            Varint.append(d - previous, to: &out)
            previous = d
        }
        return out
    }

    /// - Throws: `.corruption` for bytes that are not ascending document numbers.
    static func decode(_ bytes: UnsafeRawBufferPointer) throws -> [Int] {
        var i = 0
        var previous = 0
        var docs: [Int] = []
        while i < bytes.count {
            let delta = try Varint.read(bytes, &i)
            guard delta >= 0, delta <= TextDocument.maximumDocument, docs.isEmpty || delta > 0 else {
                throw KVDocsError(.corruption, "a text tombstone list is damaged")
            }
            previous += delta
            guard previous <= TextDocument.maximumDocument else {
                throw KVDocsError(.corruption, "a text tombstone is out of range")
            }
            docs.append(previous)
        }
        guard !docs.isEmpty else { throw KVDocsError(.corruption, "a text tombstone list is empty") }
        return docs
    }
}

/// The segments of a text index and the merge in progress, as a write batch sees them.
package struct TextStructure {
    /// Every segment with a record, by id.
    package var segments: [Int: TextSegment]
    var merge: TextMerge?
    /// Segments written by this batch (not readable yet, so never merged by it).
    var fresh: Set<Int> = []

    /// Segments in a level merge together once there are this many. FTS5's `automerge`
    /// default is 4 and Lucene's `segmentsPerTier` 10; 8 halves the postings a build
    /// rewrites against 4 (each level rewrites every posting once, and LevelDB's
    /// compactions multiply every byte written), for a few more segments per term.
    package static let mergeFactor = 8
    /// Past this many segments in one level, merge steps do eight times the work (FTS5's
    /// `crisismerge` default is 16).
    static let crisisSegments = 16
    /// The least work (postings read) a merge step does.
    static let minimumBudget = 2048

    /// Reads the records and the merge state.
    /// - Throws: `.corruption` for damaged ones.
    package static func load(_ layout: TextIndexLayout, _ reader: some KeyValueReader) throws -> TextStructure {
        var segments: [Int: TextSegment] = [:]
        // Unchecked: a writer that adds or removes a segment rewrites the statistics, which
        // a writer reads checked (a transaction of etcd compares them, not every record).
        try reader.withUncheckedReads {
            let scan = try reader.scan(layout.allSegments.range, order: .forward)
            let base = layout.allSegments.prefix.count
            while let (id, bytes) = try scan.next({ k, v -> (Int, [UInt8]) in
                var i = base
                let id = try TextIndexLayout.readNumber(k, at: &i)
                guard i == k.count else { throw KVDocsError(.corruption, "a text segment key is damaged") }
                return (id, Array(v))
            }) {
                segments[id] = try TextSegment(id: id, bytes)
            }
        }
        let merge = try reader.value(forKey: layout.merge).map { try TextMerge($0) }
        if let merge {
            for input in merge.inputs where segments[input.segment] == nil {
                throw KVDocsError(
                    .corruption,
                    "text index \(layout.subspace): the merge in progress reads segment \(input.segment), which has no record"
                )
            }
        }
        return TextStructure(segments: segments, merge: merge)
    }

    /// The merge to start now, if any: the oldest run of adjacent segments of the lowest
    /// level that has ``mergeFactor`` of them (segments being merged or written by this
    /// batch excluded).
    func nextMerge(output: Int) -> TextMerge? {
        let busy = Set(merge?.inputs.map(\.segment) ?? [])
        let byAge = segments.values.filter { !fresh.contains($0.id) && !busy.contains($0.id) }.sorted {
            $0.order < $1.order
        }
        guard let oldest = segments.values.map(\.order).min() else { return nil }
        var best: ArraySlice<TextSegment>?
        var start = 0
        while start < byAge.count {
            var end = start + 1
            while end < byAge.count && byAge[end].level == byAge[start].level { end += 1 }
            if end - start >= Self.mergeFactor, best.map({ byAge[start].level < $0[$0.startIndex].level }) ?? true {
                best = byAge[start..<end]
            }
            start = end
        }
        guard let run = best, let first = run.first else { return nil }
        return TextMerge(
            output: output, level: min(first.level + 1, 63), order: first.order, bottom: first.order == oldest,
            inputs: run.map { TextMerge.Input(segment: $0.id, chunks: $0.chunks) })
    }

    /// A merge of every segment into one, or nil when there is at most one and it holds no
    /// tombstones.
    func fullMerge(output: Int) -> TextMerge? {
        let byAge = segments.values.sorted { $0.order < $1.order }
        guard let first = byAge.first, byAge.count > 1 || first.tombstones > 0 else { return nil }
        return TextMerge(
            output: output, level: min((byAge.map(\.level).max() ?? 0) + 1, 63), order: first.order, bottom: true,
            inputs: byAge.map { TextMerge.Input(segment: $0.id, chunks: $0.chunks) })
    }

    /// The most operations (keys written or deleted) that one step of a merge of `inputs`
    /// may need beyond the terms before its last: that term's tombstones and blocks in every
    /// input, deleted, and merged into the output; then, in the step that finishes, the
    /// inputs' records and term lists deleted, the output's written. A term has at most as
    /// many postings in a segment as the segment has.
    func worstStepOperations(_ inputs: [TextMerge.Input]) -> Int {
        var total = 6
        var postings = 0
        for input in inputs {
            let record = segments[input.segment]
            let entries = (record?.postings ?? 0) + (record?.tombstones ?? 0)
            postings += record?.postings ?? 0
            total += 1 + 2 * ((entries + PostingBlock.capacity - 1) / PostingBlock.capacity) + 1 + input.chunks
        }
        return total + 2 * ((postings + PostingBlock.capacity - 1) / PostingBlock.capacity)
    }

    /// `merge`, or, in a store that bounds its transactions (etcd), the longest run of its
    /// inputs (adjacent in age, the oldest first among equals) whose steps can each move at
    /// least one term within `maximumOperations`; `nil` when no two inputs fit (one when the
    /// merge has one). Segments too large to merge within the bound stay as they are:
    /// searches read each, as they read every segment.
    func fitting(_ merge: TextMerge?, maximumOperations: Int?) -> TextMerge? {
        guard let merge, let maximumOperations else { return merge }
        var best: Range<Int>?
        for start in merge.inputs.indices {
            var end = merge.inputs.endIndex
            while end > start, worstStepOperations(Array(merge.inputs[start..<end])) > maximumOperations { end -= 1 }
            if end - start > (best?.count ?? 0) { best = start..<end }
            if end == merge.inputs.endIndex { break }
        }
        guard let best, best.count >= min(2, merge.inputs.count),
            let first = segments[merge.inputs[best.lowerBound].segment]
        else { return nil }
        if best == merge.inputs.indices { return merge }
        var fitted = merge
        fitted.inputs = Array(merge.inputs[best])
        fitted.order = first.order
        fitted.bottom = merge.bottom && best.lowerBound == 0
        return fitted
    }

    /// The most segments in one level.
    var crowdedLevel: Int {
        var counts: [Int: Int] = [:]
        for s in segments.values { counts[s.level, default: 0] += 1 }
        return counts.values.max() ?? 0
    }
}

/// One posting being written: a row, its frequency, norm and stored occurrences.
package struct TextEntry {
    package var doc: Int
    package var frequency: Int
    package var norm: Int
    /// The length the block's impacts use for it (its exact length, or the smallest its
    /// norm allows: never more than the exact one).
    package var length: Int
    package var occurrences: ArraySlice<UInt8>

    package init(doc: Int, frequency: Int, norm: Int, length: Int, occurrences: ArraySlice<UInt8>) {
        self.doc = doc
        self.frequency = frequency
        self.norm = norm
        self.length = length
        self.occurrences = occurrences
    }
}

extension TextIndex {
    /// Whether a's UTF-8 bytes sort before b's (the order of term lists and of keys).
    static func termPrecedes(_ a: [UInt8], _ b: [UInt8]) -> Bool { a.lexicographicallyPrecedes(b) }

    /// The work (postings read) one write's merge step may do: four times what the write
    /// added, at least ``TextStructure/minimumBudget``, eight times more when a level holds
    /// ``TextStructure/crisisSegments`` segments.
    package func mergeBudget(_ changes: TextIndexChanges) -> Int {
        let base = max(
            TextStructure.minimumBudget,
            changes.written.multipliedReportingOverflow(by: 4).overflow ? Int.max : changes.written * 4)
        return (changes.structure?.crowdedLevel ?? 0) >= TextStructure.crisisSegments
            ? (base.multipliedReportingOverflow(by: 8).overflow ? Int.max : base * 8) : base
    }

    /// The posting block of `chunk` (sorted by document, not empty): the bytes of
    /// ``PostingBlock/encoded()``, without building the block's arrays.
    package static func encodedBlock(_ chunk: ArraySlice<TextEntry>) -> [UInt8] {
        let first = chunk[chunk.startIndex]
        let impacts =
            chunk.count == 1
            ? [PostingBlock.Impact(frequency: first.frequency, length: first.length)]
            : PostingBlock.frontier(chunk.map { PostingBlock.Impact(frequency: $0.frequency, length: $0.length) })
        return PostingBlock.encode(
            count: chunk.count, firstDoc: first.doc, lastDoc: chunk[chunk.endIndex - 1].doc, impacts: impacts,
            chunk.lazy.map { (doc: $0.doc, frequency: $0.frequency, norm: $0.norm) })
    }

    /// The occurrence block of `chunk`: the bytes of ``OccurrenceBlock/encoded()``.
    package static func encodedOccurrences(_ chunk: ArraySlice<TextEntry>) -> [UInt8] {
        OccurrenceBlock.encode(chunk.lazy.map(\.occurrences))
    }

    /// Writes the postings in `segment` for `term`: tombstones, then blocks of
    /// ``PostingBlock/capacity`` entries (sorted by document).
    func writeTerm(
        _ term: String, segment: Int, entries: [TextEntry], tombstones: [Int], put: ([UInt8], [UInt8]) -> Void
    ) {
        if !tombstones.isEmpty { put(layout.tombstones(term, segment), TextTombstones.encode(tombstones)) }
        var start = 0
        while start < entries.count {
            let chunk = entries[start..<min(start + PostingBlock.capacity, entries.count)]
            let firstDoc = chunk[chunk.startIndex].doc
            put(layout.block(term, segment, firstDoc), Self.encodedBlock(chunk))
            if detail != .none { put(layout.occurrences(term, segment, firstDoc), Self.encodedOccurrences(chunk)) }
            start += chunk.count
        }
    }

    /// Writes what `changes` recorded for each term as one new segment with its record and
    /// term list (nothing when no term changed).
    func writeSegment(_ changes: TextIndexChanges, reader: some KeyValueReader, put: ([UInt8], [UInt8]) -> Void) throws
    {
        guard !changes.terms.isEmpty else { return }
        if changes.structure == nil { changes.structure = try TextStructure.load(layout, reader) }
        let id = changes.nextSegment
        guard id < TextSegment.maximumID else {
            throw KVDocsError(.invalidArgument, "text index \(layout.subspace) has used every segment id; reindex it")
        }
        changes.nextSegment += 1
        changes.statisticsChanged = true
        var terms: [(bytes: [UInt8], term: String, changes: [(Int, TextIndexChanges.Change)])] = changes.terms.map {
            (Array($0.key.text.utf8), $0.key.text, $0.value)
        }
        terms.sort { Self.termPrecedes($0.bytes, $1.bytes) }
        var listed: [[UInt8]] = []
        var postings = 0, tombstoneCount = 0
        for (bytes, term, recorded) in terms {
            var entries: [TextEntry] = []
            var tombstones: [Int] = []
            // The usual case, a build: only puts, of numbers given in increasing order.
            var ascendingPuts = true
            var previous = -1
            for (doc, change) in recorded {
                guard case .put = change, doc > previous else {
                    ascendingPuts = false
                    break
                }
                previous = doc
            }
            if ascendingPuts {
                entries.reserveCapacity(recorded.count)
                for case let (doc, .put(p)) in recorded {
                    entries.append(
                        TextEntry(
                            doc: doc, frequency: p.frequency, norm: TextLengths.norm(p.length), length: p.length,
                            occurrences: p.occurrences[...]))
                }
            } else {
                // A number is put at most once (rows get new numbers when they change), so a
                // removal of a number put in this batch cancels it; other removals are tombstones.
                var puts: [Int: TextIndexChanges.Posting] = [:]
                var removed: [Int] = []
                for (doc, change) in recorded {
                    switch change {
                    case .put(let p): puts[doc] = p
                    case .remove: removed.append(doc)
                    }
                }
                for doc in removed where puts.removeValue(forKey: doc) == nil { tombstones.append(doc) }
                tombstones.sort()
                entries = puts.sorted { $0.key < $1.key }.map {
                    TextEntry(
                        doc: $0.key, frequency: $0.value.frequency, norm: TextLengths.norm($0.value.length),
                        length: $0.value.length,
                        occurrences: $0.value.occurrences[...])
                }
            }
            guard !entries.isEmpty || !tombstones.isEmpty else { continue }
            writeTerm(term, segment: id, entries: entries, tombstones: tombstones, put: put)
            listed.append(bytes)
            postings += entries.count
            tombstoneCount += tombstones.count
        }
        guard !listed.isEmpty else { return }
        var chunks = 0
        for start in stride(from: 0, to: listed.count, by: TextTermList.chunkSize) {
            put(
                layout.termChunk(id, chunks),
                TextTermList.encode(listed[start..<min(start + TextTermList.chunkSize, listed.count)]))
            chunks += 1
        }
        let record = TextSegment(
            id: id, order: id, level: 0, postings: postings, tombstones: tombstoneCount, chunks: chunks)
        put(layout.segment(id), record.encoded())
        changes.structure?.segments[id] = record
        changes.structure?.fresh.insert(id)
        changes.written += postings + tombstoneCount
    }

    /// One bounded step of the merge policy, added to the batch: continues the merge in
    /// progress (or starts the next one the tiers call for) and moves whole terms until
    /// about `budget` postings were read. Returns whether a merge remains in progress or
    /// segments remain that a full merge (with `full`) would combine.
    ///
    /// With `maximumOperations` (a store that bounds its transactions: etcd), the step writes
    /// and deletes at most that many keys: a merge takes only the inputs whose steps fit half
    /// of it (``TextStructure/fitting(_:maximumOperations:)``), so that writes with less room
    /// continue it, a step moves a term only while the
    /// most it may cost still fits, and a merge in progress that a smaller bound cannot continue waits for a
    /// later step. The segments' contents are read unchecked
    /// (``KVStorage/KeyValueReader/withUncheckedReads(_:)``): only a writer that rewrites the
    /// merge state or the statistics, both read checked, creates or deletes them.
    @discardableResult
    package func mergeStep(
        _ changes: TextIndexChanges, budget: Int, full: Bool = false, maximumOperations: Int? = nil,
        reader: some KeyValueReader, put: ([UInt8], [UInt8]) -> Void, delete: ([UInt8]) -> Void
    ) throws -> Bool {
        if changes.structure == nil { changes.structure = try TextStructure.load(layout, reader) }
        guard var structure = changes.structure else { return false }
        defer { changes.structure = structure }
        if structure.merge == nil {
            let output = changes.nextSegment
            guard output < TextSegment.maximumID else { return false }
            guard
                let next = structure.fitting(
                    full ? structure.fullMerge(output: output) : structure.nextMerge(output: output),
                    maximumOperations: maximumOperations.map { $0 / 2 })
            else {
                return false
            }
            changes.nextSegment += 1
            changes.statisticsChanged = true
            structure.merge = next
        }
        guard var merge = structure.merge else { return false }
        // Under a bound, a term is moved only while the worst it may cost still fits.
        let worst = maximumOperations == nil ? 0 : structure.worstStepOperations(merge.inputs)
        if let maximumOperations, worst > maximumOperations { return true }
        var operations = 0
        func write(_ key: [UInt8], _ value: [UInt8]) {
            operations += 1
            put(key, value)
        }
        func remove(_ key: [UInt8]) {
            operations += 1
            delete(key)
        }
        var lists: [[[UInt8]]] = Array(repeating: [], count: merge.inputs.count)
        func load(_ k: Int) throws {
            let input = merge.inputs[k]
            guard input.chunk < input.chunks else {
                lists[k] = []
                return
            }
            guard
                let bytes = try reader.withUncheckedReads({
                    try reader.value(forKey: layout.termChunk(input.segment, input.chunk))
                })
            else {
                throw KVDocsError(
                    .corruption,
                    "text index \(layout.subspace): segment \(input.segment) lacks chunk \(input.chunk) of its term list"
                )
            }
            lists[k] = try TextTermList.decode(bytes)
        }
        for k in merge.inputs.indices { try load(k) }
        var listed: [[UInt8]] = []
        var work = 0
        var finished = false
        while work < budget && operations + worst <= (maximumOperations ?? Int.max) {
            // The next terms in order (as many as the budget left suggests, at most 256; one
            // at a time under a bound on operations), each with the input segments that hold it.
            var group: [(bytes: [UInt8], term: String, segments: [Int])] = []
            let wanted = maximumOperations == nil ? max(1, min(256, (budget - work) / 16)) : 1
            while group.count < wanted {
                var smallest: [UInt8]?
                for k in merge.inputs.indices {
                    while merge.inputs[k].chunk < merge.inputs[k].chunks && merge.inputs[k].offset >= lists[k].count {
                        merge.inputs[k].chunk += 1
                        merge.inputs[k].offset = 0
                        try load(k)
                    }
                    guard merge.inputs[k].chunk < merge.inputs[k].chunks else { continue }
                    let term = lists[k][merge.inputs[k].offset]
                    if smallest.map({ Self.termPrecedes(term, $0) }) ?? true { smallest = term }
                }
                guard let bytes = smallest else { break }
                var segments: [Int] = []
                for k in merge.inputs.indices
                where merge.inputs[k].chunk < merge.inputs[k].chunks && lists[k][merge.inputs[k].offset] == bytes {
                    segments.append(merge.inputs[k].segment)
                    merge.inputs[k].offset += 1
                }
                guard let term = String(validating: bytes, as: UTF8.self) else {
                    throw KVDocsError(
                        .corruption,
                        "text index \(layout.subspace): a segment's term list holds bytes that are not UTF-8")
                }
                group.append((bytes, term, segments.sorted()))
            }
            if group.isEmpty {
                finished = true
                break
            }
            let moves = try reader.withUncheckedReads {
                try mergeTerms(
                    group.map { ($0.term, $0.segments) }, into: merge.output, bottom: merge.bottom, reader: reader,
                    put: write, delete: remove)
            }
            for moved in moves.enumerated() {
                work += moved.element.read
                if moved.element.postings + moved.element.tombstones > 0 {
                    listed.append(group[moved.offset].bytes)
                    merge.postings += moved.element.postings
                    merge.tombstones += moved.element.tombstones
                }
            }
        }
        if !listed.isEmpty {
            write(layout.termChunk(merge.output, merge.chunks), TextTermList.encode(listed[...]))
            merge.chunks += 1
        }
        if finished {
            for input in merge.inputs {
                remove(layout.segment(input.segment))
                for c in 0..<input.chunks { remove(layout.termChunk(input.segment, c)) }
                structure.segments[input.segment] = nil
            }
            remove(layout.merge)
            structure.merge = nil
            if merge.chunks > 0 {
                let record = TextSegment(
                    id: merge.output, order: merge.order, level: merge.level, postings: merge.postings,
                    tombstones: merge.tombstones, chunks: merge.chunks)
                write(layout.segment(merge.output), record.encoded())
                structure.segments[merge.output] = record
                structure.fresh.insert(merge.output)
            }
            return full
                ? structure.fitting(structure.fullMerge(output: 0), maximumOperations: maximumOperations.map { $0 / 2 })
                    != nil
                : false
        }
        write(layout.merge, merge.encoded())
        structure.merge = merge
        return true
    }

    /// Moves each term's postings and tombstones from its `segments` into `output`:
    /// tombstones cancel the postings they name; with `bottom` the others are dropped too.
    /// Reads the terms' blocks with one cursor over all their key ranges (and their
    /// occurrence blocks with another, in the same order). Returns, for each term, the
    /// postings and tombstones read and those written.
    private func mergeTerms(
        _ terms: [(term: String, segments: [Int])], into output: Int, bottom: Bool, reader: some KeyValueReader,
        put: ([UInt8], [UInt8]) -> Void, delete: ([UInt8]) -> Void
    ) throws -> [(read: Int, postings: Int, tombstones: Int)] {
        // Key ranges in key order: by term, then segment.
        var ranges: [KeyRange] = [], occurrenceRanges: [KeyRange] = []
        var owners: [(term: Int, segment: Int, prefix: Int)] = []
        for (t, entry) in terms.enumerated() {
            let termEnd = layout.postingsPrefix(entry.term).count
            for segment in entry.segments {
                ranges.append(.prefix(layout.tombstones(entry.term, segment)))
                occurrenceRanges.append(.prefix(layout.subspace.pack(["x", .string(entry.term), .int(Int64(segment))])))
                owners.append((t, segment, termEnd))
            }
        }
        var entries = Array(repeating: [TextEntry](), count: terms.count)
        var tombstones = Array(repeating: Set<Int>(), count: terms.count)
        var read = Array(repeating: 0, count: terms.count)
        let blocks = try reader.scan(ranges: ranges)
        let occurrenceBlocks = detail == .none ? nil : try reader.scan(ranges: occurrenceRanges)
        var owner = 0
        while let (key, value) = try blocks.next({ k, v in (Array(k), Array(v)) }) {
            // The range this key came from: the first at or after the current one it starts with.
            while owner < ranges.count, !ranges[owner].contains(key) { owner += 1 }
            guard owner < owners.count else {
                throw KVDocsError(.corruption, "text index \(layout.subspace): a merge read a key outside its ranges")
            }
            let (t, segment, termEnd) = owners[owner]
            let term = terms[t].term
            let parsed = try key.withUnsafeBytes { try TextIndexLayout.postingKey($0, at: termEnd) }
            guard parsed.segment == segment else {
                throw KVDocsError(
                    .corruption, "text term \"\(term)\" has a key of segment \(parsed.segment) under \(segment)")
            }
            delete(key)
            guard let first = parsed.first else {
                let docs = try value.withUnsafeBytes { try TextTombstones.decode($0) }
                read[t] += docs.count
                tombstones[t].formUnion(docs)
                continue
            }
            let block = try value.withUnsafeBytes { try PostingBlockHeader(firstDoc: first, $0).decode($0) }
            read[t] += block.count
            var occurrences: [ArraySlice<UInt8>] = []
            if let occurrenceBlocks {
                let expected = layout.occurrences(term, segment, first)
                guard let (stored, bytes) = try occurrenceBlocks.next({ k, v in (Array(k), Array(v)) }),
                    stored == expected
                else {
                    throw KVDocsError(
                        .corruption,
                        "text index \(layout.subspace): term \"\(term)\" has a posting block at \(first) in segment \(segment) without occurrences; reindex it"
                    )
                }
                occurrences = try OccurrenceBlock.decode(bytes, count: block.count).entries
                delete(stored)
            }
            for (e, doc) in block.docs.enumerated() {
                entries[t].append(
                    TextEntry(
                        doc: doc, frequency: block.frequencies[e], norm: block.norms[e],
                        length: TextLengths.length(ofNorm: block.norms[e]),
                        occurrences: occurrences.isEmpty ? [] : occurrences[e]))
            }
        }
        if let occurrenceBlocks, let extra = try occurrenceBlocks.next({ k, _ in Array(k) }) {
            throw KVDocsError(
                .corruption,
                "text index \(layout.subspace): an occurrence block has no posting block: \((try? Tuple(decoding: extra).description) ?? "?")"
            )
        }
        var result: [(read: Int, postings: Int, tombstones: Int)] = []
        for t in terms.indices {
            var list = entries[t]
            list.sort { $0.doc < $1.doc }
            for (a, b) in zip(list, list.dropFirst()) where a.doc == b.doc {
                throw KVDocsError(
                    .corruption,
                    "text index \(layout.subspace): term \"\(terms[t].term)\" has two postings for document number \(a.doc)"
                )
            }
            let kept = tombstones[t].isEmpty ? list : list.filter { !tombstones[t].contains($0.doc) }
            let left = bottom ? [] : tombstones[t].subtracting(list.map(\.doc)).sorted()
            writeTerm(terms[t].term, segment: output, entries: kept, tombstones: left, put: put)
            result.append((read[t], kept.count, left.count))
        }
        return result
    }
}
