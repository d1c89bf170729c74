import Foundation
import KVKeys
import KVStorage
import KVSupport

extension DocumentStore {
    package enum WriteMode {
        case insert, upsert, update, delete
    }

    /// Accumulates the writes of one batch: documents, index entries, change records.
    /// Later writes in the batch see earlier ones (for ids and unique values). A write that
    /// fails after adding part of itself poisons the batch: committing it then throws that
    /// error and writes nothing, so a failed write never leaves part of itself behind.
    /// REQUIRES: used under the exclusive writer lock, on one thread.
    package final class WriteContext {
        let store: DocumentStore
        /// The catalog in force: read under the writer lock from the latest state.
        let catalog: CompiledCatalog
        let indexes: IndexUpdateContext
        package var batch: WriteBatch { indexes.batch }
        /// Documents written in this batch by key (`nil`: deleted).
        var documents: [ByteKey: JSONValue?] = [:]
        var changes: [DocumentChange] = []
        var sequence: Int64
        /// Collections this batch wrote (their maintainers' `finish` runs before the commit).
        var touched: [String] = []
        /// Revision trees of replicated documents written in this batch, by tree key, with
        /// the sequence each records.
        var revisionTrees: [ByteKey: (tree: RevisionTree, sequence: Int64)] = [:]
        /// Leaf bodies of replicated documents written in this batch, by key (`nil`: deleted).
        var revisionBodies: [ByteKey: JSONObject?] = [:]
        /// The revision the latest interactive edit of a replicated document made.
        package var lastRevision: DocumentRevision?
        /// The undo journal of the data migration making these writes, if one is.
        var journal: MigrationJournal?
        /// Whether writes record changes in the change feed and take sequence numbers
        /// (not when a failed migration is rolled back: its change records are removed).
        var recordsChanges = true
        /// Whether the commit delivers the changes to the hub's streams and observers (not
        /// for a data migration's batches: it delivers them when it completes).
        var publishes = true
        /// Writes added to the batch (documents written or deleted).
        var writes = 0
        /// The first write of the batch that failed.
        package private(set) var failure: Error?

        /// REQUIRES: the exclusive writer lock is held, so the stored sequence and catalog
        /// cannot move until this context commits. Both are read from the database, not from
        /// the store's memory: any number of stores on one database share them.
        init(store: DocumentStore) throws {
            self.store = store
            catalog = try store.catalog()
            sequence = try store.storedSequence()
            indexes = IndexUpdateContext(storage: store.storage, batch: WriteBatch())
        }

        /// Adds one write to the batch. Returns the change, or `nil` for the delete of a
        /// missing document.
        /// - Parameter validated: whether every maintainer of the collection has validated
        ///   `document` already (an import checks each line before it writes any), so the
        ///   check is not made twice.
        package func write(
            _ collectionName: String, _ mode: WriteMode, document: JSONValue?, id givenID: JSONValue?,
            validated: Bool = false
        )
            throws
            -> DocumentChange?
        {
            try guarded {
                try perform(collectionName, mode, document: document, id: givenID, validated: validated)
            }
        }

        /// Runs one write, poisoning the batch when it fails after adding to it.
        func guarded(_ body: () throws -> DocumentChange?) throws -> DocumentChange? {
            if let failure { throw failure }
            let before = batch.count
            do {
                return try body()
            } catch {
                // Errors found before anything was added (a conflict, a bad id) leave the
                // batch as it was; later ones (a unique violation) may have added part of
                // the write, so the batch can no longer be committed.
                if batch.count != before { failure = error }
                throw error
            }
        }

        /// The path (`embedding[1]`, `a.b`) of the first number in `value` that is not finite.
        static func nonFiniteField(_ value: JSONValue, _ path: String = "") -> String? {
            switch value {
            case .double(let d) where !d.isFinite: return path.isEmpty ? "(the document)" : path
            case .array(let elements):
                for (i, element) in elements.enumerated() {
                    if let found = nonFiniteField(element, "\(path)[\(i)]") { return found }
                }
            case .object(let members):
                for (name, member) in members {
                    if let found = nonFiniteField(member, path.isEmpty ? name : "\(path).\(name)") { return found }
                }
            default: break
            }
            return nil
        }

        private func perform(
            _ collectionName: String, _ mode: WriteMode, document: JSONValue?, id givenID: JSONValue?, validated: Bool
        )
            throws -> DocumentChange?
        {
            let (schema, maintainers) = try collection(collectionName)
            if schema.replicated {
                return try performInteractive(collectionName, schema, mode, document: document, id: givenID)
            }
            let (idValue, id) = try identify(collectionName, schema, document: document, id: givenID)
            let key = store.layout.document(collectionName, id)
            let old = try current(key, collectionName, id)
            switch mode {
            case .insert where old != nil:
                throw KVDocsError(
                    .conflict,
                    "collection \"\(collectionName)\" already has a document with \(schema.primaryKey) \(idValue.compactDescription)",
                    key: key)
            case .update where old == nil:
                throw KVDocsError(
                    .conflict,
                    "collection \"\(collectionName)\" has no document with \(schema.primaryKey) \(idValue.compactDescription)",
                    key: key)
            case .delete where old == nil:
                return nil
            default:
                break
            }
            let stored = try document.map { document in
                do {
                    return try DocumentStore.storedBytes(document)
                } catch let error as KVDocsError where error.kind == .invalidArgument {
                    // Name the document and, for a number that is not finite, its field.
                    let field = Self.nonFiniteField(document).map { "field \($0) holds a number that is not finite: " }
                    throw KVDocsError(
                        .invalidArgument,
                        "collection \"\(collectionName)\": document \(idValue.compactDescription) cannot be stored: \(field ?? "")\(error.message)",
                        key: key)
                }
            }
            if let document, !validated {
                for maintainer in maintainers { try maintainer.validate(id: id, document: document) }
            }
            for maintainer in maintainers {
                try maintainer.update(id: id, old: old, new: document, context: indexes)
            }
            if !maintainers.isEmpty, !touched.contains(where: { $0.hasSameCodePoints(as: collectionName) }) {
                touched.append(collectionName)
            }
            if let journal, documents[ByteKey(key)] == nil {
                try journal.recordFirstWrite(of: key, collection: collectionName, id: id, in: batch)
            }
            if let stored { batch.put(key, stored) } else { batch.delete(key) }
            documents[ByteKey(key)] = .some(document)
            writes += 1
            let operation: DocumentChange.Operation = document == nil ? .delete : (old == nil ? .insert : .update)
            guard recordsChanges else {
                return DocumentChange(sequence: sequence, collection: collectionName, id: idValue, operation: operation)
            }
            sequence = sequence.saturatingAdd(1)
            batch.put(store.layout.change(sequence), Tuple([.string(collectionName), id, .string(operation.rawValue)]))
            let change = DocumentChange(
                sequence: sequence, collection: collectionName, id: idValue, operation: operation)
            changes.append(change)
            return change
        }

        /// The last collection written and what the catalog says of it (a batch mostly
        /// writes one collection): its schema and its index maintainers.
        private var lastCollection: (name: String, schema: CollectionSchema, maintainers: [any IndexMaintainer])?

        /// The schema and maintainers of `name` in ``catalog``: looked up once for the writes
        /// of a collection that follow one another (the same bytes, so the same answer).
        /// - Throws: `.schema` for an unknown collection.
        private func collection(_ name: String) throws -> (CollectionSchema, [any IndexMaintainer]) {
            if let last = lastCollection, JSONObject.compareKeys(last.name, name) == 0 {
                return (last.schema, last.maintainers)
            }
            let schema = try catalog.schema.collection(name)
            let maintainers = catalog.maintainers(of: name)
            lastCollection = (name, schema, maintainers)
            return (schema, maintainers)
        }

        /// The primary key of a write, as given and as a tuple element.
        private func identify(
            _ collection: String, _ schema: CollectionSchema, document: JSONValue?, id givenID: JSONValue?
        ) throws -> (JSONValue, TupleElement) {
            let idValue: JSONValue
            if let document {
                guard case .object(let fields) = document else {
                    throw KVDocsError(
                        .invalidArgument, "a document must be a JSON object, not \(article(document.typeName))")
                }
                guard let pk = fields[schema.primaryKey] else {
                    throw KVDocsError(
                        .invalidArgument,
                        "document has no primary key field \"\(schema.primaryKey)\" (collection \"\(collection)\")")
                }
                idValue = pk
            } else if let givenID {
                idValue = givenID
            } else {
                throw KVDocsError(.invalidArgument, "a delete needs an id")
            }
            return (
                idValue, try DocumentStore.idElement(idValue, collection: collection, primaryKey: schema.primaryKey)
            )
        }

        /// The document `idValue` of `collectionName` as this batch left it, else as stored.
        /// - Throws: `.notSupported` for a replicated collection, `.schema` for an unknown
        ///   one, `.invalidArgument` for an id that is not a string or an integer.
        func document(_ collectionName: String, id idValue: JSONValue) throws -> JSONValue? {
            let schema = try catalog.schema.collection(collectionName)
            guard !schema.replicated else {
                throw KVDocsError(
                    .notSupported,
                    "a write batch reads documents of collections that are not replicated; \"\(collectionName)\" is (read it through the collection)"
                )
            }
            let id = try DocumentStore.idElement(idValue, collection: collectionName, primaryKey: schema.primaryKey)
            return try current(store.layout.document(collectionName, id), collectionName, id)
        }

        /// The document under `key` as this batch left it, else as stored.
        func current(_ key: [UInt8], _ collection: String, _ id: TupleElement) throws -> JSONValue? {
            if let overlay = documents[ByteKey(key)] { return overlay }
            return try store.storage.withValue(forKey: key) { bytes in
                guard let bytes else { return nil }
                return try store.documentValue(buffer: bytes, collection: collection, id: id, key: key)
            }
        }

        /// With `sync` and nothing to write (the delete of a missing document), the log is
        /// still synced, so every earlier acknowledged write is durable when this returns.
        /// - Throws: the error of a write of this batch that failed (nothing is written).
        func commit(sync: Bool = false) throws {
            if try write(sync: sync) { publish() }
        }

        /// Writes the batch (``commit(sync:)`` without ``publish()``), returning whether
        /// there was anything to publish. A store that checks transactions optimistically
        /// may refuse it with a retryable conflict, having written nothing.
        func write(sync: Bool) throws -> Bool {
            if let failure { throw failure }
            guard !changes.isEmpty || batch.count > 0 else {
                if sync { try store.storage.write(WriteBatch(), sync: true) }
                return false
            }
            for collection in touched {
                for maintainer in catalog.maintainers(of: collection) { try maintainer.finish(context: indexes) }
            }
            store.records.putSequence(sequence, in: batch)
            try store.storage.write(batch, sync: sync)
            return true
        }

        /// Delivers the written changes to the hub's streams and observers (or, for a data
        /// migration's batches, records the sequence only). Once per written batch.
        func publish() {
            if publishes {
                store.published(changes, lastSequence: sequence)
            } else {
                store.state.withLock { $0.lastSequence = sequence }
            }
        }
    }

