extension TextSearcher {
    /// Trims each phrase's instances of a NEAR group to those that take part in a match, as
    /// FTS5 trims the phrases' position lists (fts5_expr.c, `fts5ExprNearIsMatch`), in
    /// place; all left empty when the group does not match, and returns whether it does.
    /// Positions are compared as `column << 32 | offset`; a set of current instances
    /// matches when each phrase's instance ends within `distance` tokens of the latest start
    /// among them. After each match the phrase whose next instance comes first moves on, so
    /// the instances kept, and the counts BM25 gives the phrases, are FTS5's. `lengths`
    /// holds each phrase's number of terms; `out` is scratch space (as many lists), reused
    /// between calls.
    static func nearMatch(
        _ lists: inout [[PhraseInstance]], _ out: inout [[PhraseInstance]], lengths: [Int], distance: Int
    ) -> Bool {
        let n = lists.count
        guard n > 1 else { return lists.first.map { !$0.isEmpty } ?? false }
        func clear(_ l: inout [[PhraseInstance]]) { for i in l.indices { l[i].removeAll(keepingCapacity: true) } }
        guard lists.allSatisfy({ !$0.isEmpty }), out.count == n, lengths.count == n else {
            clear(&lists)
            return false
        }
        clear(&out)
        // FTS5 parses the distance into an int.
        let near = Int64(min(max(distance, 0), Int(Int32.max)))
        func position(_ i: PhraseInstance) -> Int64 { Int64(i.column) << 32 | Int64(i.start) }
        let end = Int64.max
        // The current instance of each phrase; n is at most a few, so a fixed walk is enough.
        var at = Array(repeating: 0, count: n)
        func current(_ i: Int) -> Int64 { position(lists[i][at[i]]) }
        func lookahead(_ i: Int) -> Int64 { at[i] + 1 < lists[i].count ? position(lists[i][at[i] + 1]) : end }
        search: while true {
            var latest = current(0)
            var matched: Bool
            repeat {
                matched = true
                for i in 0..<n {
                    let earliest = latest - Int64(lengths[i]) - near
                    if current(i) < earliest || current(i) > latest {
                        matched = false
                        while current(i) < earliest {
                            at[i] += 1
                            if at[i] == lists[i].count { break search }
                        }
                        latest = max(latest, current(i))
                    }
                }
            } while !matched
            for i in 0..<n where out[i].last != lists[i][at[i]] { out[i].append(lists[i][at[i]]) }
            var next = 0
            for i in 1..<n where lookahead(i) < lookahead(next) { next = i }
            at[next] += 1
            if at[next] == lists[next].count { break }
        }
        guard !out[0].isEmpty else {
            clear(&lists)
            return false
        }
        for i in 0..<n { swap(&lists[i], &out[i]) }
        return true
    }

    /// The instances of `phrase` in one row, given each of its terms' occurrences there
    /// (column → positions; for a prefix term, the union over the terms it expands to).
    static func instances(_ phrase: TextQuery.Phrase, _ occurrences: [[Int: [Int]]]) -> [PhraseInstance] {
        guard let first = occurrences.first else { return [] }
        var found: [PhraseInstance] = []
        for (column, starts) in first {
            if let filter = phrase.columns, !filter.allowed.contains(column) { continue }
            let rest = occurrences.dropFirst().map { Set($0[column] ?? []) }
            for start in starts where !phrase.initial || start == 0 {
                if rest.enumerated().allSatisfy({ $0.element.contains(start + $0.offset + 1) }) {
                    found.append(PhraseInstance(column: column, start: start, length: occurrences.count))
                }
            }
        }
        return found.sorted { ($0.column, $0.start) < ($1.column, $1.start) }
    }
}
