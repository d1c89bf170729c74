import Foundation
import KVKeys
import KVStorage
import KVSupport

extension DocumentStore {
    /// Applies a new schema: drops indexes that are gone, changed or not ready, builds new,
    /// changed and unfinished ones (reporting progress), then stores the schema. On a failed
    /// build nothing of the new schema is kept: the indexes it built are removed, those of
    /// the stored schema that it dropped are rebuilt, and the stored schema stays in force.
    ///
    /// Queries meanwhile see the catalog of their snapshot: an index being built is not
    /// ready there, so they scan documents instead. Writers wait.
    /// - Throws: `.uniqueViolation` when a unique index meets duplicate values, `.schema`
    ///   for a document an index cannot take, `.notSupported` for a collection holding
    ///   documents whose ``CollectionSchema/replicated`` changes, storage errors.
    public func apply(_ newSchema: DocumentSchema, progress: ((IndexBuildProgress) -> Void)? = nil) throws {
        try storage.withWriteTransaction {
            let current = try catalog()
            // Turning replication on or off for a collection that holds documents would
            // need every document's tree made or dropped: not supported yet.
            for (name, old) in current.schema.collections {
                guard let new = newSchema[collection: name], new.replicated != old.replicated else { continue }
                if try storage.count(layout.documents(name).range) > 0
                    || storage.count(layout.replication(name).range) > 0
                {
                    throw KVDocsError(
                        .notSupported,
                        "collection \"\(name)\" holds documents: it cannot be made \(new.replicated ? "replicated" : "not replicated") (not supported yet); create a new collection and copy the documents"
                    )
                }
            }
            let target = CompiledCatalog(
                generation: current.generation, schema: newSchema, states: current.states, layout: layout)
            let storedJSON = try records.schemaData(in: storage)
            let newJSON = newSchema.jsonData()
            // The same schema, every index ready, nothing left over: nothing to write, and
            // nobody to wake (every open of a store with its schema comes here).
            if let storedJSON, storedJSON.elementsEqual(newJSON), current.unready.isEmpty,
                current.states.allSatisfy({ current.maintainer($0.key)?.definitionJSON == $0.value.definition })
            {
                return
            }
            // The collections whose results can change: those added, removed or declared
            // differently, and those of indexes dropped or built.
            var changed = Set(
                Set(current.schema.collections.keys).union(newSchema.collections.keys)
                    .filter { current.schema.collections[$0] != newSchema.collections[$0] }.map { Array($0.utf8) })
            // States that no index of the stored schema owns with that definition (left by an
            // apply that failed or was interrupted) are garbage: nothing kept them up to date.
            for (identity, state) in current.states
            where current.maintainer(identity)?.definitionJSON != state.definition {
                try dropState(identity)
                try storage.deleteAll(in: layout.subspace(of: identity).range)
                changed.insert(Array(identity.collection.utf8))
            }
            // Drop what is gone, changed or unfinished.
            var dropped: [any IndexMaintainer] = []
            for maintainer in current.schema.collections.keys.flatMap({ current.maintainers(of: $0) }) {
                let kept = target.maintainer(maintainer.identity)
                if kept == nil || kept?.definitionJSON != maintainer.definitionJSON
                    || !current.isReady(maintainer.identity)
                {
                    try drop(maintainer)
                    if current.isReady(maintainer.identity) { dropped.append(maintainer) }
                }
            }
            // Build what is not ready under the new schema. On failure, undo: drop what this
            // run built, and rebuild the stored schema's indexes it dropped (the documents
            // have not changed since they were exact), so the store is as it was.
            var built: [any IndexMaintainer] = []
            do {
                for maintainer in try catalog(newSchema).unready {
                    built.append(maintainer)
                    changed.insert(Array(maintainer.identity.collection.utf8))
                    try build(maintainer, progress: progress)
                }
            } catch {
                for maintainer in built { try? drop(maintainer) }
                for maintainer in dropped { try rebuild(maintainer, progress: progress) }
                // Observers that read while an index was missing look again.
                hub.wake(changed)
                throw error
            }
            for maintainer in dropped { changed.insert(Array(maintainer.identity.collection.utf8)) }
            let batch = WriteBatch()
            records.putSchema(newJSON, format: try recordedFormat(), generation: try nextGeneration(), in: batch)
            // The store exists from here: how its typed documents store dates is recorded
            // with it (a store opened on an empty database had nothing to record it in).
            if try !holdsOwnDateRecord() { records.putDateStrategy(dateStrategy, in: batch) }
            try storage.write(batch, sync: true)
            // A collection may have gone, or a query may plan differently: its observers look again.
            hub.wake(changed)
        }
    }

