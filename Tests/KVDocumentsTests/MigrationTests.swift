import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// Data migrations: run once each, in order, recorded in the catalog; a migration that
/// throws leaves the database exactly as it was before it, however many batches it wrote;
/// an interrupted one is undone at the next open and run again; a database migrated by a
/// newer app is refused before anything changes.
@Suite struct MigrationTests {
    static let schema = #"""
        {"collections": {
          "people": {"primaryKey": "id",
            "indexes": [{"name": "by_email", "fields": ["email"], "unique": true}, {"name": "by_age", "fields": ["age"]},
                        {"name": "by_home", "fields": ["home"], "type": "geo"}],
            "text": [{"name": "bio_text", "fields": ["bio"]}]},
          "groups": {"primaryKey": "id"}}}
        """#
    static let words = ["river", "station", "harbour", "train", "coffee", "garden", "market", "ocean"]

    static func person(_ i: Int) -> JSONValue {
        [
            "id": .int(Int64(i)), "email": .string("p\(i)@x.org"), "age": .int(Int64(i % 70)),
            "bio": .string("\(words[i % 8]) \(words[(i / 8) % 8])"),
            "home": ["lat": .double(Double(i % 180) - 89.5), "lon": .double(Double(i % 360) - 179.5)]
        ]
    }

    static func populate(_ store: DocumentStore, _ n: Int) throws {
        try store.write { batch in for i in 0..<n { try batch.insert("people", person(i)) } }
    }

    /// Every key and value of the database, except the text index's own layout (its
    /// postings may be segmented differently after a roll-back; its answers are compared).
    static func contents(_ db: LevelDB) throws -> [KeyValueEntry] {
        let text = Subspace(["t"]).prefix
        return try db.entries().collect().filter { !$0.key.starts(with: text) }
    }

    /// What the store answers: search hits and scores, geo hits, text statistics.
    static func answers(_ store: DocumentStore) throws -> String {
        let people = try store.collection("people")
        var text = ""
        for word in words { text += "\(try people.search(word).map { "\($0.id)=\($0.score)" })\n" }
        text +=
            "\(try people.near(try GeoPoint(latitude: 0, longitude: 0), within: 3_000_000).map { "\($0.id)=\($0.distance)" })\n"
        text += "\(try store.read { try $0.textStatistics("people") })"
        return text
    }

    static var parsedSchema: DocumentSchema { get throws { try DocumentSchema(json: Data(schema.utf8)) } }

    @Test func migrationsRunOnceEachInOrderAndAreRecorded() throws {
        let dir = TemporaryDirectory()
        let path = dir.child("db")
        let ran = TestLock<[String]>([])
        func migrator(_ names: [String]) throws -> DocumentMigrator {
            var m = DocumentMigrator()
            for name in names {
                try m.register(name) { migration in
                    ran.withLock { $0.append(name) }
                    try migration.forEach("people") { person in
                        guard case .object(var fields) = person, case .int(let age)? = fields["age"] else { return }
                        fields["age"] = .int(age + 1)
                        try migration.update("people", .object(fields))
                    }
                }
            }
            return m
        }
        do {
            let db = try LevelDB(path: path)
            try Self.populate(try DocumentStore(database: db, schema: try Self.parsedSchema), 50)
            var progress: [MigrationProgress.Phase] = []
            let store = try DocumentStore(database: db, migrator: try migrator(["a", "b"])) { _ in
            } migrationProgress: {
                progress.append($0.phase)
            }
            #expect(ran.withLock { $0 } == ["a", "b"])
            #expect(try store.appliedMigrations() == ["a", "b"])
            #expect(progress.first == .running && progress.last == .completed)
            #expect(try store.collection("people").get(id: 3)?["age"] == 5)
            db.close()
        }
        do {
            let db = try LevelDB(path: path)
            let store = try DocumentStore(database: db, migrator: try migrator(["a", "b", "c"]))
            #expect(ran.withLock { $0 } == ["a", "b", "c"])
            #expect(try store.appliedMigrations() == ["a", "b", "c"])
            #expect(try store.collection("people").get(id: 3)?["age"] == 6)
            #expect(try store.verify().isClean)
            // The change feed holds the migrations' writes.
            #expect(try store.changes().count == 50 + 150)
            db.close()
        }
        do {
            let db = try LevelDB(path: path)
            _ = try DocumentStore(database: db, migrator: try migrator(["a", "b", "c"]))
            #expect(ran.withLock { $0 } == ["a", "b", "c"])
            db.close()
        }
    }

    @Test func registeringANameTwiceOrAnEmptyNameIsAnError() throws {
        var m = DocumentMigrator()
        try m.register("a") { _ in }
        expectError(.invalidArgument) { try m.register("a") { _ in } }
        expectError(.invalidArgument) { try m.register("") { _ in } }
        #expect(m.names == ["a"])
    }

    /// The migration rewrites every document over many batches (swapping unique emails
    /// between neighbours, changing text and points), deletes some, inserts others, then
    /// throws: the database is byte-identical outside the text index, whose answers are
    /// identical, and verify is clean.
    @Test(arguments: [false, true])
    func aMigrationThatThrowsLeavesTheDatabaseAsItWasBeforeIt(throwsCustomError: Bool) throws {
        struct Refused: Error {}
        let dir = TemporaryDirectory()
        let db = try LevelDB(path: dir.child("db"))
        defer { db.close() }
        let n = 600
        try Self.populate(try DocumentStore(database: db, schema: try Self.parsedSchema), n)
        _ = try DocumentStore(database: db).collection("groups").insert(["id": "g", "members": [1, 2]])
        let before = try Self.contents(db)
        let answersBefore = try Self.answers(try DocumentStore(database: db))
        var migrator = DocumentMigrator()
        migrator.batchSize = 50
        try migrator.register("rewrite") { migration in
            try migration.forEach("people") { person in
                guard case .object(var fields) = person, case .int(let id)? = fields["id"] else { return }
                if id % 10 == 9 {
                    try migration.delete("people", id: .int(id))
                    return
                }
                let partner = id % 2 == 0 ? id + 1 : id - 1
                fields["email"] = .string("m\(id)@tmp")
                fields["bio"] = .string("migrated \(id)")
                fields["home"] = ["lat": 1, "lon": .double(Double(id) / 100)]
                if id % 10 == 8 { try migration.delete("people", id: .int(partner)) }
                try migration.upsert("people", .object(fields))
            }
            // Swap emails pairwise: unique values move between documents.
            try migration.forEach("people") { person in
                guard case .object(var fields) = person, case .int(let id)? = fields["id"] else { return }
                fields["email"] = .string("p\(id % 2 == 0 ? id + 1 : id - 1)@x.org")
                try migration.update("people", .object(fields))
            }
            for i in n..<(n + 100) { try migration.insert("people", Self.person(i)) }
            try migration.delete("groups", id: "g")
            #expect(try migration.fetch(.count("people")) == n + 100 - n / 10)
            if throwsCustomError { throw Refused() }
            // A unique violation: the email of a document the migration kept.
            try migration.upsert("people", ["id": 100_000, "email": "p3@x.org"])
            Issue.record("the unique violation was not reported")
        }
        do {
            _ = try DocumentStore(database: db, migrator: migrator)
            Issue.record("the migration did not fail")
        } catch let error as KVDocsError {
            #expect(!throwsCustomError, "\(error)")
            #expect(error.kind == .uniqueViolation)
            #expect(error.message.contains("migration \"rewrite\" failed and was undone"))
        } catch {
            #expect(throwsCustomError && error is Refused)
        }
        #expect(try Self.contents(db) == before)
        let store = try DocumentStore(database: db)
        #expect(try Self.answers(store) == answersBefore)
        #expect(try store.verify().isClean)
        #expect(try store.appliedMigrations() == [])
        #expect(try store.count(ofCollection: "people") == n)
    }

    /// The database is closed in the middle of the migration, as a crash would leave it:
    /// the journal is still there. The next open undoes it, whoever opens, and a migrator
    /// runs it again from the start: the result is exact.
    @Test func anInterruptedMigrationIsUndoneAtTheNextOpenAndRunAgain() throws {
        let dir = TemporaryDirectory()
        let path = dir.child("db")
        let n = 400
        let before: [KeyValueEntry]
        do {
            let db = try LevelDB(path: path)
            try Self.populate(try DocumentStore(database: db, schema: try Self.parsedSchema), n)
            before = try Self.contents(db)
            var migrator = DocumentMigrator()
            migrator.batchSize = 30
            try migrator.register("double ages") { migration in
                var seen = 0
                try migration.forEach("people") { person in
                    guard case .object(var fields) = person, case .int(let age)? = fields["age"] else { return }
                    fields["age"] = .int(age * 2)
                    try migration.upsert("people", .object(fields))
                    seen += 1
                    if seen == 250 { db.close() }  // the "crash": nothing more can be written
                }
            }
            #expect(throws: KVDocsError.self) { _ = try DocumentStore(database: db, migrator: migrator) }
        }
        do {
            // Opened without a migrator: the half-done migration is undone.
            let db = try LevelDB(path: path)
            #expect(try db.value(forKey: DocumentCatalog().migratingKey) != nil)
            let store = try DocumentStore(database: db)
            #expect(try db.value(forKey: DocumentCatalog().migratingKey) == nil)
            #expect(try Self.contents(db) == before)
            #expect(try store.verify().isClean)
            db.close()
        }
        do {
            var migrator = DocumentMigrator()
            try migrator.register("double ages") { migration in
                try migration.forEach("people") { person in
                    guard case .object(var fields) = person, case .int(let age)? = fields["age"] else { return }
                    fields["age"] = .int(age * 2)
                    try migration.upsert("people", .object(fields))
                }
            }
            let db = try LevelDB(path: path)
            let store = try DocumentStore(database: db, migrator: migrator)
            for i in [0, 7, 69, 399] {
                #expect(try store.collection("people").get(id: .int(Int64(i)))?["age"] == .int(Int64(i % 70 * 2)))
            }
            #expect(try store.verify().isClean)
            #expect(try store.changes().count == 2 * n)
            db.close()
        }
    }

    @Test func aDatabaseMigratedByANewerAppIsRefusedBeforeAnythingChanges() throws {
        let dir = TemporaryDirectory()
        let path = dir.child("db")
        var newer = DocumentMigrator()
        try newer.register("v1") { _ in }
        try newer.register("v2 split names") { _ in }
        do {
            let db = try LevelDB(path: path)
            try Self.populate(try DocumentStore(database: db, schema: try Self.parsedSchema, migrator: newer), 10)
            db.close()
        }
        let db = try LevelDB(path: path)
        defer { db.close() }
        let before = try Self.contents(db)
        var older = DocumentMigrator()
        try older.register("v1") { _ in }
        let olderSchema = try DocumentSchema(json: Data(#"{"collections": {"people": {"primaryKey": "id"}}}"#.utf8))
        let error = expectError(.notSupported) { try DocumentStore(database: db, schema: olderSchema, migrator: older) }
        #expect(error?.message.contains("\"v2 split names\"") == true)
        #expect(error?.message.contains("newer version") == true)
        #expect(try Self.contents(db) == before)
    }

    @Test func aMigrationReadsItsOwnWrites() throws {
        let dir = TemporaryDirectory()
        let db = try LevelDB(path: dir.child("db"))
        defer { db.close() }
        try Self.populate(try DocumentStore(database: db, schema: try Self.parsedSchema), 5)
        var migrator = DocumentMigrator()
        try migrator.register("groups") { migration in
            try migration.insert("groups", ["id": "all", "size": 0])
            #expect(try migration.get("groups", id: "all")?["size"] == 0)
            let size = try migration.fetch(.count("people"))
            try migration.update("groups", ["id": "all", "size": .int(Int64(size))])
            #expect(try migration.get("groups", id: "all")?["size"] == 5)
            #expect(try migration.fetch(.find("groups")).count == 1)
        }
        let store = try DocumentStore(database: db, migrator: migrator)
        #expect(try store.collection("groups").get(id: "all")?["size"] == 5)
    }

    static func format(_ db: LevelDB) throws -> Int64? { try DocumentCatalog().formatVersion(in: db) }

    /// Every store this version writes is at the current format (5: binary documents and
    /// replicated collections), from the write that creates it: KVDocs versions that read
    /// older formats refuse it instead of misreading its documents. Running a migration,
    /// or undoing one, keeps it there.
    @Test func aStoreIsAtFormat4FromItsFirstWriteThroughMigrationsAndUndoneOnes() throws {
        struct Refused: Error {}
        let dir = TemporaryDirectory()
        let db = try LevelDB(path: dir.child("db"))
        defer { db.close() }
        let store = try DocumentStore(database: db, schema: try Self.parsedSchema)
        try Self.populate(store, 20)
        #expect(DocumentStore.formatVersion == 5)
        #expect(try Self.format(db) == DocumentStore.formatVersion)

        var failing = DocumentMigrator()
        try failing.register("fails") { migration in
            #expect(try Self.format(db) == DocumentStore.formatVersion)
            try migration.insert("groups", ["id": "g"])
            throw Refused()
        }
        #expect(throws: Refused.self) { _ = try DocumentStore(database: db, migrator: failing) }
        #expect(try Self.format(db) == DocumentStore.formatVersion)

        var migrator = DocumentMigrator()
        try migrator.register("adds a group") { try $0.insert("groups", ["id": "g"]) }
        _ = try DocumentStore(database: db, migrator: migrator)
        #expect(try Self.format(db) == DocumentStore.formatVersion)
        var schema = try Self.parsedSchema
        schema.collections["trips"] = CollectionSchema(primaryKey: "id")
        try store.apply(schema)
        #expect(try Self.format(db) == DocumentStore.formatVersion)
        // A newer format is refused: `.notSupported`.
        try db.put(DocumentCatalog().formatKey, Tuple([.int(DocumentStore.formatVersion + 1)]))
        expectError(.notSupported) { try DocumentStore(database: db) }
    }

    /// The fixture written by format-2 code (before migrations): opened, it is at the
    /// current format; a migrator's first migration runs on it.
    @Test func aFormat2StoreFromTheFixtureIsMigratedAndRunsItsFirstMigration() throws {
        let dir = TemporaryDirectory()
        let path = dir.child("db")
        try FileManager.default.copyItem(
            atPath: packageRoot.appendingPathComponent("Tests/Fixtures/format2-db").path, toPath: path)
        let db = try LevelDB(path: path)
        defer { db.close() }
        #expect(try Self.format(db) == 2)
        let store = try DocumentStore(database: db)
        #expect(try Self.format(db) == DocumentStore.formatVersion)
        let before = try store.collection("things").find()
        var migrator = DocumentMigrator()
        try migrator.register("tag things") { migration in
            try migration.forEach("things") { thing in
                guard case .object(var fields) = thing else { return }
                fields["tagged"] = true
                try migration.upsert("things", .object(fields))
            }
        }
        let migrated = try DocumentStore(database: db, migrator: migrator)
        #expect(try Self.format(db) == DocumentStore.formatVersion)
        let after = try migrated.collection("things").find()
        #expect(after.count == before.count && !after.isEmpty)
        #expect(after.allSatisfy { $0["tagged"] == true })
        #expect(try migrated.verify().isClean)
    }

    /// Observers and change streams of another store on the database see nothing of a
    /// migration while it runs: nothing of one undone, and the changes of one completed, in
    /// order, once it completes. Sequence numbers are never delivered twice.
    @Test func observersAndChangeStreamsSeeAMigrationOnlyWhenItCompletes() async throws {
        struct Refused: Error {}
        let dir = TemporaryDirectory()
        let db = try LevelDB(path: dir.child("db"))
        defer { db.close() }
        let n = 60
        let store = try DocumentStore(database: db, schema: try Self.parsedSchema)
        try Self.populate(store, n)
        let start = try store.lastSequence
        let ages = store.observe(collections: ["people"]) { tx in try tx.find("people").map { $0["age"] ?? .null } }
        var observed = ages.makeAsyncIterator()
        let initial = try #require(try await observed.next())
        var stream = store.changeStream().makeAsyncIterator()
        func migrator(failing: Bool) throws -> DocumentMigrator {
            var migrator = DocumentMigrator()
            migrator.batchSize = 7
            try migrator.register("older") { migration in
                try migration.forEach("people") { person in
                    guard case .object(var fields) = person, case .int(let age)? = fields["age"] else { return }
                    fields["age"] = .int(age + 100)
                    try migration.update("people", .object(fields))
                }
                if failing { throw Refused() }
            }
            return migrator
        }
        #expect(throws: Refused.self) { _ = try DocumentStore(database: db, migrator: try migrator(failing: true)) }
        #expect(try store.lastSequence == start)
        // The write after the undone migration takes the next number, and is the first
        // change the stream delivers.
        try await store.collection("groups").async.insert(["id": "after"])
        let first = try #require(await stream.next())
        #expect(first.sequence == start + 1 && first.collection == "groups")

        _ = try DocumentStore(database: db, migrator: try migrator(failing: false))
        var delivered: [DocumentChange] = []
        for _ in 0..<n { if let change = await stream.next() { delivered.append(change) } }
        #expect(delivered.map(\.sequence) == Array((start + 2)...(start + 1 + Int64(n))))
        #expect(delivered.allSatisfy { $0.collection == "people" && $0.operation == .update })
        // One new value, the migrated one: no intermediate state, nothing of the undone run.
        let next = try #require(try await observed.next())
        #expect(next.count == initial.count)
        for (old, new) in zip(initial, next) {
            guard case .int(let a) = old, case .int(let b) = new else {
                Issue.record("\(old) \(new)")
                continue
            }
            #expect(b == a + 100)
        }
        #expect(observed.cursor.registration.counts.evaluations <= 4)
    }

    /// A second store opening while a migration runs (on another thread) waits for it and
    /// then finds no journal: it does not undo the completed migration's change records.
    @Test func aStoreOpenedWhileAMigrationRunsLeavesTheCompletedMigrationAlone() throws {
        let dir = TemporaryDirectory()
        let db = try LevelDB(path: dir.child("db"))
        defer { db.close() }
        try Self.populate(try DocumentStore(database: db, schema: try Self.parsedSchema), 30)
        let opened = DispatchSemaphore(value: 0)
        let openerStarted = DispatchSemaphore(value: 0)
        let failure = Locked<(any Error)?>(nil)
        var migrator = DocumentMigrator()
        try migrator.register("touch") { migration in
            try migration.forEach("people") { person in
                guard case .object(var fields) = person else { return }
                fields["touched"] = true
                try migration.update("people", .object(fields))
            }
            try migration.flush()
            Thread.detachNewThread {
                openerStarted.signal()
                do { _ = try DocumentStore(database: db) } catch { failure.withLock { $0 = error } }
                opened.signal()
            }
            openerStarted.wait()
            // Give the opener time to read the journal header before this migration ends
            // (the outcome must be the same whenever it reads it).
            Thread.sleep(forTimeInterval: 0.2)
        }
        let store = try DocumentStore(database: db, migrator: migrator)
        opened.wait()
        #expect(failure.withLock { $0 } == nil)
        #expect(try store.appliedMigrations() == ["touch"])
        #expect(try store.changes().count == 60)
        #expect(try store.lastSequence == 60)
        #expect(try store.collection("people").find().allSatisfy { $0["touched"] == true })
        #expect(try store.verify().isClean)
    }

    /// A database that ran a migration the app does not know, and holds the journal of an
    /// interrupted one, is refused before the journal is touched.
    @Test func theNewerAppCheckComesBeforeAnInterruptedMigrationIsUndone() throws {
        let dir = TemporaryDirectory()
        let path = dir.child("db")
        do {
            let db = try LevelDB(path: path)
            var newer = DocumentMigrator()
            try newer.register("v1") { _ in }
            try newer.register("v2") { _ in }
            try newer.register("v3 interrupted") { migration in
                try migration.insert("groups", ["id": "g"])
                try migration.flush()
                db.close()
            }
            try Self.populate(try DocumentStore(database: db, schema: try Self.parsedSchema), 10)
            #expect(throws: KVDocsError.self) { _ = try DocumentStore(database: db, migrator: newer) }
        }
        let db = try LevelDB(path: path)
        defer { db.close() }
        let before = try db.entries().collect()
        #expect(try db.value(forKey: DocumentCatalog().migratingKey) != nil)
        var older = DocumentMigrator()
        try older.register("v1") { _ in }
        let error = expectError(.notSupported) { try DocumentStore(database: db, migrator: older) }
        #expect(error?.message.contains("\"v2\"") == true)
        #expect(try db.entries().collect() == before)
    }

    /// Undoing reports progress as it deletes and as it restores.
    @Test func undoingAMigrationReportsProgressInBothPhases() throws {
        struct Refused: Error {}
        let dir = TemporaryDirectory()
        let db = try LevelDB(path: dir.child("db"))
        defer { db.close() }
        try Self.populate(try DocumentStore(database: db, schema: try Self.parsedSchema), 100)
        var migrator = DocumentMigrator()
        migrator.batchSize = 10
        try migrator.register("fails") { migration in
            try migration.forEach("people") { person in
                guard case .object(var fields) = person else { return }
                fields["x"] = 1
                try migration.update("people", .object(fields))
            }
            throw Refused()
        }
        var undoing: [Int] = []
        #expect(throws: Refused.self) {
            _ = try DocumentStore(
                database: db, migrator: migrator,
                migrationProgress: { p in
                    if p.phase == .rollingBack { undoing.append(p.documents) }
                })
        }
        // 0, then the deletes (10 … 90), then the restores (10 … 100).
        #expect(undoing.first == 0)
        #expect(undoing.filter { $0 > 0 }.count >= 18)
        #expect(undoing.last == 100)
    }

    /// A damaged undo record is reported with its key, and nothing else is changed.
    @Test func aDamagedUndoRecordIsReportedWithItsKey() throws {
        let dir = TemporaryDirectory()
        let db = try LevelDB(path: dir.child("db"))
        defer { db.close() }
        try Self.populate(try DocumentStore(database: db, schema: try Self.parsedSchema), 3)
        let catalog = DocumentCatalog()
        let key = catalog.undo.pack([.string("people"), .int(1)])
        try db.put(catalog.migratingKey, Tuple(["m", 0, "running"]))
        try db.put(key, [0x99, 0x01])
        let error = expectError(.corruption) { try DocumentStore(database: db) }
        #expect(error?.key == key)
        #expect(error?.message.contains("undo record") == true)
    }

    /// A layered store whose layers hold a migration journal is refused with what to do.
    @Test func aLayeredStoreHoldingAJournalIsRefused() throws {
        let dir = TemporaryDirectory()
        let base = try LevelDB(path: dir.child("base"))
        defer { base.close() }
        try Self.populate(try DocumentStore(database: base, schema: try Self.parsedSchema), 3)
        try base.put(DocumentCatalog().migratingKey, Tuple(["m", 0, "running"]))
        let user = try LevelDB(path: dir.child("user"))
        defer { user.close() }
        let error = expectError(.notSupported) {
            try DocumentStore(layered: try LayeredKeyValueStore(base: base, user: user))
        }
        #expect(error?.message.contains("interrupted data migration") == true)
    }
}

extension DocumentStore {
    func count(ofCollection name: String) throws -> Int { try collection(name).count() }
}
