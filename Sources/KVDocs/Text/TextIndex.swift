/// One full-text index in a subspace of an ordered key-value store: tokenizing, postings,
/// corpus statistics and ranking.
///
/// The text layer knows rows, not documents: a row is identified by a tuple element and
/// has one text per column. Which documents and fields feed it is the document layer's
/// business (``TextIndexMaintainer``). Reads go through a ``KeyValueReader``; writes are
/// collected in a ``TextIndexChanges`` for the whole write batch and then added, once per
/// term, to the ``WriteBatch`` that the caller commits with whatever else the write changes.
struct TextIndex: Sendable {
    let layout: TextIndexLayout
    let tokenizer: TextTokenizer
    /// The column names, for column filters in queries (`title : word`).
    let columns: [String]
    /// What is stored of each occurrence.
    let detail: TextDetail

    init(subspace: Subspace, tokenizer: TextTokenizer, columns: [String], detail: TextDetail = .full) {
        self.layout = TextIndexLayout(subspace: subspace)
        self.tokenizer = tokenizer
        self.columns = columns
        self.detail = detail
    }

    /// What a row with these column texts contributes.
    func contribution(_ texts: [String]) -> TextDocument {
        TextDocument(tokenizer: tokenizer, texts: texts)
    }

    /// The stored occurrences of a term in a row, as this index's detail keeps them.
    func occurrences(_ columns: [Int: [Int]]) -> [UInt8] {
        detail == .none ? [] : TextDocument.encode(columns, positions: detail == .full)
    }

    /// The corpus statistics: (rows, tokens, the next document number).
    func statistics(_ reader: some KeyValueReader) throws -> (documents: Int, tokens: Int, nextDoc: Int) {
        guard let bytes = try reader.value(forKey: layout.statistics) else { return (0, 0, 0) }
        let t = try Tuple(decoding: bytes)
        guard t.count == 3 else { throw KVDocsError(.corruption, "the statistics of a text index are damaged (\(t))") }
        let values = (try t.int(at: 0), try t.int(at: 1), try t.int(at: 2))
        guard values.0 >= 0, values.1 >= 0, values.2 >= 0, values.2 <= TextDocument.maximumDocument else {
            throw KVDocsError(.corruption, "the statistics of a text index are out of range (\(t))")
        }
        return values
    }

    /// The stored form of the statistics.
    func statisticsValue(documents: Int, tokens: Int, nextDoc: Int) -> [UInt8] {
        Tuple([.int(Int64(documents)), .int(Int64(tokens)), .int(Int64(nextDoc))]).encoded
    }

    /// Records in `changes` what changes when row `id` goes from `old` to `new` (`nil`:
    /// absent). Document-number mappings are written at once through `put`/`delete`;
    /// postings and lengths wait for ``apply(_:reader:put:delete:)``.
    /// - Throws: `.corruption` when a row with tokens has no document number.
    func update(id: TupleElement, old before: TextDocument?, new after: TextDocument?, changes: TextIndexChanges,
                reader: some KeyValueReader, put: ([UInt8], [UInt8]) -> Void, delete: ([UInt8]) -> Void) throws {
        if before == after { return }
        changes.documents = changes.documents.saturatingAdd((after == nil ? 0 : 1) - (before == nil ? 0 : 1))
        let oldLength = before?.totalTokens ?? 0, newLength = after?.totalTokens ?? 0
        changes.tokens = changes.tokens.saturatingAdd(newLength - oldLength)
        changes.statisticsChanged = true
        let idKey = ByteKey(Tuple([id]).encoded)
        func posting(_ columns: [Int: [Int]]) -> TextIndexChanges.Change {
            .put(TextIndexChanges.Posting(frequency: columns.values.reduce(0) { $0 + $1.count }, length: newLength, occurrences: occurrences(columns)))
        }
        if let before, oldLength > 0 {
            let stored: Int?
            if let local = changes.numbers[idKey] { stored = local } else { stored = try documentNumber(of: id, reader) }
            guard let doc = stored else {
                throw KVDocsError(.corruption, "text index \(layout.subspace) has no document number for row \(id); reindex it")
            }
            if let after, newLength > 0 {
                for term in before.postings.keys where after.postings[term] == nil { changes.record(term, doc, .remove) }
                // A new length changes every posting's impact, so every posting is rewritten.
                for (term, columns) in after.postings where oldLength != newLength || before.postings[term] != columns {
                    changes.record(term, doc, posting(columns))
                }
                if oldLength != newLength { changes.lengths[doc] = newLength }
            } else {
                for term in before.postings.keys { changes.record(term, doc, .remove) }
                changes.lengths[doc] = 0
                delete(layout.number(id))
                delete(layout.row(doc))
                changes.numbers[idKey] = .some(nil)
            }
        } else if let after, newLength > 0 {
            let doc = changes.nextDoc
            guard doc < TextDocument.maximumDocument else {
                throw KVDocsError(.invalidArgument, "text index \(layout.subspace) has used every document number; reindex it")
            }
            changes.nextDoc += 1
            put(layout.number(id), Tuple([.int(Int64(doc))]).encoded)
            put(layout.row(doc), idKey.bytes)
            changes.numbers[idKey] = doc
            for (term, columns) in after.postings { changes.record(term, doc, posting(columns)) }
            changes.lengths[doc] = newLength
        }
    }

