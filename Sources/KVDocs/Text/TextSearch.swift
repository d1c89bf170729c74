import Foundation

/// A phrase instance: where a phrase matched.
struct PhraseInstance: Hashable {
    let column: Int
    let start: Int
    let length: Int
}

/// Evaluates a parsed query against one text index through one reader.
struct TextSearcher {
    let layout: TextIndexLayout
    let reader: any KeyValueReader
    /// Postings read so far: term → id → column → positions.
    var cache: [TextTerm: [TupleElement: [Int: [Int]]]] = [:]

    init(layout: TextIndexLayout, reader: any KeyValueReader) {
        self.layout = layout
        self.reader = reader
    }

    /// The postings of every term in `range` merged: id → column → positions.
    mutating func postings(_ range: KeyRange, cacheKey: String) throws -> [TupleElement: [Int: [Int]]] {
        if let cached = cache[TextTerm(cacheKey)] { return cached }
        var result: [TupleElement: [Int: [Int]]] = [:]
        let entries = try reader.scan(range, order: .forward)
        while let (id, columns) = try entries.next({ k, v -> (TupleElement?, [(column: Int, positions: [Int])]) in
            (try Tuple(decoding: k).elements.last, try TextDocument.decode(v))
        }).map({ ($0.0, $0.1) }) {
            guard let id else { continue }
            for (column, positions) in columns { result[id, default: [:]][column, default: []] += positions }
        }
        if cacheKey.hasPrefix("*") {
            // Several terms may share a document and column: keep positions sorted.
            for (id, columns) in result { for (c, p) in columns { result[id]?[c] = p.sorted() } }
        }
        cache[TextTerm(cacheKey)] = result
        return result
    }

    /// Where `phrase` matches, by document.
    mutating func instances(_ phrase: TextQuery.Phrase) throws -> [TupleElement: [PhraseInstance]] {
        guard !phrase.terms.isEmpty else { return [:] }
        var lists: [[TupleElement: [Int: [Int]]]] = []
        for (i, term) in phrase.terms.enumerated() {
            if phrase.prefix && i == phrase.terms.count - 1 {
                lists.append(try postings(layout.postings(prefix: term), cacheKey: "*" + term))
            } else {
                lists.append(try postings(layout.postings(term), cacheKey: term))
            }
        }
        var result: [TupleElement: [PhraseInstance]] = [:]
        let length = phrase.terms.count
        for (id, firstColumns) in lists[0] {
            guard lists.dropFirst().allSatisfy({ $0[id] != nil }) else { continue }
            var found: [PhraseInstance] = []
            for (column, starts) in firstColumns {
                if let filter = phrase.columns, !filter.allowed.contains(column) { continue }
                let rest = lists.dropFirst().map { Set($0[id]?[column] ?? []) }
                for start in starts where !phrase.initial || start == 0 {
                    if rest.enumerated().allSatisfy({ $0.element.contains(start + $0.offset + 1) }) {
                        found.append(PhraseInstance(column: column, start: start, length: length))
                    }
                }
            }
            if !found.isEmpty { result[id] = found.sorted { ($0.column, $0.start) < ($1.column, $1.start) } }
        }
        return result
    }

    /// An AND, OR or NOT node being evaluated: its operands (a NOT's base first), the next
    /// one to evaluate, and what the evaluated ones give so far.
    struct Pending<Value> {
        enum Kind { case and, or, not }
        let kind: Kind
        let operands: [TextQuery]
        var next = 0
        var value: Value

        /// The node's operands and kind, or nil for a phrase or NEAR group.
        static func split(_ query: TextQuery) -> (Kind, [TextQuery])? {
            switch query {
            case .phrase, .near: return nil
            case .and(let operands): return (.and, operands)
            case .or(let operands): return (.or, operands)
            case .not(let base, let excluded): return (.not, [base] + excluded)
            }
        }
    }

