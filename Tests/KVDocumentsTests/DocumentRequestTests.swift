import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// Requests as values: every reader (a transaction, the store, the async store, a
/// migration's context, an observation) fetches the same request with the same answer,
/// typed or untyped; observation tracks the collections each run read; the deprecated
/// per-variant spellings still answer the same.
@Suite struct DocumentRequestTests {
    struct Person: Codable, Sendable, Equatable {
        var id: Int
        var age: Int
        var bio: String
        var at: At
    }
    struct At: Codable, Sendable, Equatable {
        var lat: Double
        var lon: Double
    }

    static let schema = #"""
        {"collections": {
          "people": {"primaryKey": "id",
            "indexes": [{"name": "by_age", "fields": ["age"]}, {"name": "by_location", "fields": ["at"], "type": "geo"}],
            "text": [{"name": "bio_text", "fields": ["bio"]}]},
          "trips": {"primaryKey": "id"},
          "notes": {"primaryKey": "id"}}}
        """#

    static func person(_ id: Int, age: Int, bio: String, lat: Double = 0, lon: Double = 0) -> JSONValue {
        [
            "id": .int(Int64(id)), "age": .int(Int64(age)), "bio": .string(bio),
            "at": ["lat": .double(lat), "lon": .double(lon)]
        ]
    }

    static func open(_ dir: TemporaryDirectory, migrator: DocumentMigrator? = nil) throws -> (LevelDB, DocumentStore) {
        let db = try LevelDB(path: dir.child("db"))
        let schema = try DocumentSchema(json: Data(schema.utf8))
        if let migrator { return (db, try DocumentStore(database: db, schema: schema, migrator: migrator)) }
        return (db, try DocumentStore(database: db, schema: schema))
    }

    static func populate(_ store: DocumentStore) throws {
        let people = try store.collection("people")
        try people.insert(person(1, age: 20, bio: "river bank", lat: 0.001, lon: 0))
        try people.insert(person(2, age: 50, bio: "ocean", lat: 0.002, lon: 0))
        try people.insert(person(3, age: 35, bio: "river mouth", lat: 0.003, lon: 0))
        try people.insert(person(4, age: 70, bio: "hills", lat: 5, lon: 5))
    }

    /// The centre of the geo queries.
    static func here() throws -> GeoPoint { try GeoPoint(latitude: 0, longitude: 0) }

    /// One request fetched by each reader, its answer as text (decoded values and hits are
    /// compared by their descriptions).
    struct Reads: Sendable {
        let name: String
        let fetch: @Sendable (ReadTransaction) throws -> String
        let fetchAsync: @Sendable () async throws -> String
        let observe: @Sendable () async throws -> String
    }

    /// The requests of every kind, typed and untyped.
    static func requests(_ store: DocumentStore) throws -> [Reads] {
        let people = try store.collection("people")
        let typed = try store.collection("people", of: Person.self)
        let adults = DocumentQuery().where("age", .greaterOrEqual(30)).orderBy("age")
        let here = try here()
        func entry<R: DocumentRequest>(_ name: String, _ request: R) -> Reads where R.Value: Sendable {
            Reads(
                name: name,
                fetch: { tx in String(describing: try tx.fetch(request)) },
                fetchAsync: { String(describing: try await store.fetch(request)) },
                observe: {
                    var iterator = store.observe(request).makeAsyncIterator()
                    return try await iterator.next().map { String(describing: $0) } ?? "(ended)"
                })
        }
        return [
            entry("find", .find("people", adults)),
            entry("find collection", .find(people, adults)),
            entry("find as", .find("people", adults, as: Person.self)),
            entry("find typed collection", .find(typed, adults)),
            entry("count", .count("people", adults)),
            entry("count typed collection", .count(typed)),
            entry("search", .search("people", "river")),
            entry("search as", .search("people", "river", options: SearchOptions(limit: 1), as: Person.self)),
            entry("search typed collection", .search(typed, "river")),
            entry("near", .near("people", here, within: 1000)),
            entry("near as", .near("people", here, query: DocumentQuery().limit(2), as: Person.self)),
            entry("near typed collection", .near(typed, here, within: 1000))
        ]
    }

    @Test func everyReaderFetchesTheSameRequestWithTheSameAnswer() async throws {
        let dir = TemporaryDirectory()
        do {
            let (db, store) = try Self.open(dir)
            try Self.populate(store)
            db.close()
        }
        // A migration's context reads each request once, when the store opens.
        let migrated = Locked<[String: String]>([:])
        var migrator = DocumentMigrator()
        try migrator.register("read every request") { migration in
            for request in try Self.requests(migration.store) {
                let answer = try migration.store.read { try request.fetch($0) }
                migrated.withLock { $0[request.name] = answer }
            }
            // The migration context's own entry point, for one request of each kind.
            let viaContext = [
                String(
                    describing: try migration.fetch(
                        .find("people", DocumentQuery().where("age", .greaterOrEqual(30)).orderBy("age")))),
                String(
                    describing: try migration.fetch(
                        .count("people", DocumentQuery().where("age", .greaterOrEqual(30)).orderBy("age")))),
                String(describing: try migration.fetch(.search("people", "river"))),
                String(describing: try migration.fetch(.near("people", try Self.here(), within: 1000)))
            ]
            migrated.withLock { $0["context"] = viaContext.joined(separator: "|") }
        }
        let (db, store) = try Self.open(dir, migrator: migrator)
        defer { db.close() }

        let requests = try Self.requests(store)
        for request in requests {
            let inTransaction = try await store.read { try request.fetch($0) }
            #expect(try await request.fetchAsync() == inTransaction, "\(request.name): async store")
            #expect(try await request.observe() == inTransaction, "\(request.name): observation")
            #expect(migrated.withLock { $0[request.name] } == inTransaction, "\(request.name): migration")
        }
        let byName = try Dictionary(uniqueKeysWithValues: requests.map { ($0.name, try store.read($0.fetch)) })
        #expect(
            migrated.withLock { $0["context"] }
                == [byName["find"], byName["count"], byName["search"], byName["near"]].compactMap { $0 }.joined(
                    separator: "|"))
        // The answers mean what they say.
        #expect(
            try await store.fetch(
                .find("people", DocumentQuery().where("age", .greaterOrEqual(30)).orderBy("age"), as: Person.self)
            ).map(\.id) == [3, 2, 4])
        #expect(try await store.fetch(.count("people", DocumentQuery().where("age", .greaterOrEqual(30)))) == 3)
        let riverHits = try await store.fetch(.search("people", "river"))
        #expect(riverHits.map(\.id) == [1, 3])
        #expect(
            try await store.fetch(.near("people", try Self.here(), within: 1000, as: Person.self)).map(\.value.id) == [
                1, 2, 3
            ])
    }

    @Test func theCollectionConveniencesAreTheRequestsFetchedFromOneSnapshot() throws {
        let here = try Self.here()
        let dir = TemporaryDirectory()
        let (db, store) = try Self.open(dir)
        defer { db.close() }
        try Self.populate(store)
        let people = try store.collection("people")
        let typed = try store.collection("people", of: Person.self)
        let young = DocumentQuery().where("age", .less(40)).orderBy("age")
        #expect(try people.find(young) == store.fetch(.find("people", young)))
        #expect(try typed.find(young) == store.fetch(.find("people", young, as: Person.self)))
        #expect(try people.count(young) == store.fetch(.count(people, young)))
        #expect(try typed.count() == 4)
        #expect(try people.search("river").map(\.id) == store.fetch(.search(people, "river")).map(\.id))
        #expect(try typed.search("river").map(\.value) == store.fetch(.search(typed, "river")).map(\.value))
        #expect(try people.near(here, within: 1000) == store.fetch(.near(people, here, within: 1000)))
        #expect(
            try typed.near(here, within: 1000).map(\.value)
                == store.fetch(.near(typed, here, within: 1000)).map(\.value))
    }

    @Test func aRequestIsAValueBuiltOnceStoredAndChanged() async throws {
        let here = try Self.here()
        let dir = TemporaryDirectory()
        let (db, store) = try Self.open(dir)
        defer { db.close() }
        try Self.populate(store)
        var request = FindRequest("people", DocumentQuery().orderBy("age"), as: Person.self)
        let stored: [any DocumentRequest] = [
            request, CountRequest("people"), SearchRequest("people", "ocean"),
            NearRequest("people", here, within: 1000)
        ]
        #expect(stored.count == 4)
        #expect(request.collection == "people")
        let built = request
        let sent = try await Task.detached { try await store.fetch(built) }.value
        #expect(sent.map(\.id) == [1, 3, 2, 4])
        request.query = request.query.limit(1)
        #expect(try await store.fetch(request).map(\.id) == [1])
    }

    @Test func aTypedRequestReadsDocumentsEvenWhenItsOptionsAskForNone() throws {
        let here = try Self.here()
        let dir = TemporaryDirectory()
        let (db, store) = try Self.open(dir)
        defer { db.close() }
        try Self.populate(store)
        var search = SearchRequest("people", "ocean", as: Person.self)
        search.options.includeDocuments = false
        #expect(try store.fetch(search).map(\.value.id) == [2])
        var near = NearRequest("people", here, within: 1000, as: Person.self)
        near.includeDocuments = false
        #expect(try store.fetch(near).map(\.value.id) == [1, 2, 3])
        // Untyped, they are left out.
        #expect(
            try store.fetch(.near("people", here, within: 1000, includeDocuments: false)).map(\.document) == [
                .null, .null, .null
            ])
    }

    @Test func aTypedRequestThatDoesNotDecodeThrowsDecodingFromEveryReader() async throws {
        struct Wrong: Decodable, Sendable { var missing: String }
        let dir = TemporaryDirectory()
        let (db, store) = try Self.open(dir)
        defer { db.close() }
        try Self.populate(store)
        let request = FindRequest("people", as: Wrong.self)
        expectError(.decoding) { try store.fetch(request) }
        expectError(.decoding) { try store.read { try $0.fetch(request) } }
        await #expect(throws: KVDocsError.self) { try await store.fetch(request) }
    }

    // MARK: - Observation tracking

    /// Reads "people" on every run, and "trips" only once people holds five documents.
    static func trackedFetch(runs: Locked<Int>) -> @Sendable (ReadTransaction) throws -> [Int] {
        { tx in
            let run = runs.withLock {
                $0 += 1
                return $0
            }
            let people = try tx.count("people")
            let trips = try people >= 5 ? tx.fetch(.count("trips")) : -1
            return [run, people, trips]  // the run number makes every run a new value
        }
    }

    @Test func anObservationWakesOnlyForTheCollectionsItsLastRunRead() async throws {
        let dir = TemporaryDirectory()
        let (db, store) = try Self.open(dir)
        defer { db.close() }
        try Self.populate(store)
        let (people, trips, notes) = (
            try store.collection("people"), try store.collection("trips"), try store.collection("notes")
        )
        let runs = Locked(0)
        var iterator = store.observe(tracking: Self.trackedFetch(runs: runs)).makeAsyncIterator()
        let registration = iterator.cursor.registration

        #expect(try await iterator.next() == [1, 4, -1])
        #expect(registration.collections == [Array("people".utf8)])
        // trips and notes are unread: their writes wake nothing.
        try trips.insert(["id": 1])
        try notes.insert(["id": 1])
        #expect(registration.counts.wakes == 0)
        // A write to people wakes it; this run reads trips too.
        try people.insert(Self.person(5, age: 1, bio: "new"))
        #expect(registration.counts.wakes == 1)
        #expect(try await iterator.next() == [2, 5, 1])
        #expect(registration.collections == [Array("people".utf8), Array("trips".utf8)])
        // Now a write to trips wakes it, and notes still does not.
        try notes.insert(["id": 2])
        #expect(registration.counts.wakes == 1)
        try trips.insert(["id": 2])
        #expect(registration.counts.wakes == 2)
        #expect(try await iterator.next() == [3, 5, 2])
        // Once people is back under five, trips is unread again.
        try people.delete(id: 5)
        #expect(try await iterator.next() == [4, 4, -1])
        try trips.insert(["id": 3])
        #expect(registration.counts.wakes == 3)
        // A sentinel write to people: exactly one more run, so the trips write ran nothing.
        try people.insert(Self.person(6, age: 1, bio: "sentinel"))
        #expect(try await iterator.next() == [5, 5, 3])
        #expect(runs.withLock { $0 } == 5)
    }

    @Test func aWriteToACollectionCommittedWhileTheRunThatFirstReadsItRunsIsNotMissed() async throws {
        let dir = TemporaryDirectory()
        let (db, store) = try Self.open(dir)
        defer { db.close() }
        let wroteDuringRun = Locked(false)
        // The second run writes to trips after its snapshot was taken, then reads trips
        // from that snapshot (without the write): the write must wake the next run.
        let observation = store.observe { tx -> [Int] in
            let people = try tx.count("people")
            guard people > 0 else { return [people] }
            if !wroteDuringRun.withLock({ written in
                defer { written = true }
                return written
            }) {
                try tx.store.collection("trips").insert(["id": 1])
            }
            return [people, try tx.count("trips")]
        }
        var iterator = observation.makeAsyncIterator()
        #expect(try await iterator.next() == [0])
        try store.collection("people").insert(Self.person(1, age: 1, bio: "x"))
        #expect(try await iterator.next() == [1, 0])
        #expect(iterator.cursor.registration.counts.wakes == 2)
        #expect(try await iterator.next() == [1, 1])
    }

    /// A request of an app's own: the number of documents in two collections.
    struct Totals: DocumentRequest {
        var collections: [String]
        func fetch(from transaction: ReadTransaction) throws -> Int {
            try collections.reduce(0) { $0 + (try transaction.count($1)) }
        }
    }

    @Test func anAppsOwnRequestIsFetchedAndObservedLikeTheLibrarys() async throws {
        let dir = TemporaryDirectory()
        let (db, store) = try Self.open(dir)
        defer { db.close() }
        try Self.populate(store)
        let totals = Totals(collections: ["people", "trips"])
        #expect(try await store.fetch(totals) == 4)
        #expect(try await store.fetch(totals) == 4)
        let values = Locked<[Int]>([])
        let registration = Locked<ObservationRegistration?>(nil)
        let task = Task {
            var iterator = store.observe(totals).makeAsyncIterator()
            registration.withLock { $0 = iterator.cursor.registration }
            while let value = try await iterator.next() {
                values.withLock { $0.append(value) }
                if value == 6 { return }
            }
        }
        try await ObservationTests.eventually("the first value") { values.withLock { $0 } == [4] }
        let counts = { registration.withLock { $0?.counts } ?? (wakes: -1, evaluations: -1) }
        try store.collection("notes").insert(["id": 1])
        #expect(counts().wakes == 0)
        try store.collection("trips").insert(["id": 1])
        try await ObservationTests.eventually("the trip") { values.withLock { $0 } == [4, 5] }
        // A write that leaves the value as it was: evaluated, not yielded (Int is Equatable).
        try store.collection("trips").upsert(["id": 1, "name": "x"])
        try await ObservationTests.eventually("the rename evaluated") { counts().evaluations == 3 }
        try store.collection("people").insert(Self.person(9, age: 9, bio: "y"))
        try await task.value
        #expect(values.withLock { $0 } == [4, 5, 6])
        #expect(counts().evaluations == 4)
    }

    @Test func anExplicitRegionWakesOnTheCollectionsNamedWhateverItReads() async throws {
        let dir = TemporaryDirectory()
        let (db, store) = try Self.open(dir)
        defer { db.close() }
        try Self.populate(store)
        var named = store.observe(collections: ["trips"]) { tx in try tx.count("people") }.makeAsyncIterator()
        #expect(try await named.next() == 4)
        #expect(named.cursor.registration.collections == [Array("trips".utf8)])
    }
}
