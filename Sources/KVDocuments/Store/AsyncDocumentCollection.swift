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
/// let adults = try await people.store.fetch(.find(people, DocumentQuery().where("age", .greaterOrEqual(18))))
/// ```
///
/// Queries, counts, searches and geo queries are requests, read asynchronously through
/// the store's one async entry point, `try await store.fetch(request)` (see
/// ``DocumentRequest``).
public struct AsyncDocumentCollection: Sendable {
    /// The collection the calls read and write.
    public let collection: DocumentCollection

    /// Adds a document; see ``DocumentCollection/insert(_:sync:)``.
    @discardableResult
    public func insert(_ document: JSONValue, sync: Bool = false) async throws -> DocumentChange {
        try await collection.store.executor.write { [collection] in try collection.insert(document, sync: sync) }
    }

    /// Adds or replaces a document; see ``DocumentCollection/upsert(_:sync:)``.
    @discardableResult
    public func upsert(_ document: JSONValue, sync: Bool = false) async throws -> DocumentChange {
        try await collection.store.executor.write { [collection] in try collection.upsert(document, sync: sync) }
    }

    /// Replaces a document; see ``DocumentCollection/update(_:sync:)``.
    @discardableResult
    public func update(_ document: JSONValue, sync: Bool = false) async throws -> DocumentChange {
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

}