    /// The document number of row `id`, or nil.
    func documentNumber(of id: TupleElement, _ reader: some KeyValueReader) throws -> Int? {
        guard let bytes = try reader.value(forKey: layout.number(id)) else { return nil }
        let n = try Tuple(decoding: bytes).int(at: 0)
        guard n >= 0 && n < TextDocument.maximumDocument else { throw KVDocsError(.corruption, "text index \(layout.subspace): row \(id) has document number \(n)") }
        return n
    }

    /// Adds to the batch, through `put` and `delete`, every posting and length change
    /// recorded in `changes` (each term's blocks rewritten once), and empties them. Reads
    /// the state before the batch through `reader`.
    func apply(_ changes: TextIndexChanges, reader: some KeyValueReader, put: ([UInt8], [UInt8]) -> Void, delete: ([UInt8]) -> Void) throws {
        for (term, recorded) in changes.terms {
            // By document, the last change of each document winning (a batch may insert a
            // row and then change it); an import records them in order already.
            var sorted = recorded
            if !zip(recorded, recorded.dropFirst()).allSatisfy({ $0.0.0 < $0.1.0 }) {
                sorted = recorded.enumerated().sorted { ($0.element.0, $0.offset) < ($1.element.0, $1.offset) }.map(\.element)
                var unique: [(Int, TextIndexChanges.Change)] = []
                for entry in sorted {
                    if unique.last?.0 == entry.0 { unique[unique.count - 1] = entry } else { unique.append(entry) }
                }
                sorted = unique
            }
            try applyTerm(term.text, sorted, reader: reader, put: put, delete: delete)
        }
        changes.terms.removeAll(keepingCapacity: true)
        var byBlock: [Int: [(Int, Int)]] = [:]
        for (doc, length) in changes.lengths { byBlock[doc / TextLengths.blockSize, default: []].append((doc % TextLengths.blockSize, length)) }
        for (block, slots) in byBlock {
            var lengths = try reader.value(forKey: layout.lengths(block)).map { try TextLengths.decode($0) } ?? []
            for (slot, length) in slots {
                if lengths.count <= slot { lengths += Array(repeating: 0, count: slot + 1 - lengths.count) }
                lengths[slot] = length
            }
            while lengths.last == 0 { lengths.removeLast() }
            if lengths.isEmpty { delete(layout.lengths(block)) } else { put(layout.lengths(block), TextLengths.encode(lengths)) }
        }
        changes.lengths.removeAll(keepingCapacity: true)
        changes.pending = 0
    }

    /// A posting block being rewritten: its entries, occurrences and impacts, and the key it
    /// was stored under.
    private struct WorkingBlock {
        var stored: Int?
        var docs: [Int] = []
        var frequencies: [Int] = []
        var norms: [Int] = []
        var occurrences: [[UInt8]] = []
        var impacts: [PostingBlock.Impact] = []
        var dirty = false
    }

