import Foundation
import KVKeys
import KVStorage
@_spi(KVDocsInternals) import KVSupport

/// The ranked answer of a query: the best rows with their BM25 scores, best first, and
/// what highlights and snippets need.
package struct TextRanking {
    let query: TextQuery
    let compiled: CompiledQuery
    /// Rows and scores (FTS5's `bm25()`: negative, lower is better), best first, ties by the
    /// row id's tuple encoding.
    package let hits: [(id: TupleElement, score: Double, doc: Int)]
    /// What the search did (rows scored, skipped).
    package var work = TextSearcher.Work()
    /// What NEAR groups of several phrases report in the hits, by phrase (see
    /// ``TextSearcher/nearRecords``).
    var nearState: [Int: TextSearcher.NearState] = [:]

    /// The instances that take part in the match of row `doc`, found in the row's column
    /// texts (for NEAR groups, what the search recorded), each with its phrase, in FTS5's
    /// `xInst` order (by column and position, then phrase): what highlights and snippets
    /// mark.
    package func instances(texts: [String], tokenizer: TextTokenizer, doc: Int) -> [(
        instance: PhraseInstance, phrase: Int
    )] {
        // Each column's terms: term → column → positions.
        var positions: [TextTerm: [Int: [Int]]] = [:]
        for (column, text) in texts.enumerated() {
            for token in tokenizer.tokens(text) {
                positions[TextTerm(token.term), default: [:]][column, default: []].append(token.position)
            }
        }
        func occurrences(_ term: String, prefix: Bool) -> [Int: [Int]] {
            guard prefix else { return positions[TextTerm(term)] ?? [:] }
            var merged: [Int: [Int]] = [:]
            for (t, columns) in positions where t.text.utf8.starts(with: term.utf8) {
                for (c, p) in columns { merged[c, default: []] += p }
            }
            for c in merged.keys { merged[c]?.sort() }
            return merged
        }
        let phrases = compiled.phrases
        var found = phrases.enumerated().map { i, p -> [PhraseInstance] in
            guard !p.terms.isEmpty else { return [] }
            var phrase = p
            if let group = compiled.nearGroup[i] {
                phrase.columns = TextQueryParser.combine(p.columns, compiled.nearColumns[group.lowerBound])
            }
            return TextSearcher.instances(
                phrase, p.terms.enumerated().map { occurrences($1, prefix: p.prefix && $0 == p.terms.count - 1) })
        }
        var nearMatched = found.map { !$0.isEmpty }
        for (p, state) in nearState {
            found[p] = state.instances[doc] ?? []
            nearMatched[p] = state.matched.contains(doc)
        }
        var active = found.map { !$0.isEmpty }
        var stack: [Bool] = []
        guard compiled.evaluate(&active, nearMatched: nearMatched, stack: &stack) else { return [] }
        var all: [(instance: PhraseInstance, phrase: Int)] = []
        for (p, list) in found.enumerated() where active[p] { all += list.map { ($0, p) } }
        return all.sorted {
            ($0.instance.column, $0.instance.start, $0.phrase) < ($1.instance.column, $1.instance.start, $1.phrase)
        }
    }
}

/// One phrase of a query being evaluated: either a plain term read block by block through
/// a cursor (its frequency is the posting's), or any other phrase (several terms, a
/// prefix, a column filter, `^`, NEAR) evaluated in full first into its matching rows and
/// their instance counts, as FTS5 does to count the rows for IDF.
struct PhraseLeaf {
    var cursor: PostingCursor?
    var docs: [Int] = []
    var frequencies: [Int] = []
    var position = 0
    /// n(p): the rows the phrase matches.
    var matches = 0
    var idf = 0.0
    /// For a phrase of a NEAR group of several phrases: for each of its rows above (those
    /// where it reports instances), whether the group matches there.
    var nearFlags: [Bool]?
    /// For materialized phrases: the largest frequency in each chunk of ``chunk`` rows.
    var chunkMaxima: [Int] = []
    static let chunk = 128

    var doc: Int {
        if let cursor { return cursor.doc }
        return position < docs.count ? docs[position] : .max
    }

    var frequency: Int {
        if let cursor { return cursor.frequency }
        return position < docs.count ? frequencies[position] : 0
    }

