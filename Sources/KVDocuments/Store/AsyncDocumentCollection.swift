import KVGeo
import KVSupport

/// The async calls of a ``DocumentCollection``, spelled `collection.async.…`: the same
/// writes and lookups by id, run on the store's executor so that the awaiting
/// thread never blocks on LevelDB. Reads run concurrently; a store's writes run in the
/// order they were submitted. A task cancelled before its call starts gets
/// `CancellationError` and nothing is read or written; a call that has started completes.
///
/// <!-- doc-code: preamble=examples -->
/// ```swift
/// try await people.async.upsert(["id": "p1", "age": 36])
/// let ada = try await people.async.get(id: "p1")
/// let adults = try await people.store.fetch(.find(people, Query().where("age", .greaterOrEqual(18))))
/// ```
///
/// Queries, counts, searches and geo queries are requests, read asynchronously through
/// the store's one async entry point, `try await store.fetch(request)` (see
/// ``DocumentRequest``); this type's `find`, `count`, `search` and `near` are deprecated
/// spellings of it.
public struct AsyncDocumentCollection: Sendable {
    /// The collection the calls read and write.
    public let collection: DocumentCollection

    /// Adds a document; see ``DocumentCollection/insert(_:sync:)``.
    @discardableResult
    public func insert(_ document: JSONValue, sync: Bool = false) async throws -> Change {
        try await collection.store.executor.write { [collection] in try collection.insert(document, sync: sync) }
    }

    /// Adds or replaces a document; see ``DocumentCollection/upsert(_:sync:)``.
    @discardableResult
    public func upsert(_ document: JSONValue, sync: Bool = false) async throws -> Change {
        try await collection.store.executor.write { [collection] in try collection.upsert(document, sync: sync) }
    }

    /// Replaces a document; see ``DocumentCollection/update(_:sync:)``.
    @discardableResult
    public func update(_ document: JSONValue, sync: Bool = false) async throws -> Change {
        try await collection.store.executor.write { [collection] in try collection.update(document, sync: sync) }
    }

    /// Deletes a document; see ``DocumentCollection/delete(id:sync:)-(JSONValue,_)``.
    @discardableResult
    public func delete(id: JSONValue, sync: Bool = false) async throws -> Bool {
        try await collection.store.executor.write { [collection] in try collection.delete(id: id, sync: sync) }
    }

    /// The document with primary key `id`; see ``DocumentCollection/get(id:)-(JSONValue)``.
    public func get(id: JSONValue) async throws -> JSONValue? {
        try await collection.store.executor.read { [collection] in try collection.get(id: id) }
    }

    /// Deletes the document whose primary key is `id`, a Swift value (`Int`, `String`,
    /// `UUID`, …); see ``DocumentCollection/delete(id:sync:)-(ID,_)``.
    @discardableResult
    public func delete<ID: Encodable>(id: ID, sync: Bool = false) async throws -> Bool {
        try await delete(id: try collection.store.idJSON(id), sync: sync)
    }

    /// The document whose primary key is `id`, a Swift value (`Int`, `String`, `UUID`, …);
    /// see ``DocumentCollection/get(id:)-(ID)``.
    public func get<ID: Encodable>(id: ID) async throws -> JSONValue? {
        try await get(id: try collection.store.idJSON(id))
    }

    /// The documents matching `query`.
    @available(*, deprecated, message: "use try await store.fetch(.find(collection, query))")
    public func find(_ query: Query = Query()) async throws -> [JSONValue] {
        try await collection.store.fetch(.find(collection, query))
    }

    /// The number of documents matching `query`.
    @available(*, deprecated, message: "use try await store.fetch(.count(collection, query))")
    public func count(_ query: Query = Query()) async throws -> Int {
        try await collection.store.fetch(.count(collection, query))
    }

    /// The hits of a text query.
    @available(*, deprecated, message: "use try await store.fetch(.search(collection, text, options: options))")
    public func search(_ query: String, options: SearchOptions = SearchOptions()) async throws -> [SearchHit] {
        try await collection.store.fetch(.search(collection, query, options: options))
    }

    /// The documents around `center`.
    @available(
        *, deprecated,
        message: "use try await store.fetch(.near(collection, center, within:, query:, index:, includeDocuments:))"
    )
    public func near(
        _ center: GeoPoint, within: Double? = nil, query: Query = Query(), index: String? = nil,
        includeDocuments: Bool = true
    ) async throws -> [NearHit] {
        try await collection.store.fetch(
            .near(collection, center, within: within, query: query, index: index, includeDocuments: includeDocuments))
    }
}
