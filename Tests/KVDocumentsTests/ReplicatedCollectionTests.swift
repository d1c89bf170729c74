import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// Replicated collections (design: docs/design/sync.md §1.1–§1.5): schema, the write rules
/// of interactive and replicated edits, conflicts and their resolution.
@Suite struct ReplicatedCollectionTests {
    static func schema(revsLimit: Int = 1000) throws -> DocumentSchema {
        try DocumentSchema(
            json: Data(
                """
                {"collections": {
                  "notes": {"replicated": true, "revsLimit": \(revsLimit),
                            "indexes": [{"name": "by_tag", "fields": ["tags[]"]}, {"name": "by_n", "fields": ["n"]},
                                        {"name": "at", "fields": ["at"], "type": "geo"}],
                            "text": [{"name": "body", "fields": ["text"]}]},
                  "people": {"indexes": [{"name": "by_age", "fields": ["age"]}]}}}
                """.utf8))
    }

    static func withStore<R>(revsLimit: Int = 1000, _ body: (DocumentStore, LevelDB) throws -> R) throws -> R {
        try withTemporaryDatabase { db, _ throws in
            let store = try DocumentStore(database: db, schema: try schema(revsLimit: revsLimit))
            return try body(store, db)
        }
    }

    /// Every key and value of the database, to compare states.
    static func dump(_ db: LevelDB) throws -> [[UInt8]: [UInt8]] {
        var result: [[UInt8]: [UInt8]] = [:]
        let cursor = try db.scan(KeyRange.all, order: .forward)
        while let (k, v) = try cursor.next({ (Array($0), Array($1)) }) { result[k] = v }
        return result
    }

    static func revision(_ doc: JSONValue?) throws -> DocumentRevision {
        guard case .string(let text)? = doc?["_rev"] else {
            throw KVDocsError(.invalidArgument, "no _rev in \(String(describing: doc))")
        }
        return try DocumentRevision.parse(text)
    }

    static func keys(_ db: LevelDB, _ subspace: Subspace) throws -> [[UInt8]] {
        var result: [[UInt8]] = []
        let cursor = try db.scan(subspace.range, order: .forward)
        while let k = try cursor.next({ k, _ in Array(k) }) { result.append(k) }
        return result
    }

    // MARK: - Schema

    @Test func aReplicatedCollectionDefaultsToIDAndWritesItsMembersBack() throws {
        let schema = try Self.schema(revsLimit: 7)
        let notes = try schema.collection("notes")
        #expect(notes.replicated && notes.primaryKey == "_id" && notes.revsLimit == 7)
        #expect(try schema.collection("people").replicated == false)
        let text = String(decoding: schema.jsonData(), as: UTF8.self)
        #expect(text.contains("\"replicated\":true") && text.contains("\"revsLimit\":7"))
        // A collection that is not replicated writes exactly what it wrote before.
        let people = try DocumentSchema(collections: ["people": CollectionSchema(primaryKey: "id")])
        #expect(
            String(decoding: people.jsonData(), as: UTF8.self)
                == #"{"collections":{"people":{"indexes":[],"primaryKey":"id","text":[]}}}"#)
        #expect(try DocumentSchema(json: schema.jsonData()) == schema)
        let swift = try DocumentSchema(collections: ["notes": CollectionSchema(replicated: true, revsLimit: 7)])
        #expect(try swift.collection("notes").primaryKey == "_id")
    }

