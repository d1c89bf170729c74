import Foundation
import KVSupport
import KVText

/// Options of a full-text search.
public struct SearchOptions: Sendable {
    /// The text index to search; `nil` for the collection's only (or first) one.
    public var index: String?
    /// The most hits returned, after the offset; `nil` for all. A negative limit makes the search throw `.invalidArgument`.
    public var limit: Int?
    /// The number of best hits skipped. A negative offset makes the search throw `.invalidArgument`.
    public var offset: Int = 0
    /// Markers to wrap matches with in ``SearchHit/highlights`` (every indexed field).
    public var highlight: Markers?
    /// A snippet of the best-matching field, like FTS5's `snippet()`.
    public var snippet: SnippetOptions?
    /// Whether hits carry their documents (`false` returns ids and scores only, which is
    /// faster for large result sets). Highlights and snippets always read the documents.
    public var includeDocuments = true

    /// Markers around matches (the text layer's ``HighlightMarkers``).
    public typealias Markers = HighlightMarkers
    /// How to make a snippet (the text layer's ``TextSnippetOptions``).
    public typealias SnippetOptions = TextSnippetOptions

    /// Options of a search; the defaults search the collection's first text index and return
    /// every hit with its document, without highlights or snippet.
    /// - Parameters:
    ///   - index: the text index to search; `nil` for the collection's first one.
    ///   - limit: the most hits returned; `nil` for all.
    ///   - offset: the best hits skipped.
    ///   - highlight: markers for ``SearchHit/highlights``; `nil` for none.
    ///   - snippet: how to make ``SearchHit/snippet``; `nil` for none.
    ///   - includeDocuments: whether hits carry their documents.
    public init(
        index: String? = nil, limit: Int? = nil, offset: Int = 0, highlight: Markers? = nil,
        snippet: SnippetOptions? = nil,
        includeDocuments: Bool = true
    ) {
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
    /// The primary key of the matching document.
    public let id: JSONValue
    /// The score as FTS5's `bm25()` returns it: negative, lower is better. Hits come best first.
    public let score: Double
    /// The document (`null` when ``SearchOptions/includeDocuments`` is false).
    public let document: JSONValue
    /// Each indexed field's text with matches wrapped in the requested markers.
    public let highlights: [String: String]
    /// The snippet of the best-matching field; `nil` unless ``SearchOptions/snippet`` was set.
    public let snippet: String?
}

extension ReadTransaction {
    /// Searches a collection's text index with an FTS5 query, ranked by BM25 (FTS5's
    /// `bm25()`, best first, ties by primary key), through this transaction's snapshot.
    /// - Throws: `.invalidArgument` for a malformed query (naming the position) or a
    ///   negative limit or offset, `.schema` for an unknown index or one being built.
    public func search(_ collection: String, _ query: String, options: SearchOptions = SearchOptions()) throws
        -> [SearchHit]
    {
        let maintainer = try textMaintainer(collection, options.index)
        let definition = maintainer.definition
        if let limit = options.limit, limit < 0 {
            throw KVDocsError(.invalidArgument, "search limit must not be negative (got \(limit))")
        }
        guard options.offset >= 0 else {
            throw KVDocsError(.invalidArgument, "search offset must not be negative (got \(options.offset))")
        }
        let ranking = try maintainer.rank(
            query, limit: options.limit.map { options.offset.saturatingAdd($0) }, reader: reader)
        let start = min(options.offset, ranking.hits.count)
        let end = options.limit.map { min(start.saturatingAdd($0), ranking.hits.count) } ?? ranking.hits.count

        var hits: [SearchHit] = []
        let needsDocuments = options.includeDocuments || options.highlight != nil || options.snippet != nil
        // Over a network, every hit's document in one request.
        var prefetched: [ByteKey: [UInt8]] = [:]
        if needsDocuments && reader.readsAreRoundTrips && end > start {
            let keys = ranking.hits[start..<end].map { store.layout.document(collection, $0.id) }
            for (key, value) in zip(keys, try reader.values(forKeys: keys)) {
                if let value { prefetched[ByteKey(key)] = value }
            }
        }
        for entry in ranking.hits[start..<end] {
            guard needsDocuments else {
                hits.append(
                    SearchHit(
                        id: DocumentStore.idValue(entry.id), score: entry.score, document: .null, highlights: [:],
                        snippet: nil))
                continue
            }
            let key = store.layout.document(collection, entry.id)
            guard let bytes = try prefetched[ByteKey(key)] ?? reader.value(forKey: key) else { continue }
            let document = try store.documentValue(bytes, collection: collection, id: entry.id)
            let texts = TextIndexMaintainer.columnTexts(definition, document)
            // The instances only matter to highlights and snippets.
            let tagged =
                options.highlight != nil || options.snippet != nil
                ? ranking.instances(texts: texts, tokenizer: maintainer.index.tokenizer, doc: entry.doc) : []
            let instances = tagged.map(\.instance)
            var highlights: [String: String] = [:]
            if let markers = options.highlight {
                for (column, text) in texts.enumerated() {
                    highlights[definition.fields[column].description] = Highlighter.highlight(
                        text, tokenizer: maintainer.index.tokenizer,
                        instances: instances.filter { $0.column == column }, markers: markers)
                }
            }
            let snippet = options.snippet.map {
                Highlighter.snippet(texts, tokenizer: maintainer.index.tokenizer, instances: tagged, options: $0)
            }
            hits.append(
                SearchHit(
                    id: DocumentStore.idValue(entry.id), score: entry.score, document: document, highlights: highlights,
                    snippet: snippet))
        }
        return hits
    }
}

extension DocumentCollection {
    /// Searches the collection's text index from one snapshot:
    /// `store.fetch(.search(collection, text, options: options))` (see ``SearchRequest``
    /// and ``ReadTransaction/search(_:_:options:)``).
    public func search(_ query: String, options: SearchOptions = SearchOptions()) throws -> [SearchHit] {
        try store.fetch(.search(self, query, options: options))
    }
}

/// One hit of a full-text search whose documents are decoded as `T`: from a
/// ``TypedCollection``, or `tx.fetch(.search(…, as: T.self))`.
public struct TypedSearchHit<T> {
    /// The primary key of the matching document.
    public let id: JSONValue
    /// The score as FTS5's `bm25()` returns it: negative, lower is better.
    public let score: Double
    /// The document, decoded.
    public let value: T
    /// Each indexed field's text with matches wrapped in the requested markers.
    public let highlights: [String: String]
    /// The snippet of the best-matching field; `nil` unless a snippet was asked for.
    public let snippet: String?

