import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// Document writes over a store whose transactions can give way to other writers
/// (``KeyValueStore/transact(attempts:_:)``): each attempt reads its state anew, a write
/// that conflicted leaves what one run would have, the changes are published once, and
/// after the bound the write fails with a retryable `.conflict`, having written nothing.
@Suite struct OptimisticWriteTests {
    static func schema(extraIndex: String = "") throws -> DocumentSchema {
        try DocumentSchema(
            json: Data(
                """
                {"collections": {"people": {"primaryKey": "id",
                  "indexes": [{"name": "by_age", "fields": ["age"]}, {"name": "by_email", "fields": ["email"], "unique": true}\(extraIndex)],
                  "text": [{"name": "bio_text", "fields": ["bio"]}]}}}
                """.utf8))
    }

    /// One random operation on `people`, returning a description of its outcome (the change, or
    /// the kind of the error).
    static func operate(_ people: DocumentCollection, _ random: inout SplitMix64) -> String {
        let id = Int64(random.next() % 40)
        let email = "e\(random.next() % 30)@x.org"
        let document: JSONValue = [
            "id": .int(id), "age": .int(Int64(random.next() % 90)), "email": .string(email),
            "bio": .string(["river station", "harbour train", "coffee garden"][Int(random.next() % 3)])
        ]
        do {
            switch random.next() % 4 {
            case 0: return "insert \(try people.insert(document))"
            case 1: return "upsert \(try people.upsert(document))"
            case 2: return "update \(try people.update(document))"
            default: return "delete \(try people.delete(id: .int(id)))"
            }
        } catch let error as KVDocsError {
            return "error \(error.kind)"
        } catch {
            return "error \(error)"
        }
    }

    /// Every document of `people` in id order, the change feed, and the last sequence.
    static func contents(_ store: DocumentStore) throws -> ([JSONValue], [DocumentChange], Int64) {
        (
            try store.collection("people").find(DocumentQuery().orderBy("id")), try store.changes(since: 0),
            try store.lastSequence
        )
    }

    @Test(arguments: [1 as UInt64, 2, 3])
    func writesThatGiveWayRunAgainAndLeaveWhatOneRunLeaves(seed: UInt64) async throws {
        try await Self.compare(seed: seed)
    }

    static func compare(seed: UInt64) async throws {
        let dir = TemporaryDirectory()
        let plainDB = try LevelDB(path: dir.child("plain"))
        let injectedDB = try LevelDB(path: dir.child("injected"))
        defer {
            plainDB.close()
            injectedDB.close()
        }
        let injecting = ConflictInjectingStore(injectedDB, seed: seed, plan: .random(maximum: 3))
        let plain = try DocumentStore(database: plainDB, schema: try schema())
        let store = try DocumentStore(store: injecting, schema: try schema())
        #expect(store.database == nil)
        let stream = store.changeStream()
        var plainRandom = SplitMix64(seed: seed)
        var injectedRandom = SplitMix64(seed: seed)
        for step in 0..<300 {
            let expected = operate(try plain.collection("people"), &plainRandom)
            let got = operate(try store.collection("people"), &injectedRandom)
            #expect(got == expected, "step \(step)")
        }
        #expect(injecting.conflicts > 50, "the plan made \(injecting.conflicts) conflicts")
        #expect(injecting.attempts == injecting.transactions + injecting.conflicts)
        let (plainDocuments, plainFeed, plainLast) = try contents(plain)
        let (documents, feed, last) = try contents(store)
        #expect(documents == plainDocuments)
        #expect(feed == plainFeed)
        #expect(last == plainLast)
        #expect(feed.map(\.sequence) == Array(1...last))
        #expect(try store.verify().isClean)
        // Every change reached the stream once, in order.
        var delivered: [DocumentChange] = []
        for await change in stream {
            delivered.append(change)
            if change.sequence >= last { break }
        }
        #expect(delivered == feed)
    }

