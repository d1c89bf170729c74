import Foundation

/// Collections and their declared indexes: what the database maintains on every write.
///
/// Declared in Swift, or loaded from JSON (a public format):
///
/// ```json
/// {"collections": {
///   "people": {
///     "primaryKey": "id",
///     "indexes": [
///       {"name": "by_age",        "fields": ["age"]},
///       {"name": "by_last_first", "fields": ["last", "first"]},
///       {"name": "by_email",      "fields": ["email"], "unique": true},
///       {"name": "by_tag",        "fields": ["tags[]"]},
///       {"name": "by_city",       "fields": ["address.city"]}
///     ],
///     "text": [{"name": "bio_text", "fields": ["bio", "title"], "tokenizer": "unicode61"}]
///   }}}
/// ```
public struct Schema: Sendable, Hashable {
    public var collections: [String: CollectionSchema]

    public init(collections: [String: CollectionSchema] = [:]) throws {
        for (name, c) in collections { try c.validate(collection: name) }
        self.collections = collections
    }

    /// The collection `name`.
    /// - Throws: `.schema` naming the declared collections when there is none.
    public func collection(_ name: String) throws -> CollectionSchema {
        guard let c = collections[name] else {
            let known = collections.keys.sorted()
            throw KVDocsError(.schema, "no collection \"\(name)\"" + (known.isEmpty ? "; the schema declares none" : "; declared: \(known.joined(separator: ", "))"))
        }
        return c
    }
}

/// One collection: its primary-key field and its indexes.
public struct CollectionSchema: Sendable, Hashable {
    /// The field holding each document's id (a string or an integer).
    public var primaryKey: String
    public var indexes: [IndexDefinition]
    /// Full-text indexes (built by the text layer).
    public var text: [TextIndexDefinition]

    public init(primaryKey: String = "id", indexes: [IndexDefinition] = [], text: [TextIndexDefinition] = []) {
        self.primaryKey = primaryKey
        self.indexes = indexes
        self.text = text
    }

    /// The index `name`.
    public func index(_ name: String, collection: String) throws -> IndexDefinition {
        guard let i = indexes.first(where: { $0.name == name }) else {
            throw KVDocsError(.schema, "collection \"\(collection)\" has no index \"\(name)\"; its indexes: \(indexes.map(\.name).joined(separator: ", "))")
        }
        return i
    }

    func validate(collection: String) throws {
        func fail(_ m: String) -> KVDocsError { KVDocsError(.schema, "collection \"\(collection)\": \(m)") }
        guard !collection.isEmpty else { throw KVDocsError(.schema, "a collection name cannot be empty") }
        let pk = try FieldPath(primaryKey)
        guard !pk.isMultiValued, pk.segments.count == 1 else { throw fail("primaryKey \"\(primaryKey)\" must be a top-level field name") }
        var names = Set<String>()
        for index in indexes {
            guard names.insert(index.name).inserted else { throw fail("index \"\(index.name)\" is declared twice") }
            try index.validate(collection: collection)
        }
        for t in text {
            guard names.insert(t.name).inserted else { throw fail("index \"\(t.name)\" is declared twice") }
            guard !t.fields.isEmpty else { throw fail("text index \"\(t.name)\" needs at least one field") }
        }
    }
}

/// A secondary index: documents ordered by the values of `fields`, then by primary key.
///
/// A document missing any of the fields is not in the index. A `[]` field indexes each
/// element of an array; at most one field of an index may be multi-valued.
public struct IndexDefinition: Sendable, Hashable {
    public var name: String
    public var fields: [FieldPath]
    /// Reject a write that would give two documents the same values.
    public var unique: Bool

    public init(name: String, fields: [FieldPath], unique: Bool = false) {
        self.name = name
        self.fields = fields
        self.unique = unique
    }

    func validate(collection: String) throws {
        func fail(_ m: String) -> KVDocsError { KVDocsError(.schema, "collection \"\(collection)\": index \"\(name)\": \(m)") }
        guard !name.isEmpty else { throw KVDocsError(.schema, "collection \"\(collection)\": an index needs a non-empty name") }
        guard !fields.isEmpty else { throw fail("needs at least one field") }
        guard Set(fields).count == fields.count else { throw fail("lists a field twice") }
        guard fields.filter(\.isMultiValued).count <= 1 else { throw fail("at most one field may be multi-valued ([])") }
    }
}

/// A full-text index over string fields (declared here, built by the text layer).
public struct TextIndexDefinition: Sendable, Hashable {
    public enum Tokenizer: String, Sendable, Hashable, CaseIterable {
        case unicode61, porter
    }

    public var name: String
    public var fields: [FieldPath]
    public var tokenizer: Tokenizer

    public init(name: String, fields: [FieldPath], tokenizer: Tokenizer = .unicode61) {
        self.name = name
        self.fields = fields
        self.tokenizer = tokenizer
    }
}