    mutating func advance(to target: Int) throws {
        if cursor != nil {
            try cursor?.advance(to: target)
            return
        }
        if position < docs.count && docs[position] >= target { return }
        var lo = position, step = 1
        while lo + step < docs.count && docs[lo + step] < target {
            lo += step
            step *= 2
        }
        var hi = min(docs.count, lo + step + 1)
        while lo < hi {
            let mid = (lo + hi) / 2
            if docs[mid] < target { lo = mid + 1 } else { hi = mid }
        }
        position = lo
    }

    /// Whether the NEAR group of this phrase matches row `doc` (nil for other phrases).
    func nearMatches(_ doc: Int) -> Bool? {
        guard let nearFlags else { return nil }
        return position < docs.count && docs[position] == doc && nearFlags[position]
    }

    mutating func materialize(_ rows: [(doc: Int, frequency: Int)]) {
        docs = rows.map(\.doc)
        frequencies = rows.map(\.frequency)
        matches = rows.count
        chunkMaxima = stride(from: 0, to: rows.count, by: Self.chunk).map {
            frequencies[$0..<min($0 + Self.chunk, rows.count)].max() ?? 0
        }
    }
}

/// BM25 as FTS5's `bm25()` computes it (fts5_aux.c), with k1 = 1.2 and b = 0.75.
struct BM25 {
    let avgdl: Double
    static let k1 = 1.2, b = 0.75

    /// A phrase's contribution before its IDF: f·(k1 + 1) / (f + k1·(1 − b + b·D/avgdl)).
    /// Grows with `frequency`, shrinks with `length`.
    @inline(__always)
    func weight(frequency: Int, length: Int) -> Double {
        let f = Double(frequency)
        return (f * (Self.k1 + 1.0)) / (f + Self.k1 * (1.0 - Self.b + Self.b * Double(length) / avgdl))
    }

    static func idf(rows: Int, matches: Int) -> Double {
        let n = Double(rows), hits = Double(matches)
        let value = log((n - hits + 0.5) / (hits + 0.5))
        return value <= 0 ? 1e-6 : value
    }
}

/// A row in the top-k heap: ordered best first (higher score, then smaller id).
struct ScoredRow: Comparable {
    let score: Double
    let id: [UInt8]
    let doc: Int

    static func < (a: ScoredRow, b: ScoredRow) -> Bool {
        a.score != b.score ? a.score > b.score : a.id.lexicographicallyPrecedes(b.id)
    }
}

extension TextSearcher {
    /// Upper bounds are inflated by this factor before a skip, so rounding in the order of
    /// additions can never skip a row that would enter the top k.
    static let boundMargin = 1 + 1e-9