    /// The latest catalog as it would be with `schema` stored.
    private func catalog(_ schema: DocumentSchema) throws -> CompiledCatalog {
        let current = try catalog()
        return CompiledCatalog(generation: current.generation, schema: schema, states: current.states, layout: layout)
    }

    /// The generation the next catalog change records. REQUIRES: the writer lock.
    package func nextGeneration() throws -> Int64 {
        try records.generation(in: storage).saturatingAdd(1)
    }

    /// Removes an index's entries and state. REQUIRES: the writer lock.
    func drop(_ maintainer: any IndexMaintainer) throws {
        try dropState(maintainer.identity)
        try storage.deleteAll(in: maintainer.keyRange)
    }

    private func dropState(_ identity: IndexIdentity) throws {
        let batch = WriteBatch()
        records.deleteState(of: identity, generation: try nextGeneration(), in: batch)
        try storage.write(batch, sync: false)
    }

    /// Drops and builds one index. REQUIRES: the writer lock.
    func rebuild(_ maintainer: any IndexMaintainer, progress: ((IndexBuildProgress) -> Void)?) throws {
        try drop(maintainer)
        try build(maintainer, progress: progress)
    }

    /// Builds an index from every document of its collection, then marks it ready.
    /// REQUIRES: the writer lock.
    func build(_ maintainer: any IndexMaintainer, progress: ((IndexBuildProgress) -> Void)?) throws {
        let identity = maintainer.identity
        let building = IndexState(
            phase: .building, definition: maintainer.definitionJSON, format: maintainer.formatVersion)
        let start = WriteBatch()
        records.putState(building, of: identity, generation: try nextGeneration(), in: start)
        try storage.write(start, sync: false)
        try storage.deleteAll(in: maintainer.keyRange)

        let docs = layout.documents(identity.collection)
        let total = try storage.count(docs.range)
        func report(_ done: Int) {
            progress?(
                IndexBuildProgress(collection: identity.collection, index: identity.name, done: done, total: total))
        }
        report(0)
        let snapshot = try storage.snapshotReader()
        defer { snapshot.release() }
        let entries = try snapshot.scan(docs.range, order: .forward)
        let context = IndexUpdateContext(storage: storage, batch: WriteBatch())
        context.building = true
        var done = 0
        var flushThreshold = state.withLock { $0.buildFlushThreshold }
        var batchLimit = 10_000
        // A store that bounds its transactions (etcd) gets batches a quarter of its bound, so
        // that one document's entries and a text index's flush still fit.
        if let bound = storage.maximumBatchCount {
            batchLimit = min(batchLimit, max(1, bound / 4))
            flushThreshold = min(flushThreshold, max(1, bound / 4))
        }
        while let entry = try entries.next({ k, v in (try docs.unpack(Array(k)), Array(v)) }) {
            done += 1
            guard entry.0.count == 1 else { continue }
            let document = try documentValue(entry.1, collection: identity.collection, id: entry.0[0])
            try maintainer.update(id: entry.0[0], old: nil, new: document, context: context)
            if context.batch.count >= batchLimit || context.pendingWork >= flushThreshold {
                try maintainer.flush(context: context)
                try storage.write(context.batch, sync: false)
                context.batch.clear()
                context.pendingWork = 0
            }
            if done % 1000 == 0 { report(done) }
        }
        try maintainer.finish(context: context)
        let ready = IndexState(phase: .ready, definition: maintainer.definitionJSON, format: maintainer.formatVersion)
        records.putState(ready, of: identity, generation: try nextGeneration(), in: context.batch)
        try storage.write(context.batch, sync: true)
        report(done)
    }

