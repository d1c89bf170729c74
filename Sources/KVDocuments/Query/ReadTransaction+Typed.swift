import Foundation
import KVGeo
import KVSupport

// Typed reads through one snapshot: `get` and `forEach` with each document decoded as `T`
// with the store's date strategy (``DocumentStore/dateStrategy``), and ids given as Swift
// values. Typed finds, searches and geo queries are requests (`fetch(.find(…, as: T.self))`).

extension ReadTransaction {
    /// The document whose primary key is `id`, given as a Swift value (`Int`, `String`,
    /// `UUID`, or any `Encodable` value whose JSON is a string or an integer), or `nil`.
    /// - Throws: `.invalidArgument` for an id whose JSON is neither, `.schema` for an
    ///   unknown collection.
    public func get<ID: Encodable>(_ collection: String, id: ID) throws -> JSONValue? {
        try get(collection, id: try store.idJSON(id))
    }

    /// The document whose primary key is `id` decoded as `T`, or `nil`.
    ///
    /// <!-- doc-code: preamble=examples -->
    /// ```swift
    /// let athlete = try store.read { tx in try tx.get("athletes", id: 42, as: Athlete.self) }
    /// ```
    /// - Parameters:
    ///   - collection: the collection.
    ///   - id: the primary key: an `Int`, a `String`, a `UUID`, a ``JSONValue``, or any
    ///     `Encodable` value whose JSON is a string or an integer.
    ///   - type: the type to decode.
    /// - Throws: `.decoding` when the document does not decode as `T`; otherwise as
    ///   `get(_:id:)`.
    public func get<ID: Encodable, T: Decodable>(_ collection: String, id: ID, as type: T.Type) throws -> T? {
        try getDecoded(collection, id: try store.idJSON(id), as: type)
    }

    /// Calls `body` with each document matching `query` decoded as `T`, as the scan finds
    /// it: ``forEach(_:_:_:)`` typed, in bounded memory.
    /// - Throws: `.decoding` when a document does not decode as `T` (documents before it
    ///   have been handed to `body`); otherwise as ``forEach(_:_:_:)``.
    public func forEach<T: Decodable>(
        _ collection: String, _ query: DocumentQuery = DocumentQuery(), as type: T.Type, _ body: (T) throws -> Void
    ) throws {
        try forEachDecoded(collection, query, as: type, body)
    }

    /// A stored document decoded as `T` with the store's date strategy.
    private func decoded<T: Decodable>(_ json: JSONValue, as type: T.Type) throws -> T {
        try DocumentStore.decodeStored(type, json, dates: store.dateStrategy)
    }
}