    /// The best `limit` rows (every row with `nil`) matching `compiled`, by BM25, and
    /// whether pruning was used. With `exhaustive`, every candidate is scored (for tests
    /// that check pruning never changes an answer).
    mutating func top(_ compiled: CompiledQuery, limit: Int?, exhaustive: Bool = false) throws -> [ScoredRow] {
        let stats = try index.statistics(reader)
        let bm25 = BM25(avgdl: stats.documents > 0 ? Double(stats.tokens) / Double(stats.documents) : 1)
        var leaves = try makeLeaves(compiled)
        for i in leaves.indices { leaves[i].idf = BM25.idf(rows: stats.documents, matches: leaves[i].matches) }
        let contributing = leaves.indices.filter { compiled.contributes[$0] }
        // Candidates come from the rarest phrase every match needs, or from all that can score.
        let required = leaves.indices.filter { compiled.required[$0] }
        let driver = required.min { leaves[$0].matches < leaves[$1].matches }
        var best = TopK<ScoredRow>(capacity: limit)
        let prune = !exhaustive && limit != nil
        var active = Array(repeating: false, count: leaves.count)
        var nearMatched = active
        var stack: [Bool] = []
        var target = 0
        while true {
            // The next candidate at or after target.
            var d = Int.max
            if let driver {
                try leaves[driver].advance(to: target)
                d = leaves[driver].doc
                // Leapfrog the other required phrases to it.
                var moved = true
                while moved && d != .max {
                    moved = false
                    for r in required where r != driver {
                        try leaves[r].advance(to: d)
                        if leaves[r].doc > d {
                            try leaves[driver].advance(to: leaves[r].doc)
                            d = leaves[driver].doc
                            moved = true
                            break
                        }
                    }
                }
            } else {
                for c in contributing {
                    try leaves[c].advance(to: target)
                    d = min(d, leaves[c].doc)
                }
            }
            if d == .max { break }
            let threshold = prune ? best.worst?.score : nil
            if let threshold {
                // Every row in [d, end] scores at most the sum of each phrase's best there.
                var bound = 0.0, end = Int.max
                for c in contributing {
                    let (b, e) = shallowBound(leaves[c], at: d, bm25)
                    bound += b
                    end = min(end, e)
                }
                if bound * Self.boundMargin < threshold {
                    work.skippedRuns += 1
                    if end == .max { break }
                    target = end + 1
                    continue
                }
            }
            for i in leaves.indices {
                try leaves[i].advance(to: d)
                active[i] = leaves[i].doc == d
                nearMatched[i] = leaves[i].nearMatches(d) ?? active[i]
            }
            if let threshold {
                var bound = 0.0
                for c in contributing where active[c] { bound += rowBound(leaves[c], bm25) }
                if bound * Self.boundMargin < threshold {
                    work.skippedRows += 1
                    target = d + 1
                    continue
                }
            }
            if compiled.evaluate(&active, nearMatched: nearMatched, stack: &stack) {
                work.scored += 1
                let length = try self.length(d)
                var score = 0.0
                // FTS5 sums over every phrase, but an inactive phrase adds exactly +0.0, so
                // summing the active ones in ascending order gives the same bits.
                for i in leaves.indices where active[i] {
                    score += leaves[i].idf * bm25.weight(frequency: leaves[i].frequency, length: length)
                }
                if threshold == nil || score >= (threshold ?? 0) {
                    let row = ScoredRow(score: score, id: try rowID(d), doc: d)
                    if best.wouldKeep(row) { best.insert(row) }
                }
            }
            target = d + 1
        }
        return best.sorted()
    }

    /// The best contribution `leaf` can make to rows from `doc` up to the returned end.
    private func shallowBound(_ leaf: PhraseLeaf, at doc: Int, _ bm25: BM25) -> (bound: Double, end: Int) {
        if let cursor = leaf.cursor {
            guard let (block, last) = cursor.shallow(doc) else { return (0, .max) }
            return (leaf.idf * Self.impactBound(cursor.list.headers[block].impacts, bm25), last)
        }
        var probe = leaf
        var position = leaf.position
        if position < leaf.docs.count && leaf.docs[position] < doc {
            try? probe.advance(to: doc)
            position = probe.position
        }
        guard position < leaf.docs.count else { return (0, .max) }
        let chunk = position / PhraseLeaf.chunk
        let end = leaf.docs[min(leaf.docs.count, (chunk + 1) * PhraseLeaf.chunk) - 1]
        return (leaf.idf * bm25.weight(frequency: leaf.chunkMaxima[chunk], length: 0), end)
    }

    /// The best contribution `leaf` can make to the row it is on (before reading its length).
    private func rowBound(_ leaf: PhraseLeaf, _ bm25: BM25) -> Double {
        if let cursor = leaf.cursor {
            // The row's length rounded down bounds its weight from above.
            return leaf.idf * bm25.weight(frequency: cursor.frequency, length: cursor.normLength)
        }
        return leaf.idf * bm25.weight(frequency: leaf.frequency, length: 0)
    }

    static func impactBound(_ impacts: [PostingBlock.Impact], _ bm25: BM25) -> Double {
        impacts.reduce(0) { max($0, bm25.weight(frequency: $1.frequency, length: $1.length)) }
    }

