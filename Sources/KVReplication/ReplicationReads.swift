import Foundation
import KVDocuments
import KVKeys
import KVStorage
import KVSupport

// The reads replication makes of a replicated collection (design: docs/design/sync.md §2):
// its changes by sequence, which revisions it lacks, and revisions with their histories.

/// One document in a replicated collection's changes: its latest write's sequence and its
/// leaf revisions (CouchDB's `_changes` row).
public struct ReplicatedChange: Sendable, Hashable {
    /// The sequence of the document's latest write.
    public let sequence: Int64
    /// The document's id.
    public let id: String
    /// The winner first, then (``ChangesStyle/allDocs``) the other leaves in winner order.
    public let leaves: [DocumentRevision]
    /// Whether the winner is a tombstone.
    public let deleted: Bool
}

/// A page of a replicated collection's changes.
public struct ChangesPage: Sendable, Hashable {
    /// The documents changed after the requested sequence, by sequence.
    public let results: [ReplicatedChange]
    /// Where the next page starts: the sequence of the last entry read, or the requested
    /// one when there was none (CouchDB's `last_seq`).
    public let lastSequence: Int64
}

/// Which revisions a change lists (CouchDB's `style`).
public enum ChangesStyle: Sendable, Hashable {
    /// The winner only (`main_only`).
    case mainOnly
    /// Every leaf, the winner first (`all_docs`, what replication asks for).
    case allDocs
}

/// What a collection lacks of the revisions offered for one document (CouchDB's
/// `_revs_diff` entry).
public struct RevsDiffEntry: Sendable, Hashable {
    /// The offered revisions the document's tree does not have, in the order offered.
    public let missing: [DocumentRevision]
    /// Leaves of the document at a lower position than some missing revision: revisions
    /// the sender may already share as ancestors (CouchDB's `possible_ancestors`, in its
    /// order).
    public let possibleAncestors: [DocumentRevision]

    /// An answer: the revisions missing, and the leaves that may be their ancestors.
    public init(missing: [DocumentRevision], possibleAncestors: [DocumentRevision]) {
        self.missing = missing
        self.possibleAncestors = possibleAncestors
    }
}

/// The answer for one requested revision (CouchDB's `open_revs` entry).
public enum OpenRevisionResult: Sendable, Hashable {
    /// The revision, with its body.
    case ok(ReplicatedDocument)
    /// The document has no such revision with a body (CouchDB's `{"missing": rev}`).
    case missing(DocumentRevision)
}

extension ReadTransaction {
    /// The documents of the replicated `collection` written after sequence `since`, each
    /// once, at its latest write, by sequence (CouchDB's `_changes`).
    /// - Parameters:
    ///   - collection: a replicated collection.
    ///   - since: the sequence to start after (0: from the start).
    ///   - limit: at most this many results; `nil` for all.
    ///   - style: which leaves each result lists.
    ///   - documentIDs: only these documents (CouchDB's `_doc_ids` filter); `nil` for all.
    /// - Throws: `.invalidArgument` for a negative `since` or `limit`, `.schema` for an
    ///   unknown collection, `.notSupported` for one that is not replicated, `.corruption`
    ///   for a damaged entry or tree (naming the key).
    public func changes(
        _ collection: String, since: Int64 = 0, limit: Int? = nil, style: ChangesStyle = .allDocs,
        documentIDs: Set<String>? = nil
    ) throws -> ChangesPage {
        guard since >= 0 else { throw KVDocsError(.invalidArgument, "since must not be negative (got \(since))") }
        if let limit, limit < 0 {
            throw KVDocsError(.invalidArgument, "the changes limit must not be negative (got \(limit))")
        }
        let name = try replicatedCollection(collection)
        let entries = store.layout.bySequence(name)
        var results: [ReplicatedChange] = []
        var last = since
        if limit == 0 { return ChangesPage(results: [], lastSequence: since) }
        let start = entries.pack([.int(since.saturatingAdd(1))])
        let cursor = try reader.scan(KeyRange(lower: .included(start), upper: entries.range.upper), order: .forward)
        while let (key, value) = try cursor.next({ (Array($0), Array($1)) }) {
            guard let t = try? entries.unpack(key), t.count == 1, let sequence = try? t.int64(at: 0),
                let idTuple = try? Tuple(decoding: value), idTuple.count == 1, let id = try? idTuple.string(at: 0)
            else {
                throw KVDocsError(
                    .corruption, "collection \"\(name)\": a by-sequence entry is not (sequence) → (id)", key: key)
            }
            last = sequence
            if let documentIDs, !documentIDs.contains(id) { continue }
            guard let tree = try revisionTree(name, id: id), let winner = tree.winner else {
                throw KVDocsError(
                    .corruption,
                    "collection \"\(name)\": by-sequence entry \(sequence) names document \(JSONValue.string(id).compactDescription), which has no revision tree",
                    key: key)
            }
            let leaves = style == .allDocs ? tree.leaves.map(\.revision) : [winner.revision]
            results.append(ReplicatedChange(sequence: sequence, id: id, leaves: leaves, deleted: winner.deleted))
            if let limit, results.count >= limit { break }
        }
        return ChangesPage(results: results, lastSequence: last)
    }

