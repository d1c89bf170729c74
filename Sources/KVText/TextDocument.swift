import KVSupport

/// What a row contributes to a text index: its distinct terms and where each occurs.
///
/// Held flat, with no collection per term: `terms` in the order of their first occurrence,
/// and every occurrence packed as `column << 32 | position`, grouped by term (in `terms`'
/// order) and in document order within a group (column, then position). Two rows with the
/// same terms at the same places are equal, since the order of first occurrences follows
/// from the places.
package struct TextDocument: Equatable {
    /// The distinct terms' bytes, numbered in the order of their first occurrence.
    private var table: TermTable
    /// Occurrences grouped by term; group `i` is `occurrences[starts[i]..<starts[i + 1]]`.
    private var occurrences: [UInt64] = []
    private var starts: [Int] = [0]
    /// Tokens per column.
    var lengths: [Int]

    package var totalTokens: Int { lengths.reduce(0, +) }

    /// The distinct terms, in the order of their first occurrence.
    package var terms: [TextTerm] {
        (0..<table.count).map { TextTerm(String(decoding: table.bytes($0), as: UTF8.self)) }
    }

    /// How many distinct terms the row has.
    package var termCount: Int { table.count }

    /// Calls `body` with the UTF-8 bytes of term `i` of ``terms`` (valid only during the call).
    func withTerm<R>(_ i: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try table.withTerm(i, body)
    }

    package init(tokenizer: TextTokenizer, texts: [String]) {
        // Each token's term number, then a counting sort groups the occurrences by term.
        var table = TermTable(capacity: 64)
        var tokens: [(term: Int, occurrence: UInt64)] = []
        var lengths: [Int] = []
        lengths.reserveCapacity(texts.count)
        for (column, text) in texts.enumerated() {
            let before = tokens.count
            tokenizer.forEachToken(in: text) { term, position, _, _ in
                tokens.append(
                    (table.number(of: term), UInt64(column) << 32 | UInt64(UInt32(truncatingIfNeeded: position))))
            }
            lengths.append(tokens.count - before)
        }
        self.lengths = lengths
        self.table = table
        var counts = [Int](repeating: 0, count: table.count + 1)
        for token in tokens { counts[token.term + 1] += 1 }
        for i in 0..<table.count { counts[i + 1] += counts[i] }
        starts = counts
        var next = Array(counts.dropLast())
        occurrences = [UInt64](repeating: 0, count: tokens.count)
        for token in tokens {
            occurrences[next[token.term]] = token.occurrence
            next[token.term] += 1
        }
    }

    package static func == (a: TextDocument, b: TextDocument) -> Bool {
        a.lengths == b.lengths && a.starts == b.starts && a.occurrences == b.occurrences
            && a.table.ends == b.table.ends && a.table.arena == b.table.arena
    }

    /// How many times term `i` of ``terms`` occurs.
    package func frequency(ofTerm i: Int) -> Int { starts[i + 1] - starts[i] }

    /// The columns and positions of term `i` of ``terms``, in document order.
    package func places(ofTerm i: Int) -> some RandomAccessCollection<(column: Int, position: Int)> {
        occurrences[starts[i]..<starts[i + 1]].lazy.map { (Int($0 >> 32), Int($0 & 0xFFFF_FFFF)) }
    }

    /// The stored occurrences of term `i` of ``terms`` (``encode(_:positions:)``'s form).
    package func encodedOccurrences(ofTerm i: Int, positions withPositions: Bool) -> [UInt8] {
        var out: [UInt8] = []
        appendOccurrences(ofTerm: i, positions: withPositions, to: &out)
        return out
    }

    /// Appends ``encodedOccurrences(ofTerm:positions:)`` to `out`.
    func appendOccurrences(ofTerm i: Int, positions withPositions: Bool, to out: inout [UInt8]) {
        var k = starts[i]
        let end = starts[i + 1]
        while k < end {
            let column = occurrences[k] >> 32
            var last = k
            while last + 1 < end && occurrences[last + 1] >> 32 == column { last += 1 }
            Varint.append(Int(column), to: &out)
            Varint.append(last - k + 1, to: &out)
            if withPositions {
                var previous = 0
                for j in k...last {
                    let p = Int(occurrences[j] & 0xFFFF_FFFF)
                    Varint.append(p - previous, to: &out)
                    previous = p
                }
            }
            k = last + 1
        }
    }

    /// The stored occurrences of a term: for each column with hits, varints `column,
    /// count`, then (with `positions`) the position deltas.
    package static func encode(_ columns: [Int: [Int]], positions withPositions: Bool = true) -> [UInt8] {
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
    static func count(_ bytes: UnsafeRawBufferPointer, positions withPositions: Bool, allowed: ColumnMask?) throws
        -> Int
    {
        var total = 0
        var i = 0
        while i < bytes.count {
            let column = try Varint.read(bytes, &i)
            let count = try Varint.read(bytes, &i)
            guard count >= 1, count <= (withPositions ? bytes.count : maximumPosition) else {
                throw KVDocsError(.corruption, "text posting has an impossible count")
            }
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
    static func decode(_ bytes: UnsafeRawBufferPointer, positions withPositions: Bool = true) throws -> [(
        column: Int, count: Int, positions: [Int]
    )] {
        var result: [(Int, Int, [Int])] = []
        var i = 0
        while i < bytes.count {
            let column = try Varint.read(bytes, &i)
            let count = try Varint.read(bytes, &i)
            guard count >= 1, count <= (withPositions ? bytes.count : maximumPosition) else {
                throw KVDocsError(.corruption, "text posting has an impossible count")
            }
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
                guard k == 0 || delta > 0 else {
                    throw KVDocsError(.corruption, "text posting repeats a token position")
                }
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
