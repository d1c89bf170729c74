import Foundation

extension DocumentStore {
    enum WriteMode {
        case insert, upsert, update, delete
    }

    /// Accumulates the writes of one batch: documents, index entries, change records.
    /// Later writes in the batch see earlier ones (for ids and unique values).
    /// REQUIRES: used under the exclusive writer lock, on one thread.
    final class WriteContext {
        let store: DocumentStore
        let batch = WriteBatch()
        /// Documents written in this batch by key (`nil`: deleted).
        var documents: [[UInt8]: JSONValue?] = [:]
        /// Unique-index prefixes (values without id) added in this batch, with their id.
        var uniqueAdded: [[UInt8]: TupleElement] = [:]
        /// Index keys removed in this batch.
        var removed: Set<[UInt8]> = []
        var changes: [Change] = []
        var sequence: Int64
        /// Text index statistics changed by this batch, by statistics key.
        var textStatistics: [[UInt8]: (documents: Int, tokens: Int)] = [:]

        /// REQUIRES: the exclusive writer lock is held, so the stored sequence cannot move
        /// until this context commits. The sequence is read from the database, not from the
        /// store's memory: any number of stores on one database share it.
        init(store: DocumentStore) throws {
            self.store = store
            sequence = try store.storedSequence()
        }

        /// Adds one write to the batch. Returns the change, or `nil` for the delete of a
        /// missing document.
        func write(_ collectionName: String, _ mode: WriteMode, document: JSONValue?, id givenID: JSONValue?) throws -> Change? {
            let schema = try store.schema.collection(collectionName)
            let layout = store.layout
            let idValue: JSONValue
            if let document {
                guard case .object(let fields) = document else {
                    throw KVDocsError(.invalidArgument, "a document must be a JSON object, not \(article(document.typeName))")
                }
                guard let pk = fields[schema.primaryKey] else {
                    throw KVDocsError(.invalidArgument, "document has no primary key field \"\(schema.primaryKey)\" (collection \"\(collectionName)\")")
                }
                idValue = pk
            } else if let givenID {
                idValue = givenID
            } else {
                throw KVDocsError(.invalidArgument, "a delete needs an id")
            }
            let id = try DocumentStore.idElement(idValue, collection: collectionName, primaryKey: schema.primaryKey)
            let key = layout.document(collectionName, id)
            let old: JSONValue?
            if let overlay = documents[key] {
                old = overlay
            } else if let bytes = try store.database.get(key) {
                old = try store.documentValue(bytes, collection: collectionName, id: id)
            } else {
                old = nil
            }
            switch mode {
            case .insert where old != nil:
                throw KVDocsError(.conflict, "collection \"\(collectionName)\" already has a document with \(schema.primaryKey) \(idValue.compactDescription)", key: key)
            case .update where old == nil:
                throw KVDocsError(.conflict, "collection \"\(collectionName)\" has no document with \(schema.primaryKey) \(idValue.compactDescription)", key: key)
            case .delete where old == nil:
                return nil
            default:
                break
            }
            let stored = try document?.canonicalData()

            // Index entries: remove stale ones, add new ones, check unique indexes.
            let idBytes = Tuple([id]).encoded
            for index in schema.indexes {
                let subspace = layout.index(collectionName, index.name)
                let oldPrefixes = Set(old.map { DocumentStore.indexValues(index, $0).map { subspace.pack(Tuple($0)) } } ?? [])
                let newValues = document.map { DocumentStore.indexValues(index, $0) } ?? []
                let newPrefixes = Set(newValues.map { subspace.pack(Tuple($0)) })
                for prefix in oldPrefixes.subtracting(newPrefixes) {
                    batch.delete(prefix + idBytes)
                    removed.insert(prefix + idBytes)
                    if index.unique, uniqueAdded[prefix] == id { uniqueAdded[prefix] = nil }
                }
                for values in newValues {
                    let prefix = subspace.pack(Tuple(values))
                    guard !oldPrefixes.contains(prefix) else { continue }
                    if index.unique {
                        try checkUnique(collectionName, index, values, prefix: prefix, id: id)
                        uniqueAdded[prefix] = id
                    }
                    batch.put(prefix + idBytes, [UInt8]())
                    removed.remove(prefix + idBytes)
                }
            }

            for text in schema.text {
                let textLayout = store.textLayout(collectionName, text.name)
                let delta = DocumentStore.updateText(textLayout, text, id: id, old: old, new: document, batch: batch)
                if delta != (0, 0) || textStatistics[textLayout.statistics] == nil {
                    var stats = try textStatistics[textLayout.statistics] ?? store.textStatistics(textLayout)
                    stats.documents += delta.documents
                    stats.tokens += delta.tokens
                    textStatistics[textLayout.statistics] = stats
                }
            }

            if let stored {
                batch.put(key, stored)
            } else {
                batch.delete(key)
            }
            documents[key] = .some(document)
            sequence += 1
            let operation: Change.Operation = document == nil ? .delete : (old == nil ? .insert : .update)
            batch.put(layout.change(sequence), Tuple([.string(collectionName), id, .string(operation.rawValue)]))
            let change = Change(sequence: sequence, collection: collectionName, id: idValue, operation: operation)
            changes.append(change)
            return change
        }

        /// Throws when another document has `prefix`'s values in the unique index.
        private func checkUnique(_ collection: String, _ index: IndexDefinition, _ values: [TupleElement], prefix: [UInt8], id: TupleElement) throws {
            if let other = uniqueAdded[prefix], other != id {
                throw store.uniqueViolation(collection, index, values, existing: other, new: id)
            }
            var conflict: TupleElement?
            let entries = try store.database.entries(.prefix(prefix))
            while conflict == nil, let key = try entries.next({ k, _ in Array(k) }) {
                guard !removed.contains(key),
                      let other = try? Tuple(decoding: key[prefix.count...]).elements.first, other != id else { continue }
                conflict = other
            }
            if let conflict { throw store.uniqueViolation(collection, index, values, existing: conflict, new: id) }
        }

        /// Writes the batch with the last sequence number, then publishes the changes.
        /// With `sync` and nothing to write (the delete of a missing document), the log is
        /// still synced, so every earlier acknowledged write is durable when this returns.
        func commit(sync: Bool = false) throws {
            guard !changes.isEmpty else {
                if sync { try store.database.write(WriteBatch(), sync: true) }
                return
            }
            batch.put(store.layout.sequenceKey, Tuple([.int(sequence)]))
            for (key, stats) in textStatistics { batch.put(key, Tuple([.int(Int64(stats.documents)), .int(Int64(stats.tokens))])) }
            try store.database.write(batch, sync: sync)
            store.published(changes, lastSequence: sequence)
        }
    }

    /// Runs `body` with a write context under the exclusive writer lock and commits it.
    /// If `body` throws, nothing is written.
    func performWrites<R>(sync: Bool = false, _ body: (WriteContext) throws -> R) throws -> R {
        try database.withExclusiveWriter {
            let context = try WriteContext(store: self)
            let result = try body(context)
            try context.commit(sync: sync)
            return result
        }
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
            throw KVDocsError(.invalidArgument, "primary key \"\(primaryKey)\" of collection \"\(collection)\" must be a string or an integer, not \(value.compactDescription)")
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