    /// For each document, the offered revisions the replicated `collection` lacks
    /// (CouchDB's `_revs_diff`). Documents that lack none are left out.
    /// - Parameters:
    ///   - collection: a replicated collection.
    ///   - offered: revisions by document id.
    /// - Throws: as ``changes(_:since:limit:style:documentIDs:)``.
    public func revsDiff(_ collection: String, _ offered: [String: [DocumentRevision]]) throws -> [String:
        RevsDiffEntry]
    {
        let name = try replicatedCollection(collection)
        var result: [String: RevsDiffEntry] = [:]
        for (id, revisions) in offered {
            let tree = try revisionTree(name, id: id)
            var seen = Set<DocumentRevision>()
            let missing = revisions.filter { seen.insert($0).inserted && !(tree?.contains($0) ?? false) }
            guard !missing.isEmpty else { continue }
            // couch_db's possible_ancestors: every leaf (deleted ones too) at a lower
            // position than some missing revision, in the reverse of the leaf order.
            let highest = missing.map(\.position).max() ?? 0
            let ancestors = (tree?.leaves ?? []).map(\.revision).filter { $0.position < highest }.reversed()
            result[id] = RevsDiffEntry(missing: missing, possibleAncestors: Array(ancestors))
        }
        return result
    }

    /// Revisions of document `id` of the replicated `collection` with their bodies
    /// (CouchDB's `open_revs`).
    /// - Parameters:
    ///   - collection: a replicated collection.
    ///   - id: the document's id.
    ///   - revisions: the revisions wanted; `nil` for every leaf (`open_revs=all`).
    ///   - latest: answer each wanted revision with the leaves that descend from it
    ///     (CouchDB's `latest=true`).
    ///   - withHistory: include each revision's history (`revs=true`).
    /// - Returns: one result per revision answered, in the order asked (leaves: winner
    ///   order); a revision without a body is ``OpenRevisionResult/missing(_:)``.
    /// - Throws: as ``changes(_:since:limit:style:documentIDs:)``.
    public func openRevisions(
        _ collection: String, id: String, revisions: [DocumentRevision]?, latest: Bool = false,
        withHistory: Bool = false
    ) throws -> [OpenRevisionResult] {
        let name = try replicatedCollection(collection)
        guard let tree = try revisionTree(name, id: id) else {
            return (revisions ?? []).map { .missing($0) }
        }
        let leaves = tree.leaves
        var wanted: [DocumentRevision] = []
        if let revisions {
            for revision in revisions {
                if latest, tree.contains(revision) {
                    wanted += leaves.map(\.revision).filter { leaf in
                        guard leaf.position >= revision.position, let ids = tree.history(of: leaf) else { return false }
                        let offset = leaf.position - revision.position
                        return offset < ids.count && ids[offset] == revision.id
                    }
                } else {
                    wanted.append(revision)
                }
            }
        } else {
            wanted = leaves.map(\.revision)
        }
        var seen = Set<DocumentRevision>()
        var results: [OpenRevisionResult] = []
        for revision in wanted where seen.insert(revision).inserted {
            guard let state = tree.value(of: revision), state.hasBody,
                let body = try leafBody(name, id: id, revision: revision, tree: tree)
            else {
                results.append(.missing(revision))
                continue
            }
            results.append(
                .ok(
                    ReplicatedDocument(
                        id: id, revision: revision, deleted: state.deleted, body: body,
                        history: withHistory ? tree.history(of: revision) : nil)))
        }
        return results
    }

    /// The body of a leaf revision: a live winner's from the document key, the others'
    /// from their body records; `nil` when neither holds it.
    private func leafBody(_ collection: String, id: String, revision: DocumentRevision, tree: RevisionTree) throws
        -> JSONObject?
    {
        let layout = store.layout
        if let winner = tree.winner, winner.revision == revision, !winner.deleted {
            let key = layout.document(collection, .string(id))
            guard let bytes = try reader.value(forKey: key),
                case .object(let fields) = try store.documentValue(bytes, collection: collection, id: .string(id))
            else { return nil }
            return try DocumentStore.splitReplicated(fields, collection: collection, id: id).body
        }
        let key = layout.revisionBody(collection, id, revision)
        guard let bytes = try reader.value(forKey: key) else { return nil }
        guard case .object(let fields) = try store.documentValue(bytes, collection: collection, id: .string(id)) else {
            throw KVDocsError(
                .corruption,
                "collection \"\(collection)\", document \(JSONValue.string(id).compactDescription): the body of revision \(revision) is not an object",
                key: key)
        }
        return fields
    }
}

