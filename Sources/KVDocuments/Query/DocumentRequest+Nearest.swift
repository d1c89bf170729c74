import Foundation
import KVSupport
import KVVector

/// The k documents of a collection whose vectors are nearest to a query vector, nearest
/// first, read from a vector index: ``NearestHit``s with their JSON documents, or
/// ``TypedNearestHit``s whose documents are decoded. The arguments are those of
/// ``ReadTransaction/nearest(_:to:k:query:index:search:includeDocuments:)``.
///
/// <!-- doc-code: preamble=examples -->
/// ```swift
/// let similar = try store.fetch(.nearest("notes", to: embedding, k: 10,
///     query: DocumentQuery().where("folder", .equal("work")), as: Note.self))
/// ```
///
/// Fetch it with any reader (see ``DocumentRequest``), or observe it: an observation is
/// woken by every write to the collection.
public struct NearestRequest<Hit>: DocumentRequest {
    /// The collection read.
    public let collection: String
    /// The query vector.
    public var vector: [Float]
    /// How many nearest.
    public var k: Int
    /// Conditions and the fields returned (no order, limit or offset).
    public var query: DocumentQuery
    /// The vector index to read; `nil` for the collection's only one.
    public var index: String?
    /// Exact or approximate (the default).
    public var search: VectorSearchMode = .approximate()
    /// Whether hits carry their documents. A typed request reads them whatever this says.
    public var includeDocuments: Bool
    let decoder: any RequestDecoder<NearestHit, Hit>
    let needsDocuments: Bool

    /// Reads the hits through `transaction`
    /// (``ReadTransaction/nearest(_:to:k:query:index:search:includeDocuments:)``), each decoded
    /// unless it is untyped.
    /// - Throws: `.decoding` when a document does not decode; otherwise as
    ///   ``ReadTransaction/nearest(_:to:k:query:index:search:includeDocuments:)``.
    public func fetch(from transaction: ReadTransaction) throws -> [Hit] {
        try fetchWithStoredHits(transaction).value
    }

    private func fetchWithStoredHits(_ transaction: ReadTransaction) throws -> (value: [Hit], stored: [NearestHit]) {
        let hits = try transaction.nearest(
            collection, to: vector, k: k, query: query, index: index, search: search,
            includeDocuments: includeDocuments || needsDocuments)
        let dates = transaction.store.dateStrategy
        return (try hits.map { try decoder.decode($0, dates: dates) }, hits)
    }
}

extension NearestRequest: StoredResultRequest {
    func fetchWithStoredResult(from transaction: ReadTransaction) throws -> (
        value: Any, stored: any Equatable & Sendable
    ) {
        let (value, stored) = try fetchWithStoredHits(transaction)
        return (value, stored)
    }
}

struct NearestHitDecoder<T: Decodable>: RequestDecoder {
    func decode(_ hit: NearestHit, dates: DateStrategy) throws -> TypedNearestHit<T> {
        try TypedNearestHit(decoding: hit, dates: dates)
    }
}

extension NearestRequest where Hit == NearestHit {
    /// The `k` documents of `collection` nearest to `vector`, with their JSON documents.
    /// - Parameters:
    ///   - collection: the collection's name.
    ///   - vector: the query vector.
    ///   - k: how many nearest.
    ///   - query: conditions and the fields returned.
    ///   - index: the vector index to read; `nil` for the collection's only one.
    ///   - search: exact or approximate (``VectorSearchMode``).
    ///   - includeDocuments: whether hits carry their documents.
    public init(
        _ collection: String, to vector: [Float], k: Int, query: DocumentQuery = DocumentQuery(),
        index: String? = nil, search: VectorSearchMode = .approximate(), includeDocuments: Bool = true
    ) {
        self.init(
            collection: collection, vector: vector, k: k, query: query, index: index, search: search,
            includeDocuments: includeDocuments, decoder: UntypedDecoder(), needsDocuments: false)
    }
}

extension NearestRequest {
    /// The `k` documents of `collection` nearest to `vector`, decoded as `T`.
    /// - Parameters:
    ///   - collection: the collection's name.
    ///   - vector: the query vector.
    ///   - k: how many nearest.
    ///   - query: conditions and the fields returned.
    ///   - index: the vector index to read; `nil` for the collection's only one.
    ///   - search: exact or approximate (``VectorSearchMode``).
    ///   - type: the type to decode.
    public init<T: Decodable>(
        _ collection: String, to vector: [Float], k: Int, query: DocumentQuery = DocumentQuery(),
        index: String? = nil, search: VectorSearchMode = .approximate(), as type: T.Type
    ) where Hit == TypedNearestHit<T> {
        self.init(
            collection: collection, vector: vector, k: k, query: query, index: index, search: search,
            includeDocuments: true,
            decoder: NearestHitDecoder<T>(), needsDocuments: true)
    }
}

extension DocumentRequest {
    /// The `k` documents of `collection` nearest to `vector`, with their JSON documents: a
    /// ``NearestRequest``.
    public static func nearest(
        _ collection: String, to vector: [Float], k: Int, query: DocumentQuery = DocumentQuery(),
        index: String? = nil, search: VectorSearchMode = .approximate(), includeDocuments: Bool = true
    ) -> Self where Self == NearestRequest<NearestHit> {
        NearestRequest(
            collection, to: vector, k: k, query: query, index: index, search: search,
            includeDocuments: includeDocuments)
    }

    /// The `k` documents of `collection` nearest to `vector`, decoded as `T`: a
    /// ``NearestRequest``.
    public static func nearest<T: Decodable>(
        _ collection: String, to vector: [Float], k: Int, query: DocumentQuery = DocumentQuery(),
        index: String? = nil, search: VectorSearchMode = .approximate(), as type: T.Type
    ) -> Self where Self == NearestRequest<TypedNearestHit<T>> {
        NearestRequest(collection, to: vector, k: k, query: query, index: index, search: search, as: type)
    }

    /// The `k` values of the typed `collection` nearest to `vector`, decoded.
    public static func nearest<T>(
        _ collection: TypedCollection<T>, to vector: [Float], k: Int, query: DocumentQuery = DocumentQuery(),
        index: String? = nil, search: VectorSearchMode = .approximate()
    ) -> Self where Self == NearestRequest<TypedNearestHit<T>> {
        NearestRequest(collection.base.name, to: vector, k: k, query: query, index: index, search: search, as: T.self)
    }
}

/// A hybrid query of a collection (``ReadTransaction/hybrid(_:_:)``) as a request: fetched
/// by any reader, or observed (woken by every write to the collection).
public struct HybridRequest: DocumentRequest {
    /// The collection read.
    public let collection: String
    /// The query.
    public var query: HybridQuery

    /// The hybrid query `query` of `collection`.
    /// - Parameters:
    ///   - collection: the collection's name.
    ///   - query: the text, the vector, the conditions and k.
    public init(_ collection: String, _ query: HybridQuery) {
        self.collection = collection
        self.query = query
    }

    /// Reads the hits through `transaction` (``ReadTransaction/hybrid(_:_:)``).
    /// - Throws: as ``ReadTransaction/hybrid(_:_:)``.
    public func fetch(from transaction: ReadTransaction) throws -> [HybridHit] {
        try transaction.hybrid(collection, query)
    }
}
