import Foundation
import KVKeys
import KVStorage
import KVSupport

/// The key layout of a document store's data (the catalog's keys are ``DocumentCatalog``'s).
package struct Layout: Sendable {
    package let root: Subspace

    package func document(_ collection: String, _ id: TupleElement) -> [UInt8] {
        root.pack("d", .string(collection), id)
    }
    package func documents(_ collection: String) -> Subspace { root.subspace(["d", .string(collection)]) }
    package func index(_ collection: String, _ index: String) -> Subspace {
        root.subspace(["i", .string(collection), .string(index)])
    }
    func change(_ sequence: Int64) -> [UInt8] { root.pack(["f", .int(sequence)]) }
    var changes: Subspace { root.subspace(["f"]) }
    func text(_ collection: String, _ index: String) -> Subspace {
        root.subspace(["t", .string(collection), .string(index)])
    }
    package func geo(_ collection: String, _ index: String) -> Subspace {
        root.subspace(["g", .string(collection), .string(index)])
    }
    /// Everything a replicated collection keeps besides its documents (design §1.2).
    package func replication(_ collection: String) -> Subspace { root.subspace(["r", .string(collection)]) }
    /// The revision tree record of a document of a replicated collection.
    package func revisionTree(_ collection: String, _ id: String) -> [UInt8] {
        root.pack(["r", .string(collection), "t", .string(id)])
    }
    /// Every revision tree record of a replicated collection.
    package func revisionTrees(_ collection: String) -> Subspace { root.subspace(["r", .string(collection), "t"]) }
    /// The body of a leaf revision that is not the live winner.
    package func revisionBody(_ collection: String, _ id: String, _ revision: DocumentRevision) -> [UInt8] {
        root.pack([
            "r", .string(collection), "b", .string(id), .int(Int64(revision.position)),
            .bytes(DocumentRevision.storedID(revision.id))
        ])
    }
    /// The by-sequence entry of a replicated collection.
    package func bySequence(_ collection: String, _ sequence: Int64) -> [UInt8] {
        root.pack(["r", .string(collection), "s", .int(sequence)])
    }
    /// Every by-sequence entry of a replicated collection.
    package func bySequence(_ collection: String) -> Subspace { root.subspace(["r", .string(collection), "s"]) }
    /// The `_local` document `id` (without `_local/`) of a replicated collection.
    package func localDocument(_ collection: String, _ id: String) -> [UInt8] {
        root.pack(["r", .string(collection), "l", .string(id)])
    }

    /// Where the entries of `index` live: `("i" | "t" | "g", collection, name)` for the
    /// built-in kinds, `("x", kind, collection, name)` for registered kinds.
    package func subspace(of index: IndexIdentity) -> Subspace {
        switch index.kind {
        case .secondary: return self.index(index.collection, index.name)
        case .text: return text(index.collection, index.name)
        case .geo: return geo(index.collection, index.name)
        default:
            return root.subspace([
                "x", .string(index.kind.catalogName), .string(index.collection), .string(index.name)
            ])
        }
    }

    package init(root: Subspace) {
        self.root = root
    }
}
