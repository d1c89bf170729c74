import Foundation

/// A leaf revision of a document of a replicated collection: the head of one branch of its
/// revision tree.
public struct RevisionLeaf: Sendable, Hashable {
    /// The revision.
    public let revision: Revision
    /// Whether it is a deletion (a tombstone).
    public let deleted: Bool
}

/// The winner and the conflicts of a document of a replicated collection.
///
/// Invariants: `winner` is the leaf CouchDB picks (non-deleted before deleted, then the
/// higher position, then the greater id); `conflicts` are the other non-deleted leaves and
/// `deletedConflicts` the other deleted ones, each in that same order.
public struct ConflictInfo: Sendable, Hashable {
    /// The document's id.
    public let id: String
    /// The winning revision: the stored document's `_rev` unless `winnerDeleted`.
    public let winner: Revision
    /// Whether the winner is a tombstone (the document reads as absent).
    public let winnerDeleted: Bool
    /// The non-deleted leaves other than the winner (CouchDB's `_conflicts`).
    public let conflicts: [Revision]
    /// The deleted leaves other than the winner (CouchDB's `_deleted_conflicts`).
    public let deletedConflicts: [Revision]

    init(id: String, tree: RevisionTree) throws {
        guard let winner = tree.winner else { throw KVDocsError(.corruption, "document \(JSONValue.string(id).compactDescription) has an empty revision tree") }
        self.id = id
        self.winner = winner.revision
        winnerDeleted = winner.deleted
        conflicts = tree.conflicts
        deletedConflicts = tree.deletedConflicts
    }
}

extension ReadTransaction {
    /// The revision tree of `id` in `collection`, or `nil` when it has none.
    func revisionTree(_ collection: String, id: String) throws -> RevisionTree? {
        let name = try replicatedCollection(collection)
        let key = store.layout.revisionTree(name, id)
        guard let bytes = try reader.value(forKey: key) else { return nil }
        do {
            return try RevisionTreeCodec.decode(bytes).tree
        } catch let e as KVDocsError {
            throw KVDocsError(.corruption, "collection \"\(name)\", document \(JSONValue.string(id).compactDescription): revision tree: \(e.message)", key: key)
        }
    }

    /// The name of a replicated collection of the schema.
    /// - Throws: `.schema` for an unknown collection, `.notSupported` for one not replicated.
    private func replicatedCollection(_ collection: String) throws -> String {
        guard try catalog.schema.collection(collection).replicated else {
            throw KVDocsError(.notSupported, "collection \"\(collection)\" is not replicated (its schema has no \"replicated\": true)")
        }
        return collection
    }

    /// The leaf revisions of document `id` of the replicated `collection`, the winner first,
    /// then the others in the winner order; empty when the document has no revisions.
    /// - Throws: `.schema` for an unknown collection, `.notSupported` for one that is not
    ///   replicated, `.corruption` for a damaged tree record.
    public func revisionLeaves(_ collection: String, id: String) throws -> [RevisionLeaf] {
        try revisionTree(collection, id: id)?.leaves.map { RevisionLeaf(revision: $0.revision, deleted: $0.deleted) } ?? []
    }

    /// The winner and conflicts of document `id` of the replicated `collection`, or `nil`
    /// when it has no revisions. Throws as ``revisionLeaves(_:id:)``.
    public func conflictInfo(_ collection: String, id: String) throws -> ConflictInfo? {
        try revisionTree(collection, id: id).map { try ConflictInfo(id: id, tree: $0) }
    }

    /// `revision` and its known ancestors in document `id`'s tree, newest first (CouchDB's
    /// `_revisions`); `nil` when the tree lacks the revision. Throws as ``revisionLeaves(_:id:)``.
    public func revisionHistory(_ collection: String, id: String, revision: Revision) throws -> [Revision]? {
        guard let ids = try revisionTree(collection, id: id)?.history(of: revision) else { return nil }
        return ids.enumerated().map { Revision(position: revision.position - $0.offset, id: $0.element) }
    }

    /// The documents of the replicated `collection` that have conflicts (more than one
    /// non-deleted leaf), in id order. Reads every tree record of the collection.
    /// Throws as ``revisionLeaves(_:id:)``.
    public func conflicts(_ collection: String) throws -> [ConflictInfo] {
        let name = try replicatedCollection(collection)
        let trees = store.layout.revisionTrees(name)
        let cursor = try reader.scan(trees.range, order: .forward)
        var result: [ConflictInfo] = []
        while let (key, value) = try cursor.next({ (Array($0), Array($1)) }) {
            guard let element = try? trees.unpack(key).elements, element.count == 1, case .string(let id) = element[0] else {
                throw KVDocsError(.corruption, "collection \"\(name)\": a revision tree key does not hold a document id", key: key)
            }
            let tree: RevisionTree
            do { tree = try RevisionTreeCodec.decode(value).tree } catch let e as KVDocsError {
                throw KVDocsError(.corruption, "collection \"\(name)\", document \(JSONValue.string(id).compactDescription): revision tree: \(e.message)", key: key)
            }
            if !tree.conflicts.isEmpty { result.append(try ConflictInfo(id: id, tree: tree)) }
        }
        return result
    }
}

extension DocumentCollection {
    /// The leaf revisions of document `id`, the winner first (see
    /// ``ReadTransaction/revisionLeaves(_:id:)``). Replicated collections only.
    public func revisionLeaves(id: String) throws -> [RevisionLeaf] {
        try store.read { try $0.revisionLeaves(name, id: id) }
    }

    /// The winner and conflicts of document `id`, or `nil` when it has no revisions.
    /// Replicated collections only.
    public func conflictInfo(id: String) throws -> ConflictInfo? {
        try store.read { try $0.conflictInfo(name, id: id) }
    }

    /// The documents with conflicts, in id order. Replicated collections only.
    public func conflicts() throws -> [ConflictInfo] {
        try store.read { try $0.conflicts(name) }
    }

    /// Resolves the conflicts of document `id` as CouchDB clients do: every non-deleted
    /// leaf other than `keep` gets a deleted child (a tombstone), so `keep` becomes the
    /// winner and the only non-deleted leaf. Writes nothing when `keep` already is.
    /// - Parameters:
    ///   - id: the document's id.
    ///   - keep: one of the document's non-deleted leaf revisions.
    ///   - sync: as for ``insert(_:sync:)-4cqtc``.
    /// - Returns: the tombstone revisions written.
    /// - Throws: `.notFound` when the document has no revisions, `.invalidArgument` when
    ///   `keep` is not a non-deleted leaf, `.notSupported` for a collection that is not
    ///   replicated; nothing is written then.
    @discardableResult
    public func resolve(id: String, keep: Revision, sync: Bool = false) throws -> [Revision] {
        try store.performWrites(sync: sync) { try $0.resolve(name, id: id, keep: keep) }
    }

    /// Stores a revision received from another replica (CouchDB's `new_edits=false`):
    /// merges it with its history into the document's tree; the winner may change and
    /// conflicts may appear. `history` is `_revisions.ids` (newest first, the revision's own
    /// id first); `nil` stores the revision alone. Returns `nil` when the tree already had
    /// the revision (nothing is written).
    package func writeReplicated(id: String, revision: Revision, history: [RevisionID]? = nil, deleted: Bool = false,
                                 body: JSONObject, sync: Bool = false) throws -> Change? {
        try store.performWrites(sync: sync) { try $0.writeReplicated(name, id: id, revision: revision, history: history, deleted: deleted, body: body) }
    }
}