    /// A leaf for each phrase: plain terms as cursors, the others evaluated in full.
    private mutating func makeLeaves(_ compiled: CompiledQuery) throws -> [PhraseLeaf] {
        var lists: [TextTerm: TermPostings] = [:]
        var prefixLists: [TextTerm: [TermPostings]] = [:]
        func list(_ term: String) throws -> TermPostings {
            if let l = lists[TextTerm(term)] { return l }
            let l = try TermPostings.load(term, layout: layout, reader: reader)
            lists[TextTerm(term)] = l
            return l
        }
        func prefixed(_ term: String) throws -> [TermPostings] {
            if let l = prefixLists[TextTerm(term)] { return l }
            let l = try TermPostings.load(prefix: term, layout: layout, reader: reader)
            prefixLists[TextTerm(term)] = l
            return l
        }
        var leaves: [PhraseLeaf] = []
        var sources: [[[TermPostings]]] = []
        // For phrases of NEAR groups: the phrase with the group's column filter.
        var effective: [TextQuery.Phrase] = []
        for (i, phrase) in compiled.phrases.enumerated() {
            var leaf = PhraseLeaf()
            // A NEAR group of one phrase is that phrase (with the group's column filter).
            let near = (compiled.nearGroup[i]?.count ?? 0) > 1
            var p = phrase
            if near { p.columns = TextQueryParser.combine(p.columns, compiled.nearColumns[i]) }
            effective.append(p)
            if phrase.terms.count == 1 && !phrase.prefix && phrase.columns == nil && !phrase.initial && !near {
                let l = try list(phrase.terms[0])
                leaf.cursor = PostingCursor(l)
                leaf.matches = l.documentFrequency
                sources.append([[l]])
            } else if phrase.terms.isEmpty {
                sources.append([])
            } else {
                let phraseSources = try p.terms.enumerated().map { k, term in
                    p.prefix && k == p.terms.count - 1 ? try prefixed(term) : [try list(term)]
                }
                let rows = try evaluate(p, sources: phraseSources)
                // As FTS5's bm25() (through xQueryPhrase), a phrase's IDF counts the rows
                // the phrase matches alone; a NEAR group's rows come below.
                if near { leaf.matches = rows.count } else { leaf.materialize(rows) }
                sources.append(phraseSources)
            }
            leaves.append(leaf)
        }
        var i = 0
        while i < leaves.count {
            guard let group = compiled.nearGroup[i], group.count > 1 else {
                i += 1
                continue
            }
            defer { i = group.upperBound }
            let (rows, flags, records) = try evaluateNear(compiled, group: group, phrases: effective, sources: sources)
            for (k, g) in group.enumerated() {
                let matches = leaves[g].matches
                leaves[g].materialize(rows[k])
                leaves[g].matches = matches
                leaves[g].nearFlags = flags[k]
                nearRecords[g] = records[k]
            }
        }
        return leaves
    }