    /// The bytes a document is stored as: its binary form (``BinaryJSON``, store format 4).
    /// - Throws: `.invalidArgument` for a number that is not finite or nesting too deep.
    package static func storedBytes(_ document: JSONValue) throws -> [UInt8] {
        try BinaryJSON.encode(document)
    }

    /// The value of stored bytes: the binary form, or JSON text (written by format 3 and
    /// earlier, which a layered base may still hold), told apart by the first byte.
    /// - Throws: `.decoding` naming where the bytes are damaged.
    package static func parseStored(_ bytes: [UInt8]) throws -> JSONValue {
        try bytes.withUnsafeBytes { try parseStored(buffer: $0) }
    }

    /// ``parseStored(_:)`` of bytes read in place.
    /// - Parameter keys: the member keys of documents decoded before, shared by the
    ///   documents of one request (``BinaryJSON/decode(buffer:keys:)``).
    package static func parseStored(buffer bytes: UnsafeRawBufferPointer, keys: BinaryJSON.KeyCache? = nil) throws
        -> JSONValue
    {
        guard BinaryJSON.isBinary(bytes) else { return try JSONValue(parsing: bytes) }
        return try BinaryJSON.decode(buffer: bytes.assumingMemoryBound(to: UInt8.self), keys: keys)
    }

    /// A `T` decoded from stored bytes: straight from the binary form, without building a
    /// ``JSONValue``; JSON text is parsed first.
    /// - Throws: `.decoding` when the document does not decode as `T`;
    ///   ``BinaryJSON/Damage`` (or `.decoding`, for JSON text) when its bytes are damaged.
    package static func decodeStored<T: Decodable>(_ type: T.Type, bytes: [UInt8], dates: DateStrategy) throws -> T {
        try bytes.withUnsafeBytes { try decodeStored(type, buffer: $0, dates: dates) }
    }

    /// ``decodeStored(_:bytes:dates:)`` of bytes read in place: nothing points into them once
    /// the call returns.
    package static func decodeStored<T: Decodable>(
        _ type: T.Type, buffer bytes: UnsafeRawBufferPointer, dates: DateStrategy
    )
        throws -> T
    {
        guard BinaryJSON.isBinary(bytes) else {
            let value: JSONValue
            do { value = try JSONValue(parsing: bytes) } catch let e as KVDocsError {
                throw BinaryJSON.Damage(error: e)
            }
            return try decodeStored(type, value, dates: dates)
        }
        do {
            return try BinaryJSONDecoder.decode(T.self, from: bytes.assumingMemoryBound(to: UInt8.self), dates: dates)
        } catch let error as DecodingError {
            throw KVDocsError(.decoding, "stored document does not decode as \(T.self): \(error.summary)")
        } catch let error as KVDocsError {
            throw error
        } catch let damage as BinaryJSON.Damage {
            throw damage
        } catch {
            throw KVDocsError(.decoding, "stored document does not decode as \(T.self): \(error)")
        }
    }

    /// The document stored under `key` (whose id starts at `idOffset`), read.
    /// - Parameter cached: whether the read goes through ``documentCache`` (a request's
    ///   reads); reads that visit every document once (builds, migrations) do not.
    /// - Throws: `.corruption` naming the document and its key when its bytes are damaged.
    package func documentValue(
        _ bytes: [UInt8], collection: String, key: [UInt8], idOffset: Int, cached: Bool = false
    ) throws -> JSONValue {
        try bytes.withUnsafeBytes {
            try documentValue(buffer: $0, collection: collection, key: key, idOffset: idOffset, cached: cached)
        }
    }

