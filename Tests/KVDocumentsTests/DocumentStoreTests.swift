import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@Suite struct DocumentStoreTests {
    @Test func insertGetUpsertUpdateDeleteAndCount() throws {
        try withPeopleStore { store, people throws in
            try people.insert(["id": "p1", "name": "Ada", "age": 36])
            #expect(try people.get(id: "p1") == ["id": "p1", "name": "Ada", "age": 36])
            #expect(try people.get(id: "nobody") == nil)
            #expect(throws: KVDocsError.self) { try people.insert(["id": "p1"]) }
            try people.upsert(["id": "p1", "name": "Ada L."])
            #expect(try people.get(id: "p1")?["age"] == nil)
            #expect(throws: KVDocsError.self) { try people.update(["id": "p2"]) }
            try people.update(["id": "p1", "age": 37])
            try people.insert(["id": 7, "age": 1])
            #expect(try people.count() == 2)
            #expect(try people.find().map { $0["id"] } == ["p1", 7])  // ids: strings before integers
            #expect(try people.delete(id: "p1"))
            #expect(try people.delete(id: "p1") == false)
            #expect(try people.count() == 1)
            #expect(try store.lastSequence == 5)
            #expect(try store.verify().isClean)
        }
    }

    @Test func badDocumentsAreRejectedWithClearErrors() throws {
        try withPeopleStore { store, people throws in
            let cases: [(JSONValue, String)] = [
                (["name": "x"], #"document has no primary key field "id" (collection "people")"#),
                (["id": 1.5], #"primary key "id" of collection "people" must be a string or an integer, not 1.5"#),
                (["id": ["a"]], #"primary key "id" of collection "people" must be a string or an integer, not ["a"]"#),
                ([1, 2], "a document must be a JSON object, not an array")
            ]
            for (doc, message) in cases {
                do {
                    try people.insert(doc)
                    Issue.record("accepted \(doc)")
                } catch let error as KVDocsError {
                    #expect(error.message == message)
                }
            }
            #expect(throws: KVDocsError.self) { _ = try store.collection("nope") }
            #expect(try store.lastSequence == 0)
        }
    }

    @Test func uniqueViolationNamesIndexAndValueAndWritesNothing() throws {
        try withPeopleStore { store, people throws in
            try people.insert(["id": "a", "email": "x@y.org", "age": 1])
            let before = try store.lastSequence
            do {
                try people.insert(["id": "b", "email": "x@y.org", "age": 2])
                Issue.record("duplicate accepted")
            } catch let error as KVDocsError {
                #expect(error.kind == .uniqueViolation)
                #expect(
                    error.message
                        == #"unique index "by_email" of "people" already has "x@y.org" (document "a"); document "b" cannot have it too"#
                )
            }
            #expect(try people.get(id: "b") == nil)
            #expect(try people.count(DocumentQuery().where("age", .equal(2))) == 0)
            #expect(try store.lastSequence == before)
            // The owner may rewrite its own value; after a delete the value is free again.
            try people.upsert(["id": "a", "email": "x@y.org", "age": 5])
            try people.delete(id: "a")
            try people.insert(["id": "b", "email": "x@y.org"])
            #expect(try store.verify().isClean)
        }
    }

    @Test func typedCollectionsStoreCodableValues() throws {
        struct Person: Codable, Equatable {
            var id: String
            var name: String
            var age: Int
            var tags: [String]
        }
        try withPeopleStore { store, _ throws in
            let people = try store.collection("people", of: Person.self)
            try people.insert(Person(id: "p1", name: "Ada", age: 36, tags: ["math"]))
            try people.insert(Person(id: "p2", name: "Alan", age: 41, tags: ["math", "code"]))
            #expect(try people.get(id: "p1") == Person(id: "p1", name: "Ada", age: 36, tags: ["math"]))
            #expect(try people.find(DocumentQuery().where("tags[]", .equal("code"))).map(\.name) == ["Alan"])
            #expect(
                try people.find(DocumentQuery().where("age", .greater(30)).orderBy("age", descending: true)).map(\.id)
                    == [
                        "p2", "p1"
                    ])
        }
    }

    @Test func numbersCompareByValueWhateverTheirSpelling() throws {
        try withPeopleStore { _, people throws in
            try people.insert(["id": "a", "age": 30])
            try people.insert(["id": "b", "age": 30.0])
            try people.insert(["id": "c", "age": 29.5])
            try people.insert(["id": "d", "age": .int(9007199254740993)])
            try people.insert(["id": "e", "age": .int(9007199254740992)])
            try people.insert(["id": "f", "age": "30"])
            func ids(_ q: DocumentQuery) throws -> [String] {
                try people.find(q).compactMap { if case .string(let s)? = $0["id"] { s } else { nil } }
            }
            #expect(try ids(DocumentQuery().where("age", .equal(30))) == ["a", "b"])
            #expect(try ids(DocumentQuery().where("age", .less(30))) == ["c"])
            #expect(try ids(DocumentQuery().where("age", .greater(.int(9007199254740992)))) == ["d"])
            #expect(try ids(DocumentQuery().where("age", .equal(.double(9007199254740992)))) == ["e"])
            #expect(
                try ids(DocumentQuery().where("age", .greaterOrEqual(0)).orderBy("age")) == ["c", "a", "b", "e", "d"])
            #expect(try ids(DocumentQuery().where("age", .equal("30"))) == ["f"])  // a string is not a number
            // and ranges stay within a type
            #expect(try ids(DocumentQuery().where("age", .greater(1000))) == ["d", "e"])
        }
    }

    @Test(arguments: TestBackend.differential)
    func queriesMatchABruteForceModel(backend: TestBackend) throws {
        try backend.withStore(schema: try peopleSchema()) { store throws in
            let people = try store.collection("people")
            var rng = SplitMix64(seed: 31)
            var model: [JSONValue: JSONValue] = [:]
            let ids: [JSONValue] = (0..<70).map { $0 % 7 == 0 ? .int(Int64($0)) : .string(String(format: "p%03d", $0)) }
            for _ in 0..<400 {
                let id = ids.randomElement(using: &rng)!
                let doc = DocumentGenerator.document(id: id, &rng)
                let op = Int.random(in: 0..<10, using: &rng)
                let emailTaken =
                    doc["email"].map { email in model.contains { $0.key != id && $0.value["email"] == email } } ?? false
                do {
                    switch op {
                    case 0..<4:
                        try people.insert(doc)
                        #expect(model[id] == nil && !emailTaken)
                        model[id] = doc
                    case 4..<7:
                        try people.upsert(doc)
                        #expect(!emailTaken)
                        model[id] = doc
                    case 7:
                        try people.update(doc)
                        #expect(model[id] != nil && !emailTaken)
                        model[id] = doc
                    default:
                        #expect(try people.delete(id: id) == (model[id] != nil))
                        model[id] = nil
                    }
                } catch let error as KVDocsError {
                    // Only the expected failures: an existing/missing id or a taken email.
                    let expected = (op < 4 && model[id] != nil) || (op == 7 && model[id] == nil) || emailTaken
                    #expect(expected, "\(error)")
                    #expect(error.kind == .conflict || error.kind == .uniqueViolation)
                }
            }
            #expect(try store.verify().isClean)
            var usedIndex = 0
            let queries = backend == .etcd ? 200 : 600  // over etcd, where each is several requests
            for _ in 0..<queries {
                let query = DocumentGenerator.query(&rng)
                let expected = ReferenceSemantics.answer(model, query)
                let actual = try people.find(query).map { $0["id"] ?? .null }
                let plan = try people.explain(query)
                #expect(
                    actual == expected,
                    "\(query.conditions) order \(String(describing: query.order)) limit \(String(describing: query.limit)) offset \(query.offset)\n\(plan)"
                )
                var unlimited = query
                unlimited.limit = nil
                unlimited.offset = 0
                #expect(try people.count(query) == ReferenceSemantics.answer(model, unlimited).count)
                if plan.index != nil { usedIndex += 1 }
            }
            #expect(usedIndex > queries / 3)  // the planner's index paths were exercised
        }
    }
}

