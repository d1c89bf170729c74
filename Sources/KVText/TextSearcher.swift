import KVStorage
import KVSupport

/// Evaluates queries against one text index through one reader: reads postings in blocks,
/// keeps the best `limit` rows in a bounded heap and skips blocks whose best possible
/// score cannot enter it.
package struct TextSearcher {
    let index: TextIndex
    let reader: any KeyValueReader
    var layout: TextIndexLayout { index.layout }
    /// Lengths blocks read so far.
    private var lengthBlocks: [Int: [Int]] = [:]
    /// The block of lengths read last, and how many blocks in a row were read close
    /// after the one before.
    private var lastLengthBlock: Int?
    private var closeLookups = 0
    private var lengthScan: (any KeyValueCursor)?
    /// The block the scan reads next.
    private var lengthScanNext = 0
    /// Row ids by document number, read so far (tuple encodings, for ties and results).
    private var rowIDs: [Int: [UInt8]] = [:]
    /// What the last search did: rows scored exactly, and candidates and runs of rows
    /// skipped by their bounds (for tests that check pruning happens).
    var work = Work()
    /// For each phrase of a NEAR group of several phrases, what it reports in the rows
    /// where it reports instances (what FTS5's test of the group left in its position
    /// list), and whether the group matches there; ``nearState(for:)`` gives highlights
    /// the rows they show.
    var nearRecords: [Int: NearRecord] = [:]

    /// The instances a NEAR group's phrase reports, in flat storage: row `docs[k]` reports
    /// `instances[ranges[k]]`; a list left over from an earlier row is stored once.
    struct NearRecord {
        var docs: [Int] = []
        var ranges: [Range<Int>] = []
        var matched: [Bool] = []
        var instances: [PhraseInstance] = []
    }

    /// What NEAR groups of several phrases report in rows `docs`, by phrase, for highlights.
    struct NearState {
        var instances: [Int: [PhraseInstance]] = [:]
        var matched: Set<Int> = []
    }

    /// ``nearRecords`` for the rows `docs` only (the hits to highlight).
    func nearState(for docs: [Int]) -> [Int: NearState] {
        var result: [Int: NearState] = [:]
        for (phrase, record) in nearRecords {
            var state = NearState()
            for doc in docs {
                let k = TextIndex.search(record.docs, doc).at
                guard k < record.docs.count, record.docs[k] == doc else { continue }
                state.instances[doc] = Array(record.instances[record.ranges[k]])
                if record.matched[k] { state.matched.insert(doc) }
            }
            result[phrase] = state
        }
        return result
    }

    package struct Work: Equatable {
        package var scored = 0
        var skippedRows = 0
        package var skippedRuns = 0

        package init(scored: Int = 0, skippedRows: Int = 0, skippedRuns: Int = 0) {
            self.scored = scored
            self.skippedRows = skippedRows
            self.skippedRuns = skippedRuns
        }
    }

    init(index: TextIndex, reader: any KeyValueReader) {
        self.index = index
        self.reader = reader
    }

    /// The token count of document `doc`.
    ///
    /// Rows are scored in increasing order: once blocks of lengths are needed each close
    /// after the one before (rows are dense), the blocks are read by a forward scan that steps
    /// over the blocks between (a step costs a fraction of a lookup); a block far from the
    /// last one is looked up.
    mutating func length(_ doc: Int) throws -> Int {
        let block = doc / TextLengths.blockSize
        if lengthBlocks[block] == nil {
            lengthBlocks[block] = try readLengths(block)
        }
        let slot = doc % TextLengths.blockSize
        guard let lengths = lengthBlocks[block], slot < lengths.count else { return 0 }
        return lengths[slot]
    }

    /// The most blocks a scan of lengths steps over to reach the one asked for.
    static let lengthSteps = 16
    /// Lookups of blocks each close after the one before that open a scan.
    static let lookupsBeforeScan = 3

    private mutating func readLengths(_ block: Int) throws -> [Int] {
        defer { lastLengthBlock = block }
        let scanReaches = lengthScan != nil && block >= lengthScanNext && block <= lengthScanNext + Self.lengthSteps
        if !scanReaches {
            lengthScan = nil
            let close = lastLengthBlock.map { block > $0 && block - $0 <= Self.lengthSteps } ?? false
            closeLookups = close ? closeLookups + 1 : 0
            // A scan costs more to open than a lookup: only for rows seen to be dense.
            guard closeLookups >= Self.lookupsBeforeScan, !reader.readsAreRoundTrips else {
                return try reader.value(forKey: layout.lengths(block)).map { try TextLengths.decode($0) } ?? []
            }
            lengthScan = try reader.scan(
                KeyRange(lower: .included(layout.lengths(block)), upper: layout.allLengths.range.upper),
                order: .forward)
            lengthScanNext = block
        }
        let base = layout.allLengths.prefix.count
        while let scan = lengthScan {
            guard
                let (number, lengths) = try scan.next({ k, v -> (Int, [Int]) in
                    var offset = base
                    let number = try TextIndexLayout.readNumber(k, at: &offset)
                    return (number, number < block ? [] : try TextLengths.decode(Array(v)))
                })
            else {
                lengthScan = nil
                break
            }
            lengthScanNext = number + 1
            if number > block {
                // The block has no lengths; the one read is kept for later rows.
                lengthBlocks[number] = lengths
                return []
            }
            if number == block { return lengths }
        }
        return []
    }

    /// The rows one range read fetches when reads are round trips.
    static let rowReadAhead = 256

    /// The tuple encoding of document `doc`'s row id.
    /// - Throws: `.corruption` when the number has no row.
    mutating func rowID(_ doc: Int) throws -> [UInt8] {
        if let id = rowIDs[doc] { return id }
        if reader.readsAreRoundTrips {
            // Over a network, the rows of the next numbers too, in one range read: a query
            // whose hits tie with the best kept reads the rows of every hit.
            let cursor = try reader.scan(
                KeyRange(lower: .included(layout.row(doc)), upper: .excluded(layout.row(doc + Self.rowReadAhead))),
                order: .forward)
            let base = layout.allRows.prefix.count
            while let (number, id) = try cursor.next({ k, v -> (Int, [UInt8]) in
                var i = base
                return (try TextIndexLayout.readNumber(k, at: &i), Array(v))
            }) {
                rowIDs[number] = id
            }
            if let id = rowIDs[doc] { return id }
        }
        guard let id = try reader.value(forKey: layout.row(doc)) else {
            throw KVDocsError(
                .corruption, "text index \(layout.subspace): document number \(doc) has no row; reindex it")
        }
        rowIDs[doc] = id
        return id
    }
}