    /// Rewrites the blocks of `term` that `changes` (sorted by document) touch.
    private func applyTerm(_ term: String, _ changes: [(Int, TextIndexChanges.Change)], reader: some KeyValueReader,
                           put: ([UInt8], [UInt8]) -> Void, delete: ([UInt8]) -> Void) throws {
        guard let first = changes.first?.0, let last = changes.last?.0 else { return }
        let prefix = layout.postingsPrefix(term)
        if try appendTerm(term, changes, reader: reader, put: put) { return }
        // The blocks from the one holding the first change (the last starting at or before
        // it) to the last starting at or before the last change, read backwards with one
        // iterator: for rows appended at the end of the list, that is the term's last block.
        var blocks: [WorkingBlock] = []
        let scan = try reader.scan(KeyRange(lower: .included(prefix), upper: .included(layout.block(term, last))), order: .reverse)
        while let block = try scan.next({ k, v -> PostingBlock in
            let firstDoc = try TextIndexLayout.documentNumber(k, at: prefix.count)
            return try PostingBlockHeader(firstDoc: firstDoc, v).decode(v)
        }) {
            var working = WorkingBlock(stored: block.firstDoc, docs: block.docs, frequencies: block.frequencies, norms: block.norms, impacts: block.impacts)
            if detail != .none {
                guard let bytes = try reader.value(forKey: layout.occurrences(term, block.firstDoc)) else {
                    throw KVDocsError(.corruption, "text index \(layout.subspace): term \"\(term)\" has a posting block at \(block.firstDoc) without occurrences; reindex it")
                }
                working.occurrences = try bytes.withUnsafeBytes { try OccurrenceBlock.decode($0, count: block.count).entries }
            }
            blocks.append(working)
            if block.firstDoc <= first { break }
        }
        blocks.reverse()
        if blocks.isEmpty { blocks.append(WorkingBlock()) }

        // Each change goes to the last block starting at or before its document (or the first).
        var b = 0
        for (doc, change) in changes {
            while b + 1 < blocks.count, let next = blocks[b + 1].docs.first, next <= doc { b += 1 }
            var block = blocks[b]
            let (found, at) = Self.search(block.docs, doc)
            switch change {
            case .put(let p):
                if found {
                    block.frequencies[at] = p.frequency
                    block.norms[at] = TextLengths.norm(p.length)
                    if detail != .none { block.occurrences[at] = p.occurrences }
                } else {
                    block.docs.insert(doc, at: at)
                    block.frequencies.insert(p.frequency, at: at)
                    block.norms.insert(TextLengths.norm(p.length), at: at)
                    if detail != .none { block.occurrences.insert(p.occurrences, at: at) }
                }
                block.impacts.append(PostingBlock.Impact(frequency: p.frequency, length: p.length))
                block.dirty = true
            case .remove:
                guard found else { continue }
                block.docs.remove(at: at)
                block.frequencies.remove(at: at)
                block.norms.remove(at: at)
                if detail != .none { block.occurrences.remove(at: at) }
                block.dirty = true
            }
            blocks[b] = block
        }

        // Merge small neighbours, then split what outgrew a block.
        var merged: [WorkingBlock] = []
        let capacity = PostingBlock.capacity
        for block in blocks {
            if var previous = merged.last, previous.docs.count + block.docs.count <= capacity,
               (previous.dirty || block.dirty), (previous.docs.count < capacity / 4 || block.docs.count < capacity / 4) {
                previous.docs += block.docs
                previous.frequencies += block.frequencies
                previous.norms += block.norms
                previous.occurrences += block.occurrences
                previous.impacts += block.impacts
                previous.dirty = true
                merged[merged.count - 1] = previous
                if let stored = block.stored { delete(layout.block(term, stored)); if detail != .none { delete(layout.occurrences(term, stored)) } }
            } else {
                merged.append(block)
            }
        }
        for block in merged where block.dirty {
            if let stored = block.stored, block.docs.first != stored {
                delete(layout.block(term, stored))
                if detail != .none { delete(layout.occurrences(term, stored)) }
            }
            let impacts = PostingBlock.frontier(block.impacts)
            var start = 0
            while start < block.docs.count {
                // Full blocks first: a list that grows at its end (new rows get the next
                // numbers) keeps its blocks full; a small remainder merges when next touched.
                let end = min(start + capacity, block.docs.count)
                let docs = Array(block.docs[start..<end])
                let firstDoc = docs[0]
                put(layout.block(term, firstDoc), PostingBlock(firstDoc: firstDoc, docs: docs, frequencies: Array(block.frequencies[start..<end]), norms: Array(block.norms[start..<end]), impacts: impacts).encoded())
                if detail != .none { put(layout.occurrences(term, firstDoc), OccurrenceBlock(entries: Array(block.occurrences[start..<end])).encoded()) }
                start = end
            }
        }
    }

