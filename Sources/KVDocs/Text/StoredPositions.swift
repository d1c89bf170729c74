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
            guard read == 0 || delta > 0 else { throw KVDocsError(.corruption, "text posting repeats a token position") }
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

    /// The instances of `phrase` in one row, given each term's stored occurrences there
    /// (with positions): what ``TextSearcher/instances(_:_:)`` counts, without arrays.
    /// - Throws: `.corruption` for bytes that are not occurrences.
    static func countInstances(_ phrase: TextQuery.Phrase, _ entries: [ArraySlice<UInt8>]) throws -> Int {
        guard let first = entries.first else { return 0 }
        var found = 0
        var i = first.startIndex
        while i < first.endIndex {
            let column = try Varint.read(first, &i)
            let count = try StoredPositions.count(first, &i)
            let start = i
            for _ in 0..<count { _ = try Varint.read(first, &i) }
            if let filter = phrase.columns, !filter.allowed.contains(column) { continue }
            var rest: [Cursor] = []
            rest.reserveCapacity(entries.count - 1)
            for entry in entries.dropFirst() { rest.append(try Cursor(entry, column: column)) }
            var starts = Cursor(positionsIn: first, at: start, count: count)
            walk: while let p = try starts.next() {
                if phrase.initial && p != 0 { break }
                for k in rest.indices {
                    guard let q = try rest[k].advance(to: p + k + 1) else { break walk }
                    if q != p + k + 1 { continue walk }
                }
                found += 1
            }
        }
        return found
    }

    /// A column's count of positions, checked as ``TextDocument/decode(_:positions:)`` does.
    static func count(_ bytes: ArraySlice<UInt8>, _ i: inout Int) throws -> Int {
        let count = try Varint.read(bytes, &i)
        guard count >= 1, count <= bytes.count else { throw KVDocsError(.corruption, "text posting has an impossible count") }
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
