import KVDocs

/// One side of a replication: a database that speaks the data side of CouchDB's
/// replication protocol (its `_changes`, `_revs_diff`, `_bulk_get`, `_bulk_docs` and
/// `_local` documents).
///
/// ``LocalPeer`` is a replicated collection of a store in this process. A ``Replication``
/// reads changes from its source peer and writes what the target lacks to its target peer;
/// it never needs more than these calls, so any database that answers them can be either
/// side.
///
/// Sequences are opaque to the replicator: a peer hands them out in ``PeerChanges`` and
/// takes them back as `since`, and the replicator only stores them in checkpoints.
public protocol ReplicationPeer: Sendable {
    /// A name of the database that stays the same across restarts and differs from every
    /// other database's: the replication id is made of the two sides' names, so that a
    /// replication finds its checkpoints again.
    func identity() async throws -> String

    /// The database's latest sequence (CouchDB's `update_seq`), for progress reports.
    func updateSequence() async throws -> JSONValue

    /// The documents changed after `since`, each once with every leaf revision, by sequence
    /// (CouchDB's `_changes?style=all_docs`).
    /// - Parameters:
    ///   - since: a sequence this peer handed out, or `0` for the start.
    ///   - limit: at most this many results.
    ///   - documentIDs: only these documents; `nil` for all.
    ///   - wait: when there is no change yet, wait up to this long for one (CouchDB's
    ///     `longpoll` feed); `nil` answers at once.
    func changes(since: JSONValue, limit: Int, documentIDs: Set<String>?, wait: Duration?) async throws
        -> PeerChanges

    /// The offered revisions this database lacks (CouchDB's `_revs_diff`).
    func revsDiff(_ offered: [String: [DocumentRevision]]) async throws -> [String: RevsDiffEntry]

    /// The given revisions, each with its history, or the leaves that replaced it
    /// (CouchDB's `_bulk_get?revs=true&latest=true`). Revisions the database no longer has
    /// a body of are left out.
    func fetch(_ requests: [PeerRevisionRequest]) async throws -> [ReplicatedDocument]

    /// Stores revisions as they are, with their histories (CouchDB's `_bulk_docs` with
    /// `new_edits: false`). A revision the database refuses is reported, not thrown.
    func store(_ documents: [ReplicatedDocument]) async throws -> [ReplicatedWriteResult]

    /// Makes every revision stored so far durable (CouchDB's `_ensure_full_commit`).
    func ensureFullCommit() async throws

    /// The `_local` document `id` (a checkpoint), with its revision.
    func localDocument(_ id: String) async throws -> (rev: String, body: JSONObject)?

    /// Writes the `_local` document `id`; `rev` is its current revision, `nil` when it does
    /// not exist. Returns the new revision.
    /// - Throws: `KVDocsError` of kind `.conflict` when `rev` is not its current revision.
    func putLocalDocument(_ id: String, body: JSONObject, rev: String?) async throws -> String
}

/// A revision asked for with ``ReplicationPeer/fetch(_:)``.
public struct PeerRevisionRequest: Sendable, Hashable {
    /// The document's id.
    public var id: String
    /// The revision.
    public var revision: DocumentRevision

    /// Revision `revision` of document `id`.
    public init(id: String, revision: DocumentRevision) {
        self.id = id
        self.revision = revision
    }
}

/// One document in a peer's changes: the sequence of its latest write, its leaves and
/// whether its winner is deleted.
public struct PeerChange: Sendable, Hashable {
    /// The sequence of the document's latest write, as the peer spells it.
    public var sequence: JSONValue
    /// The document's id.
    public var id: String
    /// Every leaf revision, the winner first.
    public var leaves: [DocumentRevision]
    /// Whether the winner is a tombstone.
    public var deleted: Bool

    /// A change row.
    public init(sequence: JSONValue, id: String, leaves: [DocumentRevision], deleted: Bool) {
        self.sequence = sequence
        self.id = id
        self.leaves = leaves
        self.deleted = deleted
    }
}

/// A page of a peer's changes.
public struct PeerChanges: Sendable, Hashable {
    /// The changes, by sequence.
    public var results: [PeerChange]
    /// Where the next page starts (CouchDB's `last_seq`).
    public var lastSequence: JSONValue

    /// A page of changes.
    public init(results: [PeerChange], lastSequence: JSONValue) {
        self.results = results
        self.lastSequence = lastSequence
    }
}

/// A failure of a peer that may pass if the request is made again: a network error, a
/// server that is restarting or busy (HTTP 5xx, 408, 429). A ``Replication`` retries
/// after such an error, with backoff, from its last checkpoint; every other error ends it.
public struct TransientPeerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What failed.
    public var message: String

    /// A transient failure described by `message`.
    public init(_ message: String) { self.message = message }

    /// The message.
    public var description: String { message }
}
