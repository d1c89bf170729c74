/// A position in a term's posting list.
struct PostingCursor {
    let list: TermPostings
    private(set) var blockIndex = 0
    private(set) var entry = 0
    private var block: PostingBlock?
    /// The current document, `Int.max` past the end.
    private(set) var doc = -1

    init(_ list: TermPostings) { self.list = list }

    var frequency: Int { block?.frequencies[entry] ?? 0 }
    /// The current row's length, rounded down (``TextLengths/norm(_:)``).
    var normLength: Int { TextLengths.length(ofNorm: block?.norms[entry] ?? 0) }

    /// Moves to the first document at or after `target`.
    mutating func advance(to target: Int) throws {
        if doc >= target { return }
        if let b = block, blockIndex < list.blockCount, list.headers[blockIndex].lastDoc >= target {
            // Within the current block: gallop from the current entry.
            var lo = entry, step = 1
            while lo + step < b.docs.count && b.docs[lo + step] < target {
                lo += step
                step *= 2
            }
            var hi = min(b.docs.count - 1, lo + step)
            while lo < hi {
                let mid = (lo + hi) / 2
                if b.docs[mid] < target { lo = mid + 1 } else { hi = mid }
            }
            entry = lo
            doc = b.docs[lo]
            return
        }
        let next = list.blockIndex(atLeast: target, from: block == nil ? 0 : blockIndex)
        guard next < list.blockCount else {
            blockIndex = list.blockCount
            block = nil
            doc = .max
            return
        }
        blockIndex = next
        let b = try list.block(next)
        block = b
        entry = TextIndex.search(b.docs, target).at
        doc = b.docs[entry]
    }

    /// The block that holds the first document at or after `target` without decoding it:
    /// its index and last document, or nil past the end.
    func shallow(_ target: Int) -> (block: Int, lastDoc: Int)? {
        let b = list.blockIndex(atLeast: target, from: min(blockIndex, list.blockCount))
        return b < list.blockCount ? (b, list.headers[b].lastDoc) : nil
    }
}
