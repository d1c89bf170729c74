import KVKeys
import KVStorage
import KVSupport

/// One full-text index in a subspace of an ordered key-value store: tokenizing, postings,
/// corpus statistics and ranking.
///
/// The text layer knows rows, not documents: a row is identified by a tuple element and
/// has one text per column. Which documents and fields feed it is the document layer's
/// business (``TextIndexMaintainer``). Reads go through a ``KeyValueReader``; writes are
/// collected in a ``TextIndexChanges`` for the whole write batch and then added, once per
/// term, to the ``WriteBatch`` that the caller commits with whatever else the write changes.
package struct TextIndex: Sendable {
    package let layout: TextIndexLayout
    package let tokenizer: TextTokenizer
    /// The column names, for column filters in queries (`title : word`).
    let columns: [String]
    /// What is stored of each occurrence.
    let detail: TextDetail

    package init(subspace: Subspace, tokenizer: TextTokenizer, columns: [String], detail: TextDetail = .full) {
        self.layout = TextIndexLayout(subspace: subspace)
        self.tokenizer = tokenizer
        self.columns = columns
        self.detail = detail
    }

    /// What a row with these column texts contributes.
    package func contribution(_ texts: [String]) -> TextDocument {
        TextDocument(tokenizer: tokenizer, texts: texts)
    }

    /// The stored occurrences of term `i` of a row's ``TextDocument/terms``, as this
    /// index's detail keeps them.
    func occurrences(of document: TextDocument, term i: Int) -> [UInt8] {
        detail == .none ? [] : document.encodedOccurrences(ofTerm: i, positions: detail == .full)
    }

    /// The corpus statistics: (rows, tokens, the next document number, the next segment id).
    package func statistics(_ reader: some KeyValueReader) throws -> TextStatistics {
        guard let bytes = try reader.value(forKey: layout.statistics) else { return TextStatistics() }
        let t = try Tuple(decoding: bytes)
        guard t.count == 4 else {
            throw KVDocsError(.corruption, "the statistics of text index \(layout.subspace) are damaged (\(t))")
        }
        let values = TextStatistics(
            documents: try t.int(at: 0), tokens: try t.int(at: 1), nextDoc: try t.int(at: 2),
            nextSegment: try t.int(at: 3))
        guard values.documents >= 0, values.tokens >= 0, values.nextDoc >= 0,
            values.nextDoc <= TextDocument.maximumDocument,
            values.nextSegment >= 0, values.nextSegment < TextSegment.maximumID
        else {
            throw KVDocsError(.corruption, "the statistics of text index \(layout.subspace) are out of range (\(t))")
        }
        return values
    }

    /// The stored form of the statistics.
    package func statisticsValue(_ s: TextStatistics) -> [UInt8] {
        Tuple([.int(Int64(s.documents)), .int(Int64(s.tokens)), .int(Int64(s.nextDoc)), .int(Int64(s.nextSegment))])
            .encoded
    }

    /// Records in `changes` what changes when row `id` goes from `old` to `new` (`nil`:
    /// absent). Document-number mappings are written at once through `put`/`delete`;
    /// postings and lengths wait for ``apply(_:reader:put:delete:)``.
    ///
    /// A row whose text changes gets a new document number: its old number's postings are
    /// cancelled by tombstones and the new ones written under the new number, so a document
    /// number's postings never change once written (segments stay immutable and never
    /// overlap in document numbers).
    /// - Throws: `.corruption` when a row with tokens has no document number.
    package func update(
        id: TupleElement, old before: TextDocument?, new after: TextDocument?, changes: TextIndexChanges,
        reader: some KeyValueReader, put: ([UInt8], [UInt8]) -> Void, delete: ([UInt8]) -> Void
    ) throws {
        if before == after { return }
        changes.documents = changes.documents.saturatingAdd((after == nil ? 0 : 1) - (before == nil ? 0 : 1))
        let oldLength = before?.totalTokens ?? 0, newLength = after?.totalTokens ?? 0
        changes.tokens = changes.tokens.saturatingAdd(newLength - oldLength)
        changes.statisticsChanged = true
        let idKey = ByteKey(Tuple([id]).encoded)
        if let before, oldLength > 0 {
            let stored: Int?
            if let local = changes.numbers[idKey] {
                stored = local
            } else {
                stored = try documentNumber(of: id, reader)
            }
            guard let doc = stored else {
                throw KVDocsError(
                    .corruption, "text index \(layout.subspace) has no document number for row \(id); reindex it")
            }
            for i in 0..<before.termCount { before.withTerm(i) { changes.recordRemoval($0, doc) } }
            changes.lengths[doc] = 0
            delete(layout.row(doc))
            if after == nil || newLength == 0 {
                delete(layout.number(id))
                changes.numbers[idKey] = .some(nil)
            }
        }
        if let after, newLength > 0 {
            let doc = changes.nextDoc
            guard doc < TextDocument.maximumDocument else {
                throw KVDocsError(
                    .invalidArgument, "text index \(layout.subspace) has used every document number; reindex it")
            }
            changes.nextDoc += 1
            put(layout.number(id), Tuple([.int(Int64(doc))]).encoded)
            put(layout.row(doc), idKey.bytes)
            changes.numbers[idKey] = doc
            let detail = detail
            for i in 0..<after.termCount {
                after.withTerm(i) { term in
                    changes.recordPut(term, doc, frequency: after.frequency(ofTerm: i), length: newLength) { out in
                        if detail != .none { after.appendOccurrences(ofTerm: i, positions: detail == .full, to: &out) }
                    }
                }
            }
            changes.lengths[doc] = newLength
        }
    }

    /// The document number of row `id`, or nil.
    package func documentNumber(of id: TupleElement, _ reader: some KeyValueReader) throws -> Int? {
        guard let bytes = try reader.value(forKey: layout.number(id)) else { return nil }
        let n = try Tuple(decoding: bytes).int(at: 0)
        guard n >= 0 && n < TextDocument.maximumDocument else {
            throw KVDocsError(.corruption, "text index \(layout.subspace): row \(id) has document number \(n)")
        }
        return n
    }

    /// Adds to the batch, through `put` and `delete`, every posting and length change
    /// recorded in `changes` as one new segment (keys never written before; no existing
    /// block is read or rewritten), and empties them. Reads the state before the batch
    /// through `reader`.
    package func apply(
        _ changes: TextIndexChanges, reader: some KeyValueReader, put: ([UInt8], [UInt8]) -> Void,
        delete: ([UInt8]) -> Void
    ) throws {
        try writeSegment(changes, reader: reader, put: put)
        changes.removeRecords()
        var byBlock: [Int: [(Int, Int)]] = [:]
        for (doc, length) in changes.lengths {
            byBlock[doc / TextLengths.blockSize, default: []].append((doc % TextLengths.blockSize, length))
        }
        for (block, slots) in byBlock {
            var lengths = try reader.value(forKey: layout.lengths(block)).map { try TextLengths.decode($0) } ?? []
            for (slot, length) in slots {
                if lengths.count <= slot { lengths += Array(repeating: 0, count: slot + 1 - lengths.count) }
                lengths[slot] = length
            }
            while lengths.last == 0 { lengths.removeLast() }
            if lengths.isEmpty {
                delete(layout.lengths(block))
            } else {
                put(layout.lengths(block), TextLengths.encode(lengths))
            }
        }
        changes.lengths.removeAll(keepingCapacity: true)
        changes.pending = 0
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
