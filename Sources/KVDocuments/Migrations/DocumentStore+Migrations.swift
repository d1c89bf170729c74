import Foundation
import KVKeys
import KVStorage
import KVSupport

extension DocumentStore {
    /// Opens the document layer of `database`, applies `schema`, then runs the data
    /// migrations of `migrator` the database has not run yet, in order, before returning.
    /// See ``DocumentMigrator`` for the guarantees.
    ///
    /// - Parameters:
    ///   - database: as for ``init(database:schema:root:dates:progress:)``.
    ///   - schema: as for ``init(database:schema:root:dates:progress:)``; applied before the
    ///     migrations run, so they write under it.
    ///   - root: as for ``init(database:schema:root:dates:progress:)``.
    ///   - dates: as for ``init(database:schema:root:dates:progress:)``.
    ///   - migrator: the migrations, in order.
    ///   - progress: called while indexes are built.
    ///   - migrationProgress: called as each migration starts, after each batch it writes
    ///     or undoes, and when it completes.
    /// - Throws: `.notSupported` when the database recorded a migration `migrator` does not
    ///   register (it was migrated by a newer version of the app; nothing is changed); what
    ///   a migration throws (that migration is undone, those before it stay done);
    ///   otherwise as ``init(database:schema:root:dates:progress:)``.
    public convenience init(
        database: LevelDB, schema: DocumentSchema? = nil, root: Subspace = Subspace(), dates: DateStrategy? = nil,
        migrator: DocumentMigrator,
        progress: ((IndexBuildProgress) -> Void)? = nil,
        migrationProgress: ((MigrationProgress) -> Void)? = nil
    ) throws {
        try self.init(
            storage: database, database: database, schema: schema, root: root, dates: dates, finishingBuilds: true,
            migrator: migrator, progress: progress, migrationProgress: migrationProgress)
    }

    /// The names of the data migrations this database has run to their end, in the order
    /// they ran.
    public func appliedMigrations() throws -> [String] {
        try Self.appliedMigrations(storage, records).map(\.name)
    }

    static func appliedMigrations(_ reader: some KeyValueReader, _ records: DocumentCatalog) throws -> [(
        name: String, position: Int64
    )] {
        let cursor = try reader.scan(records.migrations.range, order: .forward)
        var applied: [(name: String, position: Int64)] = []
        while let (key, value) = try cursor.next({ k, v in (Array(k), Array(v)) }) {
            do {
                applied.append(
                    (try records.migrations.unpack(key).string(at: 0), try Tuple(decoding: value).int64(at: 0)))
            } catch {
                throw KVDocsError(
                    .corruption, "a migration record of the catalog cannot be read: \(error)", path: reader.name,
                    key: key)
            }
        }
        return applied.sorted { $0.position < $1.position }
    }

    /// Refuses a database that ran migrations `migrator` does not know.
    func checkMigrationsKnown(_ migrator: DocumentMigrator) throws {
        let known = migrator.names
        for applied in try Self.appliedMigrations(storage, records)
        where !known.contains(where: { $0.hasSameCodePoints(as: applied.name) }) {
            throw KVDocsError(
                .notSupported,
                "the database \(storage.name) was migrated by a newer version of the app: its migration \"\(applied.name)\" is not among the \(known.count) registered here; open it with that version or later",
                path: storage.name)
        }
    }

    /// Runs the migrations of `migrator` not yet recorded, in registration order (a
    /// migration registered between two that already ran runs after them).
    func runMigrations(_ migrator: DocumentMigrator, progress: ((MigrationProgress) -> Void)?) throws {
        let applied = try Self.appliedMigrations(storage, records)
        let pending = migrator.migrations.filter { m in !applied.contains { $0.name.hasSameCodePoints(as: m.name) } }
        var position = (applied.map(\.position).max() ?? -1) + 1
        for (index, migration) in pending.enumerated() {
            let count = pending.count
            let report = { (phase: MigrationProgress.Phase, documents: Int) -> Void in
                progress?(
                    MigrationProgress(
                        name: migration.name, index: index, count: count, phase: phase, documents: documents))
            }
            try run(migration, position: position, batchSize: migrator.batchSize, report: report)
            position += 1
        }
    }

