import Foundation
import KVKeys
import KVSupport

// Writes on replicated collections (design: docs/design/sync.md §1.2, §1.4, §1.5).
//
// Every write of a replicated document changes, in the one batch of the write context:
// - `("d", coll, id)`: the winner's body with `_id` and `_rev`, only while the winner is
//   not a tombstone (so indexes, which read this key, see the winner only);
// - `("r", coll, "t", id)`: the revision tree record, with the write's sequence;
// - `("r", coll, "b", id, pos, revid)`: the body of every leaf other than a live winner;
// - `("r", coll, "s", seq)`: the by-sequence entry, moved to the write's sequence;
// - the change feed record, as for any other write.

extension DocumentRevision {
    /// The bytes of a revision id in keys: its kind, then its bytes (an MD5 id and an opaque
    /// id with the same bytes differ).
    static func storedID(_ id: RevisionID) -> [UInt8] { [id.kind.rawValue] + id.bytes }
}

extension DocumentStore {
    /// The longest id of a replicated document, in UTF-8 bytes.
    package static let maximumReplicatedIDLength = 1024

    /// The id of a document of a replicated collection, checked as CouchDB's
    /// `validate_docid` does (plus a length bound).
    /// - Throws: `.invalidArgument` naming the collection and the id.
    package static func replicatedID(_ value: JSONValue, collection: String) throws -> String {
        guard case .string(let id) = value else {
            throw KVDocsError(
                .invalidArgument,
                "the _id of a document of the replicated collection \"\(collection)\" must be a string, not \(value.compactDescription)"
            )
        }
        guard !id.isEmpty else {
            throw KVDocsError(
                .invalidArgument, "the _id of a document of the replicated collection \"\(collection)\" cannot be empty"
            )
        }
        guard id.utf8.count <= maximumReplicatedIDLength else {
            throw KVDocsError(
                .invalidArgument,
                "the _id of a document of the replicated collection \"\(collection)\" is \(id.utf8.count) bytes long; at most \(maximumReplicatedIDLength) are allowed"
            )
        }
        guard !id.hasPrefix("_") else {
            throw KVDocsError(
                .invalidArgument,
                "the _id \(JSONValue.string(id).compactDescription) of collection \"\(collection)\" starts with \"_\": only reserved document ids may start with underscore"
            )
        }
        return id
    }

    /// `body` without the `_`-members, `_id` and `_rev` as given.
    /// - Throws: `.invalidArgument` for a `_rev` that is not a revision, or another `_`-member.
    package static func splitReplicated(_ fields: JSONObject, collection: String, id: String) throws -> (
        body: JSONObject, rev: DocumentRevision?
    ) {
        var body: [(String, JSONValue)] = []
        var rev: DocumentRevision?
        for (key, value) in fields {
            if key == "_id" { continue }
            if key == "_rev" {
                guard case .string(let text) = value else {
                    throw KVDocsError(
                        .invalidArgument,
                        "collection \"\(collection)\", document \(JSONValue.string(id).compactDescription): _rev must be a string, not \(value.compactDescription)"
                    )
                }
                do { rev = try DocumentRevision.parse(text) } catch let e as KVDocsError {
                    throw KVDocsError(
                        .invalidArgument,
                        "collection \"\(collection)\", document \(JSONValue.string(id).compactDescription): bad _rev: \(e.message)"
                    )
                }
                continue
            }
            if key.hasPrefix("_") {
                throw KVDocsError(
                    .invalidArgument,
                    "collection \"\(collection)\", document \(JSONValue.string(id).compactDescription): bad special document member: \(key)"
                )
            }
            body.append((key, value))
        }
        return (JSONObject(body), rev)
    }

    /// The stored document of a live winner: its body with `_id` and `_rev`.
    package static func winnerDocument(_ body: JSONObject, id: String, revision: DocumentRevision) -> JSONValue {
        var fields = Array(body.map { ($0.key, $0.value) })
        fields.append(("_id", .string(id)))
        fields.append(("_rev", .string(revision.description)))
        return .object(JSONObject(fields))
    }
}

