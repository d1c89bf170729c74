import KVStorage
import KVSupport

extension TextIndex {
    /// Whether a's UTF-8 bytes sort before b's (the order of term lists and of keys).
    static func termPrecedes(_ a: [UInt8], _ b: [UInt8]) -> Bool { a.lexicographicallyPrecedes(b) }

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

    /// Writes the postings in `segment` for `term` (its UTF-8 bytes): tombstones, then
    /// blocks of ``PostingBlock/capacity`` entries (sorted by document).
    func writeTerm(
        _ term: UnsafeBufferPointer<UInt8>, segment: Int, entries: [TextEntry], tombstones: [Int],
        put: ([UInt8], [UInt8]) -> Void
    ) {
        if !tombstones.isEmpty {
            put(layout.postingKey(utf8: term, segment, nil), TextTombstones.encode(tombstones))
        }
        var start = 0
        while start < entries.count {
            let chunk = entries[start..<min(start + PostingBlock.capacity, entries.count)]
            let firstDoc = chunk[chunk.startIndex].doc
            put(layout.postingKey(utf8: term, segment, firstDoc), Self.encodedBlock(chunk))
            if detail != .none {
                put(layout.postingKey(occurrences: true, utf8: term, segment, firstDoc), Self.encodedOccurrences(chunk))
            }
            start += chunk.count
        }
    }

    /// Writes what `changes` recorded for each term as one new segment with its record and
    /// term list (nothing when no term changed).
    func writeSegment(_ changes: TextIndexChanges, reader: some KeyValueReader, put: ([UInt8], [UInt8]) -> Void) throws
    {
        guard !changes.records.isEmpty else { return }
        if changes.structure == nil { changes.structure = try TextStructure.load(layout, reader) }
        let id = changes.nextSegment
        guard id < TextSegment.maximumID else {
            throw KVDocsError(.invalidArgument, "text index \(layout.subspace) has used every segment id; reindex it")
        }
        changes.nextSegment += 1
        changes.statisticsChanged = true
        let table = changes.table
        let records = changes.records
        // The records grouped by term (a counting sort, keeping the recorded order within a
        // term), and the terms in byte order.
        var starts = [Int](repeating: 0, count: table.count + 1)
        for r in records { starts[Int(r.term) + 1] += 1 }
        for t in 0..<table.count { starts[t + 1] += starts[t] }
        var grouped = [Int](repeating: 0, count: records.count)
        var next = Array(starts.dropLast())
        for (i, r) in records.enumerated() {
            grouped[next[Int(r.term)]] = i
            next[Int(r.term)] += 1
        }
        let order = table.arena.withUnsafeBufferPointer { arena -> [Int] in
            (0..<table.count).sorted { a, b in
                compareBytes(
                    UnsafeBufferPointer(rebasing: arena[table.start(a)..<table.ends[a]]),
                    UnsafeBufferPointer(rebasing: arena[table.start(b)..<table.ends[b]])) < 0
            }
        }
        let occurrences = changes.occurrences
        func entry(_ r: TextIndexChanges.Record) -> TextEntry {
            TextEntry(
                doc: r.doc, frequency: Int(r.frequency), norm: TextLengths.norm(r.length), length: r.length,
                occurrences: occurrences[r.occurrencesStart..<r.occurrencesEnd])
        }
        var listed: [[UInt8]] = []
        var postings = 0, tombstoneCount = 0
        var entries: [TextEntry] = []
        for t in order {
            let group = grouped[starts[t]..<starts[t + 1]]
            entries.removeAll(keepingCapacity: true)
            var tombstones: [Int] = []
            // The usual case, a build: only puts, of numbers given in increasing order.
            var ascendingPuts = true
            var previous = -1
            for i in group {
                let r = records[i]
                guard r.frequency > 0, r.doc > previous else {
                    ascendingPuts = false
                    break
                }
                previous = r.doc
            }
            if ascendingPuts {
                entries.reserveCapacity(group.count)
                for i in group { entries.append(entry(records[i])) }
            } else {
                // A number is put at most once (rows get new numbers when they change), so a
                // removal of a number put in this batch cancels it; other removals are tombstones.
                var puts: [Int: Int] = [:]
                var removed: [Int] = []
                for i in group {
                    let r = records[i]
                    if r.frequency > 0 { puts[r.doc] = i } else { removed.append(r.doc) }
                }
                for doc in removed where puts.removeValue(forKey: doc) == nil { tombstones.append(doc) }
                tombstones.sort()
                entries = puts.sorted { $0.key < $1.key }.map { entry(records[$0.value]) }
            }
            guard !entries.isEmpty || !tombstones.isEmpty else { continue }
            table.withTerm(t) { term in
                writeTerm(term, segment: id, entries: entries, tombstones: tombstones, put: put)
            }
            listed.append(Array(table.bytes(t)))
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
}
