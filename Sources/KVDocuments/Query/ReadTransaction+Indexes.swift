import KVKeys
import KVStorage
import KVSupport

/// One ready index of a collection, read through a transaction's snapshot: what a request
/// of a registered ``IndexKind`` reads its index with (see ``ReadTransaction/index(_:of:as:)``).
///
/// Every read goes through the transaction's snapshot: the index's entries and the
/// documents they name are of one state of the database, whatever writers do. In a layered
/// store the snapshot is the merged one (the user layer over the base).
public struct IndexReader<Maintainer: IndexMaintainer> {
    /// The index's maintainer: its definition and the layout of its entries.
    public let maintainer: Maintainer
    /// Reads the snapshot: scan ``IndexMaintainer/keyRange`` (or a part of it) for entries.
    public let reader: any KeyValueReader
    /// The transaction read through.
    public let transaction: ReadTransaction

    /// The document of the index's collection whose primary key is `id` (as the index's
    /// entries hold it, a tuple element), or `nil` when there is none at this snapshot.
    /// - Throws: `.corruption` for a stored document that cannot be read, naming its key.
    public func document(id: TupleElement) throws -> JSONValue? {
        let store = transaction.store
        let collection = maintainer.identity.collection
        guard let bytes = try reader.value(forKey: store.layout.document(collection, id)) else { return nil }
        return try store.documentValue(bytes, collection: collection, id: id)
    }

    /// The primary key `id` as a document holds it (`.string`, `.int`), for results.
    public func idValue(_ id: TupleElement) -> JSONValue { DocumentStore.idValue(id) }
}

// An index reader reads through a transaction, which belongs to one thread.
@available(*, unavailable)
extension IndexReader: Sendable {}

extension ReadTransaction {
    /// The ready index `name` of `collection`, whose maintainer is a `Maintainer`, read
    /// through this transaction's snapshot; with no name, the collection's only index of
    /// that maintainer type. The read counts as a read of `collection` (an observation of the
    /// request is woken by writes to it).
    ///
    /// - Parameters:
    ///   - name: the index's name, or `nil` for the collection's only one of this type.
    ///   - collection: the collection.
    ///   - type: the maintainer type of the index's kind.
    /// - Throws: `.schema` for an unknown collection, no such index (naming the collection's
    ///   indexes of the type), several and none named, or an index that is being built (not
    ///   ready at this snapshot).
    public func index<Maintainer: IndexMaintainer>(
        _ name: String?, of collection: String, as type: Maintainer.Type
    ) throws -> IndexReader<Maintainer> {
        recordRead(collection)
        _ = try catalog.schema.collection(collection)
        let candidates = catalog.maintainers(of: collection).compactMap { $0 as? Maintainer }
        let what = "\(Maintainer.self)"
        let chosen: Maintainer
        if let name {
            guard let named = candidates.first(where: { $0.identity.name.hasSameCodePoints(as: name) }) else {
                let names = candidates.map(\.identity.name)
                throw KVDocsError(
                    .schema,
                    "collection \"\(collection)\" has no index \"\(name)\" of this kind (\(what))"
                        + (names.isEmpty ? "" : "; its indexes of this kind: \(names.joined(separator: ", "))"))
            }
            chosen = named
        } else {
            switch candidates.count {
            case 0:
                throw KVDocsError(.schema, "collection \"\(collection)\" has no index of this kind (\(what))")
            case 1: chosen = candidates[0]
            default:
                throw KVDocsError(
                    .schema,
                    "collection \"\(collection)\" has several indexes of this kind (\(candidates.map(\.identity.name).joined(separator: ", "))); name the one to use"
                )
            }
        }
        guard catalog.isReady(chosen.identity) else {
            throw KVDocsError(
                .schema, "index \"\(chosen.identity.name)\" of \"\(collection)\" is being built")
        }
        return IndexReader(maintainer: chosen, reader: reader, transaction: self)
    }
}
