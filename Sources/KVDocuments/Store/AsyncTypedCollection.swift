import KVGeo
import KVSupport

/// The async calls of a ``TypedCollection``, spelled `collection.async.…`: the same typed
/// writes and lookups by id, run on the store's executor (see ``AsyncDocumentCollection``).
///
/// <!-- doc-code: preamble=examples -->
/// ```swift
/// try await athletes.async.upsert(Athlete(id: 7, name: "Ada", country: "NOR", points: 812))
/// let top = try await store.fetch(.find(athletes, DocumentQuery().where("country", .equal("NOR")).orderBy("points", descending: true).limit(10)))
/// ```
///
/// Typed reads of many values are requests (`try await store.fetch(.find(athletes, query))`,
/// see ``DocumentRequest``).
public struct AsyncTypedCollection<T: Codable & Sendable>: Sendable {
    /// The collection the calls read and write.
    public let collection: TypedCollection<T>

    /// Adds a value; see ``TypedCollection/insert(_:sync:)``.
    @discardableResult
    public func insert(_ value: T, sync: Bool = false) async throws -> DocumentChange {
        try await collection.base.async.insert(try collection.json(value), sync: sync)
    }

    /// Adds or replaces a value; see ``TypedCollection/upsert(_:sync:)``.
    @discardableResult
    public func upsert(_ value: T, sync: Bool = false) async throws -> DocumentChange {
        try await collection.base.async.upsert(try collection.json(value), sync: sync)
    }

    /// Replaces a value; see ``TypedCollection/update(_:sync:)``.
    @discardableResult
    public func update(_ value: T, sync: Bool = false) async throws -> DocumentChange {
        try await collection.base.async.update(try collection.json(value), sync: sync)
    }

    /// Deletes a value; see ``TypedCollection/delete(id:sync:)-(JSONValue,_)``.
    @discardableResult
    public func delete(id: JSONValue, sync: Bool = false) async throws -> Bool {
        try await collection.base.async.delete(id: id, sync: sync)
    }

    /// The value with primary key `id`; see ``TypedCollection/get(id:)-(JSONValue)``.
    public func get(id: JSONValue) async throws -> T? {
        try await collection.base.async.get(id: id).map { try collection.value($0) }
    }

    /// Deletes the value whose primary key is `id`, a Swift value (`Int`, `String`,
    /// `UUID`, …); see ``TypedCollection/delete(id:sync:)-(ID,_)``.
    @discardableResult
    public func delete<ID: Encodable>(id: ID, sync: Bool = false) async throws -> Bool {
        try await collection.base.async.delete(id: try collection.base.store.idJSON(id), sync: sync)
    }

    /// The value whose primary key is `id`, a Swift value (`Int`, `String`, `UUID`, …);
    /// see ``TypedCollection/get(id:)-(ID)``.
    public func get<ID: Encodable>(id: ID) async throws -> T? {
        try await collection.base.async.get(id: try collection.base.store.idJSON(id)).map { try collection.value($0) }
    }

}
