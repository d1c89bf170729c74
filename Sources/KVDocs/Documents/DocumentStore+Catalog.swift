import Foundation

extension DocumentStore {
    struct StoredCatalog {
        var schema: Schema
        var ready: Set<IndexIdentity>
        var lastSequence: Int64
    }

    /// Reads the stored schema, the ready indexes and the last sequence number.
    static func loadCatalog(_ db: Database, _ layout: Layout) throws -> StoredCatalog {
        var schema = try Schema()
        if let data = try db.get(layout.schemaKey, as: Data.self) {
            do {
                schema = try Schema(json: data, file: "the stored schema of \(db.path)")
            } catch let e as KVDocsError {
                throw KVDocsError(.corruption, e.message, path: db.path)
            }
        }
        var ready = Set<IndexIdentity>()
        for entry in try db.entries(layout.indexStates.range).collect() {
            let t = try layout.indexStates.unpack(entry.key)
            guard t.count == 2, let state = try? JSONValue(parsing: Data(entry.value)),
                  case .object(let o) = state, o["state"] == .string("ready"),
                  let collection = try? t.string(at: 0), let index = try? t.string(at: 1),
                  let c = schema[collection: collection], let def = c.indexes.first(where: { $0.name.hasSameCodePoints(as: index) }),
                  o["definition"] == def.json else { continue }
            ready.insert(IndexIdentity(collection, index, .secondary))
        }
        let textStates = layout.root.subspace(["m", "text"])
        for entry in try db.entries(textStates.range).collect() {
            let t = try textStates.unpack(entry.key)
            guard t.count == 2, let state = try? JSONValue(parsing: Data(entry.value)),
                  case .object(let o) = state, o["state"] == .string("ready"),
                  let collection = try? t.string(at: 0), let index = try? t.string(at: 1),
                  let def = schema[collection: collection]?.text.first(where: { $0.name.hasSameCodePoints(as: index) }),
                  o["definition"] == def.json else { continue }
            ready.insert(IndexIdentity(collection, index, .text))
        }
        var last: Int64 = 0
        if let t = try db.get(layout.sequenceKey, as: Tuple.self) { last = try t.int64(at: 0) }
        return StoredCatalog(schema: schema, ready: ready, lastSequence: last)
    }

    /// Applies a new schema: drops indexes that are gone or changed, builds new and changed
    /// ones (reporting progress), then stores the schema. On a failed build the new index is
    /// removed and the stored schema is left as it was.
    public func apply(_ newSchema: Schema, progress: ((IndexBuildProgress) -> Void)? = nil) throws {
        try database.withExclusiveWriter {
            let old = schema
            let layout = self.layout
            // Drop what is gone or changed.
            for (name, collection) in old.collections {
                for index in collection.indexes {
                    let kept = newSchema[collection: name]?.indexes.first { $0.name.hasSameCodePoints(as: index.name) }
                    if kept != index || !isReady(name, index.name) {
                        try dropIndex(name, index.name)
                    }
                }
                for text in collection.text {
                    let kept = newSchema[collection: name]?.text.first { $0.name.hasSameCodePoints(as: text.name) }
                    if kept != text || !isTextReady(name, text.name) {
                        try dropTextIndex(name, text.name)
                    }
                }
            }
            // The schema now in force; indexes still to build are not ready yet.
            state.withLock { $0.schema = newSchema }
            for (name, collection) in newSchema.collections.sorted(by: { $0.key < $1.key }) {
                for index in collection.indexes where !isReady(name, index.name) {
                    do {
                        try buildIndex(name, collection, index, progress: progress)
                    } catch {
                        try? dropIndex(name, index.name)
                        state.withLock { $0.schema = old }
                        throw error
                    }
                }
                for text in collection.text where !isTextReady(name, text.name) {
                    do {
                        try buildTextIndex(name, text, progress: progress)
                    } catch {
                        try? dropTextIndex(name, text.name)
                        state.withLock { $0.schema = old }
                        throw error
                    }
                }
            }
            let batch = WriteBatch()
            batch.put(layout.schemaKey, newSchema.jsonData())
            batch.put(layout.formatKey, Tuple([.int(Self.formatVersion)]))
            try database.write(batch, sync: true)
        }
    }