    /// The documents matching `query`, with every phrase's instances (for ranking and
    /// highlights), in the order of ``TextQuery/phrases``. The tree is walked with an
    /// explicit stack, so its depth costs no call stack.
    mutating func evaluate(_ query: TextQuery, phraseMatches: inout [[TupleElement: [PhraseInstance]]]) throws -> Set<TupleElement> {
        var stack: [Pending<Set<TupleElement>>] = []
        var node = query
        while true {
            // Descend along first operands to a phrase or NEAR group.
            while let (kind, operands) = Pending<Set<TupleElement>>.split(node), let first = operands.first {
                stack.append(Pending(kind: kind, operands: operands, value: []))
                node = first
            }
            var ids: Set<TupleElement>
            switch node {
            case .phrase(let p):
                let matches = try instances(p)
                phraseMatches.append(matches)
                ids = Set(matches.keys)
            case .near(let phrases, let distance, let filter):
                ids = try near(phrases, distance: distance, filter: filter, phraseMatches: &phraseMatches)
            case .and, .or, .not:
                ids = []  // no operands
            }
            // Fold the result into the pending nodes, finishing those with no operand left.
            // Every operand is evaluated, even once an AND is empty: each phrase needs its
            // slot in phraseMatches (BM25's IDF counts its matches in every document).
            var resumed = false
            while var top = stack.popLast() {
                if top.next == 0 {
                    top.value = ids
                } else {
                    switch top.kind {
                    case .and: top.value.formIntersection(ids)
                    case .or: top.value.formUnion(ids)
                    case .not: top.value.subtract(ids)
                    }
                }
                top.next += 1
                if top.next < top.operands.count {
                    node = top.operands[top.next]
                    stack.append(top)
                    resumed = true
                    break
                }
                ids = top.value
            }
            if !resumed { return ids }
        }
    }

    /// The documents where the phrases match within `distance` tokens of each other.
    mutating func near(_ phrases: [TextQuery.Phrase], distance: Int, filter: TextQuery.ColumnFilter?,
                       phraseMatches: inout [[TupleElement: [PhraseInstance]]]) throws -> Set<TupleElement> {
        var all: [[TupleElement: [PhraseInstance]]] = []
        for var p in phrases {
            p.columns = TextQueryParser.combine(p.columns, filter)
            all.append(try instances(p))
        }
        var kept = Array(repeating: [TupleElement: [PhraseInstance]](), count: all.count)
        var ids = Set<TupleElement>()
        let candidates = all.dropFirst().reduce(Set(all.first?.keys ?? [:].keys)) { $0.intersection($1.keys) }
        for id in candidates {
            let used = Self.nearMatches(all.map { $0[id] ?? [] }, distance: distance)
            guard !used.allSatisfy({ $0.isEmpty }) else { continue }
            ids.insert(id)
            for (i, u) in used.enumerated() { kept[i][id] = u }
        }
        phraseMatches += kept
        return ids
    }

    /// Whether `query` matches document `id`, and the phrases (by index in evaluation
    /// order, ascending) of the sub-expressions that match it. As in FTS5, a phrase in a
    /// sub-expression that does not match the row (the failing operands of an OR, the
    /// excluded operands of a NOT) contributes no instances to ranking or highlighting.
    /// Walks the tree with an explicit stack, like ``evaluate(_:phraseMatches:)``.
    static func activePhrases(_ query: TextQuery, _ id: TupleElement, _ matches: [[TupleElement: [PhraseInstance]]]) -> (matched: Bool, phrases: [Int]) {
        // Each pending node remembers how many phrases were active when it started, so a
        // node that does not match takes its own back out: a node that does not match
        // leaves `phrases` as it found it.
        struct Progress {
            var start: Int
            var matched: Bool?
        }
        var stack: [Pending<Progress>] = []
        var phrases: [Int] = []
        var next = 0
        var node = query
        while true {
            while let (kind, operands) = Pending<Progress>.split(node), let first = operands.first {
                stack.append(Pending(kind: kind, operands: operands, value: Progress(start: phrases.count, matched: nil)))
                node = first
            }
            var matched: Bool
            switch node {
            case .phrase:
                matched = matches[next][id] != nil
                if matched { phrases.append(next) }
                next += 1
            case .near(let ps, _, _):
                let range = next..<(next + ps.count)
                next += ps.count
                matched = range.allSatisfy { matches[$0][id] != nil }
                if matched { phrases += range }
            case .and, .or, .not:
                matched = false  // no operands
            }
            var resumed = false
            while var top = stack.popLast() {
                switch top.kind {
                case .and: top.value.matched = (top.value.matched ?? true) && matched
                case .or: top.value.matched = (top.value.matched ?? false) || matched
                case .not:
                    // The base decides, unless an excluded operand matches. An excluded operand
                    // that does not match has added no phrases, and one that matches fails
                    // the node, which then takes every phrase since its start back out.
                    top.value.matched = top.next == 0 ? matched : (top.value.matched ?? false) && !matched
                }
                top.next += 1
                if top.next < top.operands.count {
                    node = top.operands[top.next]
                    stack.append(top)
                    resumed = true
                    break
                }
                matched = top.value.matched ?? false
                if !matched { phrases.removeSubrange(top.value.start...) }
            }
            if !resumed { return (matched, matched ? phrases : []) }
        }
    }

