import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@testable import KVDocsEtcd

/// The document layer over ``EtcdKeyValueStore`` on a real three-member cluster: the same answers as
/// over LevelDB, and many writers (each with its own connection, writer lock and document
/// store, as separate processes have) that stay correct: one winner per unique value, no
/// lost update, sequence numbers without gaps, a schema change seen by every writer.
extension EtcdClusterTests {
    @Suite struct EtcdDocumentTests {
        static func schema(extra: String = "") throws -> DocumentSchema {
            try DocumentSchema(
                json: Data(
                    """
                    {"collections": {"people": {"primaryKey": "id",
                      "indexes": [{"name": "by_age", "fields": ["age"]}, {"name": "by_email", "fields": ["email"], "unique": true}\(extra)],
                      "text": [{"name": "bio_text", "fields": ["bio"]}]},
                     "counters": {"primaryKey": "id"}}}
                    """.utf8))
        }

        /// One random operation, described by its outcome (the change, or the error's kind).
        static func operate(_ people: DocumentCollection, _ random: inout SplitMix64) -> String {
            let id = Int64(random.next() % 30)
            let words = ["river", "station", "harbour", "train", "coffee", "garden"]
            let document: JSONValue = [
                "id": .int(id), "age": .int(Int64(random.next() % 90)),
                "email": .string("e\(random.next() % 20)@x.org"),
                "bio": .string((0..<3).map { _ in words[Int(random.next() % 6)] }.joined(separator: " "))
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

        @Test func documentsIndexesAndTextAnswerAsOverLevelDB() throws {
            try withTemporaryDatabase { db, _ throws in
                try withEtcdStore { etcd throws in
                    let level = try DocumentStore(database: db, schema: try Self.schema())
                    let remote = try DocumentStore(store: etcd, schema: try Self.schema())
                    #expect(remote.database == nil)
                    var a = SplitMix64(seed: 33)
                    var b = SplitMix64(seed: 33)
                    for step in 0..<120 {
                        let expected = Self.operate(try level.collection("people"), &a)
                        #expect(Self.operate(try remote.collection("people"), &b) == expected, "step \(step)")
                    }
                    let queries = [
                        DocumentQuery().orderBy("id"),
                        DocumentQuery().where("age", .greaterOrEqual(40)).orderBy("age").limit(7),
                        DocumentQuery().where("email", .equal("e3@x.org")),
                        DocumentQuery().orderBy("age", descending: true).limit(5)
                    ]
                    for query in queries {
                        #expect(
                            try remote.collection("people").find(query) == level.collection("people").find(query),
                            "\(query)")
                    }
                    for text in ["river", "harbour OR coffee", "\"train station\"", "gard*"] {
                        let ours = try remote.collection("people").search(text).map { "\($0.id) \($0.score)" }
                        #expect(
                            ours == (try level.collection("people").search(text).map { "\($0.id) \($0.score)" }),
                            "\(text)")
                    }
                    #expect(try remote.changes(since: 0) == level.changes(since: 0))
                    #expect(try remote.verify().isClean)
                    // A snapshot read of a store: one state across collections.
                    let count = try remote.read { try $0.count("people") }
                    #expect(count == (try level.collection("people").count()))
                }
            }
        }

