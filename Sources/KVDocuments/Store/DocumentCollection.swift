import Foundation
import KVSupport

/// A collection of untyped JSON documents in a ``DocumentStore``.
///
/// Each read is one snapshot; use ``DocumentStore/read(_:)-4pfop`` for several reads that must agree.
public struct DocumentCollection: Sendable {
    /// The store holding the collection.
    public let store: DocumentStore
    /// The collection's name, as the schema declares it.
    public let name: String

    /// Adds a document.
    /// - Parameters:
    ///   - document: a JSON object with the collection's primary key field (a string or
    ///     an integer).
    ///   - sync: wait until the write is on the disk, so it (and every write before
    ///     it) survives a power loss or an OS crash; without it, it survives a crash of the
    ///     process only (see ``DocumentStore``, Durability).
    /// - Returns: the change recorded for the write.
    /// - Throws: `.conflict` when its id exists, `.uniqueViolation` when a unique index
    ///   already holds one of its values, `.invalidArgument` for a document that is not an
    ///   object or lacks a valid primary key; nothing is written then.
    @discardableResult
    public func insert(_ document: JSONValue, sync: Bool = false) throws -> DocumentChange {
        try write(.insert, document, sync: sync)
    }

    /// Adds or replaces a document. `sync` is as for ``insert(_:sync:)``.
    @discardableResult
    public func upsert(_ document: JSONValue, sync: Bool = false) throws -> DocumentChange {
        try write(.upsert, document, sync: sync)
    }

    /// Replaces an existing document. `sync` is as for ``insert(_:sync:)``.
    /// - Throws: `.conflict` when there is none.
    @discardableResult
    public func update(_ document: JSONValue, sync: Bool = false) throws -> DocumentChange {
        try write(.update, document, sync: sync)
    }

    /// Removes the document with primary key `id`; returns whether there was one.
    /// `sync` is as for ``insert(_:sync:)``; when there was no document nothing is written,
    /// so nothing is synced.
    @discardableResult
    public func delete(id: JSONValue, sync: Bool = false) throws -> Bool {
        try store.performWrites(sync: sync) { try $0.write(name, .delete, document: nil, id: id) } != nil
    }

    /// Removes the document whose primary key is `id`, given as a Swift value: an `Int`, a
    /// `String`, a `UUID` (stored as its `uuidString`), or any `Encodable` value whose JSON
    /// is a string or an integer. As ``delete(id:sync:)-(JSONValue,_)``.
    /// - Throws: `.invalidArgument` for an id whose JSON is neither.
    @discardableResult
    public func delete<ID: Encodable>(id: ID, sync: Bool = false) throws -> Bool {
        try delete(id: try store.idJSON(id), sync: sync)
    }

    /// The document with primary key `id`, or `nil`.
    public func get(id: JSONValue) throws -> JSONValue? {
        try store.readOnce { try $0.get(name, id: id) }
    }

    /// The document whose primary key is `id`, given as a Swift value (`Int`, `String`,
    /// `UUID`, or any `Encodable` value whose JSON is a string or an integer), or `nil`.
    ///
    /// <!-- doc-code: preamble=examples -->
    /// ```swift
    /// let athlete = try athletes.get(id: 42)
    /// let session = try sessions.get(id: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
    /// ```
    /// - Throws: `.invalidArgument` for an id whose JSON is neither a string nor an integer.
    public func get<ID: Encodable>(id: ID) throws -> JSONValue? {
        try get(id: try store.idJSON(id))
    }

    /// The documents matching `query`, from one snapshot: `store.fetch(.find(collection,
    /// query))` (see ``FindRequest``).
    public func find(_ query: DocumentQuery = DocumentQuery()) throws -> [JSONValue] {
        try store.fetch(.find(self, query))
    }

    /// The number of documents matching `query`'s conditions, from one snapshot:
    /// `store.fetch(.count(collection, query))` (see ``CountRequest``).
    public func count(_ query: DocumentQuery = DocumentQuery()) throws -> Int {
        try store.fetch(.count(self, query))
    }

    /// How ``find(_:)`` would answer `query`.
    public func explain(_ query: DocumentQuery) throws -> QueryPlan {
        try store.read { try $0.explain(name, query) }
    }

    private func write(_ mode: DocumentStore.WriteMode, _ document: JSONValue, sync: Bool) throws -> DocumentChange {
        try store.performWrites(sync: sync) { context in
            guard let change = try context.write(name, mode, document: document, id: nil) else {
                throw KVDocsError(.invalidArgument, "nothing was written")
            }
            return change
        }
    }
}

