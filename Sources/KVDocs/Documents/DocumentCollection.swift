import Foundation

/// A collection of untyped JSON documents in a ``DocumentStore``.
///
/// Each read is one snapshot; use ``DocumentStore/read(_:)-7xcot`` for several reads that must agree.
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
    public func insert(_ document: JSONValue, sync: Bool = false) throws -> Change {
        try write(.insert, document, sync: sync)
    }

    /// Adds or replaces a document. `sync` is as for ``insert(_:sync:)-4cqtc``.
    @discardableResult
    public func upsert(_ document: JSONValue, sync: Bool = false) throws -> Change {
        try write(.upsert, document, sync: sync)
    }

    /// Replaces an existing document. `sync` is as for ``insert(_:sync:)-4cqtc``.
    /// - Throws: `.conflict` when there is none.
    @discardableResult
    public func update(_ document: JSONValue, sync: Bool = false) throws -> Change {
        try write(.update, document, sync: sync)
    }

    /// Removes the document with primary key `id`; returns whether there was one.
    /// `sync` is as for ``insert(_:sync:)-4cqtc``; when there was no document nothing is written,
    /// so nothing is synced.
    @discardableResult
    public func delete(id: JSONValue, sync: Bool = false) throws -> Bool {
        try store.performWrites(sync: sync) { try $0.write(name, .delete, document: nil, id: id) } != nil
    }

    /// The document with primary key `id`, or `nil`.
    public func get(id: JSONValue) throws -> JSONValue? {
        try store.read { try $0.get(name, id: id) }
    }

    /// The documents matching `query`.
    public func find(_ query: Query = Query()) throws -> [JSONValue] {
        try store.read { try $0.find(name, query) }
    }

    /// The number of documents matching `query`'s conditions.
    public func count(_ query: Query = Query()) throws -> Int {
        try store.read { try $0.count(name, query) }
    }

    /// How ``find(_:)-1iyg`` would answer `query`.
    public func explain(_ query: Query) throws -> QueryPlan {
        try store.read { try $0.explain(name, query) }
    }

    private func write(_ mode: DocumentStore.WriteMode, _ document: JSONValue, sync: Bool) throws -> Change {
        try store.performWrites(sync: sync) { context in
            guard let change = try context.write(name, mode, document: document, id: nil) else {
                throw KVDocsError(.invalidArgument, "nothing was written")
            }
            return change
        }
    }
}

/// A collection read and written as `Codable` values (stored as JSON).
///
/// ```swift
/// struct Person: Codable { var id: String; var name: String; var age: Int }
/// let people = try store.collection("people", of: Person.self)
/// try people.insert(Person(id: "p1", name: "Ada", age: 36))
/// let found: [Person] = try people.find(Query().where("age", .greater(30)))
/// ```
public struct TypedCollection<T: Codable>: Sendable {
    /// The untyped collection the values are stored in, as JSON.
    public let base: DocumentCollection

    /// Adds `value`, stored as its JSON; `sync` is as for ``DocumentCollection/insert(_:sync:)-4cqtc``.
    /// - Throws: `.invalidArgument` when `value` does not encode as a JSON object with a valid
    ///   primary key; otherwise as ``DocumentCollection/insert(_:sync:)-4cqtc``.
    @discardableResult public func insert(_ value: T, sync: Bool = false) throws -> Change { try base.insert(try Self.json(value), sync: sync) }
    /// Adds `value`, or replaces the document with its id; `sync` is as for
    /// ``DocumentCollection/insert(_:sync:)-4cqtc``.
    @discardableResult public func upsert(_ value: T, sync: Bool = false) throws -> Change { try base.upsert(try Self.json(value), sync: sync) }
    /// Replaces the document with `value`'s id; `sync` is as for ``DocumentCollection/insert(_:sync:)-4cqtc``.
    /// - Throws: `.conflict` when there is none.
    @discardableResult public func update(_ value: T, sync: Bool = false) throws -> Change { try base.update(try Self.json(value), sync: sync) }
    /// Removes the document with primary key `id`; returns whether there was one. As
    /// ``DocumentCollection/delete(id:sync:)-35q1d``.
    @discardableResult public func delete(id: JSONValue, sync: Bool = false) throws -> Bool { try base.delete(id: id, sync: sync) }
    /// The document with primary key `id` decoded as `T`, or `nil`.
    /// - Throws: `.decoding` when the stored document does not decode as `T`.
    public func get(id: JSONValue) throws -> T? { try base.get(id: id).map { try Self.value($0) } }
    /// The documents matching `query`, decoded as `T`, as ``DocumentCollection/find(_:)-1iyg`` returns them.
    /// - Throws: `.decoding` when a stored document does not decode as `T`.
    public func find(_ query: Query = Query()) throws -> [T] { try base.find(query).map { try Self.value($0) } }
    /// The number of documents matching `query`'s conditions (its limit and offset ignored).
    public func count(_ query: Query = Query()) throws -> Int { try base.count(query) }

    static func json(_ value: T) throws -> JSONValue { try JSONValue(encoding: value) }

    /// Decodes a stored document straight from its parsed value (no JSON text in between).
    /// - Throws: `.decoding`, naming the coding path and what was expected and found.
    static func value(_ json: JSONValue) throws -> T {
        do {
            return try JSONValueDecoder.decode(T.self, from: json)
        } catch let error as DecodingError {
            throw KVDocsError(.decoding, "stored document does not decode as \(T.self): \(error.summary)")
        } catch {
            throw KVDocsError(.decoding, "stored document does not decode as \(T.self): \(error)")
        }
    }
}

extension JSONValue {
    /// The JSON of an `Encodable` value, built directly (no JSON text in between): the
    /// value that parsing `JSONEncoder`'s output (default strategies) would give.
    /// - Throws: `.invalidArgument` when the value cannot be encoded (a non-finite number).
    public init<T: Encodable>(encoding value: T) throws {
        do {
            self = try JSONValueEncoder.encode(value)
        } catch let error as EncodingError {
            throw KVDocsError(.invalidArgument, "cannot encode \(T.self) as JSON: \(error.summary)")
        } catch {
            throw KVDocsError(.invalidArgument, "cannot encode \(T.self) as JSON: \(error)")
        }
    }
}

extension DecodingError {
    /// What failed and where, for messages: `at address.zip: expected Int, found a string ("x")`.
    var summary: String {
        let context: Context
        switch self {
        case .typeMismatch(_, let c), .valueNotFound(_, let c), .keyNotFound(_, let c), .dataCorrupted(let c): context = c
        @unknown default: return "\(self)"
        }
        return "at \(Self.path(context.codingPath)): \(context.debugDescription)"
    }

    static func path(_ keys: [any CodingKey]) -> String {
        keys.isEmpty ? "the top level" : keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
            .replacingOccurrences(of: ".[", with: "[")
    }
}

extension EncodingError {
    /// What failed and where, for messages.
    var summary: String {
        switch self {
        case .invalidValue(_, let c): return "at \(DecodingError.path(c.codingPath)): \(c.debugDescription)"
        @unknown default: return "\(self)"
        }
    }
}