extension DocumentStore.WriteContext {
    /// The revision tree of `id` and the sequence its record holds, as this batch left it,
    /// else as stored; an empty tree and `nil` when the document has none.
    func revisionTree(_ collection: String, _ id: String) throws -> (tree: RevisionTree, sequence: Int64?) {
        let key = store.layout.revisionTree(collection, id)
        if let overlay = revisionTrees[ByteKey(key)] { return (overlay.tree, overlay.sequence) }
        guard let bytes = try store.storage.value(forKey: key) else { return (RevisionTree(), nil) }
        do {
            let (tree, sequence) = try RevisionTreeCodec.decode(bytes)
            return (tree, sequence)
        } catch let e as KVDocsError {
            throw KVDocsError(
                .corruption,
                "collection \"\(collection)\", document \(JSONValue.string(id).compactDescription): revision tree: \(e.message)",
                key: key)
        }
    }

    /// An interactive edit (`insert`, `upsert`, `update`, `delete`) of a replicated document:
    /// a new revision, child of the winner (CouchDB's `new_edits=true`).
    func performInteractive(
        _ collection: String, _ schema: CollectionSchema, _ mode: DocumentStore.WriteMode, document: JSONValue?,
        id givenID: JSONValue?
    ) throws -> DocumentChange? {
        let idValue: JSONValue
        var body = JSONObject()
        var givenRev: DocumentRevision?
        if let document {
            guard case .object(let fields) = document else {
                throw KVDocsError(
                    .invalidArgument, "a document must be a JSON object, not \(article(document.typeName))")
            }
            guard let value = fields["_id"] else {
                throw KVDocsError(
                    .invalidArgument, "document has no primary key field \"_id\" (collection \"\(collection)\")")
            }
            idValue = value
            let id = try DocumentStore.replicatedID(idValue, collection: collection)
            (body, givenRev) = try DocumentStore.splitReplicated(fields, collection: collection, id: id)
        } else if let givenID {
            idValue = givenID
        } else {
            throw KVDocsError(.invalidArgument, "a delete needs an id")
        }
        let id = try DocumentStore.replicatedID(idValue, collection: collection)
        let (tree, sequence) = try revisionTree(collection, id)
        let winner = tree.winner
        let describedID = idValue.compactDescription
        if let givenRev, givenRev != winner?.revision {
            let current =
                winner.map { "its current revision is \($0.revision)\($0.deleted ? " (deleted)" : "")" }
                ?? "it has no revision"
            throw KVDocsError(
                .conflict,
                "collection \"\(collection)\", document \(describedID): _rev \(givenRev) is not the current revision; \(current)"
            )
        }
        let live = winner.map { !$0.deleted } ?? false
        switch mode {
        case .insert where live:
            throw KVDocsError(.conflict, "collection \"\(collection)\" already has a document with _id \(describedID)")
        case .update where !live:
            throw KVDocsError(.conflict, "collection \"\(collection)\" has no document with _id \(describedID)")
        case .delete where !live:
            return nil
        default:
            break
        }
        let deleted = mode == .delete
        if deleted { body = JSONObject() }
        let parent = winner?.revision
        let position = (parent?.position ?? 0) + 1
        guard position <= DocumentRevision.maximumPosition else {
            throw KVDocsError(
                .invalidArgument,
                "collection \"\(collection)\", document \(describedID): revision \(parent.map(\.description) ?? "") is at the last position"
            )
        }
        let canonical = try DocumentStore.storedBytes(.object(body))
        let revision = DocumentRevision(
            position: position,
            id: RevisionTree.newRevisionID(parent: parent, deleted: deleted, canonicalBody: canonical))
        var nodes: [RevisionTree.PathNode] = []
        if let parent { nodes.append(RevisionTree.PathNode(id: parent.id, value: .missing)) }
        nodes.append(RevisionTree.PathNode(id: revision.id, value: .stored(deleted: deleted)))
        var updated = tree
        updated.merge(try RevisionTree.Path(start: parent?.position ?? 1, nodes: nodes))
        let change = try applyRevisions(
            collection, schema, id: id, before: tree, beforeSequence: sequence, after: updated, bodies: [revision: body]
        )
        lastRevision = revision
        return change
    }