    /// Runs one migration under the exclusive writer lock: its journal header (and format 3)
    /// first, then its batches with their undo records, then its record. If it throws, it is
    /// undone and its error rethrown.
    ///
    /// Its batches are not published while it runs: observers and change streams see
    /// nothing of a migration until it completes (then its changes are delivered in order),
    /// and nothing of one that was undone.
    private func run(
        _ migration: DocumentMigrator.Migration, position: Int64, batchSize: Int,
        report: @escaping (MigrationProgress.Phase, Int) -> Void
    ) throws {
        var failure: (any Error)?
        try storage.withWriteTransaction {
            let start = try storedSequence()
            let header = WriteBatch()
            header.put(records.migratingKey, Tuple([.string(migration.name), .int(start), .string(Self.phaseRunning)]))
            records.putFormat(Self.formatVersion, in: header)
            try storage.write(header, sync: true)
            report(.running, 0)
            let journal = MigrationJournal(records: records, storage: storage, layout: layout)
            var context: MigrationContext?
            do {
                let running = try MigrationContext(store: self, journal: journal, batchSize: batchSize) {
                    report(.running, $0)
                }
                context = running
                try migration.body(running)
                try running.flush()
            } catch {
                do {
                    try rollBack(name: migration.name, start: start, restoring: false, batchSize: batchSize) {
                        report(.rollingBack, $0)
                    }
                } catch let undoError {
                    throw KVDocsError(
                        (undoError as? KVDocsError)?.kind ?? .ioError,
                        "migration \"\(migration.name)\" failed (\(error)), and undoing it failed too (\(undoError)); its journal is kept, and the next open of the store finishes undoing it",
                        path: storage.name)
                }
                if var refused = error as? KVDocsError {
                    refused.message =
                        "migration \"\(migration.name)\" failed and was undone (the database is as it was before it): \(refused.message)"
                    failure = refused
                } else {
                    failure = error
                }
                return
            }
            let done = WriteBatch()
            done.put(records.migrations.pack([.string(migration.name)]), Tuple([.int(position)]))
            done.delete(records.migratingKey)
            try storage.write(done, sync: true)
            // The journal is garbage now. Should removing it fail, the next open removes it
            // (undo records without a header are never replayed).
            _ = try? storage.deleteAll(in: records.undo.range)
            try deliverChanges(after: start, touched: context?.touched ?? [])
            report(.completed, context?.written ?? 0)
        }
        if let failure {
            // Nothing changed in the end, but an observer may have read while it ran.
            hub.publishToAll()
            throw failure
        }
    }

    /// Delivers a completed migration's change records (those after `start`) to the change
    /// streams, in order and in bounded chunks, and wakes the observers of the collections
    /// it wrote. REQUIRES: the writer lock.
    private func deliverChanges(after start: Int64, touched: Set<[UInt8]>) throws {
        guard hub.hasStreams else {
            hub.wake(touched)
            return
        }
        var since = start
        while true {
            let chunk = try changes(since: since, limit: 10_000)
            guard let last = chunk.last else { break }
            hub.publish(chunk)
            since = last.sequence
        }
    }

    static let phaseRunning = "running"
    static let phaseRestoring = "restoring"

    /// Undoes a migration the process died in (its journal header is still there), or
    /// removes the undo records a completed one left. Runs when any store opens, under the
    /// writer lock (another store on the same database may be finishing that migration).
    /// - Throws: `.notSupported` for a layered store holding a journal (open the database
    ///   that holds it on its own to undo it); `.corruption` naming the key of a journal
    ///   record that cannot be read.
    func recoverInterruptedMigration(progress: ((MigrationProgress) -> Void)?) throws {
        // Most opens find nothing, and take no lock for it.
        guard try storage.value(forKey: records.migratingKey) != nil || storage.count(records.undo.range) > 0 else {
            return
        }
        if storage is LayeredKeyValueStore {
            throw KVDocsError(
                .notSupported,
                "\(storage.name) holds the journal of an interrupted data migration (in its base or its user layer); open that database on its own with DocumentStore(database:) to undo the migration, then open the layers again",
                path: storage.name, key: records.migratingKey)
        }
        var undone = false
        try storage.withWriteTransaction {
            guard let header = try storage.value(forKey: records.migratingKey) else {
                // A completed migration whose journal was not removed.
                _ = try storage.deleteAll(in: records.undo.range)
                return
            }
            let name: String, start: Int64, phase: String
            do {
                let t = try Tuple(decoding: header)
                (name, start, phase) = (try t.string(at: 0), try t.int64(at: 1), try t.string(at: 2))
            } catch {
                throw KVDocsError(
                    .corruption, "the journal header of an interrupted migration cannot be read: \(error)",
                    path: storage.name, key: records.migratingKey)
            }
            guard phase == Self.phaseRunning || phase == Self.phaseRestoring else {
                throw KVDocsError(
                    .corruption,
                    "the journal header of interrupted migration \"\(name)\" has an unknown phase \"\(phase)\"",
                    path: storage.name, key: records.migratingKey)
            }
            try rollBack(name: name, start: start, restoring: phase == Self.phaseRestoring, batchSize: 1000) {
                progress?(MigrationProgress(name: name, index: 0, count: 1, phase: .rollingBack, documents: $0))
            }
            undone = true
        }
        if undone { hub.publishToAll() }
    }