    /// The common case of a batch that only adds rows (new rows take the next numbers, so
    /// they come after every row a term has): the term's last block is extended without
    /// decoding its entries (its stored bytes are kept and the new entries appended), and
    /// what does not fit starts new blocks. Returns false, writing nothing, when `changes`
    /// are not all additions after the term's last row.
    private func appendTerm(_ term: String, _ changes: [(Int, TextIndexChanges.Change)], reader: some KeyValueReader,
                            put: ([UInt8], [UInt8]) -> Void) throws -> Bool {
        var postings: [(doc: Int, posting: TextIndexChanges.Posting)] = []
        postings.reserveCapacity(changes.count)
        for (doc, change) in changes {
            guard case .put(let p) = change else { return false }
            postings.append((doc, p))
        }
        let prefix = layout.postingsPrefix(term)
        let scan = try reader.scan(layout.postings(term), order: .reverse)
        let lastBlock = try scan.next { k, v -> (header: PostingBlockHeader, bytes: [UInt8]) in
            (try PostingBlockHeader(firstDoc: TextIndexLayout.documentNumber(k, at: prefix.count), v), Array(v))
        }
        var next = 0
        if let (header, bytes) = lastBlock {
            guard postings[0].doc > header.lastDoc else { return false }
            let room = PostingBlock.capacity - header.count
            if room > 0 {
                let added = postings.prefix(room)
                var occurrences: [UInt8] = []
                if detail != .none {
                    guard let stored = try reader.value(forKey: layout.occurrences(term, header.firstDoc)) else {
                        throw KVDocsError(.corruption, "text index \(layout.subspace): term \"\(term)\" has a posting block at \(header.firstDoc) without occurrences; reindex it")
                    }
                    occurrences = stored
                }
                var out: [UInt8] = []
                let lastDoc = added.last?.doc ?? header.lastDoc
                let impacts = PostingBlock.frontier(header.impacts + added.map { PostingBlock.Impact(frequency: $0.posting.frequency, length: $0.posting.length) })
                Varint.append(header.count + added.count, to: &out)
                Varint.append(lastDoc - header.firstDoc, to: &out)
                Varint.append(impacts.count, to: &out)
                for i in impacts {
                    Varint.append(i.frequency, to: &out)
                    Varint.append(i.length, to: &out)
                }
                out += bytes[header.bodyStart...]
                var previous = header.lastDoc
                for (doc, p) in added {
                    Varint.append(doc - previous, to: &out)
                    Varint.append(p.frequency, to: &out)
                    Varint.append(TextLengths.norm(p.length), to: &out)
                    previous = doc
                    if detail != .none {
                        Varint.append(p.occurrences.count, to: &occurrences)
                        occurrences += p.occurrences
                    }
                }
                put(layout.block(term, header.firstDoc), out)
                if detail != .none { put(layout.occurrences(term, header.firstDoc), occurrences) }
                next = added.count
            }
        }
        while next < postings.count {
            let chunk = postings[next..<min(next + PostingBlock.capacity, postings.count)]
            let firstDoc = chunk.first?.doc ?? 0
            let impacts = PostingBlock.frontier(chunk.map { PostingBlock.Impact(frequency: $0.posting.frequency, length: $0.posting.length) })
            put(layout.block(term, firstDoc), PostingBlock(firstDoc: firstDoc, docs: chunk.map(\.doc), frequencies: chunk.map(\.posting.frequency),
                                                              norms: chunk.map { TextLengths.norm($0.posting.length) }, impacts: impacts).encoded())
            if detail != .none { put(layout.occurrences(term, firstDoc), OccurrenceBlock(entries: chunk.map(\.posting.occurrences)).encoded()) }
            next += chunk.count
        }
        return true
    }

