import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// The async API: the same reads and writes, run on the store's executor (never on the
/// caller's thread), a read transaction with one snapshot across collections, and
/// cancellation before a call starts writing nothing.
@Suite struct AsyncAccessTests {
    static let schema = #"""
        {"collections": {"people": {"primaryKey": "id", "indexes": [{"name": "by_age", "fields": ["age"]}],
                                    "text": [{"name": "bio_text", "fields": ["bio"]}]},
                         "trips": {"primaryKey": "id"}}}
        """#

    static func open(_ dir: TemporaryDirectory) throws -> (LevelDB, DocumentStore) {
        let db = try LevelDB(path: dir.child("db"))
        return (db, try DocumentStore(database: db, schema: try DocumentSchema(json: Data(schema.utf8))))
    }

    @MainActor
    @Test func readsAndWritesRunOnTheStoresExecutorNotTheCallers() async throws {
        let dir = TemporaryDirectory()
        let (db, store) = try Self.open(dir)
        defer { db.close() }
        #expect(!BlockingCallExecutor.isCurrent)
        let wroteThere = try await store.write { batch in
            try batch.insert("people", ["id": 1, "age": 30, "bio": "river"])
            return BlockingCallExecutor.isCurrent
        }
        let readThere = try await store.read { _ in BlockingCallExecutor.isCurrent }
        #expect(wroteThere)
        #expect(readThere)
        #expect(!BlockingCallExecutor.isCurrent)
    }

    /// Inside an `async` function a collection call written without `await` is the
    /// synchronous one (it compiles, and runs on the caller's thread, not the executor);
    /// the async one is spelled `.async`, and runs on the executor. With async overloads of
    /// the same names, the first lines would not compile.
    @Test func collectionCallsWithoutAwaitStaySynchronousInAsyncCode() async throws {
        struct Person: Codable, Sendable {
            var id: Int
            var age: Int
            var bio: String
        }
        let dir = TemporaryDirectory()
        let (db, store) = try Self.open(dir)
        defer { db.close() }
        let people = try store.collection("people")
        let typed = try store.collection("people", of: Person.self)
        try people.insert(["id": 1, "age": 30, "bio": "river"])
        try typed.upsert(Person(id: 2, age: 40, bio: "sea"))
        #expect(try people.count() == 2)
        #expect(try typed.get(id: 2)?.age == 40)
        #expect(try people.find(DocumentQuery().where("age", .greaterOrEqual(35))).count == 1)
        try await people.async.delete(id: 1)
        #expect(try await store.fetch(.count(typed)) == 1)
        // The store's read keeps its GRDB-style async overload.
        let onExecutor = try await store.read { _ in BlockingCallExecutor.isCurrent }
        #expect(onExecutor)
    }

    @Test func everyCollectionCallHasAnAsyncVariantWithTheSameResults() async throws {
        struct Person: Codable, Sendable, Equatable {
            var id: Int
            var age: Int
            var bio: String
        }
        let dir = TemporaryDirectory()
        let (db, store) = try Self.open(dir)
        defer { db.close() }
        let people = try store.collection("people")
        let typed = try store.collection("people", of: Person.self)
        #expect(try await people.async.insert(["id": 1, "age": 30, "bio": "river bank"]).operation == .insert)
        #expect(try await people.async.upsert(["id": 1, "age": 31, "bio": "river bank"]).operation == .update)
        #expect(try await people.async.update(["id": 1, "age": 32, "bio": "river bank"]).operation == .update)
        try await typed.async.insert(Person(id: 2, age: 20, bio: "ocean river"))
        try await typed.async.upsert(Person(id: 3, age: 70, bio: "mountain"))
        try await typed.async.update(Person(id: 3, age: 71, bio: "mountain"))
        #expect(try await people.async.get(id: 1)?["age"] == 32)
        #expect(try await typed.async.get(id: 2) == Person(id: 2, age: 20, bio: "ocean river"))
        let young = DocumentQuery().where("age", .less(50)).orderBy("age")
        let found = try await store.fetch(.find(people, young))
        #expect(found.map { $0["id"] } == [2, 1])
        #expect(try await store.fetch(.find(typed, young)).map(\.id) == [2, 1])
        #expect(try await store.fetch(.count(people, young)) == 2)
        #expect(try await store.fetch(.count(typed)) == 3)
        let hits = try await store.fetch(.search(people, "river"))
        #expect(try await hits == store.read { try $0.search("people", "river") })
        #expect(try await people.async.delete(id: 3))
        #expect(try await typed.async.delete(id: 3) == false)
        #expect(try await store.changes(since: 0).count == 7)
        // Errors come through unchanged.
        await #expect(throws: KVDocsError.self) { try await people.async.insert(["id": 1, "age": 1, "bio": ""]) }
    }

    @Test func anAsyncReadTransactionSeesOneSnapshotAcrossCollectionsWhileWritersRun() async throws {
        let dir = TemporaryDirectory()
        let (db, store) = try Self.open(dir)
        defer { db.close() }
        try await withThrowingTaskGroup(of: [String].self) { group in
            group.addTask {
                for i in 0..<300 {
                    try await store.write { batch in
                        try batch.insert("people", ["id": .int(Int64(i)), "age": 1, "bio": "x"])
                        try batch.insert("trips", ["id": .int(Int64(i))])
                    }
                }
                return []
            }
            for _ in 0..<4 {
                group.addTask {
                    var problems: [String] = []
                    for _ in 0..<100 {
                        let (p, t) = try await store.read { tx in (try tx.count("people"), try tx.count("trips")) }
                        if p != t { problems.append("people \(p), trips \(t)") }
                    }
                    return problems
                }
            }
            for try await problems in group { #expect(problems.isEmpty) }
        }
    }

    @Test func aCallCancelledBeforeItStartsWritesNothing() async throws {
        let dir = TemporaryDirectory()
        let (db, store) = try Self.open(dir)
        defer { db.close() }
        let people = try store.collection("people")
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await people.async.insert(["id": 1, "age": 1, "bio": ""])
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(try await store.fetch(.count(people)) == 0)
        #expect(try store.lastSequence == 0)
    }

    /// A call waiting its turn behind a write that has not finished is cancelled at once:
    /// it throws `CancellationError` while the write ahead of it still runs, and never runs.
    @Test func aCallCancelledWhileWaitingItsTurnEndsAtOnceAndNeverRuns() async throws {
        let dir = TemporaryDirectory()
        let (db, store) = try Self.open(dir)
        defer { db.close() }
        let people = try store.collection("people")
        let gate = DispatchSemaphore(value: 0)
        let entered = DispatchSemaphore(value: 0)
        let opened = Locked(false)
        let blocker = Task {
            try await store.write { batch in
                entered.signal()
                gate.wait()
                try batch.insert("people", ["id": 1, "age": 1, "bio": ""])
            }
        }
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                entered.wait()
                c.resume()
            }
        }
        // A safety net, never reached when cancellation works: the gate opens by itself.
        // Generous: in CI, on two cores, the other suites can hold the cooperative threads
        // that deliver the cancellation for over a minute (seen once at 60 s).
        DispatchQueue.global().asyncAfter(deadline: .now() + 240) {
            opened.withLock { $0 = true }
            gate.signal()
        }
        let waiting = Task { try await people.async.insert(["id": 2, "age": 2, "bio": ""]) }
        try await Task.sleep(nanoseconds: 20_000_000)  // let it queue (either way it must be cancelled)
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(!opened.withLock { $0 }, "the cancelled call waited for the write ahead of it")
        gate.signal()
        try await blocker.value
        #expect(try await people.async.get(id: 2) == nil)
        #expect(try await people.async.get(id: 1) != nil)
        #expect(try store.lastSequence == 1)
    }

    /// The read pool runs at most its width at once; the others wait their turn and all run.
    @Test func theReadPoolRunsAtMostItsWidthAtOnceAndEveryBlockInTheEnd() async throws {
        let throttle = Throttle(width: 3, queue: DispatchQueue(label: "test", attributes: .concurrent))
        let gate = DispatchSemaphore(value: 0)
        struct Counts {
            var running = 0
            var most = 0
            var order: [Int] = []
        }
        let counts = Locked(Counts())
        let finished = DispatchGroup()
        for i in 0..<20 {
            finished.enter()
            throttle.submit {
                counts.withLock {
                    $0.running += 1
                    $0.most = max($0.most, $0.running)
                    $0.order.append(i)
                }
                gate.wait()
                counts.withLock { $0.running -= 1 }
                finished.leave()
            }
        }
        try await ObservationTests.eventually("three blocks started") { counts.withLock { $0.order.count } == 3 }
        #expect(throttle.load == (running: 3, waiting: 17))
        for _ in 0..<20 { gate.signal() }
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            finished.notify(queue: .global()) { c.resume() }
        }
        let final = counts.withLock { $0 }
        #expect(final.most == 3)
        #expect(final.order.sorted() == Array(0..<20))
        #expect(throttle.load == (running: 0, waiting: 0))
        #expect(BlockingCallExecutor.readWidth >= 4)
    }

    @Test func asyncWritesAwaitedInTurnTakeConsecutiveSequenceNumbers() async throws {
        let dir = TemporaryDirectory()
        let (db, store) = try Self.open(dir)
        defer { db.close() }
        let people = try store.collection("people")
        for version in 0..<50 {
            try await people.async.upsert(["id": 1, "age": .int(Int64(version)), "bio": ""])
        }
        #expect(try await people.async.get(id: 1)?["age"] == 49)
        #expect(try await store.changes().map(\.sequence) == Array(1...50))
    }
}
