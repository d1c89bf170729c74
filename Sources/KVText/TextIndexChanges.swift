import KVSupport

/// What one write batch changes in a text index, collected document by document and
/// applied once per term at the end of the batch (or when a long build flushes).
package final class TextIndexChanges {
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
    /// Term → its changes in the order recorded (document, change).
    var terms: [TextTerm: [(Int, Change)]] = [:]
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

    func record(_ term: TextTerm, _ doc: Int, _ change: Change) {
        terms[term, default: []].append((doc, change))
        pending += 1
    }
}