    /// Removes an index's entries and state.
    func dropIndex(_ collection: String, _ index: String) throws {
        state.withLock { _ = $0.readyIndexes.remove(IndexIdentity(collection, index, .secondary)) }
        try database.delete(layout.indexState(collection, index))
        try database.deleteRange(layout.index(collection, index).range)
    }

    /// Builds an index from every document of the collection, then marks it ready.
    /// REQUIRES: the exclusive writer lock is held.
    func buildIndex(_ name: String, _ collection: CollectionSchema, _ index: IndexDefinition,
                    progress: ((IndexBuildProgress) -> Void)?) throws {
        let layout = self.layout
        try database.put(layout.indexState(name, index.name), try JSONValue.object(["state": "building", "definition": index.json]).canonicalData())
        try database.deleteRange(layout.index(name, index.name).range)
        let docs = layout.documents(name)
        let total = try database.forEach(in: docs.range) { _, _ in }
        progress?(IndexBuildProgress(collection: name, index: index.name, done: 0, total: total))
        let snapshot = try database.snapshot()
        let entries = try snapshot.entries(docs.range)
        let batch = WriteBatch()
        var done = 0
        // Unique indexes: the values seen, to find duplicates without re-reading the index.
        var seen: [[UInt8]: TupleElement] = [:]
        while let entry = try entries.next({ k, v in (try docs.unpack(k), Array(v)) }) {
            done += 1
            guard entry.0.count == 1 else { continue }
            let idElement = entry.0[0]
            let document = try documentValue(entry.1, collection: name, id: idElement)
            for values in Self.indexValues(index, document) {
                let prefix = layout.index(name, index.name).pack(Tuple(values))
                if index.unique {
                    if let other = seen[prefix], other != idElement {
                        throw uniqueViolation(name, index, values, existing: other, new: idElement)
                    }
                    seen[prefix] = idElement
                }
                batch.put(prefix + Tuple([idElement]).encoded, [UInt8]())
            }
            if batch.count >= 10_000 {
                try database.write(batch)
                batch.clear()
            }
            if done % 1000 == 0 { progress?(IndexBuildProgress(collection: name, index: index.name, done: done, total: total)) }
        }
        batch.put(layout.indexState(name, index.name), try JSONValue.object(["state": "ready", "definition": index.json]).canonicalData())
        try database.write(batch, sync: true)
        state.withLock { _ = $0.readyIndexes.insert(IndexIdentity(name, index.name, .secondary)) }
        progress?(IndexBuildProgress(collection: name, index: index.name, done: done, total: total))
    }

    func uniqueViolation(_ collection: String, _ index: IndexDefinition, _ values: [TupleElement],
                         existing: TupleElement, new: TupleElement) -> KVDocsError {
        var i = 0
        var shown: [String] = []
        while i < values.count, let v = ValueOrder.decode(values, at: &i) { shown.append(v.compactDescription) }
        return KVDocsError(.uniqueViolation,
            "unique index \"\(index.name)\" of \"\(collection)\" already has \(shown.joined(separator: ", ")) (document \(existing)); document \(new) cannot have it too",
            path: database.path, key: layout.document(collection, new))
    }

    /// Decodes a stored document.
    func documentValue(_ bytes: [UInt8], collection: String, id: TupleElement) throws -> JSONValue {
        do {
            return try JSONValue(parsing: bytes)
        } catch let e as KVDocsError {
            throw KVDocsError(.corruption, "document \(id) of \"\(collection)\" is not valid JSON: \(e.message)", path: database.path,
                              key: layout.document(collection, id))
        }
    }

    /// Every combination of the index's field values in `document` (the encoded values
    /// of each field, in order); none when a field is missing.
    static func indexValues(_ index: IndexDefinition, _ document: JSONValue) -> [[TupleElement]] {
        var combinations: [[TupleElement]] = [[]]
        for field in index.fields {
            var values = field.values(in: document)
            if values.isEmpty { return [] }
            if field.isMultiValued {
                // Each distinct element once.
                var unique: [[UInt8]: JSONValue] = [:]
                for v in values { unique[ValueOrder.key(v)] = v }
                values = unique.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map(\.value)
            }
            combinations = combinations.flatMap { prefix in values.map { prefix + ValueOrder.encode($0) } }
        }
        return combinations
    }
}