    @Test func badReplicationMembersAreSchemaErrorsNamingTheCollection() throws {
        func refused(_ json: String, _ fragment: String) {
            let error = expectError(.schema) { try DocumentSchema(json: Data(json.utf8)) }
            #expect(error?.message.contains("\"notes\"") == true, "\(String(describing: error))")
            #expect(error?.message.contains(fragment) == true, "\(String(describing: error))")
        }
        refused(#"{"collections": {"notes": {"replicated": true, "primaryKey": "id"}}}"#, "must be \"_id\"")
        refused(#"{"collections": {"notes": {"replicated": true, "revsLimit": 0}}}"#, "revsLimit")
        refused(#"{"collections": {"notes": {"replicated": true, "revsLimit": 10001}}}"#, "revsLimit")
        refused(#"{"collections": {"notes": {"replicated": true, "revsLimit": 2.5}}}"#, "revsLimit")
        refused(#"{"collections": {"notes": {"revsLimit": 10}}}"#, "only valid with")
        refused(#"{"collections": {"notes": {"replicated": "yes"}}}"#, "true or false")
        expectError(.schema) {
            try DocumentSchema(collections: ["notes": CollectionSchema(primaryKey: "key", replicated: true)])
        }
        expectError(.schema) {
            try DocumentSchema(collections: ["notes": CollectionSchema(replicated: true, revsLimit: 0)])
        }
        expectError(.schema) { try DocumentSchema(collections: ["notes": CollectionSchema(revsLimit: 5)]) }
    }

    @Test func aCollectionWithDocumentsCannotBeMadeReplicated() throws {
        try withTemporaryDatabase { db, _ throws in
            let plain = try DocumentSchema(json: Data(#"{"collections": {"notes": {"primaryKey": "_id"}}}"#.utf8))
            let store = try DocumentStore(database: db, schema: plain)
            try store.collection("notes").insert(["_id": "a"])
            let before = try Self.dump(db)
            let error = expectError(.notSupported) { try store.apply(try Self.schema()) }
            #expect(error?.message.contains("\"notes\"") == true)
            #expect(try Self.dump(db) == before)
        }
    }

    // MARK: - Interactive writes

    @Test func anInsertStoresTheWinnerWithIDAndRevAndATreeBySequenceAndFeedRecord() throws {
        try Self.withStore { store, db in
            let notes = try store.collection("notes")
            let change = try notes.insert(["_id": "a", "text": "hello", "tags": ["x"]])
            #expect(change.operation == .insert && change.id == "a")
            let doc = try notes.get(id: "a")
            let rev = try Self.revision(doc)
            #expect(rev.position == 1 && rev.id.kind == .md5)
            #expect(doc == ["_id": "a", "_rev": .string(rev.description), "text": "hello", "tags": ["x"]])
            #expect(try notes.revisionLeaves(id: "a") == [RevisionLeaf(revision: rev, deleted: false)])
            let layout = store.layout
            #expect(try db.get(layout.bySequence("notes", change.sequence), as: Tuple.self) == Tuple([.string("a")]))
            #expect(try Self.keys(db, layout.bySequence("notes")).count == 1)
            // A live winner's body is in the document key only.
            #expect(try Self.keys(db, layout.replication("notes").subspace(["b"])).isEmpty)
            // The same edit made elsewhere gives the same revision.
            try withTemporaryDatabase { other, _ throws in
                let twin = try DocumentStore(database: other, schema: try Self.schema())
                try twin.collection("notes").insert(["_id": "a", "tags": ["x"], "text": "hello"])
                #expect(try Self.revision(twin.collection("notes").get(id: "a")) == rev)
            }
        }
    }

    @Test func anUpdateIsAChildOfTheWinnerAndAStaleRevIsAConflict() throws {
        try Self.withStore { store, db in
            let notes = try store.collection("notes")
            try notes.insert(["_id": "a", "n": 1])
            let first = try Self.revision(notes.get(id: "a"))
            try notes.update(["_id": "a", "_rev": .string(first.description), "n": 2])
            let second = try Self.revision(notes.get(id: "a"))
            #expect(second.position == 2)
            #expect(try notes.revisionHistory(id: "a", second) == [second, first])
            let before = try Self.dump(db)
            let error = expectError(.conflict) {
                try notes.update(["_id": "a", "_rev": .string(first.description), "n": 3])
            }
            #expect(error?.message.contains("\"notes\"") == true && error?.message.contains(first.description) == true)
            expectError(.conflict) { try notes.upsert(["_id": "a", "_rev": "9-abc", "n": 3]) }
            expectError(.conflict) { try notes.insert(["_id": "a", "n": 3]) }
            expectError(.conflict) { try notes.update(["_id": "zz", "n": 3]) }
            #expect(try Self.dump(db) == before)
            // Without _rev, upsert extends the winner.
            try notes.upsert(["_id": "a", "n": 4])
            #expect(try Self.revision(notes.get(id: "a")).position == 3)
            #expect(try notes.get(id: "a")?["n"] == 4)
            // The by-sequence index holds the document once, at its latest change.
            #expect(try Self.keys(db, store.layout.bySequence("notes")).count == 1)
        }
    }

    @Test func aDeleteMakesATombstoneAndAnInsertRecreatesOnIt() throws {
        try Self.withStore { store, db in
            let notes = try store.collection("notes")
            try notes.insert(["_id": "a", "tags": ["x"]])
            #expect(try notes.delete(id: "a"))
            #expect(try notes.get(id: "a") == JSONValue?.none)
            #expect(try notes.find(DocumentQuery().where("tags[]", .equal("x"))).isEmpty)
            let leaves = try notes.revisionLeaves(id: "a")
            #expect(leaves.count == 1 && leaves[0].deleted && leaves[0].revision.position == 2)
            // The tombstone's body is kept under ("r", coll, "b", …).
            #expect(try Self.keys(db, store.layout.replication("notes").subspace(["b"])).count == 1)
            #expect(try notes.delete(id: "a") == false)
            #expect(try store.changes().last?.operation == .delete)
            try notes.insert(["_id": "a", "tags": ["y"]])
            let rev = try Self.revision(notes.get(id: "a"))
            #expect(rev.position == 3)
            #expect(try notes.revisionHistory(id: "a", rev)?.count == 3)
            #expect(try Self.keys(db, store.layout.replication("notes").subspace(["b"])).isEmpty)
            #expect(try store.changes().last?.operation == .insert)
        }
    }

    @Test func treesAreStemmedToTheRevsLimit() throws {
        try Self.withStore(revsLimit: 3) { store, _ in
            let notes = try store.collection("notes")
            for n in 0..<10 { try notes.upsert(["_id": "a", "n": .int(Int64(n))]) }
            let rev = try Self.revision(notes.get(id: "a"))
            #expect(rev.position == 10)
            #expect(try notes.revisionHistory(id: "a", rev)?.map(\.position) == [10, 9, 8])
        }
    }

    @Test func badInputsAreClearErrorsAndWriteNothing() throws {
        try Self.withStore { store, db in
            let notes = try store.collection("notes")
            try notes.insert(["_id": "a"])
            let before = try Self.dump(db)
            for (doc, fragment) in [
                (["_id": 1] as JSONValue, "must be a string"),
                (["_id": "_design/x"], "underscore"),
                (["_id": ""], "empty"),
                (["_id": .string(String(repeating: "x", count: 1025))], "1025 bytes"),
                (["_id": "b", "_rev": "garbage"], "bad _rev"),
                (["_id": "b", "_rev": 7], "_rev must be a string"),
                (["_id": "b", "_attachments": [:]], "_attachments"),
                (["text": "no id"], "\"_id\"")
            ] {
                let error = expectError(.invalidArgument) { try notes.upsert(doc) }
                #expect(error?.message.contains(fragment) == true, "\(String(describing: error))")
            }
            expectError(.invalidArgument) { try notes.delete(id: 5) }
            #expect(try Self.dump(db) == before)
            // In a batch, the failed write adds nothing; the others are written.
            try store.write { batch in
                #expect(throws: KVDocsError.self) { try batch.insert("notes", ["_id": "_x"]) }
                try batch.insert("notes", ["_id": "c"])
            }
            #expect(try notes.get(id: "c") != nil)
            #expect(try notes.revisionLeaves(id: "_x").isEmpty)
        }
    }

    /// A unique index sees the winner only; a write (interactive or replicated) whose new
    /// winner would break it fails and leaves nothing behind, not even its tree.
    @Test func aUniqueViolationOfTheNewWinnerWritesNothing() throws {
        try withTemporaryDatabase { db, _ throws in
            let schema = try DocumentSchema(
                json: Data(
                    #"{"collections": {"users": {"replicated": true, "indexes": [{"name": "by_email", "fields": ["email"], "unique": true}]}}}"#
                        .utf8))
            let store = try DocumentStore(database: db, schema: schema)
            let users = try store.collection("users")
            try users.insert(["_id": "a", "email": "x@example.com"])
            let r1 = try Self.rev("1-aaa")
            try users.writeReplicated(id: "b", revision: r1, body: ["email": "y@example.com"])
            let before = try Self.dump(db)
            expectError(.uniqueViolation) { try users.insert(["_id": "c", "email": "x@example.com"]) }
            expectError(.uniqueViolation) { try users.upsert(["_id": "b", "email": "x@example.com"]) }
            // A replicated revision that would win with a taken value.
            let r2 = try Self.rev("2-zzz")
            expectError(.uniqueViolation) {
                try users.writeReplicated(
                    id: "b", revision: r2, history: [r2.id, r1.id], body: ["email": "x@example.com"])
            }
            #expect(try Self.dump(db) == before)
            // A losing revision with a taken value is kept: indexes do not see it.
            let r2a = try Self.rev("2-abc"), r2b = try Self.rev("2-bbb")
            try users.writeReplicated(
                id: "b", revision: r2b, history: [r2b.id, r1.id], body: ["email": "z@example.com"])
            try users.writeReplicated(
                id: "b", revision: r2a, history: [r2a.id, r1.id], body: ["email": "x@example.com"])
            #expect(try users.get(id: "b")?["email"] == "z@example.com")
            #expect(try users.conflictInfo(id: "b")?.conflicts == [r2a])
            #expect(try store.verify().isClean)
        }
    }

    /// A layered store cannot share a replicated collection with its base (design §1.1):
    /// opening one with a schema declaring it is refused.
    @Test func aLayeredStoreRefusesABasesReplicatedCollection() throws {
        let dir = TemporaryDirectory()
        do {
            let db = try LevelDB(path: dir.child("base"))
            defer { db.close() }
            try DocumentStore(database: db, schema: try Self.schema()).collection("notes").insert(["_id": "a"])
        }
        let error = expectError(.notSupported) {
            try LayeredDocumentStore(
                user: dir.child("user"), base: dir.child("base"), schema: try Self.schema(), create: true)
        }
        #expect(error?.message.contains("\"notes\"") == true)
    }

    @Test func nonReplicatedCollectionsStoreWhatTheyStoredBefore() throws {
        try Self.withStore { store, db in
            try store.collection("people").insert(["id": 1, "age": 30])
            #expect(try store.collection("people").get(id: 1) == ["id": 1, "age": 30])
            #expect(try Self.keys(db, Subspace(["r"])).isEmpty)
            expectError(.notSupported) { try store.collection("people").conflicts() }
        }
    }

    // MARK: - Replicated edits, conflicts, resolve

    static func rev(_ text: String) throws -> DocumentRevision { try DocumentRevision.parse(text) }

    @Test func replicatedEditsMakeConflictsAndResolveTombstonesTheLosers() throws {
        try Self.withStore { store, db in
            let notes = try store.collection("notes")
            let r1 = try Self.rev("1-aaa"), r2a = try Self.rev("2-bbb"), r2b = try Self.rev("2-ccc")
            #expect(try notes.writeReplicated(id: "d", revision: r1, body: ["tags": ["one"]]) != nil)
            try notes.writeReplicated(id: "d", revision: r2a, history: [r2a.id, r1.id], body: ["tags": ["a"]])
            let change = try notes.writeReplicated(
                id: "d", revision: r2b, history: [r2b.id, r1.id], body: ["tags": ["b"]])
            #expect(change?.operation == .update)
            // The winner is the greater id; the loser's body is kept beside it.
            #expect(try notes.get(id: "d") == ["_id": "d", "_rev": "2-ccc", "tags": ["b"]])
            let conflicts = try notes.conflicts()
            #expect(
                conflicts.map(\.id) == ["d"] && conflicts.first?.winner == r2b && conflicts.first?.conflicts == [r2a])
            #expect(conflicts.first?.winnerDeleted == false && conflicts.first?.deletedConflicts == [])
            #expect(try notes.find(DocumentQuery().where("tags[]", .equal("a"))).isEmpty)
            // The same revision again: nothing written.
            let before = try Self.dump(db)
            #expect(
                try notes.writeReplicated(id: "d", revision: r2a, history: [r2a.id, r1.id], body: ["tags": ["a"]])
                    == nil)
            #expect(try Self.dump(db) == before)
            // Deleting the winner brings the other leaf back.
            try notes.delete(id: "d")
            #expect(try notes.get(id: "d") == ["_id": "d", "_rev": "2-bbb", "tags": ["a"]])
            #expect(try notes.conflicts().isEmpty)
            #expect(try notes.find(DocumentQuery().where("tags[]", .equal("a"))).count == 1)
            // A new conflict, resolved by keeping the loser.
            let r3 = try Self.rev("3-ddd")
            try notes.writeReplicated(id: "d", revision: r3, history: [r3.id, r2b.id, r1.id], body: ["tags": ["c"]])
            #expect(
                try notes.conflictInfo(id: "d")?.conflicts == [
                    try Self.revision(notes.get(id: "d")) == r3 ? Self.rev("2-bbb") : r3
                ])
            let tombstones = try notes.resolve(id: "d", keep: try Self.rev("2-bbb"))
            #expect(tombstones.count == 1 && tombstones[0].position == 4)
            #expect(try notes.get(id: "d")?["_rev"] == "2-bbb")
            #expect(try notes.conflicts().isEmpty)
            #expect(try notes.resolve(id: "d", keep: try Self.rev("2-bbb")).isEmpty)
            expectError(.invalidArgument) { try notes.resolve(id: "d", keep: try Self.rev("3-ddd")) }
            expectError(.notFound) { try notes.resolve(id: "nope", keep: r1) }
            #expect(try store.verify().isClean)
        }
    }

    @Test func saveFollowsCouchDBsPutRulesAndReturnsTheRevisionItMade() throws {
        try Self.withStore { store, db in
            let notes = try store.collection("notes")
            // New: 1-…, the document's _rev.
            let (r1, change1) = try notes.save(["_id": "d", "tags": ["a"]])
            #expect(r1.position == 1 && change1.operation == .insert)
            #expect(try Self.revision(notes.get(id: "d")) == r1)
            // Without _rev an existing document is a conflict; a stale _rev too. Nothing written.
            let before = try Self.dump(db)
            expectError(.conflict) { try notes.save(["_id": "d", "tags": ["b"]]) }
            expectError(.conflict) { try notes.save(["_id": "d", "_rev": "1-0000", "tags": ["b"]]) }
            expectError(.conflict) { try notes.save(["_id": "d", "_deleted": true]) }
            expectError(.invalidArgument) {
                try notes.save(["_id": "d", "_rev": .string(r1.description), "_deleted": 1])
            }
            expectError(.invalidArgument) { try notes.save(["x"]) }
            expectError(.notSupported) { try store.collection("people").save(["_id": "p"]) }
            #expect(try Self.dump(db) == before)
            // An edit of the winner.
            let (r2, _) = try notes.save(["_id": "d", "_rev": .string(r1.description), "tags": ["b"]])
            #expect(r2.position == 2)
            #expect(try notes.get(id: "d") == ["_id": "d", "_rev": .string(r2.description), "tags": ["b"]])
            // A conflicting branch (2-ffff beside r2) and an edit of the winner: deleting that
            // edit returns its tombstone, not the leaf that wins next.
            let other = try Self.rev("2-ffff")
            try notes.writeReplicated(id: "d", revision: other, history: [other.id, r1.id], body: ["tags": ["c"]])
            let winner = try #require(try notes.revisionLeaves(id: "d").first).revision
            let (r3, _) = try notes.save(["_id": "d", "_rev": .string(winner.description), "tags": ["e"]])
            #expect(r3.position == 3)
            let (tombstone, change) = try notes.save(["_id": "d", "_rev": .string(r3.description), "_deleted": true])
            #expect(tombstone.position == 4 && change.operation == .update)
            let leaves = try notes.revisionLeaves(id: "d")
            #expect(leaves.contains(RevisionLeaf(revision: tombstone, deleted: true)))
            #expect(leaves.first?.deleted == false && leaves.first?.revision != tombstone)
            // Deleting each live winner in turn: the document reads as absent once none is left.
            while let winner = try notes.revisionLeaves(id: "d").first, !winner.deleted {
                try notes.save(["_id": "d", "_rev": .string(winner.revision.description), "_deleted": true])
            }
            let dead = try notes.revisionLeaves(id: "d")[0]
            #expect(try dead.deleted && notes.get(id: "d") == nil)
            expectError(.notFound) {
                try notes.save(["_id": "d", "_rev": .string(dead.revision.description), "_deleted": true])
            }
            // Re-creating continues the deleted branch.
            let (again, _) = try notes.save(["_id": "d", "tags": ["z"]])
            #expect(again.position == dead.revision.position + 1)
            #expect(try store.verify().isClean)
        }
    }

    @Test func inconsistentReplicatedHistoriesAreRefused() throws {
        try Self.withStore { store, db in
            let notes = try store.collection("notes")
            let r2 = try Self.rev("2-bbb"), r1 = try Self.rev("1-aaa")
            let before = try Self.dump(db)
            expectError(.invalidArgument) {
                try notes.writeReplicated(id: "d", revision: r2, history: [r1.id, r2.id], body: [:])
            }
            expectError(.invalidArgument) {
                try notes.writeReplicated(id: "d", revision: r2, history: [r2.id, r2.id], body: [:])
            }
            expectError(.invalidArgument) {
                try notes.writeReplicated(id: "d", revision: r1, history: [r1.id, r2.id], body: [:])
            }
            expectError(.invalidArgument) { try notes.writeReplicated(id: "d", revision: r1, body: ["_x": 1]) }
            expectError(.invalidArgument) { try notes.writeReplicated(id: "_d", revision: r1, body: [:]) }
            #expect(try Self.dump(db) == before)
            // A history that reaches a stored revision through another parent would put it
            // twice in the tree: refused, nothing written.
            try notes.writeReplicated(id: "e", revision: r2, history: [r2.id, r1.id], body: [:])
            let inside = try Self.dump(db)
            let error = expectError(.invalidArgument) {
                try notes.writeReplicated(id: "e", revision: r2, history: [r2.id, try Self.rev("1-ccc").id], body: [:])
            }
            #expect(error?.message.contains("twice") == true && error?.message.contains("\"e\"") == true)
            #expect(try Self.dump(db) == inside)
        }
    }

    // MARK: - _local documents

    @Test func localDocumentsCountTheirRevisionsAndStayOutOfTheFeedAndTheTrees() throws {
        try Self.withStore { store, db in
            let notes = try store.collection("notes")
            let feed = try store.changes().count
            #expect(try notes.localDocument("_local/cp") == nil)
            #expect(
                try notes.putLocalDocument("_local/cp", body: ["last_seq": 5, "_id": "_local/cp"], ifRev: nil) == "0-1")
            #expect(try notes.localDocument("cp")?.rev == "0-1")
            #expect(try notes.localDocument("cp")?.body == ["last_seq": 5])
            let before = try Self.dump(db)
            let error = expectError(.conflict) { try notes.putLocalDocument("cp", body: [:], ifRev: "0-7") }
            #expect(error?.message.contains("0-1") == true)
            expectError(.conflict) { try notes.putLocalDocument("cp", body: [:], ifRev: nil) }
            expectError(.conflict) { try notes.deleteLocalDocument("cp", rev: "0-2") }
            expectError(.invalidArgument) { try notes.putLocalDocument("_local/", body: [:], ifRev: nil) }
            expectError(.notSupported) { try store.collection("people").localDocument("cp") }
            #expect(try Self.dump(db) == before)
            #expect(try notes.putLocalDocument("cp", body: ["last_seq": 9], ifRev: "0-1") == "0-2")
            // A new document may be written with any 0-… revision (CouchDB's replicator sends one).
            #expect(try notes.putLocalDocument("other", body: [:], ifRev: "0-4") == "0-1")
            try notes.deleteLocalDocument("cp", rev: "0-2")
            #expect(try notes.localDocument("cp") == nil)
            expectError(.notFound) { try notes.deleteLocalDocument("cp", rev: "0-2") }
            #expect(try store.changes().count == feed)
            #expect(try Self.keys(db, store.layout.revisionTrees("notes")).isEmpty)
            #expect(try notes.find().isEmpty)
        }
    }

    // MARK: - Property test against a model

    /// The model: per id, a tree built with ``RevisionTree`` directly and the bodies of its
    /// leaves; the sequence of each id's last change.
    struct Model {
        var trees: [String: RevisionTree] = [:]
        var bodies: [String: [DocumentRevision: JSONObject]] = [:]
        var lastSequence: [String: Int64] = [:]
        let limit: Int
    }

    @Test(arguments: [1, 2, 3, 4]) func randomEditsAgreeWithTheModelAndIndexesHoldOnlyWinners(seed: UInt64) throws {
        let limit = [2, 3, 1000][Int(seed % 3)]
        try Self.withStore(revsLimit: limit) { store, db in
            let notes = try store.collection("notes")
            var rng = SplitMix64(seed: seed)
            var model = Model(limit: limit)
            let ids = ["a", "b", "c", "d"]
            for step in 0..<150 {
                let id = ids[Int(rng.next() % UInt64(ids.count))]
                let body: JSONObject = [
                    "n": .int(Int64(rng.next() % 5)), "tags": .array([.string(["x", "y", "z"][Int(rng.next() % 3)])]),
                    "text": .string(["red fox", "blue fox", "red hen"][Int(rng.next() % 3)]),
                    "at": ["lat": .double(Double(rng.next() % 90)), "lon": .double(Double(rng.next() % 90))]
                ]
                var tree = model.trees[id] ?? RevisionTree()
                let winner = tree.winner
                let live = winner.map { !$0.deleted } ?? false
                switch rng.next() % 4 {
                case 0, 1:
                    // Interactive upsert: a child of the winner.
                    var doc = body
                    doc["_id"] = .string(id)
                    let change = try notes.upsert(.object(doc))
                    let rev = DocumentRevision(
                        position: (winner?.revision.position ?? 0) + 1,
                        id: RevisionTree.newRevisionID(
                            parent: winner?.revision, deleted: false,
                            canonicalBody: try DocumentStore.storedBytes(.object(body))))
                    var nodes: [RevisionTree.PathNode] = []
                    if let w = winner { nodes.append(.init(id: w.revision.id, value: .missing)) }
                    nodes.append(.init(id: rev.id, value: .stored(deleted: false)))
                    tree.merge(try RevisionTree.Path(start: winner?.revision.position ?? 1, nodes: nodes))
                    model.bodies[id, default: [:]][rev] = body
                    model.lastSequence[id] = change.sequence
                case 2 where live:
                    try notes.delete(id: .string(id))
                    let w = try #require(winner)
                    let rev = DocumentRevision(
                        position: w.revision.position + 1,
                        id: RevisionTree.newRevisionID(
                            parent: w.revision, deleted: true,
                            canonicalBody: try DocumentStore.storedBytes(.object([:]))))
                    tree.merge(
                        try RevisionTree.Path(
                            start: w.revision.position,
                            nodes: [
                                .init(id: w.revision.id, value: .missing),
                                .init(id: rev.id, value: .stored(deleted: true))
                            ]))
                    model.bodies[id, default: [:]][rev] = [:]
                    model.lastSequence[id] = try store.changes().last?.sequence
                default:
                    // Replicated edit: a branch of 1–3 new revisions from a random known
                    // revision (or a new root), maybe deleted, with its history.
                    let known = tree.revisions
                    var history: [RevisionID] = []
                    var position = 0
                    if !known.isEmpty, rng.next() % 5 != 0 {
                        let base = known[Int(rng.next() % UInt64(known.count))]
                        history = tree.history(of: base) ?? []
                        position = base.position
                    }
                    for _ in 0..<(1 + Int(rng.next() % 3)) {
                        let random = (0..<16).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                        history.insert(RevisionID(md5: random), at: 0)
                        position += 1
                    }
                    let deleted = rng.next() % 4 == 0
                    let rev = DocumentRevision(position: position, id: history[0])
                    var candidate = tree
                    candidate.merge(
                        try RevisionTree.Path(position: position, history: history, leaf: .stored(deleted: deleted)))
                    var stemmed = candidate
                    stemmed.stem(limit: limit)
                    if stemmed.hasDuplicateRevisions {
                        expectError(.invalidArgument) {
                            try notes.writeReplicated(
                                id: id, revision: rev, history: history, deleted: deleted, body: body)
                        }
                        continue
                    }
                    let change = try notes.writeReplicated(
                        id: id, revision: rev, history: history, deleted: deleted, body: body)
                    tree = candidate
                    model.bodies[id, default: [:]][rev] = deleted ? [:] : body
                    model.lastSequence[id] = try #require(change).sequence
                }
                tree.stem(limit: limit)
                tree.dropInternalBodies()
                model.trees[id] = tree
                try Self.check(store, db, model, step: step, seed: seed)
            }
            // Indexes hold the winners only: the secondary and geo entries are those rebuilt
            // from scratch, byte for byte; text searches find exactly the live winners whose
            // text has the term, before and after the rebuild (text blocks may be laid out
            // differently).
            let indexKeys = {
                try Self.dump(db).filter { k, _ in
                    ["i", "g"].contains { store.layout.root.subspace([.string($0), "notes"]).contains(k) }
                }
            }
            func searched(_ term: String) throws -> Set<String> {
                Set(
                    try store.read { try $0.search("notes", term) }.compactMap {
                        if case .string(let s) = $0.id { s } else { nil }
                    })
            }
            let expectedRed = Set(
                model.trees.compactMap { id, tree -> String? in
                    guard let w = tree.winner, !w.deleted,
                        case .string(let text)? = model.bodies[id]?[w.revision]?["text"], text.contains("red")
                    else { return nil }
                    return id
                })
            #expect(try searched("red") == expectedRed)
            let incremental = try indexKeys()
            #expect(!incremental.isEmpty)
            try store.reindex(collection: "notes")
            #expect(try indexKeys() == incremental)
            #expect(try searched("red") == expectedRed)
            #expect(try store.verify().isClean)
            // Reopened, everything reads the same.
            let reopened = try DocumentStore(database: db)
            try Self.check(reopened, db, model, step: -1, seed: seed)
        }
    }

    static func check(_ store: DocumentStore, _ db: LevelDB, _ model: Model, step: Int, seed: UInt64) throws {
        let notes = try store.collection("notes")
        var conflicted: [ConflictInfo] = []
        for (id, tree) in model.trees.sorted(by: { $0.key < $1.key }) {
            let winner = try #require(tree.winner)
            let doc = try notes.get(id: .string(id))
            if winner.deleted {
                #expect(doc == JSONValue?.none, "seed \(seed) step \(step) id \(id)")
            } else {
                let body = try #require(model.bodies[id]?[winner.revision])
                #expect(
                    doc == DocumentStore.winnerDocument(body, id: id, revision: winner.revision),
                    "seed \(seed) step \(step) id \(id)")
            }
            #expect(
                try notes.revisionLeaves(id: id)
                    == tree.leaves.map { RevisionLeaf(revision: $0.revision, deleted: $0.deleted) },
                "seed \(seed) step \(step) id \(id)")
            if !tree.conflicts.isEmpty { conflicted.append(try ConflictInfo(id: id, tree: tree)) }
            // Bodies of the leaves other than a live winner, and nothing else.
            let stored = try keys(db, store.layout.replication("notes").subspace(["b", .string(id)])).count
            #expect(stored == tree.leaves.count - (winner.deleted ? 0 : 1), "seed \(seed) step \(step) id \(id)")
        }
        #expect(try notes.conflicts() == conflicted, "seed \(seed) step \(step)")
        // By sequence: each document once, at its last change.
        var bySequence: [String: Int64] = [:]
        let subspace = store.layout.bySequence("notes")
        let cursor = try db.scan(subspace.range, order: .forward)
        while let (k, v) = try cursor.next({ (Array($0), Array($1)) }) {
            guard case .int(let seq) = try subspace.unpack(k).elements.first,
                case .string(let id)? = try v.withUnsafeBytes({ try Tuple(storedBytes: $0) }).elements.first
            else {
                Issue.record("bad by-sequence entry")
                continue
            }
            #expect(bySequence.updateValue(seq, forKey: id) == nil)
        }
        #expect(bySequence == model.lastSequence, "seed \(seed) step \(step)")
    }
    /// An export of a replicated collection imports with its revisions: the same winners
    /// and `_rev`s, a second import changes nothing, and a line's CouchDB `_revisions` and
    /// `_deleted` are read; a bad one stops the import naming the line.
    @Test func exportedRevisionsImportAsTheyWereAndASecondImportWritesNothing() throws {
        let dir = TemporaryDirectory()
        let file = dir.child("notes.jsonl")
        var exported: [JSONValue] = []
        try Self.withStore { store, _ in
            let notes = try store.collection("notes")
            try notes.insert(["_id": "a", "n": 1, "text": "first words"])
            try notes.update([
                "_id": "a", "n": 2, "text": "second words",
                "_rev": .string(try Self.revision(try notes.get(id: "a")).description)
            ])
            try notes.insert(["_id": "b", "n": 3, "tags": ["x"]])
            try notes.insert(["_id": "c", "n": 4])
            try notes.delete(id: "c")
            #expect(try store.exportJSONLines(from: "notes", to: file) == 2)
            exported = try notes.find(DocumentQuery()).sorted {
                $0["_id"]?.compactDescription ?? "" < $1["_id"]?.compactDescription ?? ""
            }
        }
        try Self.withStore { store, db in
            #expect(try store.importJSONLines(into: "notes", path: file) == 2)
            let notes = try store.collection("notes")
            let imported = try notes.find(DocumentQuery()).sorted {
                $0["_id"]?.compactDescription ?? "" < $1["_id"]?.compactDescription ?? ""
            }
            #expect(imported == exported)
            #expect(try notes.revisionLeaves(id: "a").map(\.revision) == [try Self.revision(exported[0])])
            let before = try Self.dump(db)
            try store.importJSONLines(into: "notes", path: file)
            #expect(try Self.dump(db) == before, "a second import wrote something")

            // CouchDB's fields: a history and a tombstone.
            let r1 = "1-" + String(repeating: "1", count: 32), r2 = "2-" + String(repeating: "2", count: 32)
            let couch = dir.child("couch.jsonl")
            try Data(
                ("{\"_id\": \"d\", \"_rev\": \"\(r2)\", \"_revisions\": {\"start\": 2, \"ids\": [\"\(String(repeating: "2", count: 32))\", \"\(String(repeating: "1", count: 32))\"]}, \"n\": 5}\n"
                    + "{\"_id\": \"e\", \"_rev\": \"\(r1)\", \"_deleted\": true}\n").utf8
            ).write(to: URL(fileURLWithPath: couch))
            try store.importJSONLines(into: "notes", path: couch)
            #expect(try notes.get(id: "d")?["_rev"] == .string(r2))
            #expect(
                try store.read { try $0.revisionHistory("notes", id: "d", revision: try DocumentRevision.parse(r2)) }?
                    .count
                    == 2)
            #expect(try notes.get(id: "e") == nil)
            #expect(try notes.revisionLeaves(id: "e").map(\.deleted) == [true])

            let bad = dir.child("bad.jsonl")
            try Data(
                "{\"_id\": \"f\", \"_rev\": \"\(r2)\", \"_revisions\": {\"start\": 3, \"ids\": [\"\(String(repeating: "2", count: 32))\"]}}\n"
                    .utf8
            )
            .write(to: URL(fileURLWithPath: bad))
            let unchanged = try Self.dump(db)
            let error = expectError(.invalidArgument) { try store.importJSONLines(into: "notes", path: bad) }
            #expect(error?.message.contains("bad.jsonl:1") == true, "\(String(describing: error))")
            #expect(try Self.dump(db) == unchanged)
        }
    }

    /// `verify` checks a replicated collection's revision records against its documents:
    /// clean after writes and conflicts, and each kind of damage (a lost tree, a lost body,
    /// a stale `_rev`, a document whose winner is a deletion, a lost by-sequence entry) is
    /// reported, naming the document.
    @Test func verifyReportsEveryDisagreementBetweenRevisionRecordsAndDocuments() throws {
        try Self.withStore { store, db in
            let notes = try store.collection("notes")
            for id in ["a", "b", "c", "d", "e"] { try notes.insert(["_id": .string(id), "n": 1]) }
            let first = try Self.revision(try notes.get(id: "b"))
            try notes.upsert(["_id": "b", "n": 3])
            let branch = try DocumentRevision.parse("2-" + String(repeating: "9", count: 32))
            try notes.writeReplicated(id: "b", revision: branch, history: [branch.id, first.id], body: ["n": 2])
            try notes.delete(id: "e")
            let initial = try store.verify()
            #expect(initial.isClean, "\(initial)")
            let layout = store.layout
            let losing = try #require(try notes.conflictInfo(id: "b")?.conflicts.first)

            let cases: [(String, () throws -> Void)] = [
                ("\"a\" has no revision tree", { try db.delete(layout.revisionTree("notes", "a")) }),
                ("is missing", { try db.delete(layout.revisionBody("notes", "b", losing)) }),
                (
                    "_rev is",
                    {
                        let doc: JSONValue = [
                            "_id": "c", "_rev": .string("1-" + String(repeating: "0", count: 32)), "n": 1
                        ]
                        try db.put(layout.document("notes", .string("c")), try DocumentStore.storedBytes(doc))
                    }
                ),
                (
                    "is a deletion",
                    {
                        try db.put(
                            layout.document("notes", .string("e")),
                            try DocumentStore.storedBytes(["_id": "e", "_rev": "1-x", "n": 1]))
                    }
                ),
                (
                    "no by-sequence entry",
                    {
                        let entries = try db.entries(layout.bySequence("notes").range, order: .forward, limit: 1)
                            .collect()
                        try db.delete(try #require(entries.first).key)
                    }
                )
            ]
            for (expected, damage) in cases {
                let before = try Self.dump(db)
                try damage()
                let report = try store.verify(collection: "notes")
                #expect(!report.isClean && report.problems.contains { $0.contains(expected) }, "\(expected): \(report)")
                let batch = WriteBatch()
                for (k, _) in try Self.dump(db) where before[k] == nil { batch.delete(k) }
                for (k, v) in before { batch.put(k, v) }
                try db.write(batch)
                #expect(try store.verify().isClean)
            }
        }
    }
}

extension DocumentCollection {
    /// `revisionHistory` through a read transaction, for brevity.
    func revisionHistory(id: String, _ revision: DocumentRevision) throws -> [DocumentRevision]? {
        try store.read { try $0.revisionHistory(name, id: id, revision: revision) }
    }

}