    /// The hit `hit` with `value`, its document decoded.
    /// - Parameters:
    ///   - hit: an untyped hit.
    ///   - value: its document, decoded.
    public init(_ hit: SearchHit, value: T) {
        id = hit.id
        score = hit.score
        self.value = value
        highlights = hit.highlights
        snippet = hit.snippet
    }

    /// The hit `hit` with its document decoded as `T`.
    /// - Parameters:
    ///   - hit: an untyped hit, with its document.
    ///   - dates: how the document's dates were written: the store's
    ///     ``DocumentStore/dateStrategy``.
    /// - Throws: `.decoding` when the document does not decode as `T`.
    public init(decoding hit: SearchHit, dates: DateStrategy) throws where T: Decodable {
        self.init(hit, value: try hit.document.decode(T.self, dates: dates))
    }
}

extension TypedSearchHit: Sendable where T: Sendable {}

extension TypedCollection {
    /// Searches the collection's text index, decoding each hit's document as `T`, from one
    /// snapshot: `store.fetch(.search(collection, text, options: options))` (see
    /// ``SearchRequest`` and ``ReadTransaction/search(_:_:options:)``);
    /// ``SearchOptions/includeDocuments`` is ignored (a value needs its document).
    /// - Throws: as `search`, and `.decoding` when a stored document does not decode as `T`.
    public func search(_ query: String, options: SearchOptions = SearchOptions()) throws -> [TypedSearchHit<T>]
    where T: Sendable {
        try base.store.fetch(.search(self, query, options: options))
    }
}

/// A term of a text index and the number of documents that hold it.
public struct TextTermInfo: Sendable, Equatable {
    /// The term as stored (folded, and stemmed with `porter`).
    public let term: String
    /// The documents holding the term (its document frequency).
    public let documents: Int
}

/// What a text index holds as a whole: what BM25 scores with.
public struct TextIndexStatistics: Sendable, Equatable {
    /// The documents in the index (every document of the collection).
    public let documents: Int
    /// The tokens of all of them, over all indexed fields.
    public let tokens: Int
    /// Tokens per document (BM25's avgdl); 0 for an empty collection.
    public var averageLength: Double { documents > 0 ? Double(tokens) / Double(documents) : 0 }

    package init(documents: Int, tokens: Int) {
        self.documents = documents
        self.tokens = tokens
    }
}

extension ReadTransaction {
    /// The ready text index `index` (or the collection's first) of `collection`.
    func textMaintainer(_ collection: String, _ index: String?) throws -> TextIndexMaintainer {
        recordRead(collection)
        let schema = try catalog.schema.collection(collection)
        guard
            let definition = index.map({ name in schema.text.first { $0.name.hasSameCodePoints(as: name) } })
                ?? schema.text.first
        else {
            throw KVDocsError(
                .schema,
                index.map { "collection \"\(collection)\" has no text index \"\($0)\"" }
                    ?? "collection \"\(collection)\" has no text index")
        }
        let identity = IndexIdentity(collection, definition.name, .text)
        guard catalog.isReady(identity), let maintainer = catalog.maintainer(identity) as? TextIndexMaintainer else {
            throw KVDocsError(.schema, "text index \"\(definition.name)\" of \"\(collection)\" is being built")
        }
        return maintainer
    }

    /// The terms of a text index that start with `prefix` (bytewise; all for ""), in
    /// order, with their document frequencies, at most `limit`.
    /// - Throws: `.schema` for an unknown collection or index, `.invalidArgument` for a
    ///   negative limit, `.corruption` for damaged postings.
    public func textTerms(_ collection: String, index: String? = nil, prefix: String = "", limit: Int? = nil) throws
        -> [TextTermInfo]
    {
        if let limit, limit < 0 {
            throw KVDocsError(.invalidArgument, "terms limit must not be negative (got \(limit))")
        }
        let maintainer = try textMaintainer(collection, index)
        return try TextIndexInspector(index: maintainer.index, reader: reader).terms(prefix: prefix, limit: limit)
            .map { TextTermInfo(term: $0.term, documents: $0.documents) }
    }

    /// The corpus statistics of a text index.
    /// - Throws: `.schema` for an unknown collection or index, `.corruption` for damaged statistics.
    public func textStatistics(_ collection: String, index: String? = nil) throws -> TextIndexStatistics {
        let stats = try textMaintainer(collection, index).index.statistics(reader)
        return TextIndexStatistics(documents: stats.documents, tokens: stats.tokens)
    }
}