    @Test func importsThatGiveWayWriteEveryLineOnce() throws {
        let dir = TemporaryDirectory()
        let file = dir.child("people.jsonl")
        let lines = (0..<250).map { #"{"id": \#($0), "age": \#($0 % 70), "email": "p\#($0)@x.org", "bio": "river"}"# }
        try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: file))
        let db = try LevelDB(path: dir.child("db"))
        defer { db.close() }
        let injecting = ConflictInjectingStore(db, seed: 7, plan: .random(maximum: 2))
        let store = try DocumentStore(store: injecting, schema: try Self.schema())
        var reported: [Int] = []
        let written = try store.importJSONLines(into: "people", path: file, batchSize: 40) { progress in
            if !progress.validating { reported.append(progress.documents) }
        }
        #expect(written == 250)
        #expect(reported == [40, 80, 120, 160, 200, 240, 250])
        #expect(injecting.conflicts > 0)
        let people = try store.collection("people")
        #expect(try people.count() == 250)
        #expect(try people.find(DocumentQuery().orderBy("id")).map { $0["id"] } == (0..<250).map { .int(Int64($0)) })
        #expect(try store.changes(since: 0).map(\.sequence) == Array(1...250))
        #expect(try store.verify().isClean)
    }

    @Test func anImportTooLargeForOneWriteOfTheStoreIsWrittenInSmallerBatches() throws {
        let dir = TemporaryDirectory()
        let file = dir.child("people.jsonl")
        var lines = (0..<300).map { #"{"id": \#($0), "age": \#($0 % 70), "email": "p\#($0)@x.org", "bio": "river"}"# }
        try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: file))
        let db = try LevelDB(path: dir.child("db"))
        defer { db.close() }
        let injecting = ConflictInjectingStore(db, plan: .exactly(0))
        // Each document makes about six operations (document, two index entries, text, change).
        injecting.maximumBatch = 200
        let store = try DocumentStore(store: injecting, schema: try Self.schema())
        var reported: [Int] = []
        let written = try store.importJSONLines(into: "people", path: file, batchSize: 100) { progress in
            if !progress.validating { reported.append(progress.documents) }
        }
        #expect(written == 300)
        #expect(reported.last == 300 && reported == reported.sorted() && Set(reported).count == reported.count)
        #expect(reported.count > 3, "\(reported)")
        #expect(try store.collection("people").count() == 300)
        #expect(try store.changes(since: 0).map(\.sequence) == Array(1...300))
        #expect(try store.verify().isClean)
        // A document that alone does not fit: an error naming its line, the documents before it kept.
        let words = (0..<400).map { "w\($0)" }.joined(separator: " ")
        lines = [#"{"id": 1000, "bio": "a"}"#, #"{"id": 1001, "bio": "\#(words)"}"#]
        try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: file))
        let error = expectError(.limitExceeded) { try store.importJSONLines(into: "people", path: file) }
        #expect(error?.message.hasPrefix("\(file):2: the document, with the index work it brings") == true)
        #expect(try store.collection("people").get(id: 1000) != nil)
        #expect(try store.collection("people").get(id: 1001) == nil)
    }

    /// Two writers of one database, as two processes: the other writes between a write's
    /// attempts, and the attempt run again decides on what the other wrote.
    @Test func theAttemptRunAgainSeesWhatTheOtherWriterCommitted() throws {
        let dir = TemporaryDirectory()
        let db = try LevelDB(path: dir.child("db"))
        defer { db.close() }
        let injecting = ConflictInjectingStore(db, plan: .exactly(1))
        let store = try DocumentStore(store: injecting, schema: try Self.schema())
        let other = try DocumentStore(database: db)
        let people = try store.collection("people")

        // The same unique value: the other commits first, so this insert is a unique violation.
        injecting.between = { _ in
            try other.collection("people").insert(["id": 1, "email": "a@x.org", "age": 30])
        }
        expectError(.uniqueViolation) { try people.insert(["id": 2, "email": "a@x.org", "age": 40]) }
        // The same document: the other's upsert, then this one on top of it.
        injecting.between = { _ in try other.collection("people").upsert(["id": 3, "age": 1]) }
        let change = try people.upsert(["id": 3, "age": 2])
        #expect(change.sequence == 3)
        #expect(
            try store.changes(since: 0).map { "\($0.sequence) \($0.operation) \($0.id)" }
                == ["1 insert 1", "2 insert 3", "3 update 3"])
        // The other adds an index: the write run again maintains it.
        injecting.between = { _ in
            try other.apply(try Self.schema(extraIndex: #", {"name": "by_bio", "fields": ["bio"]}"#))
        }
        try people.insert(["id": 4, "age": 5, "bio": "harbour"])
        #expect(try people.find(DocumentQuery().where("bio", .equal("harbour"))).map { $0["id"] } == [4])
        #expect(try people.explain(DocumentQuery().where("bio", .equal("harbour"))).description.contains("by_bio"))
        #expect(try store.verify().isClean)
        #expect(try store.changes(since: 0).map(\.sequence) == [1, 2, 3, 4])
    }

    @Test func aWriteThatAlwaysGivesWayFailsAfterItsAttemptsHavingWrittenNothing() throws {
        let dir = TemporaryDirectory()
        let db = try LevelDB(path: dir.child("db"))
        defer { db.close() }
        let injecting = ConflictInjectingStore(db, plan: .always)
        let store = try DocumentStore(store: injecting, schema: try Self.schema(), writeAttempts: 5)
        let people = try store.collection("people")
        let error = expectError(.conflict) { try people.insert(["id": 1, "email": "a@x.org"]) }
        #expect(error?.isRetryable == true)
        #expect(error?.message.contains("gave way to other writers 5 times") == true, "\(String(describing: error))")
        #expect(injecting.attempts == 5)
        #expect(try people.count() == 0)
        #expect(try store.lastSequence == 0)
        #expect(try store.changes(since: 0).isEmpty)
        // An insert of an existing id is a `.conflict` too, but not one to retry.
        injecting.between = nil
        let plain = try DocumentStore(database: db)
        try plain.collection("people").insert(["id": 1])
        let existing = expectError(.conflict) { try plain.collection("people").insert(["id": 1]) }
        #expect(existing?.isRetryable == false)
        expectError(.invalidArgument) { try DocumentStore(store: injecting, writeAttempts: 0) }
    }

    @Test func aLevelDBTransactionRunsOnceAndRefusesNoAttempts() throws {
        try withTemporaryDatabase { db, _ throws in
            var runs = 0
            let error = expectError(.conflict) {
                try db.transact(attempts: 9) {
                    runs += 1
                    throw KVDocsError.writeConflict("from the body")
                }
            }
            #expect(runs == 1)
            #expect(error?.message == "from the body")
            expectError(.invalidArgument) { try db.transact(attempts: 0) { runs += 1 } }
            #expect(runs == 1)
            #expect(try db.transact(attempts: 1) { 42 } == 42)
        }
    }

    @Test func theRetryLoopStopsAtOnceOnOtherErrorsAndCountsItsAttempts() throws {
        let retry = ConflictRetry(initialDelayMicroseconds: 0, maximumDelayMicroseconds: 0)
        var runs = 0
        expectError(.uniqueViolation) {
            try retry.run(attempts: 5) {
                runs += 1
                throw KVDocsError(.uniqueViolation, "not retried")
            }
        }
        #expect(runs == 1)
        runs = 0
        let value = try retry.run(attempts: 5) { () throws -> Int in
            runs += 1
            if runs < 3 { throw KVDocsError.writeConflict("again") }
            return runs
        }
        #expect(value == 3)
        expectError(.invalidArgument) { try retry.run(attempts: 0) { 1 } }
        let pausing = ConflictRetry(initialDelayMicroseconds: 100, maximumDelayMicroseconds: 400)
        runs = 0
        let last = expectError(.conflict) {
            try pausing.run(attempts: 4) { () throws -> Int in
                runs += 1
                throw KVDocsError.writeConflict("busy", key: [1, 2])
            }
        }
        #expect(runs == 4)
        #expect(last?.isRetryable == true && last?.key == [1, 2])
        #expect(last?.message == "the write gave way to other writers 4 times (last: busy); try again")
    }
}
