import Foundation
import KVKeys
import KVSupport

/// A kind of index: what checks its declarations, makes its ``IndexMaintainer`` and offers
/// its shell commands.
///
/// A new kind of index is three things, all outside the library:
/// 1. a type conforming to ``IndexMaintainer``: the entries a document implies, kept exact
///    on every write (and, to serve `find`, ``IndexMaintainer/candidatePlan(for:)``);
/// 2. a request type conforming to ``DocumentRequest`` for the queries the kind answers,
///    which reads the index on the transaction's snapshot through
///    ``ReadTransaction/index(_:of:as:)``;
/// 3. a type conforming to this protocol, registered once with
///    ``IndexKindRegistry/register(_:)`` before a schema that declares the kind is read.
///
/// The document layer does the rest, for this kind as for the built-in ones: the schema
/// JSON (`{"name": …, "type": NAME, …options}` in a collection's `"indexes"`) and the Swift
/// declaration (``CollectionSchema/definitions``), the catalog's index states, building
/// with progress, writes in the same atomic batch as their documents, `verify`, `reindex`,
/// dropping, layered stores (the index's entries are derived data of the user layer), and
/// observation (a request that reads the index is woken by writes to its collection). The
/// kind's ``commands`` become kvrepl commands.
///
/// A registered kind's entries live under `("x", NAME, collection, index)` of the store's
/// root: the library chooses the subspace (``maintainer(for:identity:schema:subspace:)``
/// gets it), so that a kind cannot reach another index's keys.
///
/// ARCHITECTURE.md ("Adding an index kind") walks through a whole kind: the toy
/// `length` index of the test suite (`Tests/KVDocsTestSupport/LengthIndexKind.swift`).
public protocol IndexKind: Sendable {
    /// The kind's identity; its catalog name is the schema JSON's `"type"`.
    var kind: IndexIdentity.Kind { get }

    /// Checks a definition's ``AnyIndexDefinition/options``.
    /// - Throws: `.schema` saying which member is wrong and why (the caller names the
    ///   collection and the index).
    func validate(_ definition: AnyIndexDefinition) throws

    /// The maintainer of the index `definition`. REQUIRES: `definition` passed
    /// ``validate(_:)``.
    /// - Parameters:
    ///   - definition: the index's definition, of this kind.
    ///   - identity: the index's identity (its collection, its name, this kind).
    ///   - schema: the collection's schema (its primary key, say).
    ///   - subspace: where the index's entries live; every key the maintainer writes lies in
    ///     it.
    func maintainer(
        for definition: AnyIndexDefinition, identity: IndexIdentity, schema: CollectionSchema, subspace: Subspace
    ) -> any IndexMaintainer

    /// The kvrepl commands that answer this kind's queries (none by default).
    var commands: [IndexKindCommand] { get }
}

extension IndexKind {
    /// No commands (the default).
    public var commands: [IndexKindCommand] { [] }
}

/// The kinds of index this process knows: the three built-in kinds (secondary, text and
/// geo, whose typed definitions the schema holds) and those registered: the library's vector
/// kind (``VectorIndexDefinition``), registered from the start, and any an app registers.
///
/// Registration is process-wide, because schemas are read without a store
/// (``DocumentSchema/init(json:file:)``). A schema, stored or in a file, that declares a
/// kind not registered is refused with `.schema` naming the type, never read without it.
public enum IndexKindRegistry {
    /// The built-in kinds, in the order their indexes are kept.
    static let builtIn: [IndexIdentity.Kind] = [.secondary, .text, .geo]

    /// The registered kinds; the library's own registered kind, vector, from the start.
    private static let kinds = Locked<[any IndexKind]>([VectorIndexKind()])

    /// Catalog names a registered kind cannot take: the built-in kinds' and the catalog's
    /// other records'.
    static let reserved: Set<String> = [
        "index", "text", "geo", "format", "generation", "schema", "seq", "keyspaces", "dates", "uuid", "migration",
        "migrating", "undo"
    ]

    /// Registers `kind`. Registering the same type under the same name again does nothing.
    /// - Throws: `.invalidArgument` for an empty or reserved catalog name, or a name
    ///   another kind has.
    public static func register(_ kind: any IndexKind) throws {
        let name = kind.kind.catalogName
        guard !name.isEmpty, !reserved.contains(name) else {
            throw KVDocsError(
                .invalidArgument,
                "an index kind cannot be named \"\(name)\" (reserved: \(reserved.sorted().joined(separator: ", ")))")
        }
        try kinds.withLock { kinds in
            if let existing = kinds.first(where: { $0.kind == kind.kind }) {
                guard ObjectIdentifier(type(of: existing)) == ObjectIdentifier(type(of: kind)) else {
                    throw KVDocsError(
                        .invalidArgument,
                        "index kind \"\(name)\" is already registered, by \(type(of: existing)), not \(type(of: kind))")
                }
                return
            }
            kinds.append(kind)
        }
    }

    /// The kinds registered so far, in the order they were registered.
    public static var registered: [any IndexKind] { kinds.withLock { $0 } }

    /// The registered kind `kind`; `nil` for a built-in kind or one not registered.
    static func kind(_ kind: IndexIdentity.Kind) -> (any IndexKind)? {
        kinds.withLock { kinds in kinds.first { $0.kind == kind } }
    }

    /// Every kind known, built-in kinds first.
    static var all: [IndexIdentity.Kind] {
        builtIn + kinds.withLock { $0.map(\.kind) }
    }

    /// The `"type"` values an `"indexes"` entry may have, for messages: `"geo"`, then the
    /// registered kinds (`"geo" or a registered kind: "length"`).
    static var knownTypes: String {
        let registered = kinds.withLock { $0.map(\.kind.catalogName) }.sorted()
        guard !registered.isEmpty else { return "\"geo\"" }
        return "\"geo\" or a registered kind: " + registered.map { "\"\($0)\"" }.joined(separator: ", ")
    }
}
