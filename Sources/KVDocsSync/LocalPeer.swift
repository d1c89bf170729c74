import KVDocs

/// A replicated collection of a store in this process, as one side of a ``Replication``.
///
/// Its calls run on the store's executor (`AsyncDocumentCollection`), so a replication
/// never blocks the awaiting thread on LevelDB. Its identity is the store's
/// `DocumentStore/uuid()` and the collection's name; its sequences are the store's
/// change sequences, as integers.
///
/// ```swift
/// let replication = Replication(source: try LocalPeer(phone.collection("notes")),
///                               target: try LocalPeer(laptop.collection("notes")))
/// let progress = try await replication.run()
/// ```
public struct LocalPeer: ReplicationPeer {
    /// The replicated collection.
    public let collection: DocumentCollection

    /// The peer of `collection`.
    /// - Throws: `.notSupported` when the collection is not replicated, `.schema` when it
    ///   does not exist.
    public init(_ collection: DocumentCollection) throws {
        guard try collection.store.schema.collection(collection.name).replicated else {
            throw KVDocsError(
                .notSupported,
                "collection \"\(collection.name)\" is not replicated: declare it with \"replicated\": true to replicate it"
            )
        }
        self.collection = collection
    }

    /// The store's UUID and the collection's name.
    public func identity() async throws -> String {
        "\(try await collection.store.uuid())/\(collection.name)"
    }

    /// The collection's latest change sequence.
    public func updateSequence() async throws -> JSONValue {
        .int(try await collection.async.updateSequence())
    }

    /// The collection's changes after `since`.
    /// - Throws: `.invalidArgument` when `since` is not a sequence this peer handed out.
    public func changes(since: JSONValue, limit: Int, documentIDs: Set<String>?, wait: Duration?) async throws
        -> PeerChanges
    {
        let start = try Self.sequence(since)
        var page = try await collection.async.changes(since: start, limit: limit, documentIDs: documentIDs)
        if page.results.isEmpty, let wait {
            let latest = try await collection.waitForChanges(since: start, timeout: wait)
            if latest > start {
                page = try await collection.async.changes(since: start, limit: limit, documentIDs: documentIDs)
            }
        }
        return PeerChanges(
            results: page.results.map {
                PeerChange(sequence: .int($0.sequence), id: $0.id, leaves: $0.leaves, deleted: $0.deleted)
            },
            lastSequence: .int(page.lastSequence))
    }

    /// The offered revisions the collection lacks.
    public func revsDiff(_ offered: [String: [DocumentRevision]]) async throws -> [String: RevsDiffEntry] {
        try await collection.async.revsDiff(offered)
    }

    /// The revisions asked for (or the leaves that replaced them), with their histories,
    /// each once.
    public func fetch(_ requests: [PeerRevisionRequest]) async throws -> [ReplicatedDocument] {
        let answers = try await collection.async.bulkGet(
            requests.map { ($0.id, $0.revision) }, latest: true, withHistory: true)
        var seen = Set<PeerRevisionRequest>()
        var documents: [ReplicatedDocument] = []
        for answer in answers {
            for case .ok(let document) in answer.results
            where seen.insert(PeerRevisionRequest(id: document.id, revision: document.revision)).inserted {
                documents.append(document)
            }
        }
        return documents
    }

    /// Stores the revisions in one synced write.
    public func store(_ documents: [ReplicatedDocument]) async throws -> [ReplicatedWriteResult] {
        try await collection.async.bulkWriteReplicated(documents, sync: true)
    }

    /// Nothing to do: ``store(_:)`` writes with `sync`.
    public func ensureFullCommit() async throws {}

    /// The collection's `_local` document `id`.
    public func localDocument(_ id: String) async throws -> (rev: String, body: JSONObject)? {
        try await collection.async.localDocument(id)
    }

    /// Writes the collection's `_local` document `id`, synced.
    public func putLocalDocument(_ id: String, body: JSONObject, rev: String?) async throws -> String {
        try await collection.async.putLocalDocument(id, body: body, ifRev: rev, sync: true)
    }

    /// `since` as a change sequence: an integer, or a string of digits.
    static func sequence(_ since: JSONValue) throws -> Int64 {
        switch since {
        case .int(let n) where n >= 0: return n
        case .uint(let n) where n <= UInt64(Int64.max): return Int64(n)
        case .string(let text): if let n = Int64(text), n >= 0 { return n }
        default: break
        }
        throw KVDocsError(
            .invalidArgument,
            "since \(since.compactDescription) is not a change sequence of this store (a whole number)")
    }
}
