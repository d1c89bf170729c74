import Foundation
import KVGeo

/// The documents of a collection whose point is near a centre, nearest first, read from a
/// geo index: ``NearHit``s with their JSON documents, or ``TypedNearHit``s whose documents
/// are decoded. The arguments are those of
/// ``ReadTransaction/near(_:_:within:query:index:includeDocuments:)``.
///
/// <!-- doc-code: preamble=examples -->
/// ```swift
/// let nearby = try store.fetch(.near("stations", here, within: 1500, query: DocumentQuery().limit(3), as: Station.self))
/// ```
///
/// Fetch it with any reader (see ``DocumentRequest``); `collection.near(center)` is the
/// same read from one snapshot.
public struct NearRequest<Hit>: DocumentRequest {
    /// The collection read.
    public let collection: String
    /// The point distances are measured from.
    public var center: GeoPoint
    /// The radius in metres (≥ 0), or `nil` for none (then give the query a limit).
    public var within: Double?
    /// Extra conditions, a limit and an offset (no order), and the fields returned.
    public var query: DocumentQuery
    /// The geo index to read; `nil` for the collection's only one.
    public var index: String?
    /// Whether hits carry their documents. A typed request reads them whatever this says
    /// (a value needs its document).
    public var includeDocuments: Bool
    let decoder: any RequestDecoder<NearHit, Hit>
    /// Whether the hits need their documents (to decode them).
    let needsDocuments: Bool

    /// Reads the hits through `transaction`
    /// (``ReadTransaction/near(_:_:within:query:index:includeDocuments:)``), each decoded
    /// unless it is untyped.
    /// - Throws: `.decoding` when a document does not decode; otherwise as
    ///   ``ReadTransaction/near(_:_:within:query:index:includeDocuments:)``.
    public func fetch(from transaction: ReadTransaction) throws -> [Hit] {
        try fetchWithStoredHits(transaction).value
    }

    private func fetchWithStoredHits(_ transaction: ReadTransaction) throws -> (value: [Hit], stored: [NearHit]) {
        let hits = try transaction.near(
            collection, center, within: within, query: query, index: index,
            includeDocuments: includeDocuments || needsDocuments)
        let dates = transaction.store.dateStrategy
        return (try hits.map { try decoder.decode($0, dates: dates) }, hits)
    }
}

extension NearRequest: StoredResultRequest {
    func fetchWithStoredResult(from transaction: ReadTransaction) throws -> (
        value: Any, stored: any Equatable & Sendable
    ) {
        let (value, stored) = try fetchWithStoredHits(transaction)
        return (value, stored)
    }
}

extension NearRequest where Hit == NearHit {
    /// The documents of `collection` within `within` metres of `center`, with their JSON
    /// documents.
    /// - Parameters:
    ///   - collection: the collection's name.
    ///   - center: the point distances are measured from.
    ///   - within: the radius in metres (≥ 0), or `nil` for none.
    ///   - query: extra conditions, a limit and an offset, and the fields returned.
    ///   - index: the geo index to read; `nil` for the collection's only one.
    ///   - includeDocuments: whether hits carry their documents.
    public init(
        _ collection: String, _ center: GeoPoint, within: Double? = nil, query: DocumentQuery = DocumentQuery(),
        index: String? = nil,
        includeDocuments: Bool = true
    ) {
        self.init(
            collection: collection, center: center, within: within, query: query, index: index,
            includeDocuments: includeDocuments,
            decoder: UntypedDecoder(), needsDocuments: false)
    }
}

extension NearRequest {
    /// The documents of `collection` within `within` metres of `center`, decoded as `T`.
    /// - Parameters:
    ///   - collection: the collection's name.
    ///   - center: the point distances are measured from.
    ///   - within: the radius in metres (≥ 0), or `nil` for none.
    ///   - query: extra conditions, a limit and an offset, and the fields returned.
    ///   - index: the geo index to read; `nil` for the collection's only one.
    ///   - type: the type to decode.
    public init<T: Decodable>(
        _ collection: String, _ center: GeoPoint, within: Double? = nil, query: DocumentQuery = DocumentQuery(),
        index: String? = nil,
        as type: T.Type
    ) where Hit == TypedNearHit<T> {
        self.init(
            collection: collection, center: center, within: within, query: query, index: index, includeDocuments: true,
            decoder: NearHitDecoder<T>(), needsDocuments: true)
    }
}

extension DocumentRequest {
    /// The documents of `collection` within `within` metres of `center`, nearest first,
    /// with their JSON documents: a ``NearRequest``.
    public static func near(
        _ collection: String, _ center: GeoPoint, within: Double? = nil, query: DocumentQuery = DocumentQuery(),
        index: String? = nil,
        includeDocuments: Bool = true
    ) -> Self where Self == NearRequest<NearHit> {
        NearRequest(collection, center, within: within, query: query, index: index, includeDocuments: includeDocuments)
    }

    /// The documents of `collection` within `within` metres of `center`, nearest first,
    /// decoded as `T`: a ``NearRequest``.
    ///
    /// <!-- doc-code: preamble=examples -->
    /// ```swift
    /// let nearest = try store.fetch(.near("stations", here, query: DocumentQuery().limit(1), as: Station.self)).first
    /// ```
    public static func near<T: Decodable>(
        _ collection: String, _ center: GeoPoint, within: Double? = nil, query: DocumentQuery = DocumentQuery(),
        index: String? = nil, as type: T.Type
    ) -> Self where Self == NearRequest<TypedNearHit<T>> {
        NearRequest(collection, center, within: within, query: query, index: index, as: type)
    }

    /// The documents of `collection` within `within` metres of `center`, nearest first,
    /// with their JSON documents.
    public static func near(
        _ collection: DocumentCollection, _ center: GeoPoint, within: Double? = nil,
        query: DocumentQuery = DocumentQuery(),
        index: String? = nil, includeDocuments: Bool = true
    ) -> Self where Self == NearRequest<NearHit> {
        NearRequest(
            collection.name, center, within: within, query: query, index: index, includeDocuments: includeDocuments)
    }

    /// The values of the typed `collection` within `within` metres of `center`, nearest
    /// first, decoded.
    public static func near<T>(
        _ collection: TypedCollection<T>, _ center: GeoPoint, within: Double? = nil,
        query: DocumentQuery = DocumentQuery(),
        index: String? = nil
    ) -> Self where Self == NearRequest<TypedNearHit<T>> {
        NearRequest(collection.base.name, center, within: within, query: query, index: index, as: T.self)
    }
}
