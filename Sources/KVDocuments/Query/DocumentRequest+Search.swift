import Foundation

/// The hits of a full-text search of a collection's text index, ranked by BM25, best
/// first: ``SearchHit``s with their JSON documents, or ``TypedSearchHit``s whose documents
/// are decoded.
///
/// <!-- doc-code: preamble=examples -->
/// ```swift
/// var options = SearchOptions(limit: 10)
/// options.highlight = SearchOptions.Markers(open: "[", close: "]")
/// let hits = try store.fetch(.search("notes", "leveldb OR sqlite", options: options, as: Note.self))
/// ```
///
/// Fetch it with any reader (see ``DocumentRequest``); `collection.search(text)` is the
/// same read from one snapshot.
public struct SearchRequest<Hit>: DocumentRequest {
    /// The collection searched.
    public let collection: String
    /// The FTS5 query.
    public var text: String
    /// The index, limit, offset, highlights and snippet. A typed request reads its
    /// documents whatever ``SearchOptions/includeDocuments`` says (a value needs one).
    public var options: SearchOptions
    let decoder: any RequestDecoder<SearchHit, Hit>
    /// Whether the hits need their documents (to decode them).
    let needsDocuments: Bool

    /// Searches through `transaction` (``ReadTransaction/search(_:_:options:)``), each hit
    /// decoded unless it is untyped.
    /// - Throws: `.decoding` when a document does not decode; otherwise as
    ///   ``ReadTransaction/search(_:_:options:)``.
    public func fetch(from transaction: ReadTransaction) throws -> [Hit] {
        try fetchWithStoredHits(transaction).value
    }

    private func fetchWithStoredHits(_ transaction: ReadTransaction) throws -> (value: [Hit], stored: [SearchHit]) {
        var options = options
        if needsDocuments { options.includeDocuments = true }
        let hits = try transaction.search(collection, text, options: options)
        let dates = transaction.store.dateStrategy
        return (try hits.map { try decoder.decode($0, dates: dates) }, hits)
    }
}

extension SearchRequest: StoredResultRequest {
    func fetchWithStoredResult(from transaction: ReadTransaction) throws -> (
        value: Any, stored: any Equatable & Sendable
    ) {
        let (value, stored) = try fetchWithStoredHits(transaction)
        return (value, stored)
    }
}

extension SearchRequest where Hit == SearchHit {
    /// A search of `collection` for `text`, with JSON documents.
    /// - Parameters:
    ///   - collection: the collection's name.
    ///   - text: the FTS5 query.
    ///   - options: the index, limit, offset, highlights, snippet, and whether hits carry
    ///     their documents.
    public init(_ collection: String, _ text: String, options: SearchOptions = SearchOptions()) {
        self.init(
            collection: collection, text: text, options: options, decoder: UntypedDecoder(), needsDocuments: false)
    }
}

extension SearchRequest {
    /// A search of `collection` for `text`, each hit's document decoded as `T`.
    /// - Parameters:
    ///   - collection: the collection's name.
    ///   - text: the FTS5 query.
    ///   - options: the index, limit, offset, highlights and snippet.
    ///   - type: the type to decode.
    public init<T: Decodable>(
        _ collection: String, _ text: String, options: SearchOptions = SearchOptions(), as type: T.Type
    )
    where Hit == TypedSearchHit<T> {
        self.init(
            collection: collection, text: text, options: options,
            decoder: SearchHitDecoder<T>(),
            needsDocuments: true)
    }
}

extension DocumentRequest {
    /// A full-text search of `collection` for `text`, with JSON documents: a
    /// ``SearchRequest``.
    public static func search(_ collection: String, _ text: String, options: SearchOptions = SearchOptions()) -> Self
    where Self == SearchRequest<SearchHit> {
        SearchRequest(collection, text, options: options)
    }

    /// A full-text search of `collection` for `text`, each hit's document decoded as `T`.
    ///
    /// <!-- doc-code: preamble=examples -->
    /// ```swift
    /// let hits = try store.fetch(.search("notes", "swift", as: Note.self))   // [TypedSearchHit<Note>]
    /// ```
    public static func search<T: Decodable>(
        _ collection: String, _ text: String, options: SearchOptions = SearchOptions(),
        as type: T.Type
    ) -> Self where Self == SearchRequest<TypedSearchHit<T>> {
        SearchRequest(collection, text, options: options, as: type)
    }

    /// A full-text search of `collection` for `text`, with JSON documents.
    public static func search(
        _ collection: DocumentCollection, _ text: String, options: SearchOptions = SearchOptions()
    ) -> Self
    where Self == SearchRequest<SearchHit> {
        SearchRequest(collection.name, text, options: options)
    }

    /// A full-text search of the typed `collection` for `text`, each hit's document decoded.
    public static func search<T>(
        _ collection: TypedCollection<T>, _ text: String, options: SearchOptions = SearchOptions()
    ) -> Self
    where Self == SearchRequest<TypedSearchHit<T>> {
        SearchRequest(collection.base.name, text, options: options, as: T.self)
    }
}