    /// A replicated edit (CouchDB's `new_edits=false`): merges `revision` with its history
    /// (`ids` newest first, `ids[0] == revision.id`; `nil`: the revision alone) into the tree.
    /// Returns `nil` when the stored tree would not change (the revision and its history
    /// were already there; nothing is written).
    /// - Throws: `.invalidArgument` for an inconsistent history or an edit that would put a
    ///   revision twice in the tree; nothing is added to the batch then.
    package func writeReplicated(
        _ collection: String, id: String, revision: DocumentRevision, history ids: [RevisionID]?, deleted: Bool,
        body: JSONObject
    ) throws -> DocumentChange? {
        try guarded {
            let schema = try catalog.schema.collection(collection)
            let describedID = JSONValue.string(id).compactDescription
            func fail(_ m: String) -> KVDocsError {
                KVDocsError(
                    .invalidArgument,
                    "collection \"\(collection)\", document \(describedID), revision \(revision): \(m)")
            }
            guard schema.replicated else {
                throw KVDocsError(.notSupported, "collection \"\(collection)\" is not replicated")
            }
            _ = try DocumentStore.replicatedID(.string(id), collection: collection)
            if let bad = body.keys.first(where: { $0.hasPrefix("_") }) {
                throw fail("bad special document member: \(bad)")
            }
            let ids = ids ?? [revision.id]
            guard ids.first == revision.id else { throw fail("_revisions.ids[0] is not the revision's id") }
            guard Set(ids).count == ids.count else { throw fail("_revisions.ids lists an id twice") }
            let path: RevisionTree.Path
            do {
                path = try RevisionTree.Path(position: revision.position, history: ids, leaf: .stored(deleted: deleted))
            } catch let e as KVDocsError { throw fail(e.message) }
            let (tree, sequence) = try revisionTree(collection, id)
            var updated = tree
            updated.merge(path)
            // Written when the stored tree changes, as couch_db_updater compares the merged
            // tree with the old one: a path of known revisions can still graft ancestors onto
            // a stemmed root. A revision already there changes nothing.
            var stored = updated
            stored.stem(limit: schema.revsLimit)
            stored.dropInternalBodies()
            if stored == tree { return nil }
            return try applyRevisions(
                collection, schema, id: id, before: tree, beforeSequence: sequence, after: updated,
                // A revision the tree already held with its body keeps that body, as
                // couch_key_tree's value_pref keeps the tree's value.
                bodies: tree.value(of: revision)?.hasBody == true ? [:] : [revision: body], edit: revision)
        }
    }

    /// An imported line of a replicated collection that carries its revision (`_rev`, as
    /// an export writes it; optionally CouchDB's `_revisions: {start, ids}` and
    /// `_deleted`): merged as a replicated edit, so an exported collection imports with its
    /// revisions and importing it again changes nothing. Returns false, writing nothing,
    /// for a line without `_rev` (imported as an ordinary write).
    /// - Throws: `.invalidArgument` for a bad `_rev`, `_revisions` or `_deleted`, or a
    ///   history that disagrees with `_rev`; nothing is added to the batch then.
    func writeImported(_ collection: String, _ document: JSONValue) throws -> Bool {
        guard case .object(let fields) = document, fields["_rev"] != nil else { return false }
        // Read as `_bulk_docs` with `new_edits: false` reads a revision: one parser of
        // `_rev`, `_revisions` and `_deleted` for both.
        let revision: ReplicatedDocument
        do {
            revision = try ReplicatedDocument(json: document)
        } catch {
            let described = error.id.map { "document \(JSONValue.string($0).compactDescription)" } ?? "a document"
            throw KVDocsError(.invalidArgument, "collection \"\(collection)\", \(described): \(error.reason)")
        }
        _ = try writeReplicated(
            collection, id: revision.id, revision: revision.revision, history: revision.history,
            deleted: revision.deleted, body: revision.body)
        return true
    }

