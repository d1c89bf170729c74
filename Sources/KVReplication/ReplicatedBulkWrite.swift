import Foundation
import KVDocuments
import KVSupport

/// What happened to one document of ``DocumentCollection/bulkWriteReplicated(_:sync:)``.
public enum ReplicatedWriteResult: Sendable, Hashable {
    /// The revision is in the document's tree: stored now, or already there.
    case stored(id: String, revision: DocumentRevision)
    /// The revision was refused, for `reason` (CouchDB's per-document error, with its
    /// `error` name: `illegal_docid`, `forbidden`, `doc_validation`, `document_too_large`
    /// or `bad_request`); nothing of it was written.
    case rejected(id: String, revision: DocumentRevision?, error: String, reason: String)
}

extension DocumentCollection {
    /// Stores revisions received from another replica (CouchDB's `_bulk_docs` with
    /// `new_edits: false`): each is merged with its history into its document's tree, in
    /// one write batch. A revision the tree already has changes nothing. A document that
    /// cannot be stored (bad id, a `_`-member in its body, a body over
    /// ``ReplicatedDocument/maximumBodySize``, a history that disagrees with the tree) is
    /// rejected alone, as CouchDB does; the others are written.
    /// - Parameters:
    ///   - documents: the revisions, in order (the same document may come several times).
    ///   - sync: as for ``insert(_:sync:)``.
    /// - Returns: one result per document, in order.
    /// - Throws: `.notSupported` for a collection that is not replicated; storage and
    ///   corruption errors, and a unique violation (which leaves the batch part-written),
    ///   write nothing at all.
    @discardableResult
    public func bulkWriteReplicated(_ documents: [ReplicatedDocument], sync: Bool = false) throws
        -> [ReplicatedWriteResult]
    {
        guard try store.schema.collection(name).replicated else {
            throw KVDocsError(.notSupported, "collection \"\(name)\" is not replicated")
        }
        return try store.performWrites(sync: sync) { context in
            try documents.map { document in
                func rejected(_ error: String, _ reason: String) -> ReplicatedWriteResult {
                    .rejected(id: document.id, revision: document.revision, error: error, reason: reason)
                }
                if let bad = document.body.keys.first(where: { $0.hasPrefix("_") }) {
                    return bad == "_attachments"
                        ? rejected("forbidden", "attachments are not supported")
                        : rejected("doc_validation", "Bad special document member: \(bad)")
                }
                do {
                    _ = try DocumentStore.replicatedID(.string(document.id), collection: name)
                } catch let e as KVDocsError {
                    return rejected("illegal_docid", e.message)
                }
                let size = try DocumentStore.storedBytes(.object(document.body)).count
                guard size <= ReplicatedDocument.maximumBodySize else {
                    return rejected(
                        "document_too_large",
                        "the body is \(size) bytes; at most \(ReplicatedDocument.maximumBodySize) are allowed")
                }
                do {
                    _ = try context.writeReplicated(
                        name, id: document.id, revision: document.revision, history: document.history,
                        deleted: document.deleted, body: document.body)
                } catch let e as KVDocsError where e.kind == .invalidArgument && context.failure == nil {
                    return rejected("bad_request", e.message)
                }
                return .stored(id: document.id, revision: document.revision)
            }
        }
    }
}