    /// Instances of each phrase that take part in a NEAR match: in one column, one instance
    /// of every phrase, with at most `distance` tokens between the end of the first and the
    /// start of the last. Empty lists when there is no match.
    static func nearMatches(_ perPhrase: [[PhraseInstance]], distance: Int) -> [[PhraseInstance]] {
        var used = Array(repeating: Set<PhraseInstance>(), count: perPhrase.count)
        let tagged = perPhrase.enumerated().flatMap { i, list in list.map { (phrase: i, instance: $0) } }
            .sorted { ($0.instance.column, $0.instance.start) < ($1.instance.column, $1.instance.start) }
        for (k, anchor) in tagged.enumerated() {
            // Windows starting at `anchor`: extend until every phrase is present.
            var chosen: [Int: PhraseInstance] = [anchor.phrase: anchor.instance]
            var j = k + 1
            while chosen.count < perPhrase.count && j < tagged.count && tagged[j].instance.column == anchor.instance.column {
                if chosen[tagged[j].phrase] == nil { chosen[tagged[j].phrase] = tagged[j].instance }
                j += 1
            }
            guard chosen.count == perPhrase.count else { continue }
            let lastStart = chosen.values.map(\.start).max() ?? 0
            if lastStart - (anchor.instance.start + anchor.instance.length) <= distance {
                for (p, inst) in chosen { used[p].insert(inst) }
            }
        }
        return used.map { $0.sorted { ($0.column, $0.start) < ($1.column, $1.start) } }
    }
}

/// The ranked answer of a query: every matching row with its BM25 score, best first, and
/// what highlights and snippets need.
struct TextRanking {
    let query: TextQuery
    /// Every phrase's instances by row, in the order of ``TextQuery/phrases``.
    let phraseMatches: [[TupleElement: [PhraseInstance]]]
    /// Rows and scores (FTS5's `bm25()`: negative, lower is better), best first, ties by the
    /// row id's tuple encoding.
    let hits: [(id: TupleElement, score: Double)]

    /// The instances that take part in row `id`'s match, and the phrase of each.
    func instances(of id: TupleElement) -> (instances: [PhraseInstance], phraseOf: [PhraseInstance: Int]) {
        let active = TextSearcher.activePhrases(query, id, phraseMatches).phrases
        var phraseOf: [PhraseInstance: Int] = [:]
        for i in active { for inst in phraseMatches[i][id] ?? [] where phraseOf[inst] == nil { phraseOf[inst] = i } }
        return (active.flatMap { phraseMatches[$0][id] ?? [] }, phraseOf)
    }
}

extension TextIndex {
    /// Parses `query` (FTS5 syntax, with this index's columns) and ranks every matching row
    /// by BM25 exactly as FTS5's `bm25()` computes it.
    /// - Throws: `.invalidArgument` for a malformed query (naming the position), storage errors.
    func rank(_ query: String, reader: any KeyValueReader) throws -> TextRanking {
        let parsed = try TextQuery.parse(query, tokenizer: tokenizer, columns: columns)
        var searcher = TextSearcher(layout: layout, reader: reader)
        var phraseMatches: [[TupleElement: [PhraseInstance]]] = []
        let ids = try searcher.evaluate(parsed, phraseMatches: &phraseMatches)

        // BM25, as fts5_aux.c computes it.
        let stats = try statistics(reader)
        let n = Double(stats.documents)
        let avgdl = stats.documents > 0 ? Double(stats.tokens) / n : 1
        let idf = phraseMatches.map { matches -> Double in
            let hits = Double(matches.count)
            let value = log((n - hits + 0.5) / (hits + 0.5))
            return value <= 0 ? 1e-6 : value
        }
        let k1 = 1.2, b = 0.75
        var scored: [(id: TupleElement, score: Double, idKey: [UInt8])] = []
        for id in ids {
            let active = TextSearcher.activePhrases(parsed, id, phraseMatches).phrases
            let lengths = try reader.value(forKey: layout.lengths(id)).map { try Tuple(decoding: $0) }
            // Saturating: the lengths are stored data, and damaged ones must not trap.
            let d = Double(lengths?.elements.reduce(0) { total, e in if case .int(let v) = e { total.saturatingAdd(Int(v)) } else { total } } ?? 0)
            // FTS5 sums over every phrase, but an inactive phrase (f = 0) adds exactly +0.0,
            // so summing the active ones in ascending order gives the same bits, in time
            // proportional to the matching phrases rather than to the whole query.
            var score = 0.0
            for i in active {
                let f = Double(phraseMatches[i][id]?.count ?? 0)
                score += idf[i] * ((f * (k1 + 1.0)) / (f + k1 * (1.0 - b + b * d / avgdl)))
            }
            scored.append((id, -1.0 * score, Tuple([id]).encoded))
        }
        scored.sort { $0.score != $1.score ? $0.score < $1.score : $0.idKey.lexicographicallyPrecedes($1.idKey) }
        return TextRanking(query: parsed, phraseMatches: phraseMatches, hits: scored.map { ($0.id, $0.score) })
    }
}
