import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// Opening stores written by earlier layouts: migrated, rebuilt or refused, never misread.
@Suite struct FormatMigrationTests {
    /// A copy of the fixture written by the format-1 code (numbers through
    /// JSONSerialization, objects through JSONEncoder) opens migrated: its secondary
    /// indexes are rebuilt with progress, the dangling entry that code left is gone, and the
    /// version is recorded.
    @Test func aFormatOneStoreIsMigratedOnOpen() throws {
        let dir = TemporaryDirectory()
        let path = dir.child("db")
        try FileManager.default.copyItem(
            atPath: packageRoot.appendingPathComponent("Tests/Fixtures/format1-db").path, toPath: path)
        let db = try LevelDB(path: path)
        defer { db.close() }
        #expect(try db.get(Subspace().pack(["m", "format"])) == nil)
        var built = Set<String>()
        let store = try DocumentStore(database: db) { built.insert("\($0.collection)/\($0.index)") }
        // The documents, rewritten in the binary form (an empty index name), and every index:
        // the secondary ones for the format-1 key order, the text index for its blocked
        // layout (text format 2).
        #expect(built == ["things/", "things/by_n", "things/by_meta", "things/by_code", "things/by_tag", "things/body"])
        #expect(
            try db.get(Subspace().pack(["m", "format"]), as: Tuple.self) == Tuple([.int(DocumentStore.formatVersion)]))
        #expect(try store.verify().isClean)
        let things = try store.collection("things")
        #expect(try things.count() == 3)
        #expect(try things.get(id: 2)?["meta"] == ["z": .double(1e20)])
        #expect(try things.count(DocumentQuery().where("meta", .equal(["z": .double(1e20)]))) == 1)
        #expect(
            try things.find(DocumentQuery().where("n", .greaterOrEqual(1)).orderBy("n")).map { $0["id"] } == [
                1, "three"
            ])
        #expect(try store.changes().map(\.sequence) == [1, 2, 3, 4, 5, 6])
        #expect(try things.search("quick").count == 2)
        // Opened again: nothing more to migrate.
        built = []
        _ = try DocumentStore(database: db) { built.insert($0.index) }
        #expect(built.isEmpty)
    }

    /// A copy of the fixture written by the format-2 code, whose unique index stored
    /// `(value, id) → ""`, opens with that index (and only it) rebuilt as `(value) → id`:
    /// lookups, the unique constraint and verify all work on the rebuilt entries.
    @Test func aUniqueIndexOfTheFormerLayoutIsRebuiltAsPointEntries() throws {
        let dir = TemporaryDirectory()
        let path = dir.child("db")
        try FileManager.default.copyItem(
            atPath: packageRoot.appendingPathComponent("Tests/Fixtures/format2-db").path, toPath: path)
        let db = try LevelDB(path: path)
        defer { db.close() }
        let identity = IndexIdentity("things", "by_code", .secondary)
        #expect(try DocumentCatalog().indexStates(.secondary, in: db)[identity]?.format == 1)
        var built = Set<String>()
        let store = try DocumentStore(database: db) { built.insert($0.index) }
        // The documents in the binary form (""), the unique index for its point layout, the
        // text index for its blocked layout, the plain indexes for their entries of documents
        // missing a field (format 3).
        #expect(built == ["", "by_code", "body", "by_n", "by_meta", "by_tag"])
        #expect(try DocumentCatalog().indexStates(.secondary, in: db)[identity]?.format == 2)
        #expect(try store.verify().isClean)
        let code = Subspace().subspace(["i", "things", "by_code"])
        var entries: [(Tuple, Tuple)] = []
        try db.forEach(in: code.range) { k, v in
            entries.append((try Tuple(decoding: Array(k[code.prefix.count...])), try Tuple(decoding: Array(v))))
        }
        #expect(entries.map(\.0) == [Tuple([3, "a"]), Tuple([3, "a2"]), Tuple([3, "c"])])
        #expect(entries.map(\.1) == [Tuple([1]), Tuple([2]), Tuple(["three"])])
        let things = try store.collection("things")
        #expect(try things.find(DocumentQuery().where("code", .equal("a2"))).map { $0["id"] } == [2])
        #expect(
            try things.find(DocumentQuery().where("code", .greaterOrEqual("a"))).map { $0["id"] } == ["three", 1, 2])
        #expect(throws: KVDocsError.self) { try things.insert(["id": 9, "code": "c"]) }
        try things.upsert(["id": "three", "code": "d"])
        try things.insert(["id": 9, "code": "c"])
        #expect(try store.verify().isClean)
    }

    /// A copy of the fixture written before text indexes were blocked (one entry per
    /// posting, keyed by the row id) opens with its text index, and only it, rebuilt with
    /// progress in the blocked layout; searches, scores and verify work on it, and writes
    /// after the migration keep it exact.
    @Test(.readsSnappyFixture) func aTextIndexOfTheFormerLayoutIsRebuiltInBlocks() throws {
        let dir = TemporaryDirectory()
        let path = dir.child("db")
        try FileManager.default.copyItem(
            atPath: packageRoot.appendingPathComponent("Tests/Fixtures/text1-db").path, toPath: path)
        let db = try LevelDB(path: path)
        defer { db.close() }
        let identity = IndexIdentity("notes", "body_text", .text)
        #expect(try DocumentCatalog().indexStates(.text, in: db)[identity]?.format == 1)
        var progress: [DocumentStore.IndexBuildProgress] = []
        let store = try DocumentStore(database: db) { progress.append($0) }
        // The plain index too: format 3 has entries for documents missing its field; and the
        // documents, in the binary form ("").
        #expect(Set(progress.map { $0.index }) == ["", "body_text", "by_year"])
        let last = try #require(progress.last { $0.index == "body_text" })
        #expect(last.done == 4 && last.total == 4)
        #expect(try DocumentCatalog().indexStates(.text, in: db)[identity]?.format == 3)
        #expect(try store.verify().isClean)
        let layout = store.textLayout("notes", "body_text")
        #expect(try db.count(layout.allRows.range) == 4)
        let notes = try store.collection("notes")
        // The fixture's searches, as the old code answered them (porter: run, running, runners).
        let ids = { (query: String) throws -> [JSONValue] in try notes.search(query).map { $0.id } }
        #expect(try ids("train*") == ["b", "a"])
        #expect(try ids("run") == ["d", 3, "a"])
        #expect(try ids("express OR station") == [3, "d", "b", "a"])
        #expect(
            try notes.search("café", options: SearchOptions(highlight: .init(open: "[", close: "]"))).first?.highlights[
                "body"]
                == "Quiet morning trains; the [CAFÉ] opens early at the station")
        try notes.insert(["id": "e", "body": "express trains run at night"])
        try notes.delete(id: "a")
        #expect(try store.verify().isClean)
        #expect(try ids("express") == [3, "e"] || ids("express") == ["e", 3])
    }

    /// An index whose entries were written in an older format of its kind (its catalog
    /// state says so) is rebuilt when the store opens, with progress; the others are kept.
    @Test func anIndexOfAnOlderFormatIsRebuiltOnOpen() throws {
        try withTemporaryDatabase { db, _ throws in
            do {
                let store = try DocumentStore(database: db, schema: try peopleSchema())
                try store.collection("people").insert(["id": "p1", "age": 30, "bio": "night train"])
            }
            let catalog = DocumentCatalog()
            let identity = IndexIdentity("people", "by_age", .secondary)
            let states = try catalog.indexStates(.secondary, in: db)
            guard var state = states[identity] else {
                Issue.record("no state for by_age")
                return
            }
            #expect(state.format == 3)
            state.format = 0
            let batch = WriteBatch()
            catalog.putState(state, of: identity, generation: try catalog.generation(in: db) + 1, in: batch)
            // Damage the old-format entries too: the rebuild must not keep them.
            batch.delete(Subspace().pack(["i", "people", "by_age", 2, 30.0, 0, "p1"]))
            try db.write(batch)
            var rebuilt: [String] = []
            let reopened = try DocumentStore(database: db) { if $0.done == $0.total { rebuilt.append($0.index) } }
            #expect(rebuilt == ["by_age"])
            #expect(try catalog.indexStates(.secondary, in: db)[identity]?.format == 3)
            #expect(try reopened.verify().isClean)
            #expect(try reopened.collection("people").find(DocumentQuery().where("age", .equal(30))).count == 1)
        }
    }

    /// An index build interrupted before it finished (its state still says building) is
    /// finished when the store opens; queries never used it in between.
    @Test func anInterruptedIndexBuildIsFinishedOnOpen() throws {
        try withTemporaryDatabase { db, _ throws in
            do {
                let store = try DocumentStore(database: db, schema: try peopleSchema())
                try store.collection("people").insert(["id": "p1", "age": 30, "email": "a@x"])
            }
            let catalog = DocumentCatalog()
            let identity = IndexIdentity("people", "by_email", .secondary)
            guard var state = try catalog.indexStates(.secondary, in: db)[identity] else {
                Issue.record("no state")
                return
            }
            state.phase = .building
            let batch = WriteBatch()
            catalog.putState(state, of: identity, generation: try catalog.generation(in: db) + 1, in: batch)
            try db.write(batch)
            try db.deleteRange(.prefix(Subspace().pack(["i", "people", "by_email"])))
            var rebuilt: Set<String> = []
            let reopened = try DocumentStore(database: db) { rebuilt.insert($0.index) }
            #expect(rebuilt == ["by_email"])
            #expect(try reopened.verify().isClean)
            #expect(
                try reopened.collection("people").explain(DocumentQuery().where("email", .equal("a@x"))).index
                    == "by_email")
        }
    }

    @Test func aStoreFromANewerFormatIsRefusedNamingBothVersions() throws {
        try withTemporaryDatabase { db, _ throws in
            _ = try DocumentStore(database: db, schema: try peopleSchema())
            try db.put(Subspace().pack(["m", "format"]), Tuple([.int(DocumentStore.formatVersion + 1)]))
            let error = #expect(throws: KVDocsError.self) { try DocumentStore(database: db) }
            #expect(error?.kind == .notSupported)
            #expect(error?.message.contains("format version \(DocumentStore.formatVersion + 1)") == true)
            #expect(error?.message.contains("format \(DocumentStore.formatVersion)") == true)
        }
    }

    /// The fixture written by format-2 code (documents as JSON text) opens with every
    /// document rewritten in the binary form and its covering indexes rebuilt, with
    /// progress; every document and every covering query reads as that code read them.
    @Test(.readsSnappyFixture) func aStoreOfTextDocumentsIsRewrittenInTheBinaryFormOnOpen() throws {
        let dir = TemporaryDirectory()
        let path = dir.child("db")
        try FileManager.default.copyItem(
            atPath: packageRoot.appendingPathComponent("Tests/Fixtures/docs3-db").path, toPath: path)
        let db = try LevelDB(path: path)
        defer { db.close() }
        let layout = Layout(root: Subspace())
        func storedValues(_ range: KeyRange) throws -> [[UInt8]] {
            let cursor = try db.scan(range, order: .forward)
            var values: [[UInt8]] = []
            while let v = try cursor.next({ _, v in Array(v) }) { values.append(v) }
            return values
        }
        #expect(try db.get(Subspace().pack(["m", "format"]), as: Tuple.self) == Tuple([.int(2)]))
        #expect(try storedValues(layout.documents("athletes").range).allSatisfy { $0.first == UInt8(ascii: "{") })

        var progress: [DocumentStore.IndexBuildProgress] = []
        let store = try DocumentStore(database: db) { progress.append($0) }
        // The documents and the covering indexes (the other indexes' entries carry nothing),
        // and the text index, whose layout (format 3, segments) is newer than the fixture's.
        #expect(
            Set(progress.map { "\($0.collection)/\($0.index)" }) == [
                "athletes/", "notes/", "athletes/by_club_cover", "athletes/by_country_whole", "athletes/name_text"
            ])
        let rewrite = try #require(progress.last { $0.collection == "athletes" && $0.index.isEmpty })
        #expect(rewrite.done == 5 && rewrite.total == 5)
        #expect(
            try db.get(Subspace().pack(["m", "format"]), as: Tuple.self) == Tuple([.int(DocumentStore.formatVersion)]))
        for collection in ["athletes", "notes"] {
            let values = try storedValues(layout.documents(collection).range)
            #expect(!values.isEmpty && values.allSatisfy { BinaryJSON.isBinary($0) })
        }
        for index in ["by_club_cover", "by_country_whole"] {
            let values = try storedValues(layout.index("athletes", index).range)
            #expect(!values.isEmpty && values.allSatisfy { BinaryJSON.isBinary($0) }, "\(index)")
        }
        #expect(try store.verify().isClean)

        // Every document reads as the format-2 code printed it.
        let expected = try String(
            contentsOfFile: packageRoot.appendingPathComponent("Tests/Fixtures/docs3-expected.jsonl").path,
            encoding: .utf8
        )
        .split(separator: "\n").map { try JSONValue(parsing: String($0)) }
        let found = try store.collection("athletes").find() + store.collection("notes").find()
        #expect(found == expected)
        #expect(try found.map { try $0.canonicalBytes() } == expected.map { try $0.canonicalBytes() })
        // Covering queries read the rewritten entries; the other indexes still serve.
        let athletes = try store.collection("athletes")
        let club = DocumentQuery().where("club", .equal("Tromsø SK")).select(["name"])
        #expect(try athletes.explain(club).covering)
        #expect(try athletes.find(club) == [["name": "Ola Nordmann"], ["name": "Escapes \" \\ \n \t \u{1}"]])
        let whole = DocumentQuery().where("country", .equal("NOR"))
        #expect(try athletes.explain(whole).covering)
        #expect(try athletes.find(whole) == expected.filter { $0["country"] == "NOR" })
        #expect(
            try athletes.find(DocumentQuery().where("country", .equal("NOR")).orderBy("points", descending: true)).map {
                $0["id"]
            } == [3, 1])
        #expect(try athletes.count(DocumentQuery().where("licence", .equal("L-2"))) == 1)
        #expect(try athletes.search("nordmann").map(\.id) == [1])
        #expect(try athletes.near(GeoPoint(latitude: 69.65, longitude: 18.95), within: 1000).map(\.id) == [1])

        // Opened again: nothing more to do.
        progress = []
        _ = try DocumentStore(database: db) { progress.append($0) }
        #expect(progress.isEmpty)
    }

    /// The fixture written by format-4 code (before replicated collections) opens migrated
    /// to format 5 with nothing else changed: no index rebuilt, the same documents, index
    /// entries and change records. Its `_id`-keyed collection cannot then be made
    /// replicated (it holds documents); a new replicated collection can be added.
    @Test(.readsSnappyFixture) func aFormatFourStoreIsMigratedToFiveWithoutChangingItsData() throws {
        let dir = TemporaryDirectory()
        let path = dir.child("db")
        try FileManager.default.copyItem(
            atPath: packageRoot.appendingPathComponent("Tests/Fixtures/format4-db").path, toPath: path)
        let db = try LevelDB(path: path)
        defer { db.close() }
        #expect(try db.get(Subspace().pack(["m", "format"]), as: Tuple.self) == Tuple([.int(4)]))
        func data() throws -> [[UInt8]: [UInt8]] {
            var result: [[UInt8]: [UInt8]] = [:]
            let cursor = try db.scan(KeyRange.all, order: .forward)
            while let (k, v) = try cursor.next({ (Array($0), Array($1)) }) {
                if !Subspace(["m"]).contains(k) { result[k] = v }
            }
            return result
        }
        let before = try data()
        var progress: [DocumentStore.IndexBuildProgress] = []
        let store = try DocumentStore(database: db) { progress.append($0) }
        #expect(progress.isEmpty)
        #expect(try db.get(Subspace().pack(["m", "format"]), as: Tuple.self) == Tuple([.int(5)]))
        #expect(try data() == before)
        #expect(try store.verify().isClean)
        #expect(
            try store.collection("notes").find(DocumentQuery().where("tags[]", .equal("b"))).map { $0["_id"] } == [
                "n1", "n2"
            ])
        #expect(try store.changes().map(\.operation.rawValue) == ["insert", "insert", "insert", "insert", "delete"])
        var schema = try store.schema
        schema.collections["notes"]?.replicated = true
        expectError(.notSupported) { try store.apply(schema) }
        schema = try store.schema
        schema.collections["synced"] = CollectionSchema(replicated: true)
        try store.apply(schema)
        try store.collection("synced").insert(["_id": "s1"])
        #expect(try store.collection("synced").revisionLeaves(id: "s1").count == 1)
    }

    @Test func aNewStoreRecordsTheCurrentFormat() throws {
        try withTemporaryDatabase { db, _ throws in
            _ = try DocumentStore(database: db, schema: try peopleSchema())
            #expect(
                try db.get(Subspace().pack(["m", "format"]), as: Tuple.self)
                    == Tuple([.int(DocumentStore.formatVersion)]))
        }
    }
}