extension DocumentCollection {
    /// This collection's changes after `since`; see
    /// ``ReadTransaction/changes(_:since:limit:style:documentIDs:)``. Replicated
    /// collections only.
    public func changes(
        since: Int64 = 0, limit: Int? = nil, style: ChangesStyle = .allDocs, documentIDs: Set<String>? = nil
    ) throws -> ChangesPage {
        try store.read { try $0.changes(name, since: since, limit: limit, style: style, documentIDs: documentIDs) }
    }

    /// Waits until this collection has a change after `since` (CouchDB's `longpoll` feed),
    /// at most `timeout`. Returns the sequence of its latest change, or `since` when none
    /// came in time. Replicated collections only.
    /// - Throws: as ``changes(since:limit:style:documentIDs:)``; `CancellationError` when
    ///   the task is cancelled.
    public func waitForChanges(since: Int64, timeout: Duration) async throws -> Int64 {
        let name = self.name
        // Listen before looking, so that a change between the two is not missed.
        let stream = store.changeStream()
        if let latest = try latestReplicatedSequence(), latest > since { return latest }
        let found = try await withThrowingTaskGroup(of: Int64?.self) { group in
            group.addTask {
                for await change in stream
                where change.collection.hasSameCodePoints(as: name) && change.sequence > since {
                    return change.sequence
                }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
        try Task.checkCancellation()
        return found ?? since
    }

    /// The sequence of this collection's latest change, 0 before the first (CouchDB's
    /// `update_seq`). Replicated collections only.
    /// - Throws: `.notSupported` for a collection that is not replicated, `.corruption` for
    ///   a damaged entry.
    public func updateSequence() throws -> Int64 {
        try latestReplicatedSequence() ?? 0
    }

    /// The sequence of this replicated collection's latest change, `nil` before the first.
    private func latestReplicatedSequence() throws -> Int64? {
        try store.read { tx in
            _ = try tx.replicatedCollection(name)
            let entries = store.layout.bySequence(name)
            let cursor = try tx.reader.scan(entries.range, order: .reverse)
            guard let key = try cursor.next({ k, _ in Array(k) }) else { return nil }
            guard let t = try? entries.unpack(key), t.count == 1, let sequence = try? t.int64(at: 0) else {
                throw KVDocsError(
                    .corruption, "collection \"\(name)\": a by-sequence entry is not (sequence) → (id)", key: key)
            }
            return sequence
        }
    }

    /// The offered revisions this collection lacks; see ``ReadTransaction/revsDiff(_:_:)``.
    /// Replicated collections only.
    public func revsDiff(_ offered: [String: [DocumentRevision]]) throws -> [String: RevsDiffEntry] {
        try store.read { try $0.revsDiff(name, offered) }
    }

    /// Revisions of document `id` with their bodies; see
    /// ``ReadTransaction/openRevisions(_:id:revisions:latest:withHistory:)``. Replicated
    /// collections only.
    public func openRevisions(
        id: String, revisions: [DocumentRevision]?, latest: Bool = false, withHistory: Bool = false
    )
        throws -> [OpenRevisionResult]
    {
        try store.read {
            try $0.openRevisions(name, id: id, revisions: revisions, latest: latest, withHistory: withHistory)
        }
    }

    /// Several documents' revisions in one snapshot (CouchDB's `_bulk_get`): for each
    /// request, the given revision (or, with `latest`, the leaves that descend from it),
    /// or every leaf, the winner first, when none is given. A document without revisions
    /// answers ``OpenRevisionResult/missing(_:)`` for the revision asked, and nothing when
    /// none was. Replicated collections only.
    public func bulkGet(
        _ requests: [(id: String, revision: DocumentRevision?)], latest: Bool = false, withHistory: Bool = true
    )
        throws -> [(id: String, results: [OpenRevisionResult])]
    {
        try store.read { tx in
            try requests.map { request in
                (
                    request.id,
                    try tx.openRevisions(
                        name, id: request.id, revisions: request.revision.map { [$0] }, latest: latest,
                        withHistory: withHistory)
                )
            }
        }
    }
}