/// A collection read and written as `Codable` values (stored as JSON, dates as the store's
/// ``DocumentStore/dateStrategy`` writes them).
///
/// <!-- doc-code: preamble=examples -->
/// ```swift
/// struct Person: Codable { var id: String; var name: String; var age: Int }
/// let people = try store.collection("people", of: Person.self)
/// try people.insert(Person(id: "p1", name: "Ada", age: 36))
/// let found: [Person] = try people.find(DocumentQuery().where("age", .greater(30)))
/// let ada = try people.get(id: "p1")
/// ```
public struct TypedCollection<T: Codable>: Sendable {
    /// The untyped collection the values are stored in, as JSON.
    public let base: DocumentCollection

    /// The typed handle on `base`.
    /// - Parameter base: the collection the values are stored in.
    public init(base: DocumentCollection) { self.base = base }

    /// Adds `value`, stored as its JSON; `sync` is as for ``DocumentCollection/insert(_:sync:)``.
    /// - Throws: `.invalidArgument` when `value` does not encode as a JSON object with a valid
    ///   primary key; otherwise as ``DocumentCollection/insert(_:sync:)``.
    @discardableResult public func insert(_ value: T, sync: Bool = false) throws -> DocumentChange {
        try base.insert(try json(value), sync: sync)
    }
    /// Adds `value`, or replaces the document with its id; `sync` is as for
    /// ``DocumentCollection/insert(_:sync:)``.
    @discardableResult public func upsert(_ value: T, sync: Bool = false) throws -> DocumentChange {
        try base.upsert(try json(value), sync: sync)
    }
    /// Replaces the document with `value`'s id; `sync` is as for ``DocumentCollection/insert(_:sync:)``.
    /// - Throws: `.conflict` when there is none.
    @discardableResult public func update(_ value: T, sync: Bool = false) throws -> DocumentChange {
        try base.update(try json(value), sync: sync)
    }
    /// Removes the document with primary key `id` (an `Int`, a `String`, a `UUID`, a
    /// ``JSONValue``, or any value that encodes as a string or an integer); returns whether
    /// there was one. As ``DocumentCollection/delete(id:sync:)-(JSONValue,_)``.
    @discardableResult public func delete<ID: Encodable>(id: ID, sync: Bool = false) throws -> Bool {
        try base.delete(id: id, sync: sync)
    }
    /// Removes the document with primary key `id`, given as JSON (`.int(7)`).
    @discardableResult public func delete(id: JSONValue, sync: Bool = false) throws -> Bool {
        try base.delete(id: id, sync: sync)
    }
    /// The document with primary key `id` (an `Int`, a `String`, a `UUID`, a ``JSONValue``,
    /// or any value that encodes as a string or an integer) decoded as `T`, or `nil`.
    /// - Throws: `.decoding` when the stored document does not decode as `T`;
    ///   `.invalidArgument` for an id that is not a string or an integer.
    public func get<ID: Encodable>(id: ID) throws -> T? {
        let id = try base.store.idJSON(id)
        return try base.store.read { [name = base.name] in try $0.getDecoded(name, id: id, as: T.self) }
    }
    /// The document with primary key `id`, given as JSON (`.int(7)`), decoded as `T`, or `nil`.
    public func get(id: JSONValue) throws -> T? {
        try base.store.readOnce { [name = base.name] in try $0.getDecoded(name, id: id, as: T.self) }
    }
    /// The documents matching `query`, decoded as `T`, from one snapshot:
    /// `store.fetch(.find(collection, query))` (see ``FindRequest``).
    /// - Throws: `.decoding` when a stored document does not decode as `T`.
    public func find(_ query: DocumentQuery = DocumentQuery()) throws -> [T] {
        try base.store.fetch(.find(self, query))
    }
    /// The number of documents matching `query`'s conditions (its limit and offset ignored):
    /// `store.fetch(.count(collection, query))` (see ``CountRequest``).
    public func count(_ query: DocumentQuery = DocumentQuery()) throws -> Int {
        try base.store.fetch(.count(self, query))
    }

    /// `value`'s JSON, dates as the store writes them.
    func json(_ value: T) throws -> JSONValue { try base.store.json(encoding: value) }

    /// Decodes a stored document straight from its parsed value (no JSON text in between).
    /// - Throws: `.decoding`, naming the coding path and what was expected and found.
    func value(_ json: JSONValue) throws -> T {
        try DocumentStore.decodeStored(T.self, json, dates: base.store.dateStrategy)
    }

    /// Decodes a stored document with `dates` (for closures that hold no collection).
    package static func value(_ json: JSONValue, dates: DateStrategy) throws -> T {
        try DocumentStore.decodeStored(T.self, json, dates: dates)
    }
}