    /// Whether `docs` (ascending) holds `doc`, and where it is or would go.
    static func search(_ docs: [Int], _ doc: Int) -> (found: Bool, at: Int) {
        var lo = 0, hi = docs.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if docs[mid] < doc { lo = mid + 1 } else { hi = mid }
        }
        return (lo < docs.count && docs[lo] == doc, lo)
    }
}

/// What one write batch changes in a text index, collected document by document and
/// applied once per term at the end of the batch (or when a long build flushes).
final class TextIndexChanges {
    /// A row's occurrences of one term: its frequency, the row's length (for the block's
    /// impacts) and the stored occurrences.
    struct Posting {
        var frequency: Int
        var length: Int
        var occurrences: [UInt8]
    }

    enum Change {
        case put(Posting)
        case remove
    }

    var documents: Int
    var tokens: Int
    var nextDoc: Int
    var statisticsChanged = false
    /// Document numbers given or taken in this batch, by the row id's tuple encoding
    /// (`.some(nil)`: the row lost its number).
    var numbers: [ByteKey: Int?] = [:]
    /// Term → its changes in the order recorded (document, change).
    var terms: [TextTerm: [(Int, Change)]] = [:]
    /// Document → its new length (0: gone).
    var lengths: [Int: Int] = [:]
    /// Postings recorded since the last apply (to decide when a long build flushes).
    var pending = 0

    init(_ stored: (documents: Int, tokens: Int, nextDoc: Int)) {
        documents = stored.documents
        tokens = stored.tokens
        nextDoc = stored.nextDoc
    }

    func record(_ term: TextTerm, _ doc: Int, _ change: Change) {
        terms[term, default: []].append((doc, change))
        pending += 1
    }
}

/// The token counts of rows, by document number, in blocks of ``blockSize``: each block a
/// list of varints (0 for a slot without a row), trailing zeros dropped.
enum TextLengths {
    static let blockSize = 128

    /// A length in one byte, rounded down: exact below 128, then 3 significant bits
    /// after the leading one (so at most 1/8 below), 255 past 2^23.
    static func norm(_ length: Int) -> Int {
        guard length >= 128 else { return max(0, length) }
        let e = Int.bitWidth - 1 - length.leadingZeroBitCount  // 7 or more
        let code = 128 + (e - 7) * 8 + (length >> (e - 3)) & 7
        return min(code, 255)
    }

    /// The smallest length with norm `norm` (never more than the length it came from).
    static func length(ofNorm norm: Int) -> Int {
        guard norm >= 128 else { return norm }
        let e = (norm - 128) / 8 + 7
        return (8 + (norm - 128) % 8) << (e - 3)
    }

    static func encode(_ lengths: [Int]) -> [UInt8] {
        var out: [UInt8] = []
        for l in lengths { Varint.append(l, to: &out) }
        return out
    }

    /// - Throws: `.corruption` for bytes that are not a length block.
    static func decode(_ bytes: [UInt8]) throws -> [Int] {
        try bytes.withUnsafeBytes { raw in
            var i = 0
            var result: [Int] = []
            while i < raw.count {
                let v = try Varint.read(raw, &i)
                guard v >= 0 && v <= TextDocument.maximumPosition, result.count < blockSize else {
                    throw KVDocsError(.corruption, "a text length block is damaged")
                }
                result.append(v)
            }
            return result
        }
    }
}