@Suite struct DocumentBatchTests {
    /// Ids that Swift's `==` calls equal but whose code points differ (NFC and NFD é) are
    /// two documents, each with its own index entries, even written one after the other in
    /// a batch (the maintainers of a document share its encoded id).
    @Test func idsEqualOnlyUnderCanonicalEquivalenceKeepTheirOwnIndexEntries() throws {
        try withPeopleStore { store, people throws in
            try store.write { batch in
                try batch.insert("people", ["id": "\u{E9}", "age": 30, "email": "nfc@x", "last": "A"])
                try batch.insert("people", ["id": "e\u{301}", "age": 30, "email": "nfd@x", "last": "B"])
                try batch.insert("people", ["id": 7, "age": 30, "email": "seven@x", "last": "C"])
            }
            #expect(try store.verify().isClean)
            let byAge = try people.find(DocumentQuery().where("age", .equal(30))).map { $0["last"] ?? .null }
            #expect(Set(byAge) == ["A", "B", "C"] && byAge.count == 3)
            #expect(try people.find(DocumentQuery().where("email", .equal("nfd@x"))).first?["id"] == "e\u{301}")
            #expect(try people.find(DocumentQuery().where("email", .equal("nfc@x"))).first?["id"] == "\u{E9}")
        }
    }

