import Foundation
import KVSupport

/// An index of a collection as the schema declares it, whatever its kind: a name, a kind
/// and the rest of the declaration.
///
/// A ``CollectionSchema`` keeps its indexes as these. The built-in kinds also have typed
/// forms (``SecondaryIndexDefinition``, ``TextIndexDefinition``, ``GeoIndexDefinition``), which
/// ``CollectionSchema/indexes``, ``CollectionSchema/text`` and ``CollectionSchema/geo`` read
/// and write.
///
/// **Invariants.** ``options`` holds the declaration's members other than `"name"` and
/// `"type"`, as the schema JSON spells them. For a built-in kind they are the canonical
/// spelling of the typed form, so two definitions are equal exactly when their typed forms
/// are. Names compare by code points.
public struct AnyIndexDefinition: Sendable, Hashable {
    /// The index's name, unique among the collection's indexes of every kind.
    public let name: String
    /// The kind of index: its catalog name is the schema JSON's `"type"` (secondary
    /// indexes, the default, have no `"type"`; text indexes are listed under `"text"`).
    public let kind: IndexIdentity.Kind
    /// The declaration's other members, checked by the kind when the definition becomes
    /// part of a ``DocumentSchema``.
    public let options: JSONObject
    /// The typed form of a built-in kind; `nil` for a registered kind.
    let builtIn: BuiltIn?

    /// The typed forms of the built-in kinds.
    enum BuiltIn: Sendable, Hashable {
        case secondary(SecondaryIndexDefinition)
        case text(TextIndexDefinition)
        case geo(GeoIndexDefinition)
    }

    /// An index of kind `kind`, declared by `options` (the schema JSON's members besides
    /// `"name"` and `"type"`).
    /// - Parameters:
    ///   - name: the index's name.
    ///   - kind: the kind of index.
    ///   - options: the rest of the declaration, as the schema JSON spells it.
    /// - Throws: `.schema` for a kind this process does not know, or options a built-in
    ///   kind cannot read (a registered kind checks its options when the definition becomes
    ///   part of a ``DocumentSchema``).
    public init(name: String, kind: IndexIdentity.Kind, options: JSONObject = [:]) throws {
        var entry = options
        entry["name"] = .string(name)
        func fail(_ m: String) -> KVDocsError { KVDocsError(.schema, "index \"\(name)\": \(m)") }
        switch kind {
        case .secondary: self.init(try SecondaryIndexDefinition(entry: entry, fail: fail))
        case .text: self.init(try TextIndexDefinition(entry: entry, fail: fail))
        case .geo: self.init(try GeoIndexDefinition(entry: entry, fail: fail))
        default:
            guard IndexKindRegistry.kind(kind) != nil else {
                throw fail(
                    "unknown index type \"\(kind.catalogName)\"; \"type\" must be \(IndexKindRegistry.knownTypes)")
            }
            self.init(name: name, kind: kind, options: options, builtIn: nil)
        }
    }

    /// A secondary index.
    /// - Parameter definition: the typed definition.
    public init(_ definition: SecondaryIndexDefinition) {
        self.init(definition.name, .secondary, definition.json, .secondary(definition))
    }

    /// A full-text index.
    /// - Parameter definition: the typed definition.
    public init(_ definition: TextIndexDefinition) {
        self.init(definition.name, .text, definition.json, .text(definition))
    }

    /// A geo index.
    /// - Parameter definition: the typed definition.
    public init(_ definition: GeoIndexDefinition) {
        self.init(definition.name, .geo, definition.json, .geo(definition))
    }

    private init(_ name: String, _ kind: IndexIdentity.Kind, _ json: JSONValue, _ builtIn: BuiltIn) {
        var options: JSONObject = [:]
        if case .object(let o) = json { options = o }
        options["name"] = nil
        options["type"] = nil
        self.init(name: name, kind: kind, options: options, builtIn: builtIn)
    }

    /// A definition of a kind registered from the start (vector), whose options its kind
    /// checks when the definition becomes part of a schema.
    init(registered name: String, kind: IndexIdentity.Kind, options: JSONObject) {
        self.init(name: name, kind: kind, options: options, builtIn: nil)
    }

    private init(name: String, kind: IndexIdentity.Kind, options: JSONObject, builtIn: BuiltIn?) {
        self.name = name
        self.kind = kind
        self.options = options
        self.builtIn = builtIn
    }

    /// The declaration as the schema JSON writes it: `"name"`, `"type"` for the kinds that
    /// have one, and the options.
    package var entry: JSONObject {
        var o = options
        o["name"] = .string(name)
        if kind != .secondary && kind != .text { o["type"] = .string(kind.catalogName) }
        return o
    }

    public static func == (a: AnyIndexDefinition, b: AnyIndexDefinition) -> Bool {
        a.kind == b.kind && a.name.hasSameCodePoints(as: b.name) && a.options == b.options
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
        JSONValue.hashCodePoints(name, into: &hasher)
        hasher.combine(options)
    }
}

extension AnyIndexDefinition {
    /// The built-in kinds first, in this order, then registered kinds by catalog name:
    /// the order a collection's indexes are kept, built and maintained in.
    static func precedes(_ a: AnyIndexDefinition, _ b: AnyIndexDefinition) -> Bool {
        let (ra, rb) = (a.kind.rank, b.kind.rank)
        if ra != rb { return ra < rb }
        return ra == 3 && a.kind.catalogName.unicodeScalars.lexicographicallyPrecedes(b.kind.catalogName.unicodeScalars)
    }
}

extension IndexIdentity.Kind {
    /// 0, 1, 2 for the built-in kinds (secondary, text, geo), 3 for registered kinds.
    var rank: Int {
        switch self {
        case .secondary: 0
        case .text: 1
        case .geo: 2
        default: 3
        }
    }
}