        @Test func anIndexBuiltOverEtcdCommitsInTransactionsThatFit() throws {
            // The store claims a bound of 64 operations: every build batch must fit it.
            try withEtcdStore(options: .init(maxTxnOps: 64)) { etcd throws in
                let plain = try DocumentSchema(json: Data(#"{"collections": {"people": {"primaryKey": "id"}}}"#.utf8))
                let store = try DocumentStore(store: etcd, schema: plain)
                let people = try store.collection("people")
                let words = ["river", "station", "harbour", "train", "coffee", "garden"]
                for i in 0..<300 {
                    try people.insert([
                        "id": .int(Int64(i)), "age": .int(Int64(i % 90)), "email": .string("p\(i)@x.org"),
                        "bio": .string((0..<8).map { words[($0 + i) % 6] + "\($0 % 3)" }.joined(separator: " "))
                    ])
                }
                var reported: [Int] = []
                try store.apply(try Self.schema()) { reported.append($0.done) }
                #expect(reported.last == 300)
                #expect(try store.verify().isClean)
                #expect(try people.count(DocumentQuery().where("age", .greaterOrEqual(80))) == 30)
                #expect(try people.search("river0", options: SearchOptions(limit: 1000)).count == 100)
                // Dropping the indexes deletes their entries in batches that fit too.
                try store.apply(plain)
                #expect(try store.verify().isClean)
            }
        }

        @Test func writesAfterAOnePassTextBuildFitTheBoundAndAnswerAsOverLevelDB() throws {
            // A build writes the text index as one large segment; the merges that later writes
            // start read it term by term, and what they read must not outgrow the bound.
            try withTemporaryDatabase { db, _ throws in
                try withEtcdStore(options: .init(maxTxnOps: 128)) { etcd throws in
                    let plain = try DocumentSchema(
                        json: Data(#"{"collections": {"people": {"primaryKey": "id"}}}"#.utf8))
                    let level = try DocumentStore(database: db, schema: plain)
                    let remote = try DocumentStore(store: etcd, schema: plain)
                    let words = ["river", "station", "harbour", "train", "coffee", "garden"]
                    func person(_ i: Int, _ version: Int) -> JSONValue {
                        [
                            "id": .int(Int64(i)), "age": .int(Int64((i + version) % 90)),
                            "email": .string("p\(i)-\(version)@x.org"),
                            "bio": .string(
                                (0..<8).map { words[($0 + i + version) % 6] + "\(($0 + version) % 3)" }
                                    .joined(separator: " "))
                        ]
                    }
                    for store in [level, remote] {
                        let people = try store.collection("people")
                        for i in 0..<240 { try people.insert(person(i, 0)) }
                        try store.apply(try Self.schema())
                    }
                    // The build, in transactions of at most 128 operations (etcd's default), left
                    // many segments.
                    let segments = Subspace(Tuple(["t", "people", "bio_text", "g"])).range
                    let built = try etcd.count(segments)
                    #expect(built > 16)
                    // Enough single writes for merges that read the built segments.
                    for step in 0..<90 {
                        for store in [level, remote] {
                            let people = try store.collection("people")
                            switch step % 3 {
                            case 0: try people.insert(person(400 + step, 0))
                            case 1: try people.upsert(person(step * 2, 1))
                            default: try people.delete(id: .int(Int64(step * 2 + 1)))
                            }
                        }
                    }
                    let after = try etcd.count(segments)
                    // Each write added a segment; merges took more away.
                    #expect(after < built, "\(built) segments after the build, \(after) after 90 more writes")
                    #expect(try remote.verify().isClean)
                    for text in ["river0", "harbour1 OR coffee2", "\"train0 station1\"", "gard*"] {
                        let options = SearchOptions(limit: 1000)
                        let ours = try remote.collection("people").search(text, options: options).map {
                            "\($0.id) \($0.score)"
                        }
                        let theirs = try level.collection("people").search(text, options: options).map {
                            "\($0.id) \($0.score)"
                        }
                        #expect(ours == theirs, "\(text)")
                    }
                }
            }
        }

        /// `count` stores on one root, each its own "process"; the first one made the schema.
        static func writers(_ count: Int, root: String, attempts: Int = 200) throws -> [(
            EtcdKeyValueStore, DocumentStore
        )] {
            try (0..<count).map { _ in
                let etcd = try EtcdKeyValueStore(
                    endpoints: Reference.etcdEndpoints, root: root, options: .init(maxTxnOps: 4096))
                return (etcd, try DocumentStore(store: etcd, schema: try schema(), writeAttempts: attempts))
            }
        }

        /// Runs `body` for each writer on a thread of its own, all at once.
        static func race(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
            DispatchQueue.concurrentPerform(iterations: count, execute: body)
        }

        @Test(arguments: [2, 4])
        func racingWritersInsertEachUniqueValueOnceAndLoseNoUpdate(writers count: Int) throws {
            let root = "test-\(UUID().uuidString)"
            let writers = try Self.writers(count, root: root)
            defer {
                _ = try? writers[0].0.removeAll()
                for (etcd, _) in writers { etcd.close() }
            }
            let stores = writers.map(\.1)
            let emails = 12
            let increments = 6
            let outcomes = TestLock<[String: [String]]>([:])
            Self.race(count) { w in
                var random = SplitMix64(seed: UInt64(w) + 1)
                let people: DocumentCollection
                do { people = try stores[w].collection("people") } catch {
                    outcomes.withLock { $0["open", default: []].append("\(error)") }
                    return
                }
                // Every writer tries every email, in its own order, under an id of its own.
                for e in (0..<emails).shuffled(using: &random) {
                    let result: String
                    do {
                        try people.insert(["id": .int(Int64(w * 100 + e)), "email": .string("u\(e)@x.org"), "age": 1])
                        result = "won"
                    } catch let error as KVDocsError {
                        result = "\(error.kind)"
                    } catch {
                        result = "\(error)"
                    }
                    outcomes.withLock { $0["u\(e)", default: []].append(result) }
                }
                // Read-modify-write of one counter.
                for _ in 0..<increments {
                    do {
                        try stores[w].write { batch in
                            var n: Int64 = 0
                            if case .int(let v)? = try batch.get("counters", id: "c")?["n"] { n = v }
                            try batch.upsert("counters", ["id": "c", "n": .int(n + 1)])
                        }
                    } catch {
                        outcomes.withLock { $0["counter", default: []].append("\(error)") }
                    }
                }
            }
            let results = outcomes.withLock { $0 }
            #expect(results["open"] == nil && results["counter"] == nil, "\(results)")
            for e in 0..<emails {
                let r = results["u\(e)"] ?? []
                #expect(r.filter { $0 == "won" }.count == 1, "u\(e): \(r)")
                #expect(r.filter { $0 == "unique violation" }.count == count - 1, "u\(e): \(r)")
            }
            let store = stores[0]
            #expect(try store.collection("counters").get(id: "c")?["n"] == .int(Int64(count * increments)))
            let feed = try store.changes(since: 0)
            #expect(feed.map(\.sequence) == Array(1...Int64(emails + count * increments)))
            #expect(try store.collection("people").count() == emails)
            #expect(try store.verify().isClean)
        }

        @Test func anIndexAddedByOneWriterIsMaintainedByTheOthers() throws {
            let root = "test-\(UUID().uuidString)"
            let writers = try Self.writers(3, root: root)
            defer {
                _ = try? writers[0].0.removeAll()
                for (etcd, _) in writers { etcd.close() }
            }
            let stores = writers.map(\.1)
            let problems = TestLock<[String]>([])
            Self.race(3) { w in
                do {
                    if w == 0 {
                        try stores[0].apply(try Self.schema(extra: #", {"name": "by_bio", "fields": ["bio"]}"#))
                    } else {
                        for i in 0..<15 {
                            try stores[w].collection("people").insert([
                                "id": .int(Int64(w * 1000 + i)), "email": .string("w\(w)-\(i)@x.org"),
                                "bio": .string(i % 2 == 0 ? "even" : "odd")
                            ])
                        }
                    }
                } catch {
                    problems.withLock { $0.append("writer \(w): \(error)") }
                }
            }
            #expect(problems.withLock { $0 }.isEmpty, "\(problems.withLock { $0 })")
            let reopened = try DocumentStore(store: writers[0].0)
            #expect(try reopened.verify().isClean)
            let evens = try reopened.collection("people").find(DocumentQuery().where("bio", .equal("even")))
            #expect(evens.count == 16)
            #expect(
                try reopened.collection("people").explain(DocumentQuery().where("bio", .equal("even"))).description
                    .contains(
                        "by_bio"))
        }
    }
}

extension EtcdClusterTests {
    /// Change streams over etcd: a store's stream delivers the changes of every writer, its
    /// own process's and the others', in sequence order, each once.
    @Suite struct EtcdChangeStreamTests {
        @Test func aChangeStreamDeliversEveryWritersChangesInOrderOnce() async throws {
            let root = "test-\(UUID().uuidString)"
            let schema = try DocumentSchema(json: Data(#"{"collections": {"c": {}}}"#.utf8))
            let a = try EtcdKeyValueStore(
                endpoints: Reference.etcdEndpoints, root: root, options: .init(maxTxnOps: 4096))
            let b = try EtcdKeyValueStore(
                endpoints: Reference.etcdEndpoints, root: root, options: .init(maxTxnOps: 4096))
            defer {
                _ = try? a.removeAll()
                a.close()
                b.close()
            }
            let mine = try DocumentStore(store: a, schema: schema)
            let theirs = try DocumentStore(store: b)
            let stream = mine.changeStream()
            for i in 0..<5 { try theirs.collection("c").insert(["id": .int(Int64(i))]) }
            for i in 5..<7 { try mine.collection("c").insert(["id": .int(Int64(i))]) }
            for i in 7..<10 { try theirs.collection("c").upsert(["id": .int(Int64(i))]) }
            try theirs.collection("c").delete(id: 0)
            let delivered = try await withThrowingTaskGroup(of: [DocumentChange].self) { group in
                group.addTask {
                    var seen: [DocumentChange] = []
                    for await change in stream {
                        seen.append(change)
                        if change.sequence >= 11 { break }
                    }
                    return seen
                }
                group.addTask {
                    try await Task.sleep(nanoseconds: 20_000_000_000)
                    throw KVDocsError(.unavailable, "the stream did not deliver 11 changes in 20 s")
                }
                defer { group.cancelAll() }
                return try await group.next() ?? []
            }
            let feed = try await mine.changes(since: 0)
            #expect(delivered == feed)
            #expect(delivered.map(\.sequence) == Array(1...11))
            #expect(delivered.last?.operation == .delete)
        }
    }
}
