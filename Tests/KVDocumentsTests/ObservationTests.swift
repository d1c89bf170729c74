import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// Observed queries: the current results first, then new results after each relevant
/// committed write, never the same twice in a row, coalesced, from one snapshot, and
/// released when the observation ends.
@Suite struct ObservationTests {
    static let schema = #"""
        {"collections": {
          "people": {"primaryKey": "id",
            "indexes": [{"name": "by_age", "fields": ["age"]}, {"name": "by_location", "fields": ["at"], "type": "geo"}],
            "text": [{"name": "bio_text", "fields": ["bio"]}]},
          "trips": {"primaryKey": "id"}}}
        """#

    static func open(_ dir: TemporaryDirectory) throws -> (LevelDB, DocumentStore) {
        let db = try LevelDB(path: dir.child("db"))
        return (db, try DocumentStore(database: db, schema: try DocumentSchema(json: Data(schema.utf8))))
    }

    static func person(_ id: Int, age: Int, bio: String = "river", lat: Double = 0, lon: Double = 0) -> JSONValue {
        [
            "id": .int(Int64(id)), "age": .int(Int64(age)), "bio": .string(bio),
            "at": ["lat": .double(lat), "lon": .double(lon)]
        ]
    }

    /// Waits (up to a generous bound, never asserting on time) until `condition` holds.
    static func eventually(_ what: String, _ condition: () -> Bool) async throws {
        for _ in 0..<20_000 {
            if condition() { return }
            try await Task.sleep(nanoseconds: 1_000_000)
        }
        Issue.record("timed out waiting until \(what)")
    }

    /// Collects an observation's values from a task of its own.
    final class Collector<T: Sendable>: Sendable {
        let values = TestLock<[T]>([])
        let failure = TestLock<(any Error)?>(nil)
        var count: Int { values.withLock { $0.count } }
        var last: T? { values.withLock { $0.last } }
        func start(_ observation: DocumentObservation<T>) -> Task<Void, Never> {
            Task {
                do {
                    for try await value in observation { values.withLock { $0.append(value) } }
                } catch {
                    failure.withLock { $0 = error }
                }
            }
        }
    }

    @Test func yieldsTheCurrentResultsThenNewOnesAndNeverTheSameTwiceInARow() async throws {
        let dir = TemporaryDirectory()
        let (db, store) = try Self.open(dir)
        defer { db.close() }
        let people = try store.collection("people")
        try await people.async.insert(Self.person(1, age: 40))
        let adults = DocumentQuery().where("age", .greaterOrEqual(18)).orderBy("age")
        let collector = Collector<[JSONValue]>()
        let task = collector.start(store.observe(.find(people, adults)))
        try await Self.eventually("the first value") { collector.count == 1 }
        #expect(collector.last == [Self.person(1, age: 40)])
        let registration = try #require(store.hub.registrations.first)

        // A write that leaves the results as they were is evaluated, not yielded.
        try await people.async.insert(Self.person(2, age: 10))
        try await Self.eventually("the minor's write was evaluated") { registration.counts.evaluations == 2 }
        try await people.async.insert(Self.person(3, age: 30))
        try await Self.eventually("the second value") { collector.count == 2 }
        #expect(collector.last == [Self.person(3, age: 30), Self.person(1, age: 40)])
        try await people.async.delete(id: 1)
        try await Self.eventually("the third value") { collector.count == 3 }
        #expect(collector.last == [Self.person(3, age: 30)])
        let values = collector.values.withLock { $0 }
        for (a, b) in zip(values, values.dropFirst()) { #expect(a != b) }
        task.cancel()
        await task.value
        #expect(store.hub.observerCount == 0)
    }

    @Test func writesToOtherCollectionsWakeNobody() async throws {
        let dir = TemporaryDirectory()
        let (db, store) = try Self.open(dir)
        defer { db.close() }
        let collector = Collector<Int>()
        let task = collector.start(store.observe(.count(try store.collection("people"))))
        try await Self.eventually("the first value") { collector.count == 1 }
        let registration = try #require(store.hub.registrations.first)
        let trips = try store.collection("trips")
        for i in 0..<50 { try await trips.async.insert(["id": .int(Int64(i))]) }
        try await store.write { batch in for i in 50..<60 { try batch.insert("trips", ["id": .int(Int64(i))]) } }
        #expect(registration.counts.wakes == 0)
        #expect(registration.counts.evaluations == 1)
        // A batch that writes both wakes it once.
        try await store.write { batch in
            try batch.insert("trips", ["id": 100])
            try batch.insert("people", Self.person(1, age: 5))
        }
        try await Self.eventually("the second value") { collector.count == 2 }
        #expect(registration.counts.wakes == 1)
        #expect(collector.last == 1)
        task.cancel()
        await task.value
    }

    @Test func aSlowConsumerGetsTheLatestResultsNotEveryIntermediateState() async throws {
        let dir = TemporaryDirectory()
        let (db, store) = try Self.open(dir)
        defer { db.close() }
        let people = try store.collection("people")
        var iterator = store.observe(.count(people)).makeAsyncIterator()
        #expect(try await iterator.next() == 0)
        for i in 0..<200 { try await people.async.insert(Self.person(i, age: i % 90)) }
        #expect(try await iterator.next() == 200)
        #expect(iterator.cursor.registration.counts.evaluations == 2)
        #expect(iterator.cursor.registration.counts.wakes == 200)
    }

    @Test func countSearchNearAndTypedObservationsFollowWrites() async throws {
        struct Person: Codable, Sendable, Equatable {
            var id: Int
            var age: Int
            var bio: String
            var at: [String: Double]
        }
        let dir = TemporaryDirectory()
        let (db, store) = try Self.open(dir)
        defer { db.close() }
        let people = try store.collection("people")
        let typed = try store.collection("people", of: Person.self)
        var count = store.observe(.count(people, DocumentQuery().where("age", .less(30)))).makeAsyncIterator()
        var search = store.observe(.search(people, "river")).makeAsyncIterator()
        var near = store.observe(.near(people, try GeoPoint(latitude: 0, longitude: 0), within: 1000))
            .makeAsyncIterator()
        var found = store.observe(.find(typed, DocumentQuery().orderBy("age"))).makeAsyncIterator()
        var typedNear = store.observe(.near(typed, try GeoPoint(latitude: 0, longitude: 0), within: 1000))
            .makeAsyncIterator()
        var typedSearch = store.observe(.search(typed, "river")).makeAsyncIterator()
        #expect(try await count.next() == 0)
        #expect(try await search.next()?.isEmpty == true)
        #expect(try await near.next()?.isEmpty == true)
        #expect(try await found.next() == [])
        #expect(try await typedNear.next()?.isEmpty == true)
        #expect(try await typedSearch.next()?.isEmpty == true)

        try await people.async.insert(Self.person(1, age: 20, bio: "river bank", lat: 0.001, lon: 0))
        try await people.async.insert(Self.person(2, age: 50, bio: "ocean", lat: 5, lon: 5))
        #expect(try await count.next() == 1)
        let hits = try #require(try await search.next())
        #expect(hits.map(\.id) == [1])
        #expect(try await store.fetch(.search(people, "river")).map(\.score) == hits.map(\.score))
        let nearHits = try #require(try await near.next())
        #expect(nearHits.map(\.id) == [1])
        #expect(abs(nearHits[0].distance - 111.19) < 0.1)
        #expect(try await found.next()?.map(\.id) == [1, 2])
        #expect(try await typedNear.next()?.map(\.value.id) == [1])
        let typedHits = try #require(try await typedSearch.next())
        #expect(typedHits.map(\.value.bio) == ["river bank"])
        #expect(typedHits.map(\.score) == hits.map(\.score))

        // Another river document changes the first hit's BM25 score: a new value.
        try await people.async.insert(Self.person(3, age: 60, bio: "river river river", lat: 9, lon: 9))
        let rescored = try #require(try await search.next())
        #expect(rescored.map(\.id) == [3, 1])
        #expect(rescored.first { $0.id == 1 }?.score != hits[0].score)
    }

    @Test func breakingOutOfTheLoopOrCancellingReleasesTheObservation() async throws {
        let dir = TemporaryDirectory()
        let (db, store) = try Self.open(dir)
        defer { db.close() }
        let people = try store.collection("people")
        for try await value in store.observe(.count(people)) {
            #expect(value == 0)
            #expect(store.hub.observerCount == 1)
            break
        }
        #expect(store.hub.observerCount == 0)

        // A task waiting for a change, cancelled: its loop ends without an error.
        let collector = Collector<Int>()
        let task = collector.start(store.observe(.count(people)))
        try await Self.eventually("the first value") { collector.count == 1 }
        #expect(store.hub.observerCount == 1)
        task.cancel()
        await task.value
        #expect(store.hub.observerCount == 0)
        #expect(collector.failure.withLock { $0 } == nil)
        // Writes after the end reach nobody.
        try await people.async.insert(Self.person(1, age: 1))
        #expect(collector.count == 1)
    }

    @Test func aReadThatFailsEndsTheSequenceWithItsError() async throws {
        let dir = TemporaryDirectory()
        let (db, store) = try Self.open(dir)
        defer { db.close() }
        let collector = Collector<Int>()
        let task = collector.start(store.observe(.count(try store.collection("trips"))))
        try await Self.eventually("the first value") { collector.count == 1 }
        try store.apply(try DocumentSchema(json: Data(#"{"collections": {"people": {"primaryKey": "id"}}}"#.utf8)))
        await task.value
        #expect((collector.failure.withLock { $0 } as? KVDocsError)?.kind == .schema)
        #expect(store.hub.observerCount == 0)
    }

    /// Writers keep two collections the same size, in one batch each; every value of every
    /// observer comes from one snapshot (the sizes agree), values only grow, and each
    /// observer ends on the final state.
    @Test func manyObserversWithWritersRunningSeeConsistentGrowingValues() async throws {
        let dir = TemporaryDirectory()
        let (db, store) = try Self.open(dir)
        defer { db.close() }
        struct Sizes: Equatable, Sendable {
            var people: Int
            var trips: Int
            var sequence: Int64
        }
        let observation = store.observe(collections: ["people", "trips"]) { tx in
            Sizes(
                people: try tx.count("people"), trips: try tx.count("trips"),
                sequence: try store.records.lastSequence(in: tx.reader))
        }
        let writers = 3, perWriter = 60, total = writers * perWriter
        let collectors = (0..<8).map { _ in Collector<Sizes>() }
        // Half the observers are started from threads of their own, half from this task.
        var tasks: [Task<Void, Never>] = []
        for collector in collectors.prefix(4) { tasks.append(collector.start(observation)) }
        let started = Locked<[Task<Void, Never>]>([])
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let group = DispatchGroup()
            for collector in collectors.suffix(4) {
                group.enter()
                Thread.detachNewThread {
                    let task = collector.start(observation)
                    started.withLock { $0.append(task) }
                    group.leave()
                }
            }
            group.notify(queue: .global()) { done.resume() }
        }
        tasks += started.withLock { $0 }
        // One more observer, cancelled while the writers run.
        let quitter = Collector<Sizes>()
        let quitterTask = quitter.start(observation)
        try await Self.eventually("every observer's first value") {
            collectors.allSatisfy { $0.count >= 1 } && quitter.count >= 1
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for w in 0..<writers {
                group.addTask {
                    for i in 0..<perWriter {
                        let id = Int64(w * 1000 + i)
                        try await store.write { batch in
                            try batch.insert("people", ["id": .int(id), "age": 1])
                            try batch.insert("trips", ["id": .int(id)])
                        }
                    }
                }
            }
            // A synchronous writer on a thread of its own, too (not blocking a task's thread).
            group.addTask {
                try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
                    Thread.detachNewThread {
                        done.resume(
                            with: Result {
                                for i in 0..<perWriter {
                                    let id = Int64(9000 + i)
                                    try store.write { batch in
                                        try batch.insert("people", ["id": .int(id), "age": 2])
                                        try batch.insert("trips", ["id": .int(id)])
                                    }
                                }
                            })
                    }
                }
            }
            group.addTask {
                try await Self.eventually("the quitter saw a write") { quitter.count >= 2 }
                quitterTask.cancel()
            }
            try await group.waitForAll()
        }
        await quitterTask.value
        let final = Sizes(people: total + perWriter, trips: total + perWriter, sequence: Int64(2 * (total + perWriter)))
        try await Self.eventually("every observer's final value") { collectors.allSatisfy { $0.last == final } }
        for collector in collectors + [quitter] {
            let values = collector.values.withLock { $0 }
            // Each value is the state at one commit: both collections, and the sequence of
            // the last change, from one snapshot.
            #expect(values.allSatisfy { $0.people == $0.trips && $0.sequence == Int64(2 * $0.people) })
            for (a, b) in zip(values, values.dropFirst()) { #expect(a.people < b.people) }
        }
        #expect(quitter.failure.withLock { $0 } == nil)
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
        #expect(store.hub.observerCount == 0)
    }

    /// Closing the database ends every observation with `.closed`, and every change
    /// stream, including those made after the close.
    @Test func closingTheDatabaseEndsObservationsAndChangeStreams() async throws {
        let dir = TemporaryDirectory()
        let (db, store) = try Self.open(dir)
        let collector = Collector<Int>()
        let task = collector.start(store.observe(.count(try store.collection("people"))))
        try await Self.eventually("the first value") { collector.count == 1 }
        let stream = store.changeStream()
        let streamed = Task {
            var n = 0
            for await _ in stream { n += 1 }
            return n
        }
        try await store.collection("people").async.insert(Self.person(1, age: 1))
        try await Self.eventually("the second value") { collector.count == 2 }
        db.close()
        await task.value
        #expect((collector.failure.withLock { $0 } as? KVDocsError)?.kind == .closed)
        #expect(store.hub.observerCount == 0)
        #expect(await streamed.value == 1)
        // After the close: a stream ends at once, an observation fails at once.
        for await _ in store.changeStream() { Issue.record("a change after the close") }
        await #expect(throws: KVDocsError.self) {
            for try await _ in store.observe(.count(try store.collection("people"))) {}
        }
    }

    /// Reopening a store with the schema it has, or changing another collection's indexes,
    /// wakes no observer of this one.
    @Test func schemaChangesWakeOnlyTheCollectionsTheyChange() async throws {
        let dir = TemporaryDirectory()
        let (db, store) = try Self.open(dir)
        defer { db.close() }
        let collector = Collector<Int>()
        let task = collector.start(store.observe(.count(try store.collection("people"))))
        try await Self.eventually("the first value") { collector.count == 1 }
        let registration = try #require(store.hub.registrations.first)
        let generation = try store.records.generation(in: db)
        _ = try DocumentStore(database: db, schema: try DocumentSchema(json: Data(Self.schema.utf8)))
        #expect(try store.records.generation(in: db) == generation, "the same schema writes nothing")
        var schema = try DocumentSchema(json: Data(Self.schema.utf8))
        schema.collections["trips"] = try DocumentSchema(
            json: Data(
                #"{"collections": {"trips": {"primaryKey": "id", "indexes": [{"name": "by_x", "fields": ["x"]}]}}}"#
                    .utf8))[collection: "trips"]
        try store.apply(schema)
        schema.collections["places"] = CollectionSchema(primaryKey: "id")
        try store.apply(schema)
        #expect(registration.counts.wakes == 0)
        // A new index on people wakes it.
        schema.collections["people"] = try DocumentSchema(
            json: Data(
                #"{"collections": {"people": {"primaryKey": "id", "indexes": [{"name": "by_age", "fields": ["age"]}, {"name": "by_location", "fields": ["at"], "type": "geo"}, {"name": "by_bio", "fields": ["bio"]}], "text": [{"name": "bio_text", "fields": ["bio"]}]}}}"#
                    .utf8))[collection: "people"]
        try store.apply(schema)
        try await Self.eventually("the schema change was evaluated") { registration.counts.evaluations == 2 }
        #expect(registration.counts.wakes == 1)
        task.cancel()
        await task.value
    }

    /// A search observed while its text index is being built does not end: the observation
    /// waits, and yields once the build is done.
    @Test func anObservationWaitsOutAnIndexBuildInsteadOfEnding() async throws {
        let dir = TemporaryDirectory()
        let (db, store) = try Self.open(dir)
        defer { db.close() }
        let people = try store.collection("people")
        try await people.async.insert(Self.person(1, age: 30, bio: "river"))
        // The catalog as an interrupted rebuild leaves it: the text index is not ready.
        let identity = IndexIdentity("people", "bio_text", .text)
        var state = try #require(try store.records.indexStates(.text, in: db)[identity])
        state.phase = .building
        let batch = WriteBatch()
        store.records.putState(state, of: identity, generation: try store.nextGeneration(), in: batch)
        try db.write(batch)
        let collector = Collector<[SearchHit]>()
        let task = collector.start(store.observe(.search(people, "river")))
        try await Self.eventually("the first evaluation") { store.hub.registrations.first?.counts.evaluations == 1 }
        #expect(collector.count == 0)
        #expect(store.hub.observerCount == 1)
        try store.reindex(collection: "people", index: "bio_text")
        try await Self.eventually("the hits") { collector.count == 1 }
        #expect(collector.last?.map(\.id) == [1])
        #expect(collector.failure.withLock { $0 } == nil)
        task.cancel()
        await task.value
    }

    @Test func writesThroughAnotherStoreOnTheSameDatabaseWakeObserversAndChangeStreams() async throws {
        let dir = TemporaryDirectory()
        let (db, store) = try Self.open(dir)
        defer { db.close() }
        let other = try DocumentStore(database: db)
        var count = store.observe(.count(try store.collection("people"))).makeAsyncIterator()
        #expect(try await count.next() == 0)
        var changes = store.changeStream().makeAsyncIterator()
        try await other.collection("people").async.insert(Self.person(7, age: 3))
        #expect(try await count.next() == 1)
        #expect(await changes.next()?.id == 7)
    }
}