/// The stored form of one text index (format 2), under its subspace:
///
/// - `("s",)` → `(rows, tokens, next document number)`: the corpus statistics BM25 needs,
///   kept exact, and the counter that numbers rows;
/// - `("i", id)` → `(number,)` and `("d", number)` → `(id,)`: each row with tokens has a
///   dense document number, both ways;
/// - `("p", term, first)` → a ``PostingBlock`` of the term's rows from document `first`;
/// - `("x", term, first)` → the matching ``OccurrenceBlock`` (columns, and positions with
///   `detail=full`; absent with `detail=none`);
/// - `("n", block)` → the token counts of rows `block × 128 ..< (block + 1) × 128` (``TextLengths``).
struct TextIndexLayout: Sendable {
    let subspace: Subspace

    var statistics: [UInt8] { subspace.pack(["s"]) }
    func number(_ id: TupleElement) -> [UInt8] { subspace.pack(["i", id]) }
    var allNumbers: Subspace { subspace["i"] }
    func row(_ doc: Int) -> [UInt8] { subspace.pack(["d", .int(Int64(doc))]) }
    var allRows: Subspace { subspace["d"] }
    /// The key prefix of a term's posting blocks.
    func postingsPrefix(_ term: String) -> [UInt8] { subspace.pack(["p", .string(term)]) }
    func postings(_ term: String) -> KeyRange { .prefix(postingsPrefix(term)) }
    func block(_ term: String, _ firstDoc: Int) -> [UInt8] { subspace.pack(["p", .string(term), .int(Int64(firstDoc))]) }
    func occurrences(_ term: String, _ firstDoc: Int) -> [UInt8] { subspace.pack(["x", .string(term), .int(Int64(firstDoc))]) }
    /// Every posting block of every term starting with `prefix` (bytewise).
    func postings(prefix: String) -> KeyRange {
        let encoded = subspace.pack(["p", .string(prefix)])
        return .prefix(Array(encoded.dropLast()))  // without the string's terminator
    }
    var allPostings: Subspace { subspace["p"] }
    var allOccurrences: Subspace { subspace["x"] }
    func lengths(_ block: Int) -> [UInt8] { subspace.pack(["n", .int(Int64(block))]) }
    var allLengths: Subspace { subspace["n"] }

    /// The non-negative integer whose tuple encoding ends `key` at `offset` (a document number).
    /// - Throws: `.corruption` for anything else.
    static func documentNumber(_ key: UnsafeRawBufferPointer, at offset: Int) throws -> Int {
        guard offset < key.count else { throw KVDocsError(.corruption, "a text index key lacks its document number") }
        let code = Int(key[offset])
        let n = code - 0x14
        guard n >= 0, n <= 7, offset + 1 + n == key.count else { throw KVDocsError(.corruption, "a text index key has a damaged document number") }
        var value = 0
        for i in 0..<n { value = value << 8 | Int(key[offset + 1 + i]) }
        guard value <= TextDocument.maximumDocument else { throw KVDocsError(.corruption, "a text index key has a document number out of range") }
        return value
    }
}

/// What a row contributes to a text index.
struct TextDocument: Equatable {
    /// Term → column → positions.
    var postings: [TextTerm: [Int: [Int]]] = [:]
    /// Tokens per column.
    var lengths: [Int]

    var totalTokens: Int { lengths.reduce(0, +) }

    init(tokenizer: TextTokenizer, texts: [String]) {
        lengths = []
        for (column, text) in texts.enumerated() {
            let tokens = tokenizer.tokens(text)
            lengths.append(tokens.count)
            for token in tokens { postings[TextTerm(token.term), default: [:]][column, default: []].append(token.position) }
        }
    }

    /// The stored occurrences of a term: for each column with hits, varints `column,
    /// count`, then (with `positions`) the position deltas.
    static func encode(_ columns: [Int: [Int]], positions withPositions: Bool = true) -> [UInt8] {
        var out: [UInt8] = []
        for column in columns.keys.sorted() {
            let positions = columns[column] ?? []
            Varint.append(column, to: &out)
            Varint.append(positions.count, to: &out)
            guard withPositions else { continue }
            var previous = 0
            for p in positions {
                Varint.append(p - previous, to: &out)
                previous = p
            }
        }
        return out
    }

