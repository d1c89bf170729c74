import KVStorage
import KVSupport

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
