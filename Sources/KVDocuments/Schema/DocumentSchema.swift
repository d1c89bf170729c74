import Foundation
import KVSupport
import KVText

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
///       {"name": "by_city",       "fields": ["address.city"]},
///       {"name": "by_nickname",   "fields": ["nickname"], "sparse": true},
///       {"name": "by_location",   "fields": ["home"], "type": "geo"}
///     ],
///     "text": [{"name": "bio_text", "fields": ["bio", "title"], "tokenizer": "unicode61"}]
///   }}}
/// ```
public struct DocumentSchema: Sendable, Hashable {
    /// The collections, by name. ``init(collections:)`` validates them; a value assigned
    /// to this property directly is not validated.
    public var collections: [String: CollectionSchema]

    /// A schema of `collections`, validated.
    /// - Parameter collections: the collections, by name.
    /// - Throws: `.schema` naming the collection and the problem: an empty collection or
    ///   index name, a primary key that is not a top-level field, two indexes of one
    ///   collection with the same name, an index without fields, listing a field twice or
    ///   with more than one multi-valued field, a text index without fields.
    public init(collections: [String: CollectionSchema] = [:]) throws {
        for (name, c) in collections { try c.validate(collection: name) }
        self.collections = collections
    }

    /// The collection `name`.
    /// - Throws: `.schema` naming the declared collections when there is none.
    public func collection(_ name: String) throws -> CollectionSchema {
        guard let c = self[collection: name] else {
            let known = collections.keys.sorted()
            throw KVDocsError(
                .schema,
                "no collection \"\(name)\""
                    + (known.isEmpty ? "; the schema declares none" : "; declared: \(known.joined(separator: ", "))"))
        }
        return c
    }
}

/// One collection: its primary-key field and its indexes.
public struct CollectionSchema: Sendable, Hashable {
    /// The field holding each document's id (a string or an integer).
    public var primaryKey: String
    /// Every index of the collection, of every kind: the built-in kinds first (secondary,
    /// text, geo), then registered kinds by type, each kind in declaration order. Names are
    /// unique among them. Setting it keeps that order.
    public var definitions: [AnyIndexDefinition] {
        get { storedDefinitions }
        set { storedDefinitions = Self.ordered(newValue) }
    }
    private var storedDefinitions: [AnyIndexDefinition] = []
    /// The secondary indexes, in declaration order (a view of ``definitions``).
    public var indexes: [SecondaryIndexDefinition] {
        get { storedDefinitions.compactMap { if case .secondary(let d)? = $0.builtIn { d } else { nil } } }
        set { replace(.secondary, with: newValue.map(AnyIndexDefinition.init)) }
    }
    /// Full-text indexes (built by the text layer; a view of ``definitions``).
    public var text: [TextIndexDefinition] {
        get { storedDefinitions.compactMap { if case .text(let d)? = $0.builtIn { d } else { nil } } }
        set { replace(.text, with: newValue.map(AnyIndexDefinition.init)) }
    }
    /// Geo indexes (in the JSON: entries of `"indexes"` with `"type": "geo"`; a view of
    /// ``definitions``).
    public var geo: [GeoIndexDefinition] {
        get { storedDefinitions.compactMap { if case .geo(let d)? = $0.builtIn { d } else { nil } } }
        set { replace(.geo, with: newValue.map(AnyIndexDefinition.init)) }
    }
    /// Whether the collection keeps a revision tree per document, as CouchDB does, so that
    /// it can be replicated (in the JSON: `"replicated": true`; `false` by default).
    ///
    /// Invariants of a replicated collection: its primary key is `_id`; ids are non-empty
    /// strings of at most 1024 UTF-8 bytes that do not start with `_`; every stored document
    /// is the winning revision, with its `_id` and `_rev` fields; a document's other leaf
    /// revisions and its tree are kept beside it and written in the same batch. A
    /// collection that is not replicated stores exactly what it stored before.
    public var replicated: Bool
    /// How many revisions of each root-to-leaf path a replicated collection keeps
    /// (CouchDB's `_revs_limit`): 1…10000, 1000 by default. Only a replicated collection may
    /// set another value (in the JSON: `"revsLimit"`). A new limit applies to each document
    /// at its next write.
    public var revsLimit: Int

