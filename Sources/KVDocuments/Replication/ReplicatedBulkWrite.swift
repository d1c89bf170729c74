import Foundation
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

extension ReplicatedDocument {
    /// The largest body a replicated revision may have, in stored bytes (CouchDB's
    /// `max_document_size` default).
    public static let maximumBodySize = 8_000_000

    /// A revision as CouchDB sends it (in `_bulk_docs` with `new_edits: false`, or
    /// `_bulk_get`): `_id`, `_rev`, optionally `_deleted` and `_revisions` (`{"start": N,
    /// "ids": […]}`), and the body.
    /// - Throws: ``Invalid`` with CouchDB's error name and a reason naming the member.
    public init(json: JSONValue) throws(Invalid) {
        guard case .object(let fields) = json else {
            throw Invalid(id: nil, revision: nil, error: "bad_request", reason: "Document must be a JSON object")
        }
        guard case .string(let id)? = fields["_id"] else {
            throw Invalid(id: nil, revision: nil, error: "illegal_docid", reason: "Document id must be a string")
        }
        guard !id.isEmpty, id.utf8.count <= DocumentStore.maximumReplicatedIDLength, !id.hasPrefix("_") else {
            throw Invalid(
                id: id, revision: nil, error: "illegal_docid",
                reason: id.isEmpty
                    ? "Document id must not be empty"
                    : id.hasPrefix("_")
                        ? "Only reserved document ids may start with underscore."
                        : "Document id is longer than \(DocumentStore.maximumReplicatedIDLength) bytes")
        }
        guard case .string(let revText)? = fields["_rev"], let revision = DocumentRevision(revText) else {
            throw Invalid(
                id: id, revision: nil, error: "bad_request",
                reason: "a replicated revision needs a valid _rev, not \(fields["_rev"]?.compactDescription ?? "none")")
        }
        func invalid(_ error: String, _ reason: String) -> Invalid {
            Invalid(id: id, revision: revision, error: error, reason: reason)
        }
        var body: [(String, JSONValue)] = []
        var deleted = false
        var history: [RevisionID]?
        for (key, value) in fields {
            switch key {
            case "_id", "_rev": continue
            case "_deleted":
                guard case .bool(let flag) = value else { throw invalid("bad_request", "_deleted must be a boolean") }
                deleted = flag
            case "_revisions":
                guard case .object(let revisions) = value, case .array(let list)? = revisions["ids"], !list.isEmpty
                else {
                    throw invalid("bad_request", "_revisions must be {\"start\": N, \"ids\": [...]}")
                }
                let start: Int64?
                switch revisions["start"] {
                case .int(let n)?: start = n
                case .uint(let n)?: start = Int64(exactly: n)
                default: start = nil
                }
                guard start == Int64(revision.position) else {
                    throw invalid("bad_request", "_revisions.start is not the position of _rev \(revision)")
                }
                var ids: [RevisionID] = []
                for item in list {
                    guard case .string(let text) = item, let id = try? RevisionID(parsing: Substring(text)) else {
                        throw invalid("bad_request", "_revisions.ids holds \(item.compactDescription)")
                    }
                    ids.append(id)
                }
                guard ids.first == revision.id else {
                    throw invalid("bad_request", "_revisions.ids[0] is not the id of _rev \(revision)")
                }
                guard Set(ids).count == ids.count else {
                    throw invalid("doc_validation", "_revisions.ids lists an id twice: the history has a cycle")
                }
                history = ids
            case "_attachments":
                throw invalid("forbidden", "attachments are not supported")
            default:
                guard !key.hasPrefix("_") else {
                    throw invalid("doc_validation", "Bad special document member: \(key)")
                }
                body.append((key, value))
            }
        }
        self.init(id: id, revision: revision, deleted: deleted, body: JSONObject(body), history: history)
    }

    /// Why a document cannot be stored as a replicated revision: CouchDB's error name and
    /// reason, with the document's id and revision when they could be read.
    public struct Invalid: Error, Sendable, Hashable {
        /// The document's id, when it is a string.
        public let id: String?
        /// The document's revision, when `_rev` is valid.
        public let revision: DocumentRevision?
        /// CouchDB's error name (`illegal_docid`, `forbidden`, `doc_validation`,
        /// `bad_request`).
        public let error: String
        /// What is wrong, naming the member.
        public let reason: String
    }
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