    /// Resolves the conflicts of `id` as CouchDB clients do: every non-deleted leaf other
    /// than `keep` gets a tombstone child. Returns the tombstones made (none when `keep` is
    /// already the only non-deleted leaf; nothing is written then).
    /// - Throws: `.notFound` when the document has no revisions, `.invalidArgument` when
    ///   `keep` is not one of its non-deleted leaves; nothing is added to the batch then.
    package func resolve(_ collection: String, id: String, keep: DocumentRevision) throws -> [DocumentRevision] {
        var made: [DocumentRevision] = []
        _ = try guarded {
            let schema = try catalog.schema.collection(collection)
            guard schema.replicated else {
                throw KVDocsError(.notSupported, "collection \"\(collection)\" is not replicated")
            }
            let describedID = JSONValue.string(id).compactDescription
            let (tree, sequence) = try revisionTree(collection, id)
            guard !tree.isEmpty else {
                throw KVDocsError(.notFound, "collection \"\(collection)\" has no document \(describedID)")
            }
            let live = tree.leaves.filter { !$0.deleted }.map(\.revision)
            guard live.contains(keep) else {
                throw KVDocsError(
                    .invalidArgument,
                    "collection \"\(collection)\", document \(describedID): \(keep) is not one of its non-deleted leaf revisions (\(live.map(\.description).joined(separator: ", ")))"
                )
            }
            var updated = tree
            var bodies: [DocumentRevision: JSONObject] = [:]
            let empty = try DocumentStore.storedBytes(.object(JSONObject()))
            for leaf in live where leaf != keep {
                guard leaf.position < DocumentRevision.maximumPosition else {
                    throw KVDocsError(
                        .invalidArgument,
                        "collection \"\(collection)\", document \(describedID): revision \(leaf) is at the last position"
                    )
                }
                let tombstone = DocumentRevision(
                    position: leaf.position + 1,
                    id: RevisionTree.newRevisionID(parent: leaf, deleted: true, canonicalBody: empty))
                updated.merge(
                    try RevisionTree.Path(
                        start: leaf.position,
                        nodes: [
                            RevisionTree.PathNode(id: leaf.id, value: .missing),
                            RevisionTree.PathNode(id: tombstone.id, value: .stored(deleted: true))
                        ]))
                bodies[tombstone] = JSONObject()
                made.append(tombstone)
            }
            guard !made.isEmpty else { return nil }
            return try applyRevisions(
                collection, schema, id: id, before: tree, beforeSequence: sequence, after: updated, bodies: bodies)
        }
        return made
    }