    /// One undo record: the document's collection and id, and its bytes before the
    /// migration (`nil`: there was none).
    private func undoRecord(_ key: [UInt8], _ value: [UInt8]) throws -> (
        collection: String, id: TupleElement, original: [UInt8]?
    ) {
        do {
            let t = try records.undo.unpack(key)
            let original = try Tuple(decoding: value)
            return (
                try t.string(at: 0), try t.element(at: 1), original.elements.isEmpty ? nil : try original.bytes(at: 0)
            )
        } catch {
            throw KVDocsError(
                .corruption, "an undo record of the interrupted migration's journal cannot be read: \(error)",
                path: storage.name, key: key)
        }
    }

    /// Restores every document the journal recorded, with its index entries, removes the
    /// migration's change records and the journal. Each step is resumable: a crash during
    /// it leaves a journal the next open finishes undoing.
    ///
    /// First every touched document is deleted, then the originals are written back (their
    /// stored bytes exactly), so that unique values the migration moved between documents
    /// never collide on the way. Each pass reads the journal once, from where its last
    /// batch ended.
    /// REQUIRES: the exclusive writer lock is held.
    private func rollBack(name: String, start: Int64, restoring: Bool, batchSize: Int, report: (Int) -> Void) throws {
        let undo = records.undo
        let batchSize = max(1, batchSize)
        // Undoing writes neither change records nor publishes: the feed goes back to `start`.
        func undoContext() throws -> WriteContext {
            let context = try WriteContext(store: self)
            context.recordsChanges = false
            context.publishes = false
            return context
        }
        report(0)
        if !restoring {
            // Phase 1: delete what the migration left of every document it touched.
            var deleted = 0
            var context = try undoContext()
            let cursor = try storage.scan(undo.range, order: .forward)
            while let (key, value) = try cursor.next({ k, v in (Array(k), Array(v)) }) {
                let record = try undoRecord(key, value)
                _ = try context.write(record.collection, .delete, document: nil, id: Self.idValue(record.id))
                deleted += 1
                if context.writes >= batchSize {
                    try context.commit()
                    report(deleted)
                    context = try undoContext()
                }
            }
            try context.commit()
            let phase = WriteBatch()
            phase.put(records.migratingKey, Tuple([.string(name), .int(start), .string(Self.phaseRestoring)]))
            try storage.write(phase, sync: true)
        }
        // Phase 2: write the originals back, each batch removing the undo records it restored.
        var restored = 0
        var range = undo.range
        while true {
            let context = try undoContext()
            var taken = 0
            var last: [UInt8]?
            let cursor = try storage.scan(range, order: .forward)
            while taken < batchSize, let (key, value) = try cursor.next({ k, v in (Array(k), Array(v)) }) {
                let record = try undoRecord(key, value)
                if let original = record.original {
                    let document = try documentValue(original, collection: record.collection, id: record.id)
                    _ = try context.write(record.collection, .upsert, document: document, id: nil)
                    // The bytes as they were (a document of an older format keeps its spelling).
                    context.batch.put(layout.document(record.collection, record.id), original)
                }
                context.batch.delete(key)
                taken += 1
                last = key
            }
            guard let last else { break }
            try context.commit()
            restored += taken
            report(restored)
            range = undo.range.starting(after: last)
        }
        // The change feed and the sequence as they were before the migration.
        let changeRange = layout.changes.range.starting(at: layout.change(start.saturatingAdd(1)))
        _ = try storage.deleteAll(in: changeRange)
        let final = WriteBatch()
        records.putSequence(start, in: final)
        final.delete(records.migratingKey)
        try storage.write(final, sync: true)
        state.withLock { $0.lastSequence = start }
    }
}
