import Foundation
import KVKeys
import KVSupport
import KVVector

/// A vector index's declaration: the field holding each document's vector, its dimensions,
/// the metric and the storage.
///
/// In the schema JSON, in a collection's `"indexes"`:
///
///     {"name": "by_embedding", "type": "vector", "fields": ["embedding"],
///      "dimensions": 384, "metric": "cosine", "storage": "float32"}
///
/// `"metric"` is `"cosine"`, `"l2"` or `"dot"` (``VectorMetric``; default `"l2"`);
/// `"storage"` is `"float32"` (the default), `"float16"`, `"int8"` or `"bit"`: how the lists of
/// an approximate search hold the vectors they scan (``VectorStorage``: a quantized form
/// keeps the float32 values too, and distances are always computed from them).
///
/// In Swift, ``CollectionSchema/definitions`` takes `AnyIndexDefinition(definition)`.
///
/// A document's field holds a JSON array of exactly ``dimensions`` finite numbers; a
/// document without the field (or with `null` there) is not in the index; any other value
/// is refused with an error naming the document and the field, and nothing is written.
public struct VectorIndexDefinition: Sendable, Hashable {
    /// The index's name.
    public var name: String
    /// The field holding the vector (no `[]`).
    public var field: FieldPath
    /// The number of values of every vector, 1 to ``VectorValue/maximumDimensions``.
    public var dimensions: Int
    /// How distance is measured.
    public var metric: VectorMetric
    /// How vectors are stored.
    public var storage: VectorStorage

    /// A vector index named `name` over `field`.
    /// - Parameters:
    ///   - name: the index's name.
    ///   - field: the field holding each document's vector.
    ///   - dimensions: the number of values of every vector.
    ///   - metric: how distance is measured.
    ///   - storage: how vectors are stored.
    public init(
        name: String, field: FieldPath, dimensions: Int, metric: VectorMetric = .l2, storage: VectorStorage = .float32
    ) {
        self.name = name
        self.field = field
        self.dimensions = dimensions
        self.metric = metric
        self.storage = storage
    }

    /// The kind's identity: `"vector"` in the schema JSON and the catalog.
    public static let kind = IndexIdentity.Kind(catalogName: "vector")

    /// The declaration's members other than `"name"` and `"type"`, defaults left out (as a
    /// schema JSON that relies on them spells it).
    var options: JSONObject {
        var o: JSONObject = ["fields": [.string(field.description)], "dimensions": .int(Int64(dimensions))]
        if metric != .l2 { o["metric"] = .string(metric.rawValue) }
        if storage != .float32 { o["storage"] = .string(storage.rawValue) }
        return o
    }

    /// The definition as the catalog stores it: every member, defaults included.
    var json: JSONValue {
        var o = options
        o["metric"] = .string(metric.rawValue)
        o["storage"] = .string(storage.rawValue)
        o["name"] = .string(name)
        o["type"] = .string(Self.kind.catalogName)
        return .object(o)
    }

    /// The definition a declaration's options spell.
    /// - Throws: `.schema` saying which member is wrong (the caller names the collection and
    ///   the index).
    init(name: String, options: JSONObject) throws {
        let known: Set<String> = ["fields", "dimensions", "metric", "storage"]
        if let extra = options.keys.first(where: { !known.contains($0) }) {
            throw KVDocsError(
                .schema,
                "unknown member \"\(extra)\" for a vector index (expected \"fields\", \"dimensions\", \"metric\", \"storage\")"
            )
        }
        guard case .array(let fields)? = options["fields"], fields.count == 1, case .string(let path) = fields[0]
        else {
            throw KVDocsError(
                .schema, "a vector index takes \"fields\": [one field path] (the field holding the vector)")
        }
        let field = try FieldPath(path)
        guard !field.isMultiValued else {
            throw KVDocsError(.schema, "a vector index's field \(path) must not fan out with []: it holds one vector")
        }
        guard case .int(let d)? = options["dimensions"], d >= 1, d <= VectorValue.maximumDimensions else {
            throw KVDocsError(
                .schema,
                "a vector index takes \"dimensions\": an integer from 1 to \(VectorValue.maximumDimensions) (got \(options["dimensions"]?.compactDescription ?? "none"))"
            )
        }
        var metric = VectorMetric.l2
        if let m = options["metric"] {
            guard case .string(let s) = m, let parsed = VectorMetric(rawValue: s) else {
                throw KVDocsError(
                    .schema, "\"metric\" must be \"cosine\", \"l2\" or \"dot\" (got \(m.compactDescription))")
            }
            metric = parsed
        }
        var storage = VectorStorage.float32
        if let s = options["storage"] {
            guard case .string(let name) = s else {
                throw KVDocsError(.schema, "\"storage\" must be a string (got \(s.compactDescription))")
            }
            guard let parsed = VectorStorage(rawValue: name) else {
                throw KVDocsError(
                    .schema,
                    "\"storage\" must be \"float32\", \"float16\", \"int8\" or \"bit\" (got \(s.compactDescription))")
            }
            storage = parsed
        }
        self.init(name: name, field: field, dimensions: Int(d), metric: metric, storage: storage)
    }
}

extension AnyIndexDefinition {
    /// A vector index.
    /// - Parameter definition: the typed definition.
    public init(_ definition: VectorIndexDefinition) {
        // The kind is registered from the start (IndexKindRegistry), so this cannot fail.
        self.init(registered: definition.name, kind: VectorIndexDefinition.kind, options: definition.options)
    }
}

/// The vector kind of index: what `"type": "vector"` declares (``VectorIndexDefinition``).
/// Registered from the start in every process.
struct VectorIndexKind: IndexKind {
    var kind: IndexIdentity.Kind { VectorIndexDefinition.kind }

    func validate(_ definition: AnyIndexDefinition) throws {
        _ = try VectorIndexDefinition(name: definition.name, options: definition.options)
    }

    func maintainer(
        for definition: AnyIndexDefinition, identity: IndexIdentity, schema: CollectionSchema, subspace: Subspace
    ) -> any IndexMaintainer {
        // validate(_:) passed.
        let typed =
            (try? VectorIndexDefinition(name: definition.name, options: definition.options))
            ?? VectorIndexDefinition(name: definition.name, field: "vector", dimensions: 1)
        return VectorIndexMaintainer(identity: identity, definition: typed, subspace: subspace)
    }
}
