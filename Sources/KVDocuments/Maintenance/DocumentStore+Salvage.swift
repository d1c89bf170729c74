import Foundation
import KVKeys
import KVStorage
import KVSupport

/// What ``DocumentStore/salvage(quarantine:progress:)`` did.
public struct SalvageReport: Sendable, CustomStringConvertible {
    /// A stored document that could not be read, moved to the quarantine collection.
    public struct QuarantinedDocument: Sendable, Hashable {
        /// The collection it was in.
        public var collection: String
        /// Its id, when its key still holds one; `nil` when the key itself is damaged.
        public var id: JSONValue?
        /// The id of its record in the quarantine collection.
        public var quarantineID: String
        /// Why it could not be read.
        public var reason: String
    }

    /// The name of the quarantine collection.
    public var quarantine: String
    /// Documents read and kept, by collection.
    public var kept: [String: Int] = [:]
    /// Documents moved to the quarantine collection, in key order within each collection.
    public var quarantined: [QuarantinedDocument] = []
    /// The indexes rebuilt, as `collection.index`.
    public var rebuiltIndexes: [String] = []
    /// The catalog's records that could not be read, each with why and what was done, before
    /// the store was opened: an index's state removed (every index is rebuilt, its state
    /// written again), the sequence number set from the change feed, the generation reset.
    public var catalogRepairs: [String] = []
    /// ``DocumentStore/verify(collection:)`` after the salvage.
    public var verification = VerifyReport()

    /// The documents lost from their collections (each kept in the quarantine collection).
    public var lost: Int { quarantined.count }

    /// A line of counts, then a line per quarantined document.
    public var description: String {
        let keptTotal = kept.values.reduce(0, +)
        var lines = [
            "salvage: kept \(keptTotal) documents, moved \(lost) to \"\(quarantine)\", rebuilt \(rebuiltIndexes.count) indexes; verify: \(verification.isClean ? "ok" : "\(verification.missingEntries) missing, \(verification.danglingEntries) dangling, \(verification.badDocuments) bad")"
        ]
        for repair in catalogRepairs { lines.append("  catalog: \(repair)") }
        for q in quarantined {
            lines.append(
                "  \(q.collection) \(q.id?.compactDescription ?? "(damaged key)") → \(q.quarantineID): \(q.reason)")
        }
        return lines.joined(separator: "\n")
    }
}