    /// The default ``revsLimit`` (CouchDB's default `_revs_limit`).
    public static let defaultRevsLimit = 1000
    /// The largest ``revsLimit``.
    public static let maximumRevsLimit = 10_000
    /// The primary key a replicated collection must have.
    public static let replicatedPrimaryKey = "_id"

    /// A collection schema; it is validated when it becomes part of a ``DocumentSchema``.
    /// - Parameters:
    ///   - primaryKey: the top-level field holding each document's id; `nil` (the default)
    ///     means `"id"`, or `"_id"` for a replicated collection.
    ///   - indexes: the secondary indexes.
    ///   - text: the full-text indexes.
    ///   - geo: the geo indexes.
    ///   - replicated: whether documents keep revision trees (see ``replicated``).
    ///   - revsLimit: the revisions kept per path of a replicated collection (see ``revsLimit``).
    public init(
        primaryKey: String? = nil, indexes: [SecondaryIndexDefinition] = [], text: [TextIndexDefinition] = [],
        geo: [GeoIndexDefinition] = [],
        replicated: Bool = false, revsLimit: Int = CollectionSchema.defaultRevsLimit
    ) {
        self.primaryKey = primaryKey ?? (replicated ? Self.replicatedPrimaryKey : "id")
        self.storedDefinitions =
            indexes.map(AnyIndexDefinition.init) + text.map(AnyIndexDefinition.init) + geo.map(AnyIndexDefinition.init)
        self.replicated = replicated
        self.revsLimit = revsLimit
    }

    /// The secondary index `name` (compared by code points).
    /// - Parameters:
    ///   - name: the index's name.
    ///   - collection: this collection's name, for the error message.
    /// - Throws: `.schema` naming the collection's indexes when it has no secondary index `name`.
    public func index(_ name: String, collection: String) throws -> SecondaryIndexDefinition {
        guard let i = indexes.first(where: { $0.name.hasSameCodePoints(as: name) }) else {
            throw KVDocsError(
                .schema,
                "collection \"\(collection)\" has no index \"\(name)\"; its indexes: \(indexes.map(\.name).joined(separator: ", "))"
            )
        }
        return i
    }

    func validate(collection: String) throws {
        func fail(_ m: String) -> KVDocsError { KVDocsError(.schema, "collection \"\(collection)\": \(m)") }
        guard !collection.isEmpty else { throw KVDocsError(.schema, "a collection name cannot be empty") }
        let pk = try FieldPath(primaryKey)
        guard !pk.isMultiValued, pk.segments.count == 1 else {
            throw fail("primaryKey \"\(primaryKey)\" must be a top-level field name")
        }
        if replicated {
            guard primaryKey.hasSameCodePoints(as: Self.replicatedPrimaryKey) else {
                throw fail(
                    "a replicated collection's primaryKey must be \"_id\" (string ids, as CouchDB's), not \"\(primaryKey)\""
                )
            }
            guard (1...Self.maximumRevsLimit).contains(revsLimit) else {
                throw fail("revsLimit must be 1…\(Self.maximumRevsLimit), not \(revsLimit)")
            }
        } else if revsLimit != Self.defaultRevsLimit {
            throw fail("revsLimit (\(revsLimit)) is only valid with \"replicated\": true")
        }
        var names = Set<String>()
        for index in indexes {
            guard names.insert(index.name).inserted else { throw fail(Self.duplicate(index.name, among: names)) }
            try index.validate(collection: collection)
        }
        for t in text {
            guard names.insert(t.name).inserted else { throw fail(Self.duplicate(t.name, among: names)) }
            guard !t.fields.isEmpty else { throw fail("text index \"\(t.name)\" needs at least one field") }
        }
        for g in geo {
            guard !g.name.isEmpty else { throw fail("a geo index needs a non-empty name") }
            guard names.insert(g.name).inserted else { throw fail(Self.duplicate(g.name, among: names)) }
            if g.field.isMultiValued {
                throw fail("geo index \"\(g.name)\" takes one point per document, not array elements: \(g.field)")
            }
        }
        for d in storedDefinitions where d.builtIn == nil {
            guard !d.name.isEmpty else { throw fail("an index needs a non-empty name") }
            guard names.insert(d.name).inserted else { throw fail(Self.duplicate(d.name, among: names)) }
            guard let kind = IndexKindRegistry.kind(d.kind) else {
                throw fail(
                    "index \"\(d.name)\": unknown index type \"\(d.kind.catalogName)\"; \"type\" must be \(IndexKindRegistry.knownTypes)"
                )
            }
            do { try kind.validate(d) } catch let e as KVDocsError {
                throw KVDocsError(e.kind, "collection \"\(collection)\": index \"\(d.name)\": \(e.message)")
            }
        }
    }

