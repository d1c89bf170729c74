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
}