extension DocumentStore {
    /// Makes a damaged store fully usable again, after ``LevelDB/repair(path:options:)``
    /// or whenever ``verify(collection:)`` reports bad documents:
    ///
    /// 1. Every stored document that cannot be read (bytes that are not JSON, a key that
    ///    does not hold one id, a primary key that differs from the key's) is moved, with
    ///    its raw bytes, into the collection `quarantine`. Each move is one atomic write that
    ///    adds the quarantine record, removes the document and records its deletion in the
    ///    change feed, so a crash part-way loses nothing and a second run finishes the job.
    /// 2. Every index of every collection is rebuilt from the documents that remain.
    /// 3. The store is verified, and the report says what was kept and what was moved.
    ///
    /// A quarantine record is a document with the fields `id` (`"COLLECTION:KEYHEX"`),
    /// `collection`, `document_id` (when the key still holds one), `key_hex`, `value_hex`,
    /// `value_text` (the bytes as UTF-8, with invalid sequences replaced) and `reason`.
    /// The quarantine collection is added to the schema if missing (primary key `id`, no
    /// indexes); it is never itself salvaged.
    ///
    /// - Parameters:
    ///   - quarantine: the collection that receives unreadable documents.
    ///   - progress: called while indexes are rebuilt.
    /// - Throws: `.schema` when `quarantine` names a collection whose primary key is not
    ///   `id`; `.unsupportedCompression`, touching nothing, when this build has no Snappy and
    ///   a table of the database holds Snappy-compressed blocks (they are not damaged); storage
    ///   errors (`.corruption` when the store's own tables are still damaged: run
    ///   ``LevelDB/repair(path:options:)`` first).
    @discardableResult
    public func salvage(quarantine: String = "quarantine", progress: ((IndexBuildProgress) -> Void)? = nil) throws
        -> SalvageReport
    {
        // A build without Snappy would read every Snappy-compressed block as damage and
        // quarantine its documents: such a database is refused before anything is read.
        for path in Self.databasePaths(of: storage) {
            try SnappyTables.refuse("salvage", at: path, thorough: true)
        }
        var report = SalvageReport(quarantine: quarantine)
        // Documents moved, a collection added, every index rebuilt: every observer looks again.
        defer { hub.publishToAll() }
        var damaged: [(collection: String, key: [UInt8], value: [UInt8], id: TupleElement?, reason: String)] = []
        var schema = try storage.withWriteTransaction {
            let schema = try catalog().schema
            if let existing = schema.collections[quarantine], existing.primaryKey != "id" {
                throw KVDocsError(
                    .schema,
                    "salvage: the quarantine collection \"\(quarantine)\" has primary key \"\(existing.primaryKey)\"; it needs \"id\"",
                    path: storage.name)
            }
            for name in schema.collections.keys.sorted(by: { JSONObject.compareKeys($0, $1) < 0 })
            where !name.hasSameCodePoints(as: quarantine) {
                let collectionSchema = try schema.collection(name)
                let docs = layout.documents(name)
                let snapshot = try storage.snapshotReader()
                defer { snapshot.release() }
                let entries = try snapshot.scan(docs.range, order: .forward)
                var kept = 0
                while let (key, value) = try entries.next({ k, v in (Array(k), Array(v)) }) {
                    let elements = try? docs.unpack(key)
                    guard let elements, elements.count == 1 else {
                        damaged.append((name, key, value, nil, "the key does not hold one id"))
                        continue
                    }
                    let id = elements[0]
                    let document: JSONValue
                    do {
                        document = try DocumentStore.parseStored(value)
                    } catch let error as KVDocsError {
                        damaged.append((name, key, value, id, "not valid JSON: \(error.message)"))
                        continue
                    }
                    let stored = document[collectionSchema.primaryKey].flatMap {
                        try? Self.idElement($0, collection: name, primaryKey: collectionSchema.primaryKey)
                    }
                    guard stored == id else {
                        damaged.append(
                            (
                                name, key, value, id,
                                "its primary key \"\(collectionSchema.primaryKey)\" is \(document[collectionSchema.primaryKey]?.compactDescription ?? "missing"), not the key's \(Self.idValue(id).compactDescription)"
                            ))
                        continue
                    }
                    kept += 1
                }
                report.kept[name] = kept
            }
            return schema
        }
        try storage.withWriteTransaction {
            if !damaged.isEmpty && schema.collections[quarantine] == nil {
                // A collection without indexes needs no build: store the schema directly
                // (``apply(_:progress:)`` would first finish interrupted index builds, which
                // stop at the damaged documents).
                schema.collections[quarantine] = CollectionSchema(primaryKey: "id")
                let batch = WriteBatch()
                records.putSchema(
                    schema.jsonData(), format: try recordedFormat(), generation: try nextGeneration(), in: batch)
                try storage.write(batch, sync: true)
            }
            let hex = { (bytes: [UInt8]) in bytes.map { String($0, radix: 16).leftPadded(to: 2) }.joined() }
            for chunk in stride(from: 0, to: damaged.count, by: 256) {
                let context = try WriteContext(store: self)
                // A writer may have replaced a damaged document since the scan: leave it.
                for item in damaged[chunk..<min(chunk + 256, damaged.count)]
                where try storage.value(forKey: item.key) == item.value {
                    let quarantineID = "\(item.collection):\(hex(item.key))"
                    var record: [String: JSONValue] = [
                        "id": .string(quarantineID),
                        "collection": .string(item.collection),
                        "key_hex": .string(hex(item.key)),
                        "value_hex": .string(hex(item.value)),
                        "value_text": .string(String(decoding: item.value, as: UTF8.self)),
                        "reason": .string(item.reason)
                    ]
                    if let id = item.id { record["document_id"] = Self.idValue(id) }
                    _ = try context.write(quarantine, .upsert, document: .object(JSONObject(record)), id: nil)
                    context.removeDamaged(item.collection, key: item.key, id: item.id)
                    report.quarantined.append(
                        .init(
                            collection: item.collection, id: item.id.map(Self.idValue),
                            quarantineID: quarantineID, reason: item.reason))
                }
                try context.commit(sync: true)
            }

            let current = try catalog()
            for name in current.schema.collections.keys.sorted(by: { JSONObject.compareKeys($0, $1) < 0 }) {
                for maintainer in current.maintainers(of: name) {
                    try rebuild(maintainer, progress: progress)
                    report.rebuiltIndexes.append("\(name).\(maintainer.identity.name)")
                }
            }
        }
        report.verification = try verify()
        return report
    }
}

extension DocumentStore {
    /// Opens the store in `database` without finishing interrupted index builds, then runs
    /// ``salvage(quarantine:progress:)``: for a store that cannot be opened because an index
    /// build meets a damaged document, or because a catalog record salvage can rebuild
    /// cannot be read (`init` then throws `.corruption` naming it; see
    /// ``remedy(for:root:)``). Those records are repaired first, in one synced write, and
    /// listed in ``SalvageReport/catalogRepairs``:
    /// - an index's state is removed: salvage rebuilds every index of the schema and writes
    ///   their states again;
    /// - the sequence number is set to the change feed's last (0 for none);
    /// - the catalog generation is set anew (no reader of this process has it cached: the
    ///   store could not be opened).
    ///
    /// A damaged stored schema or format version is not salvaged: nothing else records them
    /// (``init(database:schema:root:dates:progress:)`` with the schema replaces the schema).
    ///
    /// <!-- doc-code: preamble=examples -->
    /// ```swift
    /// let (store, report) = try DocumentStore.salvage(database: db)
    /// print(report)
    /// ```
    /// - Returns: the store, usable, and what the salvage did.
    /// - Throws: what ``salvage(quarantine:progress:)`` throws; `.corruption` for a catalog
    ///   record salvage cannot rebuild; storage errors.
    public static func salvage(
        database: LevelDB, root: Subspace = Subspace(), quarantine: String = "quarantine",
        progress: ((IndexBuildProgress) -> Void)? = nil
    ) throws -> (DocumentStore, SalvageReport) {
        try SnappyTables.refuse("salvage", at: database.path, thorough: true)
        let repairs = try repairCatalog(database, root: root)
        let store = try DocumentStore(
            database: database, schema: nil, root: root, finishingBuilds: false, progress: progress)
        var report = try store.salvage(quarantine: quarantine, progress: progress)
        report.catalogRepairs = repairs
        return (store, report)
    }