    /// Runs `body` with a write context as one write transaction of the store and commits it.
    /// If `body` throws, nothing is written.
    ///
    /// Over a store that other processes write (``KeyValueStore/transact(attempts:_:)``),
    /// a commit that gave way to another writer runs `body` again with a new context, up to
    /// ``writeAttempts`` times: each attempt reads the catalog, the sequence, documents and
    /// unique entries anew. The changes are published once, after the attempt that committed.
    package func performWrites<R>(sync: Bool = false, _ body: (WriteContext) throws -> R) throws -> R {
        let (result, context, wrote) = try storage.transact(attempts: writeAttempts) {
            let context = try WriteContext(store: self)
            let result = try body(context)
            return (result, context, try context.write(sync: sync))
        }
        if wrote { context.publish() }
        return result
    }

    /// The tuple element of a primary key: strings and integers only.
    static func idElement(_ value: JSONValue, collection: String, primaryKey: String) throws -> TupleElement {
        switch value {
        case .string(let s): return .string(s)
        case .int(let i): return .int(i)
        case .uint(let u): return .uint(u)
        case .double(let d) where d.rounded() == d && Int64(exactly: d) != nil:
            return .int(Int64(d))
        default:
            throw KVDocsError(
                .invalidArgument,
                "primary key \"\(primaryKey)\" of collection \"\(collection)\" must be a string or an integer, not \(value.compactDescription)"
            )
        }
    }

    /// The JSON value of a primary key element.
    static func idValue(_ element: TupleElement) -> JSONValue {
        switch element {
        case .string(let s): return .string(s)
        case .int(let i): return .int(i)
        case .uint(let u): return .uint(u)
        default: return .string(element.description)
        }
    }
}
