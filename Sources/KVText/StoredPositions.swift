import KVStorage
import KVSupport

/// Reads stored occurrences (``TextDocument/encode(_:positions:)``: for each column with
/// hits, varints `column, count`, then the position deltas) in place, without building
/// arrays or dictionaries: what a phrase needs to count its instances in a row.
///
/// Every check ``TextDocument/decode(_:positions:)`` makes is made here too, so damaged
/// bytes are `.corruption` errors on either path.
enum StoredPositions {
    /// A walk through one column's positions of a stored entry, ascending.
    struct Cursor {
        let bytes: ArraySlice<UInt8>
        private var i: Int
        private var remaining: Int
        private var read = 0
        /// The last position read (-1 before the first).
        private(set) var position = -1

        /// The positions of `column` in `bytes` (none when the column has no hits).
        /// - Throws: `.corruption` for bytes that are not occurrences.
        init(_ bytes: ArraySlice<UInt8>, column: Int) throws {
            self.bytes = bytes
            var i = bytes.startIndex
            while i < bytes.endIndex {
                let c = try Varint.read(bytes, &i)
                let count = try StoredPositions.count(bytes, &i)
                if c == column {
                    self.i = i
                    remaining = count
                    return
                }
                for _ in 0..<count { _ = try Varint.read(bytes, &i) }
            }
            self.i = bytes.endIndex
            remaining = 0
        }

        /// The next position, or nil past the last.
        /// - Throws: `.corruption` for a repeated position or one past the largest allowed.
        mutating func next() throws -> Int? {
            guard remaining > 0 else { return nil }
            // Both are at most maximumPosition here, so the sum cannot overflow.
            let delta = min(try Varint.read(bytes, &i), TextDocument.maximumPosition + 1)
            guard read == 0 || delta > 0 else {
                throw KVDocsError(.corruption, "text posting repeats a token position")
            }
            let next = max(position, 0) + delta
            guard next <= TextDocument.maximumPosition else {
                throw KVDocsError(.corruption, "text posting has a token position past \(TextDocument.maximumPosition)")
            }
            position = next
            read += 1
            remaining -= 1
            return next
        }

        /// The first position at or after `target`, or nil when there is none.
        mutating func advance(to target: Int) throws -> Int? {
            if position >= target { return position }
            while let p = try next() { if p >= target { return p } }
            return nil
        }
    }

    /// Whether the stored occurrences `bytes` have positions in a column of `allowed`.
    /// - Throws: `.corruption` for bytes that are not occurrences.
    static func hasColumn(_ bytes: ArraySlice<UInt8>, in allowed: ColumnMask) throws -> Bool {
        var i = bytes.startIndex
        while i < bytes.endIndex {
            let c = try Varint.read(bytes, &i)
            let count = try StoredPositions.count(bytes, &i)
            if allowed.contains(c) { return true }
            for _ in 0..<count { _ = try Varint.read(bytes, &i) }
        }
        return false
    }

    /// A column's count of positions, checked as ``TextDocument/decode(_:positions:)`` does.
    static func count(_ bytes: ArraySlice<UInt8>, _ i: inout Int) throws -> Int {
        let count = try Varint.read(bytes, &i)
        guard count >= 1, count <= bytes.count else {
            throw KVDocsError(.corruption, "text posting has an impossible count")
        }
        return count
    }
}

extension StoredPositions.Cursor {
    /// The `count` positions that start at `start` in `bytes` (a column already found).
    init(positionsIn bytes: ArraySlice<UInt8>, at start: Int, count: Int) {
        self.bytes = bytes
        self.i = start
        self.remaining = count
    }
}

/// The columns a phrase may match in, tested without hashing for the first 64 columns.
struct ColumnMask {
    private let low: UInt64
    private let high: Set<Int>

    /// The columns of `filter`; nil for no filter (every column).
    init?(_ filter: TextQuery.ColumnFilter?) {
        guard let filter else { return nil }
        var low: UInt64 = 0
        var high = Set<Int>()
        for c in filter.allowed {
            if c >= 0 && c < 64 { low |= 1 << UInt64(c) } else { high.insert(c) }
        }
        self.low = low
        self.high = high
    }

    @inline(__always)
    func contains(_ column: Int) -> Bool {
        column >= 0 && column < 64 ? low & (1 << UInt64(column)) != 0 : high.contains(column)
    }
}

/// A walk through one column's positions of a term in one row: one stored entry, or
/// several merged in order (a prefix term, whose expansions are different terms, so never
/// share a position).
struct TermPositionCursor {
    private var first: StoredPositions.Cursor
    /// The other entries' cursors; empty (nothing allocated) for a term of one entry.
    private var more: [StoredPositions.Cursor] = []
    /// The last position returned (-1 before the first).
    private(set) var position = -1
    private var finished = false

