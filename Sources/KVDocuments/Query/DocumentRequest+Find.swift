import Foundation
import KVSupport

/// The documents of a collection matching a ``DocumentQuery``, in its order, after its offset, up
/// to its limit: as JSON (`FindRequest<JSONValue>`) or decoded (`FindRequest<T>`).
///
/// <!-- doc-code: preamble=examples -->
/// ```swift
/// let young: FindRequest<Person> = .find("people", DocumentQuery().where("age", .less(30)).orderBy("age"), as: Person.self)
/// let people = try store.fetch(young)          // [Person]
/// ```
///
/// Fetch it with any reader (see ``DocumentRequest``); `collection.find(query)` is the
/// same read from one snapshot.
public struct FindRequest<Element>: DocumentRequest {
    /// The collection read.
    public let collection: String
    /// The conditions, order, offset, limit and selected fields.
    public var query: DocumentQuery
    let decoder: any RequestDecoder<JSONValue, Element>

    /// Reads the matching documents through `transaction`
    /// (``ReadTransaction/find(_:_:)``), decoded as `Element` unless they are JSON.
    /// - Throws: `.decoding` when a document does not decode as `Element` (a query that
    ///   selects fields returns documents with those fields only); otherwise as
    ///   ``ReadTransaction/find(_:_:)``.
    public func fetch(from transaction: ReadTransaction) throws -> [Element] {
        if let values = try decoder.find(collection, query, in: transaction) { return values }
        return try decoded(transaction.find(collection, query), transaction.store.dateStrategy)
    }

    private func decoded(_ documents: [JSONValue], _ dates: DateStrategy) throws -> [Element] {
        try documents.map { try decoder.decode($0, dates: dates) }
    }
}

extension FindRequest: StoredResultRequest {
    func fetchWithStoredResult(from transaction: ReadTransaction) throws -> (
        value: Any, stored: any Equatable & Sendable
    ) {
        let documents = try transaction.find(collection, query)
        return (try decoded(documents, transaction.store.dateStrategy), documents)
    }
}

extension FindRequest where Element == JSONValue {
    /// The documents of `collection` matching `query`, as JSON.
    /// - Parameters:
    ///   - collection: the collection's name.
    ///   - query: the conditions, order, offset, limit and fields; all documents by default.
    public init(_ collection: String, _ query: DocumentQuery = DocumentQuery()) {
        self.init(collection: collection, query: query, decoder: UntypedDecoder())
    }
}

extension FindRequest where Element: Decodable {
    /// The documents of `collection` matching `query`, decoded as `Element` with the
    /// store's date strategy.
    /// - Parameters:
    ///   - collection: the collection's name.
    ///   - query: the conditions, order, offset, limit and fields; all documents by default.
    ///   - type: the type to decode.
    public init(_ collection: String, _ query: DocumentQuery = DocumentQuery(), as type: Element.Type) {
        self.init(
            collection: collection, query: query,
            decoder: DocumentDecoder<Element>())
    }
}

extension DocumentRequest {
    /// The documents of `collection` matching `query`, as JSON: a ``FindRequest``.
    ///
    /// <!-- doc-code: preamble=examples -->
    /// ```swift
    /// let trips = try store.fetch(.find("trips", DocumentQuery().where("person", .equal("p1"))))
    /// ```
    public static func find(_ collection: String, _ query: DocumentQuery = DocumentQuery()) -> Self
    where Self == FindRequest<JSONValue> {
        FindRequest(collection, query)
    }

    /// The documents of `collection` matching `query`, decoded as `T`: a ``FindRequest``.
    ///
    /// <!-- doc-code: preamble=examples -->
    /// ```swift
    /// let trips = try store.fetch(.find("trips", DocumentQuery().where("person", .equal("p1")), as: Trip.self))
    /// ```
    public static func find<T: Decodable>(
        _ collection: String, _ query: DocumentQuery = DocumentQuery(), as type: T.Type
    ) -> Self
    where Self == FindRequest<T> {
        FindRequest(collection, query, as: type)
    }

    /// The documents of `collection` matching `query`, as JSON: a ``FindRequest``.
    public static func find(_ collection: DocumentCollection, _ query: DocumentQuery = DocumentQuery()) -> Self
    where Self == FindRequest<JSONValue> {
        FindRequest(collection.name, query)
    }

    /// The values of the typed `collection` matching `query`: a ``FindRequest``.
    ///
    /// <!-- doc-code: preamble=examples -->
    /// ```swift
    /// let athletes = try store.collection("athletes", of: Athlete.self)
    /// let norwegians = try store.fetch(.find(athletes, DocumentQuery().where("country", .equal("NOR"))))   // [Athlete]
    /// ```
    public static func find<T>(_ collection: TypedCollection<T>, _ query: DocumentQuery = DocumentQuery()) -> Self
    where Self == FindRequest<T> {
        FindRequest(collection.base.name, query, as: T.self)
    }
}

/// The number of documents of a collection matching a ``DocumentQuery``'s conditions (its order,
/// offset and limit ignored).
///
/// <!-- doc-code: preamble=examples -->
/// ```swift
/// let adults = try store.fetch(.count("people", DocumentQuery().where("age", .greaterOrEqual(18))))
/// ```
public struct CountRequest: DocumentRequest, Hashable {
    /// The collection read.
    public let collection: String
    /// The conditions counted.
    public var query: DocumentQuery

    /// The documents of `collection` matching `query`'s conditions.
    /// - Parameters:
    ///   - collection: the collection's name.
    ///   - query: the conditions; every document by default.
    public init(_ collection: String, _ query: DocumentQuery = DocumentQuery()) {
        self.collection = collection
        self.query = query
    }

    /// Counts through `transaction` (``ReadTransaction/count(_:_:)``).
    /// - Throws: as ``ReadTransaction/count(_:_:)``.
    public func fetch(from transaction: ReadTransaction) throws -> Int {
        try transaction.count(collection, query)
    }
}

extension DocumentRequest where Self == CountRequest {
    /// The number of documents of `collection` matching `query`'s conditions: a
    /// ``CountRequest``.
    public static func count(_ collection: String, _ query: DocumentQuery = DocumentQuery()) -> Self {
        CountRequest(collection, query)
    }

    /// The number of documents of `collection` matching `query`'s conditions.
    public static func count(_ collection: DocumentCollection, _ query: DocumentQuery = DocumentQuery()) -> Self {
        CountRequest(collection.name, query)
    }

    /// The number of values of the typed `collection` matching `query`'s conditions.
    public static func count<T>(_ collection: TypedCollection<T>, _ query: DocumentQuery = DocumentQuery()) -> Self {
        CountRequest(collection.base.name, query)
    }
}
