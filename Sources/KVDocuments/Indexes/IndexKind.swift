import Foundation
import KVKeys
import KVSupport

/// A kind of index: what checks its declarations and makes its ``IndexMaintainer``.
///
/// Adding a kind means one type conforming to this protocol, one maintainer type, and one
/// ``IndexKindRegistry/register(_:)`` call before a schema that declares the kind is read.
/// The document layer does the rest: the schema JSON (`{"name": …, "type": CATALOG NAME,
/// …options}` in `"indexes"`), the catalog's index states, building, writes, `verify`,
/// and dropping. A registered kind's entries live under `("x", catalog name, collection,
/// index)` of the store's root (``Layout/subspace(of:)``).
package protocol IndexKind: Sendable {
    /// The kind's identity; its catalog name is the schema JSON's `"type"`.
    var kind: IndexIdentity.Kind { get }

    /// Checks a definition's ``AnyIndexDefinition/options``.
    /// - Throws: `.schema` saying which member is wrong and why (the caller names the
    ///   collection and the index).
    func validate(_ definition: AnyIndexDefinition) throws

    /// The maintainer of index `definition` of collection `collection`. REQUIRES:
    /// `definition` passed ``validate(_:)``.
    /// - Parameters:
    ///   - definition: the index's definition, of this kind.
    ///   - collection: the collection's name.
    ///   - schema: the collection's schema (its primary key, say).
    ///   - layout: the store's key layout; the index's own keys are ``Layout/subspace(of:)``.
    func maintainer(
        _ definition: AnyIndexDefinition, collection: String, schema: CollectionSchema, layout: Layout
    ) -> any IndexMaintainer
}

/// The kinds of index this process knows: the three built-in kinds (secondary, text and
/// geo, whose typed definitions the schema holds) and those registered.
///
/// Registration is process-wide, because schemas are read (``DocumentSchema/init(json:file:)``)
/// without a store. A schema, stored or in a file, that declares a kind not registered is
/// refused with `.schema` naming the type, never read without it.
package enum IndexKindRegistry {
    /// The built-in kinds, in the order their indexes are kept.
    static let builtIn: [IndexIdentity.Kind] = [.secondary, .text, .geo]

    private static let registered = Locked<[any IndexKind]>([])

    /// Catalog names a registered kind cannot take: the built-in kinds' and the catalog's
    /// other records'.
    static let reserved: Set<String> = [
        "index", "text", "geo", "format", "generation", "schema", "seq", "keyspaces", "dates", "uuid", "migration",
        "migrating", "undo"
    ]

    /// Registers `kind`. Registering the same type under the same name again does nothing.
    /// - Throws: `.invalidArgument` for an empty or reserved catalog name, or a name
    ///   another kind has.
    package static func register(_ kind: any IndexKind) throws {
        let name = kind.kind.catalogName
        guard !name.isEmpty, !reserved.contains(name) else {
            throw KVDocsError(
                .invalidArgument,
                "an index kind cannot be named \"\(name)\" (reserved: \(reserved.sorted().joined(separator: ", ")))")
        }
        try registered.withLock { kinds in
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

    /// The registered kind `kind`; `nil` for a built-in kind or one not registered.
    static func kind(_ kind: IndexIdentity.Kind) -> (any IndexKind)? {
        registered.withLock { kinds in kinds.first { $0.kind == kind } }
    }

    /// Every kind known, built-in kinds first.
    static var all: [IndexIdentity.Kind] {
        builtIn + registered.withLock { $0.map(\.kind) }
    }

    /// The `"type"` values an `"indexes"` entry may have, for messages: `"geo"`, then the
    /// registered kinds (`"geo" or a registered kind: "length"`).
    static var knownTypes: String {
        let registered = registered.withLock { $0.map(\.kind.catalogName) }.sorted()
        guard !registered.isEmpty else { return "\"geo\"" }
        return "\"geo\" or a registered kind: " + registered.map { "\"\($0)\"" }.joined(separator: ", ")
    }
}
