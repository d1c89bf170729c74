import Foundation

/// Options of a full-text search.
public struct SearchOptions: Sendable {
    /// The text index to search; `nil` for the collection's only (or first) one.
    public var index: String?
    public var limit: Int?
    public var offset: Int = 0
    /// Markers to wrap matches with in ``SearchHit/highlights`` (every indexed field).
    public var highlight: Markers?
    /// A snippet of the best-matching field, like FTS5's `snippet()`.
    public var snippet: SnippetOptions?
    /// Whether hits carry their documents (`false` returns ids and scores only, which is
    /// faster for large result sets). Highlights and snippets always read the documents.
    public var includeDocuments = true

    public struct Markers: Sendable, Hashable {
        public var open: String
        public var close: String
        public init(open: String, close: String) {
            self.open = open
            self.close = close
        }
    }

    public struct SnippetOptions: Sendable, Hashable {
        public var markers: Markers
        public var ellipsis: String
        /// The most tokens in the snippet (1...64, as FTS5).
        public var tokens: Int
        public init(markers: Markers = Markers(open: "[", close: "]"), ellipsis: String = "…", tokens: Int = 15) {
            self.markers = markers
            self.ellipsis = ellipsis
            self.tokens = tokens
        }
    }

    public init(index: String? = nil, limit: Int? = nil, offset: Int = 0, highlight: Markers? = nil, snippet: SnippetOptions? = nil,
                includeDocuments: Bool = true) {
        self.includeDocuments = includeDocuments
        self.index = index
        self.limit = limit
        self.offset = offset
        self.highlight = highlight
        self.snippet = snippet
    }
}

/// One search result.
public struct SearchHit: Sendable {
    public let id: JSONValue
    /// The score as FTS5's `bm25()` returns it: negative, lower is better. Hits come best first.
    public let score: Double
    /// The document (`null` when ``SearchOptions/includeDocuments`` is false).
    public let document: JSONValue
    /// Each indexed field's text with matches wrapped in the requested markers.
    public let highlights: [String: String]
    public let snippet: String?
}

/// A phrase instance: where a phrase matched.
struct PhraseInstance: Hashable {
    let column: Int
    let start: Int
    let length: Int
}

/// Evaluates a parsed query against a text index through one snapshot.
struct TextSearcher {
    let store: DocumentStore
    let collection: String
    let definition: TextIndexDefinition
    let layout: TextIndexLayout
    let options: ReadOptions
    /// Postings read so far: term → id → column → positions.
    var cache: [String: [TupleElement: [Int: [Int]]]] = [:]

    init(store: DocumentStore, collection: String, definition: TextIndexDefinition, options: ReadOptions) {
        self.store = store
        self.collection = collection
        self.definition = definition
        self.layout = store.textLayout(collection, definition.name)
        self.options = options
    }

    /// The postings of every term in `range` merged: id → column → positions.
    mutating func postings(_ range: KeyRange, cacheKey: String) throws -> [TupleElement: [Int: [Int]]] {
        if let cached = cache[cacheKey] { return cached }
        var result: [TupleElement: [Int: [Int]]] = [:]
        let entries = try store.database.entries(range, options: options)
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
        cache[cacheKey] = result
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

extension ReadTransaction {
    /// Searches a collection's text index with an FTS5 query, ranked by BM25 (FTS5's
    /// `bm25()`, best first, ties by primary key), through this transaction's snapshot.
    /// - Throws: `.invalidArgument` for a malformed query (naming the position), `.schema`
    ///   for an unknown index.
    public func search(_ collection: String, _ query: String, options: SearchOptions = SearchOptions()) throws -> [SearchHit] {
        let schema = try store.schema.collection(collection)
        guard let definition = options.index.map({ name in schema.text.first { $0.name == name } }) ?? schema.text.first else {
            throw KVDocsError(.schema, options.index.map { "collection \"\(collection)\" has no text index \"\($0)\"" } ?? "collection \"\(collection)\" has no text index")
        }
        guard store.isTextReady(collection, definition.name) else {
            throw KVDocsError(.schema, "text index \"\(definition.name)\" of \"\(collection)\" is being built")
        }
        if let limit = options.limit, limit < 0 {
            throw KVDocsError(.invalidArgument, "search limit must not be negative (got \(limit))")
        }
        guard options.offset >= 0 else { throw KVDocsError(.invalidArgument, "search offset must not be negative (got \(options.offset))") }
        let tokenizer = TextTokenizer(definition.tokenizer)
        let parsed = try TextQuery.parse(query, tokenizer: tokenizer, columns: definition.fields.map(\.description))
        let readOptions = snapshot.readOptions()
        var searcher = TextSearcher(store: store, collection: collection, definition: definition, options: readOptions)
        var phraseMatches: [[TupleElement: [PhraseInstance]]] = []
        let ids = try searcher.evaluate(parsed, phraseMatches: &phraseMatches)

        // BM25, as fts5_aux.c computes it.
        let stats = try store.textStatistics(searcher.layout, options: readOptions)
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
            let lengths = try store.database.get(searcher.layout.lengths(id), as: Tuple.self, options: readOptions)
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
        let start = min(options.offset, scored.count)
        let end = options.limit.map { min(start.saturatingAdd($0), scored.count) } ?? scored.count

        var hits: [SearchHit] = []
        for entry in scored[start..<end] {
            guard options.includeDocuments || options.highlight != nil || options.snippet != nil else {
                hits.append(SearchHit(id: DocumentStore.idValue(entry.id), score: entry.score, document: .null, highlights: [:], snippet: nil))
                continue
            }
            guard let bytes = try store.database.get(store.layout.document(collection, entry.id), options: readOptions) else { continue }
            let document = try store.documentValue(bytes, collection: collection, id: entry.id)
            let active = TextSearcher.activePhrases(parsed, entry.id, phraseMatches).phrases
            let instances = active.flatMap { phraseMatches[$0][entry.id] ?? [] }
            let texts = TextDocument.columnTexts(definition, document)
            var highlights: [String: String] = [:]
            if let markers = options.highlight {
                for (column, text) in texts.enumerated() {
                    highlights[definition.fields[column].description] = Highlighter.highlight(text, tokenizer: tokenizer, instances: instances.filter { $0.column == column }, markers: markers)
                }
            }
            let snippet = options.snippet.map { Highlighter.snippet(texts, tokenizer: tokenizer, instances: instances, phraseOf: Self.phraseIndex(phraseMatches, active, entry.id), options: $0) }
            hits.append(SearchHit(id: DocumentStore.idValue(entry.id), score: entry.score, document: document, highlights: highlights, snippet: snippet))
        }
        return hits
    }

    /// Which phrase each instance of a document belongs to (for the snippet's scoring).
    static func phraseIndex(_ matches: [[TupleElement: [PhraseInstance]]], _ active: [Int], _ id: TupleElement) -> [PhraseInstance: Int] {
        var result: [PhraseInstance: Int] = [:]
        for i in active { for inst in matches[i][id] ?? [] where result[inst] == nil { result[inst] = i } }
        return result
    }
}

extension DocumentCollection {
    /// Searches the collection's text index. See ``ReadTransaction/search(_:_:options:)``.
    public func search(_ query: String, options: SearchOptions = SearchOptions()) throws -> [SearchHit] {
        try store.read { try $0.search(name, query, options: options) }
    }
}