    /// Stems `after`, drops internal bodies, and writes the document's new state: the
    /// winner in the document key (indexes updated from the old winner to the new), leaf
    /// bodies, the tree record, the by-sequence entry and the change record. `bodies` holds
    /// the bodies of revisions new in this write. Everything is checked and read before
    /// anything is added to the batch.
    private func applyRevisions(
        _ collection: String, _ schema: CollectionSchema, id: String, before: RevisionTree, beforeSequence: Int64?,
        after merged: RevisionTree, bodies: [DocumentRevision: JSONObject], edit: DocumentRevision? = nil
    ) throws -> DocumentChange? {
        let layout = store.layout
        let describedID = JSONValue.string(id).compactDescription
        guard journal == nil, recordsChanges else {
            throw KVDocsError(
                .notSupported, "collection \"\(collection)\" is replicated: data migrations cannot write its documents")
        }
        var after = merged
        after.stem(limit: schema.revsLimit)
        after.dropInternalBodies()
        guard !after.hasDuplicateRevisions else {
            throw KVDocsError(
                .invalidArgument,
                "collection \"\(collection)\", document \(describedID)\(edit.map { ", revision \($0)" } ?? ""): the edit's history would put a revision twice in the document's tree; refused"
            )
        }
        let key = layout.document(collection, .string(id))
        let old = try current(key, collection, .string(id))
        let oldWinner = before.winner
        guard let newWinner = after.winner else {
            throw KVDocsError(
                .invalidArgument,
                "collection \"\(collection)\", document \(describedID): the revision tree would be empty")
        }
        /// Leaves whose bodies live under ("r", coll, "b", …): all but a live winner.
        func separate(_ tree: RevisionTree) -> Set<DocumentRevision> {
            let winner = tree.winner
            return Set(
                tree.leaves.filter { $0.value.hasBody && !($0.revision == winner?.revision && !$0.deleted) }.map(
                    \.revision))
        }
        func body(of revision: DocumentRevision) throws -> JSONObject {
            if let given = bodies[revision] { return given }
            if let oldWinner, !oldWinner.deleted, oldWinner.revision == revision, case .object(let fields)? = old {
                return try DocumentStore.splitReplicated(fields, collection: collection, id: id).body
            }
            let bodyKey = layout.revisionBody(collection, id, revision)
            if let overlay = revisionBodies[ByteKey(bodyKey)], let overlay { return overlay }
            if let bytes = try store.storage.value(forKey: bodyKey),
                case .object(let fields) = try store.documentValue(bytes, collection: collection, id: .string(id))
            {
                return fields
            }
            throw KVDocsError(
                .corruption,
                "collection \"\(collection)\", document \(describedID): the body of leaf revision \(revision) is missing",
                key: bodyKey)
        }
        let oldSeparate = separate(before), newSeparate = separate(after)
        let added = try newSeparate.subtracting(oldSeparate).sorted().map {
            ($0, try DocumentStore.storedBytes(.object(try body(of: $0))))
        }
        let removed = oldSeparate.subtracting(newSeparate).sorted()
        // (`JSONValue` is `ExpressibleByNilLiteral`: spell the absent document out.)
        let document: JSONValue? =
            newWinner.deleted
            ? Optional<JSONValue>.none
            : DocumentStore.winnerDocument(try body(of: newWinner.revision), id: id, revision: newWinner.revision)
        let stored = try document.map { try DocumentStore.storedBytes($0) }
        let newSequence = sequence.saturatingAdd(1)
        let record = try RevisionTreeCodec.encode(after, sequence: newSequence)
        let maintainers = catalog.maintainers(of: collection)
        if let document {
            for maintainer in maintainers { try maintainer.validate(id: .string(id), document: document) }
        }
        // From here on the batch changes.
        if old != document {
            for maintainer in maintainers {
                try maintainer.update(id: .string(id), old: old, new: document, context: indexes)
            }
            if !maintainers.isEmpty, !touched.contains(where: { $0.hasSameCodePoints(as: collection) }) {
                touched.append(collection)
            }
            if let stored { batch.put(key, stored) } else { batch.delete(key) }
            documents[ByteKey(key)] = .some(document)
        }
        for revision in removed {
            let bodyKey = layout.revisionBody(collection, id, revision)
            batch.delete(bodyKey)
            revisionBodies[ByteKey(bodyKey)] = .some(nil)
        }
        for (revision, bytes) in added {
            let bodyKey = layout.revisionBody(collection, id, revision)
            batch.put(bodyKey, bytes)
            revisionBodies[ByteKey(bodyKey)] = .some(try body(of: revision))
        }
        let treeKey = layout.revisionTree(collection, id)
        batch.put(treeKey, record)
        revisionTrees[ByteKey(treeKey)] = (after, newSequence)
        if let beforeSequence { batch.delete(layout.bySequence(collection, beforeSequence)) }
        batch.put(layout.bySequence(collection, newSequence), Tuple([.string(id)]))
        writes += 1
        // The change describes the winner: it appeared, went, or is otherwise (a new
        // losing branch, or a tombstone winner replaced by another) an update.
        let operation: DocumentChange.Operation =
            document == nil ? (old != nil || oldWinner == nil ? .delete : .update) : (old == nil ? .insert : .update)
        sequence = newSequence
        batch.put(layout.change(sequence), Tuple([.string(collection), .string(id), .string(operation.rawValue)]))
        let change = DocumentChange(sequence: sequence, collection: collection, id: .string(id), operation: operation)
        changes.append(change)
        return change
    }
}
