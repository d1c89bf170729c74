import KVKeys
import KVStorage
import KVSupport

/// Reads a text index's stored layout back in a form that does not depend on the order of
/// writes, for verification and for tools.
///
/// Block boundaries and document numbers depend on the history of writes, so verification
/// compares *logical* entries, by row id:
/// - `("s",)` → `(rows, tokens)`;
/// - `("p", term, id)` → the row's frequency, then its stored occurrences;
/// - `("n", id)` → the row's token count (rows with tokens only).
///
/// Anything the stored layout gets wrong that the logical form cannot show (a number
/// mapped to two rows, impacts below an entry, occurrences that disagree with a
/// frequency, a posting block without occurrences) becomes an entry `("!", message)`,
/// which no document implies, so verification reports it.
package struct TextIndexInspector {
    let index: TextIndex
    let reader: any KeyValueReader

    package init(index: TextIndex, reader: any KeyValueReader) {
        self.index = index
        self.reader = reader
    }
    var layout: TextIndexLayout { index.layout }

    /// The logical entries of a row with `contribution`.
    package static func logicalEntries(of id: TupleElement, _ contribution: TextDocument, index: TextIndex) -> [(
        [UInt8], [UInt8]
    )] {
        guard contribution.totalTokens > 0 else { return [] }
        var result = contribution.terms.enumerated().map { i, term in
            (
                index.layout.subspace.pack(["p", .string(term.text), id]),
                logicalPosting(
                    frequency: contribution.frequency(ofTerm: i),
                    occurrences: index.occurrences(of: contribution, term: i))
            )
        }
        result.append((index.layout.subspace.pack(["n", id]), logicalLength(contribution.totalTokens)))
        return result
    }

    static func logicalPosting(frequency: Int, occurrences: some Collection<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        Varint.append(frequency, to: &out)
        out += occurrences
        return out
    }

    static func logicalLength(_ length: Int) -> [UInt8] {
        var out: [UInt8] = []
        Varint.append(length, to: &out)
        return out
    }

    package static func logicalStatistics(documents: Int, tokens: Int) -> [UInt8] {
        Tuple([.int(Int64(documents)), .int(Int64(tokens))]).encoded
    }

    /// The stored index as logical entries (see the type's description).
    package func logicalEntries() throws -> [([UInt8], [UInt8])] {
        var result: [([UInt8], [UInt8])] = []
        func problem(_ message: String) { result.append((layout.subspace.pack(["!", .string(message)]), [])) }
        func each(_ subspace: Subspace, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) throws
        {
            let scan = try reader.scan(subspace.range, order: .forward)
            while try scan.next(body) != nil {}
        }

        // Rows by document number, and the numbers by row: both ways must agree.
        var rows: [Int: TupleElement] = [:]
        try each(layout.allRows) { k, v in
            do {
                let doc = try TextIndexLayout.documentNumber(k, at: layout.allRows.prefix.count)
                let t = try Tuple(decoding: v)
                guard t.count == 1 else { throw KVDocsError(.corruption, "not one id") }
                rows[doc] = t.elements[0]
            } catch {
                problem("a document-number entry is damaged: \(Self.describe(k))")
            }
        }
        var numbered = Set<Int>()
        try each(layout.allNumbers) { k, v in
            let id = try? Tuple(decoding: UnsafeRawBufferPointer(rebasing: k[layout.allNumbers.prefix.count...]))
            let doc = try? Tuple(decoding: v).int(at: 0)
            guard let id, id.count == 1, let doc, rows[doc] == id.elements[0] else {
                problem(
                    "row \(id.map { "\($0)" } ?? "?") has number \(doc.map(String.init) ?? "?"), which maps back to \(doc.flatMap { rows[$0] }.map { "\($0)" } ?? "nothing")"
                )
                return
            }
            numbered.insert(doc)
        }
        for (doc, id) in rows where !numbered.contains(doc) {
            problem("document number \(doc) maps to row \(id), which has no number")
        }

        if let stored = try reader.value(forKey: layout.statistics) {
            if let stats = try? index.statistics(reader) {
                result.append(
                    (layout.statistics, Self.logicalStatistics(documents: stats.documents, tokens: stats.tokens)))
                if let last = rows.keys.max(), last >= stats.nextDoc {
                    problem("document number \(last) is not below the counter \(stats.nextDoc)")
                }
            } else {
                result.append((layout.statistics, stored))
            }
        }

        var lengths: [Int: Int] = [:]
        try each(layout.allLengths) { k, v in
            guard
                let block = try? Tuple(decoding: UnsafeRawBufferPointer(rebasing: k[layout.allLengths.prefix.count...]))
                    .int(at: 0),
                block >= 0, let values = try? TextLengths.decode(Array(v))
            else {
                problem("a length block is damaged: \(Self.describe(k))")
                return
            }
            for (slot, length) in values.enumerated() where length > 0 {
                let doc = block.multipliedReportingOverflow(by: TextLengths.blockSize).partialValue.saturatingAdd(slot)
                lengths[doc] = length
                if let id = rows[doc] {
                    result.append((layout.subspace.pack(["n", id]), Self.logicalLength(length)))
                } else {
                    problem("document number \(doc) has a length but no row")
                }
            }
        }

        var blocks = Set<ByteKey>()
        // The segments, the merge in progress, and what each segment holds.
        var structure = TextStructure(segments: [:])
        do {
            structure = try TextStructure.load(layout, reader)
        } catch let error as KVDocsError {
            problem("the segment records or the merge state are damaged: \(error.message)")
        }
        var known = Set(structure.segments.keys)
        if let merge = structure.merge { known.insert(merge.output) }
        var held: [Int: (postings: Int, tombstones: Int, terms: Set<String>)] = [:]
        let base = layout.allPostings.prefix.count
        var current: String?
        var puts: [(doc: Int, segment: Int, first: Int, frequency: Int, occurrences: [UInt8])] = []
        var ranges: [(first: Int, last: Int)] = []
        var tombstones: [Int] = []
        func finishTerm() {
            guard let term = current else { return }
            defer {
                puts = []
                tombstones = []
                ranges = []
            }
            ranges.sort { $0.first < $1.first }
            for (a, b) in zip(ranges, ranges.dropFirst()) where b.first <= a.last {
                problem("term \"\(term)\": posting blocks overlap (documents \(a.first)...\(a.last) and \(b.first))")
            }
            var byDoc: [Int: (frequency: Int, occurrences: [UInt8])] = [:]
            for p in puts {
                if byDoc[p.doc] != nil { problem("term \"\(term)\": document number \(p.doc) has two postings") }
                byDoc[p.doc] = (p.frequency, p.occurrences)
            }
            var dead = Set<Int>()
            for doc in tombstones {
                if byDoc[doc] == nil {
                    problem("term \"\(term)\": a tombstone names document number \(doc), which has no posting")
                }
                if !dead.insert(doc).inserted { problem("term \"\(term)\": document number \(doc) has two tombstones") }
            }
            for (doc, posting) in byDoc.sorted(by: { $0.key < $1.key }) {
                if dead.contains(doc) {
                    if let id = rows[doc] {
                        problem("term \"\(term)\": row \(id)'s posting at document number \(doc) has a tombstone")
                    }
                    continue
                }
                guard let id = rows[doc] else {
                    problem("term \"\(term)\": document number \(doc) has no row")
                    continue
                }
                result.append(
                    (
                        layout.subspace.pack(["p", .string(term), id]),
                        Self.logicalPosting(frequency: posting.frequency, occurrences: posting.occurrences)
                    ))
            }
        }
        try each(layout.allPostings) { k, v in
            guard let t = try? Tuple(decoding: UnsafeRawBufferPointer(rebasing: k[base...])),
                t.count == 2 || t.count == 3,
                case .string(let term) = t.elements[0], case .int(let segment) = t.elements[1], segment >= 0
            else {
                problem("a posting key is damaged: \(Self.describe(k))")
                return
            }
            if current.map({ !$0.hasSameCodePoints(as: term) }) ?? true {
                finishTerm()
                current = term
            }
            let seg = Int(segment)
            if !known.contains(seg) { problem("term \"\(term)\" has postings in segment \(seg), which has no record") }
            held[seg, default: (0, 0, [])].terms.insert(term)
            if t.count == 2 {
                guard let docs = try? TextTombstones.decode(v) else {
                    problem("term \"\(term)\": the tombstones of segment \(seg) are damaged")
                    return
                }
                tombstones += docs
                held[seg]?.tombstones += docs.count
                return
            }
            guard case .int(let first) = t.elements[2], first >= 0,
                let block = try? PostingBlockHeader(firstDoc: Int(first), v).decode(v)
            else {
                problem("a posting block is damaged: \(Self.describe(k))")
                return
            }
            held[seg]?.postings += block.count
            ranges.append((block.firstDoc, block.lastDoc))
            blocks.insert(ByteKey(layout.occurrences(term, seg, block.firstDoc)))
            var occurrences: [ArraySlice<UInt8>]?
            if index.detail != .none {
                let stored = try reader.value(forKey: layout.occurrences(term, seg, block.firstDoc))
                occurrences = stored.flatMap { bytes in try? OccurrenceBlock.decode(bytes, count: block.count).entries }
                if occurrences == nil {
                    problem(
                        "term \"\(term)\": the posting block at \(block.firstDoc) in segment \(seg) has no readable occurrences"
                    )
                }
            }
            for (e, doc) in block.docs.enumerated() {
                let f = block.frequencies[e]
                let entry = occurrences.map { $0[e] } ?? []
                if let id = rows[doc] {
                    let length = lengths[doc] ?? 0
                    if block.norms[e] != TextLengths.norm(length) {
                        problem("term \"\(term)\": row \(id) has norm \(block.norms[e]) for length \(length)")
                    }
                    if !block.impacts.contains(where: { $0.frequency >= f && $0.length <= length }) {
                        problem(
                            "term \"\(term)\": the block at \(block.firstDoc) in segment \(seg) has impacts below row \(id)'s (\(f), \(length))"
                        )
                    }
                }
                if let occurrences,
                    let decoded = try? occurrences[e].withUnsafeBytes({
                        try TextDocument.decode($0, positions: index.detail == .full)
                    }),
                    decoded.reduce(0, { $0 + $1.count }) != f
                {
                    problem(
                        "term \"\(term)\": document number \(doc)'s occurrences do not add up to its frequency \(f)")
                }
                puts.append((doc, seg, block.firstDoc, f, Array(entry)))
            }
        }
        finishTerm()
        try each(layout.allOccurrences) { k, _ in
            if !blocks.contains(ByteKey(Array(k))) {
                problem("an occurrence block has no posting block: \(Self.describe(k))")
            }
        }
        try checkSegments(structure, held, problem)
        return result
    }

    /// Checks each segment's record and term list against what it holds, and the merge in
    /// progress: a settled segment lists exactly its terms and counts its postings and
    /// tombstones; an input of the merge lists every term it still holds; the output lists
    /// exactly the terms written so far.
    private func checkSegments(
        _ structure: TextStructure, _ held: [Int: (postings: Int, tombstones: Int, terms: Set<String>)],
        _ problem: (String) -> Void
    ) throws {
        let inputs = Set(structure.merge?.inputs.map(\.segment) ?? [])
        func termList(_ segment: Int, chunks: Int) throws -> Set<String>? {
            var terms = Set<String>()
            for c in 0..<chunks {
                guard let bytes = try reader.value(forKey: layout.termChunk(segment, c)),
                    let list = try? TextTermList.decode(bytes)
                else {
                    problem("segment \(segment): chunk \(c) of its term list is missing or damaged")
                    return nil
                }
                for t in list {
                    guard let term = String(validating: t, as: UTF8.self) else {
                        problem("segment \(segment): its term list holds bytes that are not UTF-8")
                        return nil
                    }
                    terms.insert(term)
                }
            }
            return terms
        }
        for (id, segment) in structure.segments.sorted(by: { $0.key < $1.key }) {
            let holds = held[id] ?? (0, 0, [])
            guard let listed = try termList(id, chunks: segment.chunks) else { continue }
            if inputs.contains(id) {
                if !holds.terms.isSubset(of: listed) {
                    problem("segment \(id) (being merged) holds terms its term list lacks")
                }
                continue
            }
            if holds.postings != segment.postings || holds.tombstones != segment.tombstones {
                problem(
                    "segment \(id) holds \(holds.postings) postings and \(holds.tombstones) tombstones; its record says \(segment.postings) and \(segment.tombstones)"
                )
            }
            if holds.terms != listed {
                problem(
                    "segment \(id): its term list (\(listed.count) terms) differs from the \(holds.terms.count) terms it holds"
                )
            }
        }
        if let merge = structure.merge {
            if structure.segments[merge.output] != nil {
                problem("the merge in progress writes segment \(merge.output), which already has a record")
            }
            let holds = held[merge.output] ?? (0, 0, [])
            if let listed = try termList(merge.output, chunks: merge.chunks), listed != holds.terms {
                problem(
                    "the merge in progress has written \(holds.terms.count) terms to segment \(merge.output); its term list names \(listed.count)"
                )
            }
            if holds.postings != merge.postings || holds.tombstones != merge.tombstones {
                problem(
                    "the merge in progress has written \(holds.postings) postings and \(holds.tombstones) tombstones; its state says \(merge.postings) and \(merge.tombstones)"
                )
            }
            let orders = structure.segments.values.filter { inputs.contains($0.id) }.map(\.order).sorted()
            let between = structure.segments.values.filter {
                !inputs.contains($0.id) && ($0.order > (orders.first ?? 0)) && ($0.order < (orders.last ?? 0))
            }
            if !between.isEmpty { problem("the merge in progress reads segments that are not adjacent in age") }
        }
        // Term-list chunks of segments with no record.
        var chunkOwners = Set<Int>()
        let scan = try reader.scan(layout.allTermChunks.range, order: .forward)
        let base = layout.allTermChunks.prefix.count
        while let owner = try scan.next({ k, _ -> Int? in
            var i = base
            return try? TextIndexLayout.readNumber(k, at: &i)
        }) { if let owner { chunkOwners.insert(owner) } else { problem("a term-list key is damaged") } }
        var known = Set(structure.segments.keys)
        if let merge = structure.merge { known.insert(merge.output) }
        for owner in chunkOwners.subtracting(known).sorted() {
            problem("segment \(owner) has a term list but no record")
        }
        if let stats = try? index.statistics(reader), let top = known.max(), top >= stats.nextSegment {
            problem("segment \(top) is not below the counter \(stats.nextSegment)")
        }
    }

    static func describe(_ key: UnsafeRawBufferPointer) -> String {
        (try? Tuple(decoding: key).description) ?? "0x" + key.map { String($0, radix: 16) }.joined()
    }

    /// The terms starting with `prefix` (every term for ""), in order, with the number of
    /// rows holding each, at most `limit`.
    package func terms(prefix: String, limit: Int?) throws -> [(term: String, documents: Int)] {
        var result: [(term: String, documents: Int)] = []
        let base = layout.allPostings.prefix.count
        let range = prefix.isEmpty ? layout.allPostings.range : layout.postings(prefix: prefix)
        let scan = try reader.scan(range, order: .forward)
        // Postings count one row each, tombstones take one away (each names a posting).
        while let (term, count) = try scan.next({ k, v -> (String, Int) in
            let t = try Tuple(decoding: UnsafeRawBufferPointer(rebasing: k[base...]))
            guard t.count == 2 || t.count == 3, case .string(let term) = t.elements[0],
                case .int(let segment) = t.elements[1], segment >= 0
            else {
                throw KVDocsError(.corruption, "a text posting key is damaged: \(t)")
            }
            if t.count == 2 { return (term, -(try TextTombstones.decode(v).count)) }
            guard case .int(let first) = t.elements[2], first >= 0 else {
                throw KVDocsError(.corruption, "a text posting key is damaged: \(t)")
            }
            return (term, try PostingBlockHeader(firstDoc: Int(first), v).count)
        }) {
            if let last = result.last, last.term.hasSameCodePoints(as: term) {
                result[result.count - 1].documents += count
            } else {
                if let last = result.last, last.documents <= 0 { result.removeLast() }
                if let limit, result.count >= limit { break }
                result.append((term, count))
            }
        }
        if let last = result.last, last.documents <= 0 { result.removeLast() }
        return result
    }
}