    /// A NEAR group of several phrases, as FTS5's NEAR node sees it: it stops at every row
    /// where all the group's terms occur, in row order, and tests the phrases in order,
    /// stopping at the first that must match there and does not (fts5_expr.c,
    /// `fts5ExprNearTest`); each phrase keeps its list of instances from the last time it
    /// was set, which is what it reports (and BM25 counts) in the rows where it is not
    /// empty. For each phrase of the group: those rows with its count of instances,
    /// whether the group matches in each, and (for highlights) the instances.
    ///
    /// Each row's stored position lists are walked in place; the lists of instances are
    /// scratch buffers kept from row to row.
    private func evaluateNear(
        _ compiled: CompiledQuery, group: Range<Int>, phrases: [TextQuery.Phrase], sources: [[[TermPostings]]]
    )
        throws -> (rows: [[(doc: Int, frequency: Int)]], flags: [[Bool]], records: [NearRecord])
    {
        let n = group.count
        var rows = Array(repeating: [(doc: Int, frequency: Int)](), count: n)
        var flags = Array(repeating: [Bool](), count: n)
        var records = Array(repeating: NearRecord(), count: n)
        // Every term of every phrase, with where its cursors start among them.
        var terms: [TermRowCursor] = []
        var firstTerm: [Int] = []
        // Prefix terms under a column filter, with its columns: FTS5 merges a prefix's
        // expansions into one list of the rows where one occurs in those columns (fts5_index.c,
        // `fts5SetupPrefixIter` skips a row whose filtered position list is empty), so the
        // group stops only at those rows; a plain term's list keeps every row.
        var filteredPrefixes: [(term: Int, allowed: ColumnMask)] = []
        for g in group {
            firstTerm.append(terms.count)
            let p = phrases[g]
            for (k, lists) in sources[g].enumerated() {
                if p.prefix && k == p.terms.count - 1, let allowed = ColumnMask(p.columns) {
                    filteredPrefixes.append((terms.count, allowed))
                }
                terms.append(try TermRowCursor(lists))
            }
        }
        firstTerm.append(terms.count)
        // A phrase with no terms has no instances (its group never matches).
        guard !terms.isEmpty else { return (rows, flags, records) }
        let lengths = group.map { phrases[$0].terms.count }
        let checked = group.map { g in
            let p = phrases[g]
            return p.terms.count > 1 || p.initial || p.columns != nil
        }
        var walkers = group.map { PhraseWalker(phrases[$0]) }
        var state = Array(repeating: [PhraseInstance](), count: n)
        var scratch = state
        // Where each phrase's current list is in its record, once stored.
        var stored: [Range<Int>?] = Array(repeating: nil, count: n)
        var entries: [ArraySlice<UInt8>] = []
        var bounds: [Int] = []
        let order = terms.indices.sorted { terms[$0].documentFrequency < terms[$1].documentFrequency }
        var target = 0
        while true {
            let doc = try Self.nextCommonRow(&terms, order: order, from: target)
            if doc == .max { break }
            target = doc + 1
            if try !filteredPrefixes.allSatisfy({
                try terms[$0.term].hasOccurrences(in: $0.allowed, layout: layout, reader: reader)
            }) {
                continue
            }
            var complete = true
            for k in 0..<n {
                // Phrase k's terms' stored entries in this row, term by term.
                entries.removeAll(keepingCapacity: true)
                bounds.removeAll(keepingCapacity: true)
                bounds.append(0)
                for t in firstTerm[k]..<firstTerm[k + 1] {
                    try terms[t].appendOccurrences(to: &entries, layout: layout, reader: reader)
                    bounds.append(entries.count)
                }
                state[k].removeAll(keepingCapacity: true)
                stored[k] = nil
                let length = lengths[k]
                try walkers[k].forEachInstance(entries, bounds: bounds) { column, start in
                    state[k].append(PhraseInstance(column: column, start: start, length: length))
                }
                if checked[k] && state[k].isEmpty {
                    complete = false
                    break
                }
            }
            let matched =
                complete
                && Self.nearMatch(&state, &scratch, lengths: lengths, distance: compiled.nearDistance[group.lowerBound])
            for k in 0..<n where !state[k].isEmpty {
                rows[k].append((doc, state[k].count))
                flags[k].append(matched)
                let range: Range<Int>
                if let r = stored[k] {
                    range = r
                } else {
                    let start = records[k].instances.count
                    records[k].instances += state[k]
                    range = start..<records[k].instances.count
                    stored[k] = range
                }
                records[k].docs.append(doc)
                records[k].ranges.append(range)
                records[k].matched.append(matched)
            }
        }
        return (rows, flags, records)
    }

    /// The first row at or after `target` where every cursor of `terms` has an entry
    /// (`.max` when there is none), found by leapfrogging: `order` lists the cursors from
    /// the rarest, which leads; a cursor that lands past the candidate row makes its row the
    /// new candidate, and the leader catches up.
    private static func nextCommonRow(_ terms: inout [TermRowCursor], order: [Int], from target: Int) throws -> Int {
        try terms[order[0]].advance(to: target)
        var doc = terms[order[0]].doc
        var k = 1
        while k < order.count {
            if doc == .max { return .max }
            try terms[order[k]].advance(to: doc)
            if terms[order[k]].doc > doc {
                doc = terms[order[k]].doc
                try terms[order[0]].advance(to: doc)
                doc = terms[order[0]].doc
                k = 1
            } else {
                k += 1
            }
        }
        return doc
    }

