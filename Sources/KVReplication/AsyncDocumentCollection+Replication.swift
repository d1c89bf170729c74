import KVDocuments
import KVSupport

// The replication calls of a replicated collection, run on the store's executor as the
// other `collection.async` calls are: what a replicator awaits on a local store.

extension AsyncDocumentCollection {
    /// This collection's changes after `since`; see
    /// ``DocumentCollection/changes(since:limit:style:documentIDs:)``.
    public func changes(
        since: Int64 = 0, limit: Int? = nil, style: ChangesStyle = .allDocs, documentIDs: Set<String>? = nil
    ) async throws -> ChangesPage {
        try await collection.store.executor.read { [collection] in
            try collection.changes(since: since, limit: limit, style: style, documentIDs: documentIDs)
        }
    }

    /// The sequence of this collection's latest change; see
    /// ``DocumentCollection/updateSequence()``.
    public func updateSequence() async throws -> Int64 {
        try await collection.store.executor.read { [collection] in try collection.updateSequence() }
    }

    /// The offered revisions this collection lacks; see ``DocumentCollection/revsDiff(_:)``.
    public func revsDiff(_ offered: [String: [DocumentRevision]]) async throws -> [String: RevsDiffEntry] {
        try await collection.store.executor.read { [collection] in try collection.revsDiff(offered) }
    }

    /// Several documents' revisions in one snapshot; see
    /// ``DocumentCollection/bulkGet(_:latest:withHistory:)``.
    public func bulkGet(
        _ requests: [(id: String, revision: DocumentRevision?)], latest: Bool = false, withHistory: Bool = true
    ) async throws -> [(id: String, results: [OpenRevisionResult])] {
        try await collection.store.executor.read { [collection] in
            try collection.bulkGet(requests, latest: latest, withHistory: withHistory)
        }
    }

    /// Revisions of document `id` with their bodies; see
    /// ``DocumentCollection/openRevisions(id:revisions:latest:withHistory:)``.
    public func openRevisions(
        id: String, revisions: [DocumentRevision]?, latest: Bool = false, withHistory: Bool = false
    )
        async throws -> [OpenRevisionResult]
    {
        try await collection.store.executor.read { [collection] in
            try collection.openRevisions(id: id, revisions: revisions, latest: latest, withHistory: withHistory)
        }
    }

    /// Stores replicated revisions as they are; see
    /// ``DocumentCollection/bulkWriteReplicated(_:sync:)``.
    public func bulkWriteReplicated(_ documents: [ReplicatedDocument], sync: Bool = false) async throws
        -> [ReplicatedWriteResult]
    {
        try await collection.store.executor.write { [collection] in
            try collection.bulkWriteReplicated(documents, sync: sync)
        }
    }

    /// Deletes document `id` if its winner is `revision`; see
    /// ``DocumentCollection/delete(id:ifRevision:sync:)``.
    @discardableResult
    public func delete(id: String, ifRevision revision: DocumentRevision, sync: Bool = false) async throws
        -> DocumentChange?
    {
        try await collection.store.executor.write { [collection] in
            try collection.delete(id: id, ifRevision: revision, sync: sync)
        }
    }

    /// Writes one edit as CouchDB's `PUT /db/id` does and returns the revision it made; see
    /// ``DocumentCollection/save(_:sync:)``.
    @discardableResult
    public func save(_ document: JSONValue, sync: Bool = false) async throws -> (
        revision: DocumentRevision, change: DocumentChange
    ) {
        try await collection.store.executor.write { [collection] in try collection.save(document, sync: sync) }
    }

    /// The `_local` document `id`; see ``DocumentCollection/localDocument(_:)``.
    public func localDocument(_ id: String) async throws -> (rev: String, body: JSONObject)? {
        try await collection.store.executor.read { [collection] in try collection.localDocument(id) }
    }

    /// Writes the `_local` document `id`; see
    /// ``DocumentCollection/putLocalDocument(_:body:ifRev:sync:)``.
    @discardableResult
    public func putLocalDocument(_ id: String, body: JSONObject, ifRev: String?, sync: Bool = false) async throws
        -> String
    {
        try await collection.store.executor.write { [collection] in
            try collection.putLocalDocument(id, body: body, ifRev: ifRev, sync: sync)
        }
    }
}

extension DocumentStore {
    /// The store's replication identity, read (or made) on the store's write executor; see
    /// the synchronous `uuid()`.
    public func uuid() async throws -> String {
        try await executor.write { [self] in try uuid() }
    }
}
