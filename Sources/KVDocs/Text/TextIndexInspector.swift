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
struct TextIndexInspector {
    let index: TextIndex
    let reader: any KeyValueReader
    var layout: TextIndexLayout { index.layout }

    /// The logical entries of a row with `contribution`.
    static func logicalEntries(of id: TupleElement, _ contribution: TextDocument, index: TextIndex) -> [([UInt8], [UInt8])] {
        guard contribution.totalTokens > 0 else { return [] }
        var result = contribution.postings.map { term, columns in
            (index.layout.subspace.pack(["p", .string(term.text), id]),
             logicalPosting(frequency: columns.values.reduce(0) { $0 + $1.count }, occurrences: index.occurrences(columns)))
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

    static func logicalStatistics(documents: Int, tokens: Int) -> [UInt8] {
        Tuple([.int(Int64(documents)), .int(Int64(tokens))]).encoded
    }

    /// The stored index as logical entries (see the type's description).
    func logicalEntries() throws -> [([UInt8], [UInt8])] {
        var result: [([UInt8], [UInt8])] = []
        func problem(_ message: String) { result.append((layout.subspace.pack(["!", .string(message)]), [])) }
        func each(_ subspace: Subspace, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) throws {
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
                problem("row \(id.map { "\($0)" } ?? "?") has number \(doc.map(String.init) ?? "?"), which maps back to \(doc.flatMap { rows[$0] }.map { "\($0)" } ?? "nothing")")
                return
            }
            numbered.insert(doc)
        }
        for (doc, id) in rows where !numbered.contains(doc) { problem("document number \(doc) maps to row \(id), which has no number") }

        if let stored = try reader.value(forKey: layout.statistics) {
            if let stats = try? index.statistics(reader) {
                result.append((layout.statistics, Self.logicalStatistics(documents: stats.documents, tokens: stats.tokens)))
                if let last = rows.keys.max(), last >= stats.nextDoc { problem("document number \(last) is not below the counter \(stats.nextDoc)") }
            } else {
                result.append((layout.statistics, stored))
            }
        }

        var lengths: [Int: Int] = [:]
        try each(layout.allLengths) { k, v in
            guard let block = try? Tuple(decoding: UnsafeRawBufferPointer(rebasing: k[layout.allLengths.prefix.count...])).int(at: 0),
                  block >= 0, let values = try? TextLengths.decode(Array(v)) else {
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
        let base = layout.allPostings.prefix.count
        try each(layout.allPostings) { k, v in
            guard let t = try? Tuple(decoding: UnsafeRawBufferPointer(rebasing: k[base...])), t.count == 2,
                  case .string(let term) = t.elements[0], case .int(let first) = t.elements[1], first >= 0,
                  let block = try? PostingBlockHeader(firstDoc: Int(first), v).decode(v) else {
                problem("a posting block is damaged: \(Self.describe(k))")
                return
            }
            blocks.insert(ByteKey(layout.occurrences(term, block.firstDoc)))
            var occurrences: [[UInt8]]?
            if index.detail != .none {
                let stored = try reader.value(forKey: layout.occurrences(term, block.firstDoc))
                occurrences = stored.flatMap { bytes in try? bytes.withUnsafeBytes { try OccurrenceBlock.decode($0, count: block.count).entries } }
                if occurrences == nil { problem("term \"\(term)\": the posting block at \(block.firstDoc) has no readable occurrences") }
            }
            for (e, doc) in block.docs.enumerated() {
                guard let id = rows[doc] else {
                    problem("term \"\(term)\": document number \(doc) has no row")
                    continue
                }
                let f = block.frequencies[e]
                let length = lengths[doc] ?? 0
                if block.norms[e] != TextLengths.norm(length) {
                    problem("term \"\(term)\": row \(id) has norm \(block.norms[e]) for length \(length)")
                }
                if !block.impacts.contains(where: { $0.frequency >= f && $0.length <= length }) {
                    problem("term \"\(term)\": the block at \(block.firstDoc) has impacts below row \(id)'s (\(f), \(length))")
                }
                let entry = occurrences.map { $0[e] } ?? []
                if let occurrences, let decoded = try? occurrences[e].withUnsafeBytes({ try TextDocument.decode($0, positions: index.detail == .full) }),
                   decoded.reduce(0, { $0 + $1.count }) != f {
                    problem("term \"\(term)\": row \(id)'s occurrences do not add up to its frequency \(f)")
                }
                result.append((layout.subspace.pack(["p", .string(term), id]), Self.logicalPosting(frequency: f, occurrences: entry)))
            }
        }
        try each(layout.allOccurrences) { k, _ in
            if !blocks.contains(ByteKey(Array(k))) { problem("an occurrence block has no posting block: \(Self.describe(k))") }
        }
        return result
    }

    static func describe(_ key: UnsafeRawBufferPointer) -> String {
        (try? Tuple(decoding: key).description) ?? "0x" + key.map { String($0, radix: 16) }.joined()
    }

    /// The terms starting with `prefix` (every term for ""), in order, with the number of
    /// rows holding each, at most `limit`.
    func terms(prefix: String, limit: Int?) throws -> [(term: String, documents: Int)] {
        var result: [(term: String, documents: Int)] = []
        let base = layout.allPostings.prefix.count
        let range = prefix.isEmpty ? layout.allPostings.range : layout.postings(prefix: prefix)
        let scan = try reader.scan(range, order: .forward)
        while let (term, count) = try scan.next({ k, v -> (String, Int) in
            let t = try Tuple(decoding: UnsafeRawBufferPointer(rebasing: k[base...]))
            guard t.count == 2, case .string(let term) = t.elements[0], case .int(let first) = t.elements[1], first >= 0 else {
                throw KVDocsError(.corruption, "a text posting key is damaged: \(t)")
            }
            return (term, try PostingBlockHeader(firstDoc: Int(first), v).count)
        }) {
            if let last = result.last, last.term.hasSameCodePoints(as: term) {
                result[result.count - 1].documents += count
            } else {
                if let limit, result.count >= limit { break }
                result.append((term, count))
            }
        }
        return result
    }
}