    /// The LevelDB directories `storage` reads: the database, or a layered store's user
    /// database and base copy; none for other stores.
    private static func databasePaths(of storage: any KeyValueStore) -> [String] {
        if let database = storage as? LevelDB { return [database.path] }
        if let layers = storage as? LayeredKeyValueStore { return [layers.user.path, layers.base.path] }
        return []
    }

    /// Repairs the catalog records of the store under `root` that salvage can rebuild and
    /// that cannot be read, in one synced write; returns what it did.
    private static func repairCatalog(_ database: LevelDB, root: Subspace) throws -> [String] {
        let records = DocumentCatalog(root: root)
        let layout = Layout(root: root)
        let batch = WriteBatch()
        var repairs: [String] = []
        for (key, reason) in try records.unreadableIndexStates(IndexKindRegistry.all, in: database) {
            batch.delete(key)
            repairs.append("removed an index state that cannot be read: \(reason)")
        }
        func unreadable(_ key: [UInt8]) throws -> Bool {
            guard let bytes = try database.get(key) else { return false }
            return (try? Tuple(decoding: bytes).int64(at: 0)) == nil
        }
        if try unreadable(records.sequenceKey) {
            let last = try database.entries(layout.changes.range, order: .reverse, limit: 1).next()
            let sequence = last.flatMap { try? layout.changes.unpack($0.key).int64(at: 0) } ?? 0
            records.putSequence(sequence, in: batch)
            repairs.append("the sequence number was not an integer: set to \(sequence), the change feed's last")
        }
        var generation = (try? records.generation(in: database)) ?? 0
        if try unreadable(records.generationKey) {
            generation = 0
            repairs.append("the generation was not an integer: set anew")
        }
        guard !repairs.isEmpty else { return [] }
        records.deleteRecords([], generation: generation.saturatingAdd(1), in: batch)
        try database.write(batch, sync: true)
        return repairs
    }
}

extension DocumentStore {
    /// What makes a store open again after opening it threw `error`.
    public enum OpenRemedy: Sendable, Hashable {
        /// ``salvage(database:root:quarantine:progress:)``: an index build met a damaged
        /// document, or an index's state, the sequence number or the generation in the
        /// catalog cannot be read.
        case salvage
        /// LevelDB's repair (``LevelDB/repair(path:options:)``), then salvage: LevelDB
        /// itself reports damage (a checksum that does not match, a missing file).
        case repair
        /// Opening with the schema again (``init(database:schema:root:dates:progress:)`` with a
        /// schema): the stored schema cannot be read.
        case reloadSchema
        /// Nothing this library does: a catalog record that only the database's backup
        /// restores (the format version), or an error that is not damage to the store.
        case none
    }

    /// What makes the store under `root` open again after its open threw `error`.
    ///
    /// <!-- doc-code: preamble=examples -->
    /// ```swift
    /// var opened: DocumentStore?
    /// do { opened = try DocumentStore(database: db) } catch let e as KVDocsError {
    ///     if DocumentStore.remedy(for: e) == .salvage { opened = try DocumentStore.salvage(database: db).0 }
    /// }
    /// ```
    public static func remedy(for error: KVDocsError, root: Subspace = Subspace()) -> OpenRemedy {
        guard error.kind == .corruption || error.kind == .ioError else { return .none }
        if error.message.hasPrefix("Corruption: ") || error.message.hasPrefix("IO error: ") { return .repair }
        guard error.kind == .corruption else { return .none }
        let records = DocumentCatalog(root: root)
        guard let key = error.key else { return .salvage }
        if key == records.schemaKey { return .reloadSchema }
        if records.isIndexStateKey(key) || key == records.sequenceKey || key == records.generationKey {
            return .salvage
        }
        return records.isCatalogKey(key) ? .none : .salvage
    }
}

extension DocumentStore.WriteContext {
    /// Removes a stored document that cannot be read, without touching its index entries
    /// (the caller rebuilds the indexes), and records the deletion in the change feed.
    func removeDamaged(_ collection: String, key: [UInt8], id: TupleElement?) {
        batch.delete(key)
        documents[ByteKey(key)] = .some(nil)
        sequence = sequence.saturatingAdd(1)
        let element = id ?? .bytes(key)
        batch.put(
            store.layout.change(sequence),
            Tuple([.string(collection), element, .string(DocumentChange.Operation.delete.rawValue)]))
        changes.append(
            DocumentChange(
                sequence: sequence, collection: collection, id: DocumentStore.idValue(element), operation: .delete))
    }
}