    /// The positions of `column` in `entries[range]` (a non-empty range).
    /// - Throws: `.corruption` for bytes that are not occurrences.
    init(_ entries: [ArraySlice<UInt8>], _ range: Range<Int>, column: Int) throws {
        first = try StoredPositions.Cursor(entries[range.lowerBound], column: column)
        if range.count > 1 {
            more.reserveCapacity(range.count - 1)
            for e in range.dropFirst() { more.append(try StoredPositions.Cursor(entries[e], column: column)) }
        }
    }

    init(_ cursor: StoredPositions.Cursor) { first = cursor }

    /// The first position at or after `target`, or nil when there is none.
    /// - Throws: `.corruption` for damaged positions.
    @inline(__always)
    mutating func advance(to target: Int) throws -> Int? {
        if position >= target { return position }
        if finished { return nil }
        var best = try first.advance(to: target)
        for k in more.indices {
            if let p = try more[k].advance(to: target), best.map({ p < $0 }) ?? true { best = p }
        }
        guard let best else {
            finished = true
            return nil
        }
        position = best
        return best
    }

    /// The next position, or nil past the last.
    mutating func next() throws -> Int? { try advance(to: position + 1) }
}

/// Finds a phrase's instances in one row by walking its terms' stored position lists in
/// place (``StoredPositions``): what ``TextSearcher/instances(_:_:)`` finds from decoded
/// dictionaries, in the same order (by column, then start), without building any. Its
/// scratch buffers are kept from row to row.
struct PhraseWalker {
    let terms: Int
    let initial: Bool
    let allowed: ColumnMask?
    private var columns: [Int] = []
    private var rest: [TermPositionCursor] = []

    init(_ phrase: TextQuery.Phrase) {
        terms = phrase.terms.count
        initial = phrase.initial
        allowed = ColumnMask(phrase.columns)
    }

    /// The number of instances in a row (see ``forEachInstance(_:bounds:_:)``).
    /// - Throws: `.corruption` for bytes that are not occurrences.
    mutating func count(_ entries: [ArraySlice<UInt8>], bounds: [Int]) throws -> Int {
        var found = 0
        try forEachInstance(entries, bounds: bounds) { _, _ in found += 1 }
        return found
    }

    /// Calls `body` with the column and start of each instance in a row, by column, then
    /// start. `entries` holds the row's stored entries (with positions), term by term:
    /// term k's are `entries[bounds[k]..<bounds[k + 1]]`, one or more each.
    /// - Throws: `.corruption` for bytes that are not occurrences; what `body` throws.
    mutating func forEachInstance(
        _ entries: [ArraySlice<UInt8>], bounds: [Int], _ body: (_ column: Int, _ start: Int) throws -> Void
    ) throws {
        guard terms > 0, bounds.count == terms + 1 else { return }
        for k in 0..<terms where bounds[k] >= bounds[k + 1] || bounds[k] < 0 || bounds[k + 1] > entries.count { return }
        if bounds[1] - bounds[0] == 1 {
            // One entry for the first term: its columns in stored order, read once.
            let first = entries[bounds[0]]
            var i = first.startIndex
            while i < first.endIndex {
                let column = try Varint.read(first, &i)
                let count = try StoredPositions.count(first, &i)
                let start = i
                for _ in 0..<count { _ = try Varint.read(first, &i) }
                if let allowed, !allowed.contains(column) { continue }
                try walk(
                    TermPositionCursor(StoredPositions.Cursor(positionsIn: first, at: start, count: count)),
                    column: column, entries, bounds, body)
            }
            return
        }
        // Several entries (a prefix): the union of their columns, ascending.
        columns.removeAll(keepingCapacity: true)
        for e in bounds[0]..<bounds[1] {
            let bytes = entries[e]
            var i = bytes.startIndex
            while i < bytes.endIndex {
                columns.append(try Varint.read(bytes, &i))
                let count = try StoredPositions.count(bytes, &i)
                for _ in 0..<count { _ = try Varint.read(bytes, &i) }
            }
        }
        columns.sort()
        var previous: Int?
        for k in columns.indices {
            let column = columns[k]
            defer { previous = column }
            if previous == column { continue }
            if let allowed, !allowed.contains(column) { continue }
            try walk(
                TermPositionCursor(entries, bounds[0]..<bounds[1], column: column), column: column, entries, bounds,
                body)
        }
    }

    private mutating func walk(
        _ starts: TermPositionCursor, column: Int, _ entries: [ArraySlice<UInt8>], _ bounds: [Int],
        _ body: (_ column: Int, _ start: Int) throws -> Void
    ) throws {
        var starts = starts
        rest.removeAll(keepingCapacity: true)
        for k in 1..<terms { rest.append(try TermPositionCursor(entries, bounds[k]..<bounds[k + 1], column: column)) }
        walk: while let p = try starts.next() {
            if initial && p != 0 { break }
            for k in rest.indices {
                guard let q = try rest[k].advance(to: p + k + 1) else { break walk }
                if q != p + k + 1 { continue walk }
            }
            try body(column, p)
        }
    }
}