    /// Every row where `phrase` matches, with its number of instances there, found by
    /// leapfrogging the terms' cursors from the rarest and walking the stored occurrences
    /// of those rows in place. `sources` holds, for each term, the posting lists it
    /// matches (several for a prefix).
    private func evaluate(_ phrase: TextQuery.Phrase, sources: [[TermPostings]]) throws -> [(doc: Int, frequency: Int)]
    {
        guard !sources.isEmpty else { return [] }
        var terms = try sources.map { try TermRowCursor($0) }
        let order = terms.indices.sorted { terms[$0].documentFrequency < terms[$1].documentFrequency }
        let needPositions = phrase.terms.count > 1 || phrase.initial
        let full = index.detail == .full
        // Positions are refused without detail=full (checkDetail); nothing matches then.
        if needPositions && !full { return [] }
        let allowed = ColumnMask(phrase.columns)
        var walker = PhraseWalker(phrase)
        if !needPositions && allowed != nil {
            // Every row of the term is visited: its occurrences are read with one scan.
            for list in sources[0] { try list.prefetchOccurrences(layout: layout, reader: reader) }
        }
        var entries: [ArraySlice<UInt8>] = []
        var bounds: [Int] = []
        var result: [(doc: Int, frequency: Int)] = []
        var target = 0
        while true {
            let doc = try Self.nextCommonRow(&terms, order: order, from: target)
            if doc == .max { break }
            target = doc + 1
            if !needPositions {
                // One term, anywhere in the allowed columns: its frequency, or its
                // occurrences counted there.
                var n = 0
                if let allowed {
                    entries.removeAll(keepingCapacity: true)
                    try terms[0].appendOccurrences(to: &entries, layout: layout, reader: reader)
                    for bytes in entries {
                        n += try bytes.withUnsafeBytes { try TextDocument.count($0, positions: full, allowed: allowed) }
                    }
                } else {
                    n = terms[0].currentFrequency
                }
                if n > 0 { result.append((doc, n)) }
                continue
            }
            entries.removeAll(keepingCapacity: true)
            bounds.removeAll(keepingCapacity: true)
            bounds.append(0)
            for t in terms.indices {
                try terms[t].appendOccurrences(to: &entries, layout: layout, reader: reader)
                bounds.append(entries.count)
            }
            let n = try walker.count(entries, bounds: bounds)
            if n > 0 { result.append((doc, n)) }
        }
        return result
    }
}

extension TextIndex {
    /// Parses `query` (FTS5 syntax, with this index's columns), checks it against the
    /// index's `detail`, and ranks the best `limit` rows (every row with `nil`) by BM25
    /// exactly as FTS5's `bm25()` computes it, ties by row id.
    /// - Throws: `.invalidArgument` for a malformed query (naming the position) or one the
    ///   `detail` does not allow (FTS5's message), storage errors.
    package func rank(_ query: String, limit: Int?, exhaustive: Bool = false, reader: any KeyValueReader) throws
        -> TextRanking
    {
        var parser = TextQueryParser(text: Array(query.utf8), tokenizer: tokenizer, columns: columns)
        let parsed = try parser.parseQuery()
        let compiled = CompiledQuery(parsed)
        try checkDetail(compiled)
        if detail == .none && parser.droppedColumnFilter {
            throw KVDocsError(.invalidArgument, "fts5: column queries are not supported (detail=none)")
        }
        var searcher = TextSearcher(index: self, reader: reader)
        let rows = try searcher.top(compiled, limit: limit, exhaustive: exhaustive)
        let hits = try rows.map { row -> (id: TupleElement, score: Double, doc: Int) in
            let t = try Tuple(decoding: row.id)
            guard let id = t.elements.first, t.count == 1 else {
                throw KVDocsError(
                    .corruption, "text index \(layout.subspace): document number \(row.doc) has a damaged row id")
            }
            return (id, -1.0 * row.score, row.doc)
        }
        return TextRanking(
            query: parsed, compiled: compiled, hits: hits, work: searcher.work,
            nearState: searcher.nearState(for: hits.map(\.doc)))
    }

    /// FTS5's rules for what each `detail` allows, checked as FTS5's parser does: each
    /// phrase or NEAR group in order, its phrases first (with `detail` other than `full`, a
    /// group must be one phrase of at most one term, without `^`), then its column filter
    /// (none with `detail=none`); the first problem is the error.
    func checkDetail(_ compiled: CompiledQuery) throws {
        guard detail != .full else { return }
        for node in compiled.nodes where node.kind == .phrase || node.kind == .near {
            let phrases = compiled.phrases[node.phrases]
            if let first = phrases.first,
                phrases.count != 1 || first.terms.count > 1 || (first.initial && !first.terms.isEmpty)
            {
                throw KVDocsError(
                    .invalidArgument,
                    "fts5: \(phrases.count == 1 ? "phrase" : "NEAR") queries are not supported (detail!=full)")
            }
            if detail == .none, phrases.contains(where: { $0.columns != nil }) {
                throw KVDocsError(.invalidArgument, "fts5: column queries are not supported (detail=none)")
            }
        }
    }
}
