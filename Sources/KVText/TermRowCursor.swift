import KVStorage

/// A phrase term's rows across its posting lists: one list, or for a prefix every term it
/// expands to, kept as a min-heap by current document so a step costs a few comparisons
/// whatever the number of lists.
struct TermRowCursor {
    private var heap: [PostingCursor]
    /// The rows of all the lists (an upper bound on distinct rows for a prefix).
    let documentFrequency: Int

    /// - Throws: storage or `.corruption` errors reading the first blocks.
    init(_ lists: [TermPostings]) throws {
        var heap: [PostingCursor] = []
        heap.reserveCapacity(lists.count)
        for list in lists {
            var cursor = PostingCursor(list)
            try cursor.advance(to: 0)
            if cursor.doc != .max { heap.append(cursor) }
        }
        documentFrequency = lists.reduce(0) { $0 + $1.documentFrequency }
        self.heap = heap
        if heap.count > 1 { for i in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(i) } }
    }

    /// The current row, `Int.max` past the end.
    var doc: Int { heap.isEmpty ? .max : heap[0].doc }

    /// Moves to the first row at or after `target`.
    mutating func advance(to target: Int) throws {
        while !heap.isEmpty && heap[0].doc < target {
            try heap[0].advance(to: target)
            if heap[0].doc == .max {
                heap.swapAt(0, heap.count - 1)
                heap.removeLast()
            }
            siftDown(0)
        }
    }

    /// Appends the stored occurrences of each list's entry on the current row to `entries`.
    /// - Throws: storage errors, `.corruption` for a block without occurrences.
    func appendOccurrences(to entries: inout [ArraySlice<UInt8>], layout: TextIndexLayout, reader: any KeyValueReader)
        throws
    {
        guard !heap.isEmpty else { return }
        try appendOccurrences(0, heap[0].doc, &entries, layout, reader)
    }

    /// Whether an entry on the current row has positions in a column of `allowed`.
    /// - Throws: storage errors, `.corruption` for damaged occurrences.
    func hasOccurrences(in allowed: ColumnMask, layout: TextIndexLayout, reader: any KeyValueReader) throws -> Bool {
        var entries: [ArraySlice<UInt8>] = []
        try appendOccurrences(to: &entries, layout: layout, reader: reader)
        return try entries.contains { try StoredPositions.hasColumn($0, in: allowed) }
    }

    /// The sum of the lists' frequencies on the current row.
    var currentFrequency: Int {
        guard !heap.isEmpty else { return 0 }
        return frequency(0, heap[0].doc)
    }

    // The lists on the current row are the heap's top and the entries below it on the same row.
    private func appendOccurrences(
        _ i: Int, _ doc: Int, _ entries: inout [ArraySlice<UInt8>], _ layout: TextIndexLayout,
        _ reader: any KeyValueReader
    ) throws {
        guard i < heap.count, heap[i].doc == doc else { return }
        entries.append(
            try heap[i].list.occurrences(
                block: heap[i].blockIndex, entry: heap[i].entry, layout: layout, reader: reader))
        try appendOccurrences(2 * i + 1, doc, &entries, layout, reader)
        try appendOccurrences(2 * i + 2, doc, &entries, layout, reader)
    }

    private func frequency(_ i: Int, _ doc: Int) -> Int {
        guard i < heap.count, heap[i].doc == doc else { return 0 }
        return heap[i].frequency + frequency(2 * i + 1, doc) + frequency(2 * i + 2, doc)
    }

    private mutating func siftDown(_ start: Int) {
        var i = start
        while true {
            let l = 2 * i + 1, r = l + 1
            var m = i
            if l < heap.count && heap[l].doc < heap[m].doc { m = l }
            if r < heap.count && heap[r].doc < heap[m].doc { m = r }
            if m == i { return }
            heap.swapAt(i, m)
            i = m
        }
    }
}