    /// `definitions` in the order they are kept: by kind (``AnyIndexDefinition/precedes(_:_:)``),
    /// then in declaration order.
    private static func ordered(_ definitions: [AnyIndexDefinition]) -> [AnyIndexDefinition] {
        definitions.enumerated().sorted { a, b in
            AnyIndexDefinition.precedes(a.element, b.element)
                || (!AnyIndexDefinition.precedes(b.element, a.element) && a.offset < b.offset)
        }.map(\.element)
    }

    /// Replaces the definitions of `kind` by `new`.
    private mutating func replace(_ kind: IndexIdentity.Kind, with new: [AnyIndexDefinition]) {
        definitions = storedDefinitions.filter { $0.kind != kind } + new
    }
}

/// A secondary index: documents ordered by the values of `fields`, then by primary key.
///
/// A document missing any of the fields is not in the index. A `[]` field indexes each
/// element of an array; at most one field of an index may be multi-valued.
public struct SecondaryIndexDefinition: Sendable, Hashable {
    /// The index's name: not empty, and unique among the collection's secondary and text
    /// indexes (two names that differ only in Unicode normalization are rejected as well).
    /// Lookups by name compare code points.
    public var name: String
    /// The indexed fields, in sort order: at least one, none twice, at most one multi-valued (`[]`).
    public var fields: [FieldPath]
    /// Reject a write that would give two documents the same values.
    public var unique: Bool
    /// What each entry carries besides its key, so that queries can be answered from the
    /// index alone (a covering index). `.none` by default.
    public var include: Inclusion
    /// Whether a document missing an indexed field (or whose multi-valued field holds no
    /// element) is left out of the index. `false` by default: such a document has an entry
    /// in which each missing field is a "missing" marker that orders before `null`, as in
    /// MongoDB, so the index serves equality on any leading fields followed by a range or
    /// an order on the next one, as a SQLite index does. A sparse index is smaller when most
    /// documents lack its fields, but serves a query only when every one of its fields has
    /// a condition. A unique index is always sparse (two documents missing the field do not
    /// conflict), whatever this says. In the schema JSON: `"sparse": true`.
    public var sparse: Bool

    /// Whether documents missing a field are left out: ``sparse``, or a ``unique`` index.
    var isSparse: Bool { sparse || unique }

    /// What the entries of a covering index carry.
    ///
    /// In the schema JSON: `"include": ["field", …]` or `"include": "*"`.
    public enum Inclusion: Sendable, Hashable {
        /// Nothing: queries fetch each document they return.
        case none
        /// These fields (whole values: no `[]`), with the indexed fields and the primary
        /// key: a query whose conditions, order and selected fields (``DocumentQuery/select(_:)``)
        /// are all among them reads no document.
        case fields([FieldPath])
        /// The whole document (`"*"`): every query on the index reads no document.
        case document
    }

    /// A secondary index; it is validated when it becomes part of a ``DocumentSchema``.
    /// - Parameters:
    ///   - name: the index's name.
    ///   - fields: the indexed fields, in sort order.
    ///   - unique: whether to reject two documents with the same values.
    ///   - include: what each entry carries besides its key (a covering index).
    ///   - sparse: whether documents missing an indexed field are left out (see ``sparse``).
    public init(
        name: String, fields: [FieldPath], unique: Bool = false, include: Inclusion = .none, sparse: Bool = false
    ) {
        self.name = name
        self.fields = fields
        self.unique = unique
        self.include = include
        self.sparse = sparse
    }