    /// ``documentValue(_:collection:key:idOffset:cached:)`` of bytes read in place.
    package func documentValue(
        buffer bytes: UnsafeRawBufferPointer, collection: String, key: [UInt8], idOffset: Int,
        keys: BinaryJSON.KeyCache? = nil, cached: Bool = false
    ) throws -> JSONValue {
        do {
            guard cached else { return try Self.parseStored(buffer: bytes, keys: keys) }
            return try documentCache.value(key: key, bytes: bytes) { try Self.parseStored(buffer: bytes, keys: keys) }
        } catch let e as KVDocsError {
            let id = (try? Tuple(decoding: key[idOffset...]).elements.first).map { "\($0)" } ?? "?"
            throw invalidDocument(e, id: id, collection: collection, key: key)
        }
    }

    /// The document stored under `key` (whose id starts at `idOffset`) decoded as `T` from
    /// its bytes, read in place.
    /// - Throws: `.decoding` when it does not decode as `T`; `.corruption` naming the
    ///   document and its key when its bytes are damaged.
    func decodeDocument<T: Decodable>(
        _ type: T.Type, buffer bytes: UnsafeRawBufferPointer, collection: String, key: [UInt8], idOffset: Int
    ) throws -> T {
        do {
            return try Self.decodeStored(type, buffer: bytes, dates: dateStrategy)
        } catch let damage as BinaryJSON.Damage {
            throw damagedDocument(damage.error, collection: collection, key: key, idOffset: idOffset)
        }
    }

    /// The error for a document whose stored bytes are damaged.
    func damagedDocument(_ e: KVDocsError, collection: String, key: [UInt8], idOffset: Int) -> KVDocsError {
        let id = (try? Tuple(decoding: key[idOffset...]).elements.first).map { "\($0)" } ?? "?"
        return invalidDocument(e, id: id, collection: collection, key: key)
    }

    /// The document of `collection` with primary key `id`, read from its stored `bytes`.
    /// - Throws: `.corruption` naming the document when its bytes are damaged.
    package func documentValue(_ bytes: [UInt8], collection: String, id: TupleElement) throws -> JSONValue {
        try bytes.withUnsafeBytes { try documentValue(buffer: $0, collection: collection, id: id) }
    }

    /// ``documentValue(_:collection:id:)`` of bytes read in place.
    package func documentValue(buffer bytes: UnsafeRawBufferPointer, collection: String, id: TupleElement) throws
        -> JSONValue
    {
        do {
            return try Self.parseStored(buffer: bytes)
        } catch let e as KVDocsError {
            throw invalidDocument(e, id: "\(id)", collection: collection, key: layout.document(collection, id))
        }
    }

    /// ``documentValue(buffer:collection:id:)`` of the document stored under `key`, through
    /// ``documentCache`` (a get, a write's read of the document it replaces).
    package func documentValue(
        buffer bytes: UnsafeRawBufferPointer, collection: String, id: TupleElement, key: [UInt8]
    ) throws -> JSONValue {
        do {
            return try documentCache.value(key: key, bytes: bytes) { try Self.parseStored(buffer: bytes) }
        } catch let e as KVDocsError {
            throw invalidDocument(e, id: "\(id)", collection: collection, key: key)
        }
    }

    /// The document of `collection` with primary key `id` decoded as `T` from its stored
    /// bytes, read in place.
    /// - Throws: `.decoding` when it does not decode as `T`; `.corruption` naming the
    ///   document and its key when its bytes are damaged.
    func decodeDocument<T: Decodable>(
        _ type: T.Type, buffer bytes: UnsafeRawBufferPointer, collection: String, id: TupleElement
    ) throws -> T {
        do {
            return try Self.decodeStored(type, buffer: bytes, dates: dateStrategy)
        } catch let damage as BinaryJSON.Damage {
            throw invalidDocument(
                damage.error, id: "\(id)", collection: collection, key: layout.document(collection, id))
        }
    }

    private func invalidDocument(_ e: KVDocsError, id: String, collection: String, key: [UInt8]) -> KVDocsError {
        KVDocsError(
            .corruption, "document \(id) of \"\(collection)\" is not valid JSON: \(e.message)", path: storage.name,
            key: key)
    }
}
