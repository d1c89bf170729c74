import Foundation

extension DocumentStore {
    /// Opens the document layer of `database`, applies `schema`, then runs the data
    /// migrations of `migrator` the database has not run yet, in order, before returning.
    /// See ``DocumentMigrator`` for the guarantees.
    ///
    /// - Parameters:
    ///   - database: as for ``init(database:schema:root:progress:)``.
    ///   - schema: as for ``init(database:schema:root:progress:)``; applied before the
    ///     migrations run, so they write under it.
    ///   - root: as for ``init(database:schema:root:progress:)``.
    ///   - migrator: the migrations, in order.
    ///   - progress: called while indexes are built.
    ///   - migrationProgress: called as each migration starts, after each batch it writes
    ///     or undoes, and when it completes.
    /// - Throws: `.notSupported` when the database recorded a migration `migrator` does not
    ///   register (it was migrated by a newer version of the app; nothing is changed); what
    ///   a migration throws (that migration is undone, those before it stay done);
    ///   otherwise as ``init(database:schema:root:progress:)``.
    public convenience init(database: Database, schema: Schema? = nil, root: Subspace = Subspace(), migrator: DocumentMigrator,
                            progress: ((IndexBuildProgress) -> Void)? = nil,
                            migrationProgress: ((MigrationProgress) -> Void)? = nil) throws {
        try self.init(storage: database, database: database, schema: schema, root: root, finishingBuilds: true,
                      migrator: migrator, progress: progress, migrationProgress: migrationProgress)
    }

    /// The names of the data migrations this database has run to their end, in the order
    /// they ran.
    public func appliedMigrations() throws -> [String] {
        try Self.appliedMigrations(storage, records).map(\.name)
    }

    static func appliedMigrations(_ reader: some KeyValueReader, _ records: Catalog) throws -> [(name: String, position: Int64)] {
        let cursor = try reader.scan(records.migrations.range, order: .forward)
        var applied: [(name: String, position: Int64)] = []
        while let (key, value) = try cursor.next({ k, v in (Array(k), Array(v)) }) {
            do {
                applied.append((try records.migrations.unpack(key).string(at: 0), try Tuple(decoding: value).int64(at: 0)))
            } catch {
                throw KVDocsError(.corruption, "a migration record of the catalog cannot be read: \(error)", path: reader.name, key: key)
            }
        }
        return applied.sorted { $0.position < $1.position }
    }

    /// Refuses a database that ran migrations `migrator` does not know.
    func checkMigrationsKnown(_ migrator: DocumentMigrator) throws {
        let known = migrator.names
        for applied in try Self.appliedMigrations(storage, records)
        where !known.contains(where: { $0.hasSameCodePoints(as: applied.name) }) {
            throw KVDocsError(.notSupported, "the database \(storage.name) was migrated by a newer version of the app: its migration \"\(applied.name)\" is not among the \(known.count) registered here; open it with that version or later", path: storage.name)
        }
    }

    /// Runs the migrations of `migrator` not yet recorded, in order.
    func runMigrations(_ migrator: DocumentMigrator, progress: ((MigrationProgress) -> Void)?) throws {
        let applied = try Self.appliedMigrations(storage, records)
        let pending = migrator.migrations.filter { m in !applied.contains { $0.name.hasSameCodePoints(as: m.name) } }
        var position = (applied.map(\.position).max() ?? -1) + 1
        for (index, migration) in pending.enumerated() {
            let count = pending.count
            let report = { (phase: MigrationProgress.Phase, documents: Int) -> Void in
                progress?(MigrationProgress(name: migration.name, index: index, count: count, phase: phase, documents: documents))
            }
            try run(migration, position: position, batchSize: migrator.batchSize, report: report)
            position += 1
        }
    }

    private func run(_ migration: DocumentMigrator.Migration, position: Int64, batchSize: Int,
                     report: @escaping (MigrationProgress.Phase, Int) -> Void) throws {
        try storage.withExclusiveWrite {
            let start = try storedSequence()
            let header = WriteBatch()
            header.put(records.migratingKey, Tuple([.string(migration.name), .int(start), .string(Self.phaseRunning)]))
            try storage.write(header, sync: true)
            report(.running, 0)
            let journal = MigrationJournal(records: records, storage: storage, layout: layout)
            do {
                let context = try MigrationContext(store: self, journal: journal, batchSize: batchSize) { report(.running, $0) }
                try migration.body(context)
                try context.flush()
            } catch {
                try rollBack(name: migration.name, start: start, restoring: false, batchSize: batchSize) { report(.rollingBack, $0) }
                hub.publishToAll()
                if var failure = error as? KVDocsError {
                    failure.message = "migration \"\(migration.name)\" failed and was undone (the database is as it was before it): \(failure.message)"
                    throw failure
                }
                throw error
            }
            let done = WriteBatch()
            done.put(records.migrations.pack([.string(migration.name)]), Tuple([.int(position)]))
            done.delete(records.migratingKey)
            try storage.write(done, sync: true)
            // The journal is garbage now; an open finding undo records and no header removes them.
            _ = try storage.deleteAll(in: records.undo.range)
            report(.completed, 0)
        }
        hub.publishToAll()
    }