    func validate(collection: String) throws {
        func fail(_ m: String) -> KVDocsError {
            KVDocsError(.schema, "collection \"\(collection)\": index \"\(name)\": \(m)")
        }
        guard !name.isEmpty else {
            throw KVDocsError(.schema, "collection \"\(collection)\": an index needs a non-empty name")
        }
        guard !fields.isEmpty else { throw fail("needs at least one field") }
        guard Set(fields).count == fields.count else { throw fail("lists a field twice") }
        guard fields.filter(\.isMultiValued).count <= 1 else {
            throw fail("at most one field may be multi-valued ([])")
        }
        if case .fields(let included) = include {
            guard !included.isEmpty else {
                throw fail("\"include\" needs at least one field (or \"*\" for the whole document)")
            }
            guard Set(included).count == included.count else { throw fail("\"include\" lists a field twice") }
            if let each = included.first(where: \.isMultiValued) {
                throw fail("\"include\" takes whole fields, not array elements: \(each)")
            }
        }
    }
}

/// A geo index: the documents whose field holds a point, found by distance
/// (``ReadTransaction/near(_:_:within:query:index:includeDocuments:)``).
///
/// In the schema JSON: `{"name": "by_location", "fields": ["location"], "type": "geo"}`.
/// The field holds either `{"lat": LAT, "lon": LON}` in degrees or a GeoJSON Point
/// `{"type": "Point", "coordinates": [LON, LAT]}` (see ``GeoPoint/init(json:)``). A
/// document without the field is not in the index; a write whose field is present but
/// holds no valid point is refused.
public struct GeoIndexDefinition: Sendable, Hashable {
    /// The index's name, unique among the collection's indexes of every kind.
    public var name: String
    /// The field holding each document's point (a single value: no `[]`).
    public var field: FieldPath

    /// A geo index; it is validated when it becomes part of a ``DocumentSchema``.
    /// - Parameters:
    ///   - name: the index's name.
    ///   - field: the field holding each document's point.
    public init(name: String, field: FieldPath) {
        self.name = name
        self.field = field
    }
}

/// A full-text index over string fields (declared here, built by the text layer).
public struct TextIndexDefinition: Sendable, Hashable {
    /// The tokenizer of the index (the text layer's ``TextTokenizer/Kind``).
    public typealias Tokenizer = TextTokenizer.Kind

    /// The index's name, unique among the collection's secondary and text
    /// indexes (two names that differ only in Unicode normalization are rejected as well).
    /// Lookups by name compare code points.
    public var name: String
    /// The string fields indexed, one column each, in order (column filters of queries number them from 0): at least one.
    public var fields: [FieldPath]
    /// How the fields' text and the queries are split into terms.
    public var tokenizer: Tokenizer
    /// For the `trigram` tokenizer: whether case is kept (FTS5's `case_sensitive 1`).
    /// Always false for the other tokenizers, which fold case.
    public var caseSensitive: Bool
    /// What the index records of each term's occurrences, as FTS5's `detail` option.
    public var detail: Detail

    /// What a text index records of each occurrence (the text layer's ``TextDetail``).
    public typealias Detail = TextDetail

    /// A full-text index; it is validated when it becomes part of a ``DocumentSchema``.
    /// - Parameters:
    ///   - name: the index's name.
    ///   - fields: the string fields indexed, one column each.
    ///   - tokenizer: how text is split into terms.
    ///   - caseSensitive: for `trigram`, keep case (ignored by the other tokenizers).
    ///   - detail: what is recorded of each occurrence; `full` by default.
    public init(
        name: String, fields: [FieldPath], tokenizer: Tokenizer = .unicode61, caseSensitive: Bool = false,
        detail: Detail = .full
    ) {
        self.name = name
        self.fields = fields
        self.tokenizer = tokenizer
        self.caseSensitive = tokenizer == .trigram && caseSensitive
        self.detail = detail
    }