    /// The largest token position a posting may hold. Real positions are far smaller (a
    /// column of 2^32 tokens would be a document of tens of gigabytes); the bound keeps
    /// position arithmetic (`start + length`, `start + offset`) from overflowing on a
    /// damaged posting.
    static let maximumPosition = Int(UInt32.max)
    /// The largest document number (2^40): past it a text index must be rebuilt.
    static let maximumDocument = 1 << 40

    /// The number of occurrences stored in `bytes` that lie in `allowed` columns, without
    /// decoding positions into arrays (for column filters that need no positions).
    /// - Throws: `.corruption` for bytes that are not occurrences.
    static func count(_ bytes: UnsafeRawBufferPointer, positions withPositions: Bool, allowed: Set<Int>?) throws -> Int {
        var total = 0
        var i = 0
        while i < bytes.count {
            let column = try Varint.read(bytes, &i)
            let count = try Varint.read(bytes, &i)
            guard count >= 1, count <= (withPositions ? bytes.count : maximumPosition) else { throw KVDocsError(.corruption, "text posting has an impossible count") }
            if allowed?.contains(column) ?? true { total += count }
            if withPositions {
                for _ in 0..<count { _ = try Varint.read(bytes, &i) }
            }
        }
        return total
    }

    /// The columns of stored occurrences, each with its count and (when `positions`) its
    /// positions.
    /// - Throws: `.corruption` for bytes that are not occurrences.
    static func decode(_ bytes: UnsafeRawBufferPointer, positions withPositions: Bool = true) throws -> [(column: Int, count: Int, positions: [Int])] {
        var result: [(Int, Int, [Int])] = []
        var i = 0
        while i < bytes.count {
            let column = try Varint.read(bytes, &i)
            let count = try Varint.read(bytes, &i)
            guard count >= 1, count <= (withPositions ? bytes.count : maximumPosition) else { throw KVDocsError(.corruption, "text posting has an impossible count") }
            guard withPositions else {
                result.append((column, count, []))
                continue
            }
            var positions: [Int] = []
            positions.reserveCapacity(count)
            var previous = 0
            for k in 0..<count {
                // Both are at most maximumPosition here, so the sum cannot overflow.
                let delta = min(try Varint.read(bytes, &i), maximumPosition + 1)
                guard k == 0 || delta > 0 else { throw KVDocsError(.corruption, "text posting repeats a token position") }
                previous += delta
                guard previous <= maximumPosition else {
                    throw KVDocsError(.corruption, "text posting has a token position past \(maximumPosition)")
                }
                positions.append(previous)
            }
            result.append((column, count, positions))
        }
        return result
    }
}

/// LEB128 variable-length unsigned integers.
enum Varint {
    static func append(_ value: Int, to out: inout [UInt8]) {
        var v = UInt64(max(0, value))
        while v >= 0x80 {
            out.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    static func read(_ bytes: UnsafeRawBufferPointer, _ i: inout Int) throws -> Int {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while i < bytes.count {
            let b = bytes[i]
            i += 1
            value |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 { return Int(truncatingIfNeeded: value) }
            shift += 7
            if shift > 56 { break }
        }
        throw KVDocsError(.corruption, "truncated or overlong varint in a text posting")
    }
}

/// A term as a dictionary key, compared by code points: two terms that Swift's `String`
/// would call equal (canonically equivalent spellings the tokenizer does not fold, such as
/// precomposed and conjoining Hangul) are two terms, as they are two posting keys.
struct TextTerm: Hashable, Sendable {
    let text: String
    init(_ text: String) { self.text = text }
    static func == (a: TextTerm, b: TextTerm) -> Bool { a.text.hasSameCodePoints(as: b.text) }
    func hash(into hasher: inout Hasher) { JSONValue.hashCodePoints(text, into: &hasher) }
}
