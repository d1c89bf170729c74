import KVSupport

/// What one write batch changes in a text index, collected document by document and
/// applied once per term at the end of the batch (or when a long build flushes).
package final class TextIndexChanges {
    /// One recorded change of a term's posting: a row's occurrences put under document
    /// `doc` (``frequency`` > 0) or the posting of `doc` removed (``frequency`` 0).
    struct Record {
        /// The term's number in ``TextIndexChanges/table``.
        var term: Int32
        var frequency: Int32
        var doc: Int
        /// The row's length, for the block's impacts.
        var length: Int
        /// Its stored occurrences: ``TextIndexChanges/occurrences``[occurrencesStart..<occurrencesEnd].
        var occurrencesStart: Int
        var occurrencesEnd: Int
    }

    var documents: Int
    var tokens: Int
    var nextDoc: Int
    /// The id the next segment (written by a batch or a merge) takes.
    var nextSegment: Int
    package var statisticsChanged = false
    /// The segments and the merge in progress, as read at the batch's start and changed by
    /// it (nil until the first segment is written).
    var structure: TextStructure?
    /// Postings written in segments by this batch (the merge budget grows with it).
    var written = 0
    /// Document numbers given or taken in this batch, by the row id's tuple encoding
    /// (`.some(nil)`: the row lost its number).
    var numbers: [ByteKey: Int?] = [:]
    /// The terms changed by the batch, and every change in the order recorded.
    var table = TermTable(capacity: 4096)
    var records: [Record] = []
    /// The stored occurrences of every recorded put, one after the other.
    var occurrences: [UInt8] = []
    /// Document → its new length (0: gone).
    var lengths: [Int: Int] = [:]
    /// Postings recorded since the last apply (to decide when a long build flushes).
    package var pending = 0

    package init(_ stored: TextStatistics) {
        documents = stored.documents
        tokens = stored.tokens
        nextDoc = stored.nextDoc
        nextSegment = stored.nextSegment
    }

    package var statistics: TextStatistics {
        TextStatistics(documents: documents, tokens: tokens, nextDoc: nextDoc, nextSegment: nextSegment)
    }

    /// Records that the posting of `doc` for `term` is removed.
    func recordRemoval(_ term: UnsafeBufferPointer<UInt8>, _ doc: Int) {
        let number = Int32(truncatingIfNeeded: table.number(of: term))
        let end = occurrences.count
        records.append(
            Record(term: number, frequency: 0, doc: doc, length: 0, occurrencesStart: end, occurrencesEnd: end))
        pending += 1
    }

    /// Records that `doc` holds `term` `frequency` times (at least once), in a row of
    /// `length` tokens, with the stored occurrences `appendOccurrences` appends.
    func recordPut(
        _ term: UnsafeBufferPointer<UInt8>, _ doc: Int, frequency: Int, length: Int,
        _ appendOccurrences: (inout [UInt8]) -> Void
    ) {
        let number = Int32(truncatingIfNeeded: table.number(of: term))
        let start = occurrences.count
        appendOccurrences(&occurrences)
        records.append(
            Record(
                term: number, frequency: Int32(clamping: max(1, frequency)), doc: doc, length: length,
                occurrencesStart: start, occurrencesEnd: occurrences.count))
        pending += 1
    }

    /// Forgets the recorded postings (once written), keeping the storage.
    func removeRecords() {
        table.removeAll()
        records.removeAll(keepingCapacity: true)
        occurrences.removeAll(keepingCapacity: true)
    }
}
