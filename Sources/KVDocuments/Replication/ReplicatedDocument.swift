import Foundation
import KVSupport

/// One revision of a document as replication sends it: its body without `_`-members,
/// whether it is a deletion, and optionally its history.
public struct ReplicatedDocument: Sendable, Hashable {
    /// The document's id.
    public var id: String
    /// The revision.
    public var revision: DocumentRevision
    /// Whether the revision is a deletion.
    public var deleted: Bool
    /// The body, without `_id`, `_rev` and the other `_`-members.
    public var body: JSONObject
    /// The revision's id and its ancestors' ids, newest first (CouchDB's `_revisions.ids`,
    /// whose `start` is ``revision``'s position); `nil` for the revision alone.
    public var history: [RevisionID]?

    /// A revision to store or that was read.
    /// - Parameters:
    ///   - id: the document's id.
    ///   - revision: the revision.
    ///   - deleted: whether it is a deletion.
    ///   - body: the body, without `_`-members.
    ///   - history: the ids of the revision and its ancestors, newest first.
    public init(
        id: String, revision: DocumentRevision, deleted: Bool = false, body: JSONObject = [:],
        history: [RevisionID]? = nil
    ) {
        self.id = id
        self.revision = revision
        self.deleted = deleted
        self.body = body
        self.history = history
    }

    /// The document as CouchDB sends it: the body with `_id`, `_rev`, `_deleted` when it
    /// is a deletion, and `_revisions` (`{"start": N, "ids": […]}`) when there is a history.
    public var json: JSONValue {
        var fields = Array(body.map { ($0.key, $0.value) })
        fields.append(("_id", .string(id)))
        fields.append(("_rev", .string(revision.description)))
        if deleted { fields.append(("_deleted", true)) }
        if let history {
            fields.append(
                (
                    "_revisions",
                    .object([
                        "start": .int(Int64(revision.position)),
                        "ids": .array(history.map { .string($0.description) })
                    ])
                ))
        }
        return .object(JSONObject(fields))
    }
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