    @Test func aBatchAppliesAllItsWritesOrNone() throws {
        try withPeopleStore { store, people throws in
            try store.write { batch in
                try batch.insert("people", ["id": "a", "email": "a@x"])
                try batch.insert("people", encoding: ["id": "b", "email": "b@x"] as [String: String])
                try batch.delete("people", id: "a")
            }
            #expect(try people.find().map { $0["id"] } == ["b"])
            #expect(try store.lastSequence == 3)
            // A unique violation in the middle: nothing of the batch is written.
            #expect(throws: KVDocsError.self) {
                try store.write { batch in
                    try batch.insert("people", ["id": "c", "email": "c@x"])
                    try batch.insert("people", ["id": "d", "email": "b@x"])
                }
            }
            #expect(try people.get(id: "c") == nil)
            #expect(try store.lastSequence == 3)
            #expect(try store.verify().isClean)
        }
    }
}

@Suite struct SyncWriteTests {
    struct Person: Codable, Equatable {
        var id: String
        var age: Int
    }

    /// `sync: true` reaches LevelDB's write options on every write API (one synced LevelDB
    /// write each), and the default does not sync.
    @Test func syncReachesLevelDBFromEveryWriteAPI() throws {
        try withPeopleStore { store, people throws in
            let db = try store.leveldb
            let typed = try store.collection("people", of: Person.self)
            func synced(_ body: () throws -> Void) throws -> Int {
                let before = db.syncedWrites
                try body()
                return db.syncedWrites - before
            }
            #expect(try synced { try people.insert(["id": "a", "age": 1]) } == 0)
            #expect(try synced { try people.insert(["id": "b", "age": 2], sync: true) } == 1)
            #expect(try synced { try people.upsert(["id": "b", "age": 3], sync: true) } == 1)
            #expect(try synced { try people.update(["id": "b", "age": 4], sync: true) } == 1)
            var deleted = false
            #expect(try synced { deleted = try people.delete(id: "a", sync: true) } == 1 && deleted)
            // nothing to delete, but earlier writes are made durable
            #expect(try synced { deleted = try people.delete(id: "a", sync: true) } == 1 && !deleted)
            #expect(try synced { try typed.insert(Person(id: "t", age: 5), sync: true) } == 1)
            #expect(try synced { try typed.upsert(Person(id: "t", age: 6), sync: true) } == 1)
            #expect(try synced { try typed.update(Person(id: "t", age: 7), sync: true) } == 1)
            #expect(try synced { try typed.upsert(Person(id: "u", age: 8)) } == 0)
            #expect(try synced { deleted = try typed.delete(id: "u", sync: true) } == 1 && deleted)
            #expect(
                try synced {
                    try store.write(sync: true) { batch in
                        try batch.insert("people", ["id": "c"])
                        try batch.insert("people", ["id": "d"])
                    }
                } == 1)
            #expect(
                try synced { deleted = try store.write { batch in try batch.delete("people", id: "d") } } == 0
                    && deleted)
            #expect(
                try synced {
                    try db.put("raw", "1", sync: true)
                    try db.delete("raw", sync: true)
                } == 2)
            #expect(try synced { try db.write(sync: true) { $0.put("raw", "2") } } == 1)
            #expect(
                try synced {
                    try db.put("raw", "3")
                    try db.write { $0.delete("raw") }
                } == 0)
            #expect(try store.verify().isClean)
        }
    }

    @Test func writesMadeWithSyncAreReadableAfterCloseAndReopen() throws {
        let dir = TemporaryDirectory()
        let path = dir.child("db")
        do {
            let db = try LevelDB(path: path)
            defer { db.close() }
            let store = try DocumentStore(database: db, schema: try peopleSchema())
            let people = try store.collection("people"), typed = try store.collection("people", of: Person.self)
            try people.insert(["id": "a", "age": 1], sync: true)
            try people.upsert(["id": "b", "age": 2], sync: true)
            try people.update(["id": "b", "age": 3], sync: true)
            try people.insert(["id": "gone"], sync: true)
            #expect(try people.delete(id: "gone", sync: true))
            try typed.insert(Person(id: "t", age: 4), sync: true)
            _ = try store.write(sync: true) { batch in try batch.upsert("people", ["id": "c", "age": 5]) }
        }
        var options = LevelDBOptions()
        options.createIfMissing = false
        let db = try LevelDB(path: path, options: options)
        defer { db.close() }
        let store = try DocumentStore(database: db)
        let people = try store.collection("people")
        #expect(try people.find(DocumentQuery().orderBy("age")).map { $0["id"] } == ["a", "b", "t", "c"])
        #expect(try people.get(id: "b")?["age"] == 3)
        #expect(try people.get(id: "gone") == nil)
        #expect(try store.collection("people", of: Person.self).get(id: "t") == Person(id: "t", age: 4))
        #expect(try store.lastSequence == 7)
        #expect(try store.verify().isClean)
    }
}
