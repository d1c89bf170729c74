import Foundation
import KVDocuments
import KVSupport

/// A leaf revision of a document of a replicated collection: the head of one branch of its
/// revision tree.
public struct RevisionLeaf: Sendable, Hashable {
    /// The revision.
    public let revision: DocumentRevision
    /// Whether it is a deletion (a tombstone).
    public let deleted: Bool

    package init(revision: DocumentRevision, deleted: Bool) {
        self.revision = revision
        self.deleted = deleted
    }
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
    public let winner: DocumentRevision
    /// Whether the winner is a tombstone (the document reads as absent).
    public let winnerDeleted: Bool
    /// The non-deleted leaves other than the winner (CouchDB's `_conflicts`).
    public let conflicts: [DocumentRevision]
    /// The deleted leaves other than the winner (CouchDB's `_deleted_conflicts`).
    public let deletedConflicts: [DocumentRevision]

    package init(id: String, tree: RevisionTree) throws {
        guard let winner = tree.winner else {
            throw KVDocsError(
                .corruption, "document \(JSONValue.string(id).compactDescription) has an empty revision tree")
        }
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
            throw KVDocsError(
                .corruption,
                "collection \"\(name)\", document \(JSONValue.string(id).compactDescription): revision tree: \(e.message)",
                key: key)
        }
    }

    /// The name of a replicated collection of the schema.
    /// - Throws: `.schema` for an unknown collection, `.notSupported` for one not replicated.
    func replicatedCollection(_ collection: String) throws -> String {
        guard try catalog.schema.collection(collection).replicated else {
            throw KVDocsError(
                .notSupported, "collection \"\(collection)\" is not replicated (its schema has no \"replicated\": true)"
            )
        }
        return collection
    }

    /// The leaf revisions of document `id` of the replicated `collection`, the winner first,
    /// then the others in the winner order; empty when the document has no revisions.
    /// - Throws: `.schema` for an unknown collection, `.notSupported` for one that is not
    ///   replicated, `.corruption` for a damaged tree record.
    public func revisionLeaves(_ collection: String, id: String) throws -> [RevisionLeaf] {
        try revisionTree(collection, id: id)?.leaves.map { RevisionLeaf(revision: $0.revision, deleted: $0.deleted) }
            ?? []
    }

    /// The winner and conflicts of document `id` of the replicated `collection`, or `nil`
    /// when it has no revisions. Throws as ``revisionLeaves(_:id:)``.
    public func conflictInfo(_ collection: String, id: String) throws -> ConflictInfo? {
        try revisionTree(collection, id: id).map { try ConflictInfo(id: id, tree: $0) }
    }

    /// `revision` and its known ancestors in document `id`'s tree, newest first (CouchDB's
    /// `_revisions`); `nil` when the tree lacks the revision. Throws as ``revisionLeaves(_:id:)``.
    public func revisionHistory(_ collection: String, id: String, revision: DocumentRevision) throws
        -> [DocumentRevision]?
    {
        guard let ids = try revisionTree(collection, id: id)?.history(of: revision) else { return nil }
        return ids.enumerated().map { DocumentRevision(position: revision.position - $0.offset, id: $0.element) }
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
            guard let element = try? trees.unpack(key).elements, element.count == 1, case .string(let id) = element[0]
            else {
                throw KVDocsError(
                    .corruption, "collection \"\(name)\": a revision tree key does not hold a document id", key: key)
            }
            let tree: RevisionTree
            do { tree = try RevisionTreeCodec.decode(value).tree } catch let e as KVDocsError {
                throw KVDocsError(
                    .corruption,
                    "collection \"\(name)\", document \(JSONValue.string(id).compactDescription): revision tree: \(e.message)",
                    key: key)
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
    ///   - sync: as for ``insert(_:sync:)``.
    /// - Returns: the tombstone revisions written.
    /// - Throws: `.notFound` when the document has no revisions, `.invalidArgument` when
    ///   `keep` is not a non-deleted leaf, `.notSupported` for a collection that is not
    ///   replicated; nothing is written then.
    @discardableResult
    public func resolve(id: String, keep: DocumentRevision, sync: Bool = false) throws -> [DocumentRevision] {
        try store.performWrites(sync: sync) { try $0.resolve(name, id: id, keep: keep) }
    }

    /// Stores a revision received from another replica (CouchDB's `new_edits=false`):
    /// merges it with its history into the document's tree; the winner may change and
    /// conflicts may appear. `history` is `_revisions.ids` (newest first, the revision's own
    /// id first); `nil` stores the revision alone. Returns `nil` when the tree already had
    /// the revision (nothing is written).
    @discardableResult
    package func writeReplicated(
        id: String, revision: DocumentRevision, history: [RevisionID]? = nil, deleted: Bool = false,
        body: JSONObject, sync: Bool = false
    ) throws -> DocumentChange? {
        try store.performWrites(sync: sync) {
            try $0.writeReplicated(name, id: id, revision: revision, history: history, deleted: deleted, body: body)
        }
    }
}

// MARK: - _local documents (design §1.7)

extension DocumentStore {
    /// The largest `_local` document body, in stored bytes.
    static let maximumLocalDocumentSize = 1 << 20

    /// A `_local` document id without its `_local/` prefix, checked.
    static func localID(_ id: String, collection: String) throws -> String {
        let bare = id.hasPrefix("_local/") ? String(id.dropFirst("_local/".count)) : id
        guard !bare.isEmpty, bare.utf8.count <= maximumReplicatedIDLength else {
            throw KVDocsError(
                .invalidArgument,
                "collection \"\(collection)\": a _local document id must have 1…\(maximumReplicatedIDLength) bytes after \"_local/\", not \(JSONValue.string(id).compactDescription)"
            )
        }
        return bare
    }

    /// The stored `[n, body]` of a `_local` document.
    static func parseLocal(_ bytes: [UInt8], collection: String, id: String, key: [UInt8]) throws -> (Int64, JSONObject)
    {
        guard case .array(let pair) = try parseStored(bytes), pair.count == 2, case .int(let n) = pair[0], n >= 0,
            case .object(let body) = pair[1]
        else {
            throw KVDocsError(
                .corruption,
                "collection \"\(collection)\": _local document \(JSONValue.string(id).compactDescription) is not [revision number, body]",
                key: key)
        }
        return (n, body)
    }
}

extension DocumentCollection {
    private func replicatedSchema() throws {
        guard try store.schema.collection(name).replicated else {
            throw KVDocsError(.notSupported, "collection \"\(name)\" is not replicated: it has no _local documents")
        }
    }

    /// Deletes document `id` of this replicated collection if its winner is `revision`
    /// (CouchDB's `DELETE /db/id?rev=`): the deletion is a tombstone child of `revision`.
    /// - Returns: the change, or `nil` when the winner already is a tombstone.
    /// - Throws: `.conflict` when the winner is another revision (nothing is written then),
    ///   `.notSupported` for a collection that is not replicated.
    @discardableResult
    public func delete(id: String, ifRevision revision: DocumentRevision, sync: Bool = false) throws -> DocumentChange?
    {
        try replicatedSchema()
        return try store.performWrites(sync: sync) {
            try $0.write(name, .delete, document: ["_id": .string(id), "_rev": .string(revision.description)], id: nil)
        }
    }

    /// Writes one edit of a document of this replicated collection as CouchDB's `PUT /db/id`
    /// does, and returns the revision it made.
    ///
    /// - With a `_rev`, the document becomes a child of that revision, which must be the
    ///   winner.
    /// - Without one, the document must be new or deleted. Re-creating a deleted document
    ///   continues its deleted branch.
    /// - With `"_deleted": true` (and a `_rev`), the new revision is a tombstone. The
    ///   returned revision is that tombstone, even when another branch then wins.
    ///
    /// The revision comes from the write itself: it is the edit's, whatever another writer
    /// does next.
    /// - Returns: the new revision and the change.
    /// - Throws: `.conflict` when `_rev` is not the winner, when a document without `_rev`
    ///   exists, or for a deletion without `_rev`; `.notFound` when deleting a document
    ///   whose winner already is a tombstone; `.invalidArgument` for a document that is not
    ///   an object, or has a bad `_id` or `_rev`; `.notSupported` for a collection that is
    ///   not replicated. Nothing is written then.
    @discardableResult
    public func save(_ document: JSONValue, sync: Bool = false) throws -> (
        revision: DocumentRevision, change: DocumentChange
    ) {
        try replicatedSchema()
        guard case .object(var fields) = document else {
            throw KVDocsError(
                .invalidArgument, "a document must be a JSON object, not \(article(document.typeName))")
        }
        let mode: DocumentStore.WriteMode
        switch fields["_deleted"] {
        case nil, .bool(false)?:
            fields["_deleted"] = nil
            mode = fields["_rev"] == nil ? .insert : .upsert
        case .bool(true)?:
            guard let id = fields["_id"], let rev = fields["_rev"] else {
                throw KVDocsError(
                    .conflict,
                    "collection \"\(name)\": a deletion needs the _id and the _rev it deletes")
            }
            fields = ["_id": id, "_rev": rev]
            mode = .delete
        case let other?:
            throw KVDocsError(
                .invalidArgument,
                "collection \"\(name)\": _deleted must be true or false, not \(other.compactDescription)")
        }
        return try store.performWrites(sync: sync) { context in
            context.lastRevision = nil
            guard let change = try context.write(name, mode, document: .object(fields), id: nil),
                let revision = context.lastRevision
            else {
                throw KVDocsError(
                    .notFound,
                    "collection \"\(name)\", document \(fields["_id"]?.compactDescription ?? ""): already deleted")
            }
            return (revision, change)
        }
    }

    /// The `_local` document `id` (with or without the `_local/` prefix): its revision
    /// `0-n` and body, or `nil`. `_local` documents are never replicated, indexed or in the
    /// change feed, and have no revision tree.
    /// - Throws: `.notSupported` for a collection that is not replicated, `.invalidArgument`
    ///   for an empty or too long id, `.corruption` for a damaged record.
    public func localDocument(_ id: String) throws -> (rev: String, body: JSONObject)? {
        try replicatedSchema()
        let bare = try DocumentStore.localID(id, collection: name)
        let key = store.layout.localDocument(name, bare)
        guard let bytes = try store.storage.value(forKey: key) else { return nil }
        let (n, body) = try DocumentStore.parseLocal(bytes, collection: name, id: bare, key: key)
        return ("0-\(n)", body)
    }

    /// Writes the `_local` document `id` (CouchDB's rules): when it exists, `ifRev` must be
    /// its revision `0-n`; when it does not, `ifRev` must be `nil` or any `0-…`. Members
    /// starting with `_` are dropped from `body`. Returns the new revision `0-(n+1)`.
    /// - Throws: `.conflict` for a wrong `ifRev`, `.invalidArgument` for a body over 1 MiB or
    ///   a bad id, `.notSupported` for a collection that is not replicated; nothing is
    ///   written then.
    @discardableResult
    public func putLocalDocument(_ id: String, body: JSONObject, ifRev: String?, sync: Bool = false) throws -> String {
        try replicatedSchema()
        let bare = try DocumentStore.localID(id, collection: name)
        let kept = JSONObject(body.filter { !$0.key.hasPrefix("_") }.map { ($0.key, $0.value) })
        return try store.performWrites(sync: sync) { context in
            let key = store.layout.localDocument(name, bare)
            let current = try store.storage.value(forKey: key).map {
                try DocumentStore.parseLocal($0, collection: name, id: bare, key: key).0
            }
            try checkLocalRev(bare, current: current, given: ifRev)
            let next = (current ?? 0).saturatingAdd(1)
            let bytes = try DocumentStore.storedBytes(.array([.int(next), .object(kept)]))
            guard bytes.count <= DocumentStore.maximumLocalDocumentSize else {
                throw KVDocsError(
                    .invalidArgument,
                    "collection \"\(name)\": _local document \(JSONValue.string(bare).compactDescription) is \(bytes.count) bytes; at most \(DocumentStore.maximumLocalDocumentSize) are allowed"
                )
            }
            context.batch.put(key, bytes)
            return "0-\(next)"
        }
    }

    /// Deletes the `_local` document `id`, whose revision must be `rev`.
    /// - Throws: `.notFound` when there is none, `.conflict` for another revision.
    public func deleteLocalDocument(_ id: String, rev: String, sync: Bool = false) throws {
        try replicatedSchema()
        let bare = try DocumentStore.localID(id, collection: name)
        try store.performWrites(sync: sync) { context in
            let key = store.layout.localDocument(name, bare)
            guard let bytes = try store.storage.value(forKey: key) else {
                throw KVDocsError(
                    .notFound,
                    "collection \"\(name)\" has no _local document \(JSONValue.string(bare).compactDescription)")
            }
            try checkLocalRev(
                bare, current: try DocumentStore.parseLocal(bytes, collection: name, id: bare, key: key).0, given: rev)
            context.batch.delete(key)
        }
    }

    private func checkLocalRev(_ id: String, current: Int64?, given: String?) throws {
        let described = JSONValue.string(id).compactDescription
        if let current {
            guard given == "0-\(current)" else {
                throw KVDocsError(
                    .conflict,
                    "collection \"\(name)\", _local document \(described): _rev \(given ?? "(none)") is not its revision 0-\(current)"
                )
            }
        } else if let given, !given.hasPrefix("0-") {
            throw KVDocsError(
                .conflict,
                "collection \"\(name)\", _local document \(described) does not exist; _rev \(given) is not a 0-… revision"
            )
        }
    }
}