    static let phaseRunning = "running"
    static let phaseRestoring = "restoring"

    /// Undoes a migration the process died in (its journal header is still there), or
    /// removes the undo records a completed one left. Runs when any store opens.
    func recoverInterruptedMigration(progress: ((MigrationProgress) -> Void)?) throws {
        guard let header = try storage.value(forKey: records.migratingKey) else {
            if try storage.count(records.undo.range) > 0 {
                try storage.withExclusiveWrite { _ = try storage.deleteAll(in: records.undo.range) }
            }
            return
        }
        let name: String, start: Int64, phase: String
        do {
            let t = try Tuple(decoding: header)
            (name, start, phase) = (try t.string(at: 0), try t.int64(at: 1), try t.string(at: 2))
        } catch {
            throw KVDocsError(.corruption, "the journal of an interrupted migration cannot be read: \(error)", path: storage.name, key: records.migratingKey)
        }
        try storage.withExclusiveWrite {
            try rollBack(name: name, start: start, restoring: phase == Self.phaseRestoring, batchSize: 1000) {
                progress?(MigrationProgress(name: name, index: 0, count: 1, phase: .rollingBack, documents: $0))
            }
        }
        hub.publishToAll()
    }

    /// Restores every document the journal recorded, with its index entries, removes the
    /// migration's change records and the journal. Each step is resumable: a crash during
    /// it leaves a journal the next open finishes undoing.
    ///
    /// First every touched document is deleted, then the originals are written back, so
    /// that unique values the migration moved between documents never collide on the way.
    /// REQUIRES: the exclusive writer lock is held.
    private func rollBack(name: String, start: Int64, restoring: Bool, batchSize: Int, report: (Int) -> Void) throws {
        let undo = records.undo
        report(0)
        func undoRecords(_ body: (String, TupleElement, [UInt8]?, [UInt8]) throws -> Void) throws {
            let cursor = try storage.scan(undo.range, order: .forward)
            while let (key, value) = try cursor.next({ k, v in (Array(k), Array(v)) }) {
                let t = try undo.unpack(key)
                let original = try Tuple(decoding: value)
                try body(try t.string(at: 0), try t.element(at: 1), original.elements.isEmpty ? nil : try original.bytes(at: 0), key)
            }
        }
        if !restoring {
            // Phase 1: delete what the migration left of every document it touched.
            var context = try WriteContext(store: self)
            context.recordsChanges = false
            try undoRecords { collection, id, _, _ in
                _ = try context.write(collection, .delete, document: nil, id: Self.idValue(id))
                if context.writes >= batchSize {
                    try context.commit()
                    context = try WriteContext(store: self)
                    context.recordsChanges = false
                }
            }
            try context.commit()
            let phase = WriteBatch()
            phase.put(records.migratingKey, Tuple([.string(name), .int(start), .string(Self.phaseRestoring)]))
            try storage.write(phase, sync: true)
        }
        // Phase 2: write the originals back, each batch removing the undo records it restored.
        var restored = 0
        while true {
            let context = try WriteContext(store: self)
            context.recordsChanges = false
            var taken = 0
            let cursor = try storage.scan(undo.range, order: .forward)
            while taken < batchSize, let (key, value) = try cursor.next({ k, v in (Array(k), Array(v)) }) {
                let t = try undo.unpack(key)
                let collection = try t.string(at: 0)
                let original = try Tuple(decoding: value)
                if !original.elements.isEmpty {
                    let document = try documentValue(try original.bytes(at: 0), collection: collection, id: try t.element(at: 1))
                    _ = try context.write(collection, .upsert, document: document, id: nil)
                }
                context.batch.delete(key)
                taken += 1
            }
            guard taken > 0 else { break }
            try context.commit()
            restored += taken
            report(restored)
        }
        // The change feed and the sequence as they were before the migration.
        let range = layout.changes.range.starting(at: layout.change(start.saturatingAdd(1)))
        _ = try storage.deleteAll(in: range)
        let last = WriteBatch()
        records.putSequence(start, in: last)
        last.delete(records.migratingKey)
        try storage.write(last, sync: true)
        state.withLock { $0.lastSequence = start }
    }
}
