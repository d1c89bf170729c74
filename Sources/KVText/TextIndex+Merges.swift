import KVKeys
import KVStorage
import KVSupport

extension TextIndex {
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
            let utf8 = Array(entry.term.utf8)
            utf8.withUnsafeBufferPointer { term in
                // The posting prefix ends after the term: the key of its tombstones less the segment.
                let termEnd = layout.postingKey(utf8: term, 0, nil).count - 1
                for segment in entry.segments {
                    ranges.append(.prefix(layout.postingKey(utf8: term, segment, nil)))
                    occurrenceRanges.append(.prefix(layout.postingKey(occurrences: true, utf8: term, segment, nil)))
                    owners.append((t, segment, termEnd))
                }
            }
        }
        var entries = Array(repeating: [TextEntry](), count: terms.count)
        var tombstones = Array(repeating: Set<Int>(), count: terms.count)
        var read = Array(repeating: 0, count: terms.count)
        let blocks = try reader.scan(ranges: ranges)
        let occurrenceBlocks = detail == .none ? nil : try reader.scan(ranges: occurrenceRanges)
        var owner = 0
        while try blocks.next({ key, value -> Void in
            // The range this key came from: the first at or after the current one it starts with.
            while owner < ranges.count, !ranges[owner].contains(key) { owner += 1 }
            guard owner < owners.count else {
                throw KVDocsError(.corruption, "text index \(layout.subspace): a merge read a key outside its ranges")
            }
            let (t, segment, termEnd) = owners[owner]
            let term = terms[t].term
            let parsed = try TextIndexLayout.postingKey(key, at: termEnd)
            guard parsed.segment == segment else {
                throw KVDocsError(
                    .corruption, "text term \"\(term)\" has a key of segment \(parsed.segment) under \(segment)")
            }
            delete(Array(key))
            guard let first = parsed.first else {
                let docs = try TextTombstones.decode(value)
                read[t] += docs.count
                tombstones[t].formUnion(docs)
                return
            }
            let block = try PostingBlockHeader(firstDoc: first, value).decode(value)
            read[t] += block.count
            var occurrences: [ArraySlice<UInt8>] = []
            if let occurrenceBlocks {
                // The occurrence key is the posting key with "x" for "p" (the byte after the
                // tag's string code).
                let tag = layout.subspace.prefix.count + 1
                guard
                    let found = try occurrenceBlocks.next({ k, v -> [UInt8]? in
                        guard k.count == key.count, k[tag] == 0x78,
                            k[..<tag].elementsEqual(key[..<tag]), k[(tag + 1)...].elementsEqual(key[(tag + 1)...])
                        else { return nil }
                        delete(Array(k))
                        return Array(v)
                    }), let bytes = found
                else {
                    throw KVDocsError(
                        .corruption,
                        "text index \(layout.subspace): term \"\(term)\" has a posting block at \(first) in segment \(segment) without occurrences; reindex it"
                    )
                }
                occurrences = try OccurrenceBlock.decode(bytes, count: block.count).entries
            }
            for (e, doc) in block.docs.enumerated() {
                entries[t].append(
                    TextEntry(
                        doc: doc, frequency: block.frequencies[e], norm: block.norms[e],
                        length: TextLengths.length(ofNorm: block.norms[e]),
                        occurrences: occurrences.isEmpty ? [] : occurrences[e]))
            }
        }) != nil {}
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
            Array(terms[t].term.utf8).withUnsafeBufferPointer {
                writeTerm($0, segment: output, entries: kept, tombstones: left, put: put)
            }
            result.append((read[t], kept.count, left.count))
        }
        return result
    }
}