    /// The tokenizer an FTS5 `tokenize` argument names, with its case sensitivity; `nil`
    /// for one KVDocs does not implement.
    static func parseTokenizer(_ spec: String) -> (Tokenizer, caseSensitive: Bool)? {
        switch spec.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ") {
        case "unicode61": return (.unicode61, false)
        case "porter", "porter unicode61": return (.porter, false)
        case "trigram", "trigram case_sensitive 0": return (.trigram, false)
        case "trigram case_sensitive 1": return (.trigram, true)
        default: return nil
        }
    }

    /// The tokenizer as FTS5's `tokenize` argument spells it.
    var tokenizerSpec: String {
        tokenizer == .trigram && caseSensitive ? "trigram case_sensitive 1" : tokenizer.rawValue
    }
}

extension DocumentSchema {
    /// The collection whose name has exactly the code points of `name`.
    package subscript(collection name: String) -> CollectionSchema? {
        guard let position = collections.index(forKey: name), collections[position].key.hasSameCodePoints(as: name)
        else { return nil }
        return collections[position].value
    }

    public static func == (a: DocumentSchema, b: DocumentSchema) -> Bool {
        guard a.collections.count == b.collections.count else { return false }
        return a.collections.allSatisfy { name, c in b[collection: name] == c }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(collections.count)
        for name in collections.keys.sorted(by: { JSONObject.compareKeys($0, $1) < 0 }) {
            JSONValue.hashCodePoints(name, into: &hasher)
            hasher.combine(collections[name])
        }
    }
}

extension CollectionSchema {
    /// The message for a name declared twice, or twice up to Unicode normalisation.
    static func duplicate(_ name: String, among names: Set<String>) -> String {
        if let other = names.first(where: { $0 == name }), !other.hasSameCodePoints(as: name) {
            return "index names \"\(other)\" and \"\(name)\" differ only in Unicode normalisation; use one spelling"
        }
        return "index \"\(name)\" is declared twice"
    }

    public static func == (a: CollectionSchema, b: CollectionSchema) -> Bool {
        a.primaryKey.hasSameCodePoints(as: b.primaryKey) && a.definitions == b.definitions
            && a.replicated == b.replicated && a.revsLimit == b.revsLimit
    }

    public func hash(into hasher: inout Hasher) {
        JSONValue.hashCodePoints(primaryKey, into: &hasher)
        hasher.combine(definitions)
        hasher.combine(replicated)
        hasher.combine(revsLimit)
    }
}

extension GeoIndexDefinition {
    public static func == (a: GeoIndexDefinition, b: GeoIndexDefinition) -> Bool {
        a.name.hasSameCodePoints(as: b.name) && a.field == b.field
    }

    public func hash(into hasher: inout Hasher) {
        JSONValue.hashCodePoints(name, into: &hasher)
        hasher.combine(field)
    }
}

extension SecondaryIndexDefinition {
    public static func == (a: SecondaryIndexDefinition, b: SecondaryIndexDefinition) -> Bool {
        a.name.hasSameCodePoints(as: b.name) && a.fields == b.fields && a.unique == b.unique
            && a.include == b.include && a.isSparse == b.isSparse
    }

    public func hash(into hasher: inout Hasher) {
        JSONValue.hashCodePoints(name, into: &hasher)
        hasher.combine(fields)
        hasher.combine(unique)
        hasher.combine(include)
        hasher.combine(isSparse)
    }
}

extension TextIndexDefinition {
    public static func == (a: TextIndexDefinition, b: TextIndexDefinition) -> Bool {
        a.name.hasSameCodePoints(as: b.name) && a.fields == b.fields && a.tokenizer == b.tokenizer
            && a.caseSensitive == b.caseSensitive && a.detail == b.detail
    }

    public func hash(into hasher: inout Hasher) {
        JSONValue.hashCodePoints(name, into: &hasher)
        hasher.combine(fields)
        hasher.combine(tokenizer)
        hasher.combine(caseSensitive)
        hasher.combine(detail)
    }
}
