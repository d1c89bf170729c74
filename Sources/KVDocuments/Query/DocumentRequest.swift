import Foundation
import KVSupport

/// A read of a document store as a value: built once, stored, passed across tasks, and
/// fetched by any reader.
///
/// Every reader has one entry point that takes any request:
///
/// | Reader | Call |
/// |---|---|
/// | one snapshot | `store.fetch(_:)` |
/// | a transaction | ``ReadTransaction/fetch(_:)`` |
/// | async, off the caller's thread | `try await store.fetch(request)` |
/// | a data migration | ``MigrationContext/fetch(_:)`` |
/// | kept current | ``DocumentStore/observe(_:)`` |
///
/// The library's requests are built with static members, so a call reads like the read it
/// makes; give `as: T.self` (or a ``TypedCollection``) for decoded values:
///
/// <!-- doc-code: preamble=examples -->
/// ```swift
/// let adults: FindRequest<Person> = .find("people", DocumentQuery().where("age", .greaterOrEqual(18)), as: Person.self)
/// let now = try await store.fetch(adults)                    // [Person]
/// let (same, trips) = try await store.read { tx in (try tx.fetch(adults), try tx.fetch(.count("trips"))) }
/// for try await people in store.observe(adults) { print(people.count) }
/// ```
///
/// In synchronous code, `try store.fetch(adults)` and `try store.read { tx in try
/// tx.fetch(adults) }` read on the calling thread.
///
/// ``FindRequest`` finds documents, ``CountRequest`` counts them, ``SearchRequest`` runs a
/// full-text search and ``NearRequest`` a geo query.
///
/// Conform a type of your own to read anything through a transaction: its requirement is
/// the one read, and observing it tracks the collections that read touched (see
/// ``DocumentStore/observe(_:)``). A request names no collections:
/// observation records what each run read instead.
public protocol DocumentRequest<Value>: Sendable {
    /// What fetching the request returns.
    associatedtype Value

    /// Reads the request's value through `transaction`'s snapshot. Call
    /// ``ReadTransaction/fetch(_:)`` rather than this.
    /// - Throws: what the read throws: `.schema` for an unknown collection or index,
    ///   `.invalidArgument` for a malformed query, `.decoding` for a document that does
    ///   not decode as the request's type.
    func fetch(from transaction: ReadTransaction) throws -> Value
}

extension ReadTransaction {
    /// The value of `request`, read through this transaction's snapshot: the one entry
    /// point for every request kind, untyped or typed.
    ///
    /// <!-- doc-code: preamble=examples -->
    /// ```swift
    /// let (ada, trips) = try store.read { tx in
    ///     (try tx.get("people", id: "p1", as: Person.self),
    ///      try tx.fetch(.find("trips", DocumentQuery().where("person", .equal("p1")), as: Trip.self)))
    /// }
    /// ```
    /// - Throws: what the request's read throws (see ``DocumentRequest/fetch(from:)``).
    public func fetch<Request: DocumentRequest>(_ request: Request) throws -> Request.Value {
        try request.fetch(from: self)
    }
}

extension DocumentStore {
    /// The value of `request`, read from one new snapshot.
    ///
    /// <!-- doc-code: preamble=examples -->
    /// ```swift
    /// let adults = try store.fetch(.find("people", DocumentQuery().where("age", .greaterOrEqual(18))))
    /// let count = try store.fetch(.count("people"))
    /// ```
    /// - Throws: what the request's read throws (see ``DocumentRequest/fetch(from:)``).
    public func fetch<Request: DocumentRequest>(_ request: Request) throws -> Request.Value {
        try read { try $0.fetch(request) }
    }

    /// The value of `request`, read from one new snapshot on the store's read executor, so
    /// the caller's thread never blocks on LevelDB: the async twin of the synchronous
    /// `fetch`, as the async `read` is of `read`.
    ///
    /// <!-- doc-code: preamble=examples -->
    /// ```swift
    /// let hits = try await store.fetch(.search("notes", "leveldb", as: Note.self))
    /// ```
    /// - Throws: `CancellationError` when the task is cancelled before the read starts;
    ///   otherwise what the request's read throws.
    public func fetch<Request: DocumentRequest>(_ request: Request) async throws -> Request.Value
    where Request.Value: Sendable {
        try await executor.read { [self] in try read { try $0.fetch(request) } }
    }
}

/// How a request turns what it read into its values: untyped (the stored JSON as it is) or
/// decoded as `T` with the store's date strategy. (Types rather than closures, so that no
/// closure captures a metatype that is not `Sendable`.)
protocol RequestDecoder<Stored, Element>: Sendable {
    associatedtype Stored
    associatedtype Element
    func decode(_ stored: Stored, dates: DateStrategy) throws -> Element
    /// The matches of a find read and decoded straight from the stored bytes, or `nil`
    /// when this decoder needs the documents as JSON (a requirement, not a cast, so that
    /// choosing costs nothing per read).
    func find(_ collection: String, _ query: DocumentQuery, in transaction: ReadTransaction) throws -> [Element]?
}

extension RequestDecoder {
    func find(_ collection: String, _ query: DocumentQuery, in transaction: ReadTransaction) throws -> [Element]? {
        nil
    }
}

/// Hands what was read over as it is.
struct UntypedDecoder<Stored>: RequestDecoder {
    func decode(_ stored: Stored, dates: DateStrategy) -> Stored { stored }
}

/// Decodes a stored document as `T`.
struct DocumentDecoder<T: Decodable>: RequestDecoder {
    func decode(_ stored: JSONValue, dates: DateStrategy) throws -> T {
        try DocumentStore.decodeStored(T.self, stored, dates: dates)
    }

    func find(_ collection: String, _ query: DocumentQuery, in transaction: ReadTransaction) throws -> [T]? {
        var values: [T] = []
        try transaction.forEachDecoded(collection, query, as: T.self) { values.append($0) }
        return values
    }
}

/// Decodes a search hit's document as `T`.
struct SearchHitDecoder<T: Decodable>: RequestDecoder {
    func decode(_ hit: SearchHit, dates: DateStrategy) throws -> TypedSearchHit<T> {
        TypedSearchHit(hit, value: try DocumentStore.decodeStored(T.self, hit.document, dates: dates))
    }
}

/// Decodes a geo hit's document as `T`.
struct NearHitDecoder<T: Decodable>: RequestDecoder {
    func decode(_ hit: NearHit, dates: DateStrategy) throws -> TypedNearHit<T> {
        TypedNearHit(
            id: hit.id, distance: hit.distance,
            value: try DocumentStore.decodeStored(T.self, hit.document, dates: dates))
    }
}

/// A request whose value is decoded from stored documents, which are what two of its
/// values are compared by (a decoded `T` need not be `Equatable`).
protocol StoredResultRequest {
    /// The value, and the stored result it was decoded from.
    func fetchWithStoredResult(from transaction: ReadTransaction) throws -> (
        value: Any, stored: any Equatable & Sendable
    )
}
