import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

private let typedSchemaJSON = #"""
    {"collections": {
      "athletes": {"primaryKey": "id", "indexes": [{"name": "by_club", "fields": ["club"]}, {"name": "by_born", "fields": ["born"]}],
                   "text": [{"name": "name_text", "fields": ["name"]}]},
      "sessions": {"primaryKey": "id", "indexes": [{"name": "by_at", "fields": ["at"]}]},
      "stations": {"primaryKey": "id", "indexes": [{"name": "by_loc", "fields": ["loc"], "type": "geo"}]}}}
    """#

private struct Athlete: Codable, Equatable, Sendable {
    var id: Int
    var name: String
    var club: String
    var born: Date
}

private struct Session: Codable, Equatable, Sendable {
    var id: UUID
    var athlete: Int
    var at: Date
}

private struct Station: Codable, Equatable, Sendable {
    struct Location: Codable, Equatable, Sendable {
        var lat: Double
        var lon: Double
    }
    var id: String
    var name: String
    var loc: Location
}

/// A wrapper id that encodes as its integer.
private struct AthleteID: Codable, Equatable {
    var raw: Int
    init(_ raw: Int) { self.raw = raw }
    init(from decoder: any Decoder) throws { raw = try decoder.singleValueContainer().decode(Int.self) }
    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(raw)
    }
}

private func typedSchema() throws -> DocumentSchema {
    try DocumentSchema(json: Data(typedSchemaJSON.utf8), file: "typed.json")
}

private let ada = Athlete(
    id: 1, name: "Ada Lovelace", club: "Tromsø SK", born: Date(timeIntervalSince1970: 1_000_000_000))
private let bo = Athlete(id: 2, name: "Bo Berg", club: "Oslo IL", born: Date(timeIntervalSince1970: 1_100_000_000.5))

@Suite struct TypedDocumentTests {
    // MARK: - JSONValue ↔ Codable

    @Test func jsonValueRoundTripsCodableValuesWithEachDateStrategy() throws {
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        let expected: [DateStrategy: JSONValue] = [
            .secondsSince1970: 1_700_000_000, .millisecondsSince1970: 1_700_000_000_000,
            .secondsSince2001: .int(Int64(date.timeIntervalSinceReferenceDate)), .iso8601: "2023-11-14T22:13:20Z"
        ]
        for strategy in DateStrategy.allCases {
            let json = try JSONValue(encoding: ["at": date], dates: strategy)
            #expect(json["at"] == expected[strategy], "\(strategy)")
            #expect(try json.decode([String: Date].self, dates: strategy) == ["at": date], "\(strategy)")
        }
        #expect(try JSONValue(encoding: ada) == JSONValue(encoding: ada, dates: .secondsSince1970))
        #expect(try JSONValue(encoding: ada).decode(Athlete.self) == ada)
        #expect(try JSONValue(encoding: bo)["born"] == .double(1_100_000_000.5))
    }

    @Test func iso8601KeepsWholeSecondsAndReadsFractionsAndOffsets() throws {
        let json = try JSONValue(encoding: ["at": Date(timeIntervalSince1970: 10.75)], dates: .iso8601)
        #expect(json["at"] == "1970-01-01T00:00:10Z")
        #expect(
            try JSONValue.string("1970-01-01T00:00:10.250Z").decode(Date.self, dates: .iso8601)
                == Date(timeIntervalSince1970: 10.25))
        #expect(
            try JSONValue.string("1970-01-01T02:00:10+02:00").decode(Date.self, dates: .iso8601)
                == Date(timeIntervalSince1970: 10))
        let error = expectError(.decoding) { try JSONValue.string("yesterday").decode(Date.self, dates: .iso8601) }
        #expect(
            error?.message
                == #"the JSON does not decode as Date: at the top level: expected an ISO 8601 date, found "yesterday""#)
    }

    @Test func decodingAMismatchNamesTheCodingPath() throws {
        let wrong: JSONValue = ["id": 1, "name": "x", "club": 5, "born": 0]
        let error = expectError(.decoding) { try wrong.decode(Athlete.self) }
        #expect(error?.message == "the JSON does not decode as Athlete: at club: expected String, found a number (5)")
    }

    // MARK: - Ids as Swift values

    @Test func idsOfFourSwiftTypesFindTheirDocuments() throws {
        try withTemporaryDatabase { db, _ throws in
            let store = try DocumentStore(database: db, schema: try typedSchema())
            let athletes = try store.collection("athletes", of: Athlete.self)
            let sessions = try store.collection("sessions", of: Session.self)
            try athletes.insert(ada)
            let uuid = UUID()
            let session = Session(id: uuid, athlete: 1, at: Date(timeIntervalSince1970: 1_700_000_000))
            try sessions.insert(session)

            // Int, Int64, a wrapper type, and JSON on a typed collection.
            #expect(try athletes.get(id: 1) == ada)
            #expect(try athletes.get(id: Int64(1)) == ada)
            #expect(try athletes.get(id: AthleteID(1)) == ada)
            #expect(try athletes.get(id: .int(1)) == ada)
            // UUID: stored as its uuidString, found by the UUID and by the text.
            #expect(try store.collection("sessions").get(id: uuid)?["id"] == .string(uuid.uuidString))
            #expect(try sessions.get(id: uuid) == session)
            #expect(try sessions.get(id: uuid.uuidString) == session)
            // String on an untyped collection, and in a transaction.
            #expect(try store.collection("stations").get(id: "none") == nil)
            #expect(try store.read { try $0.get("athletes", id: 1, as: Athlete.self) } == ada)
            #expect(try store.read { try $0.get("sessions", id: uuid) }?["athlete"] == 1)

            #expect(try sessions.delete(id: uuid))
            #expect(try sessions.get(id: uuid) == nil)
            #expect(try store.collection("athletes").delete(id: 1))
            #expect(try athletes.count() == 0)
        }
    }

    @Test func anIdThatIsNeitherAStringNorAnIntegerIsRefused() throws {
        try withTemporaryDatabase { db, _ throws in
            let store = try DocumentStore(database: db, schema: try typedSchema())
            let error = expectError(.invalidArgument) { try store.collection("athletes").get(id: [1, 2]) }
            #expect(
                error?.message
                    == #"primary key "id" of collection "athletes" must be a string or an integer, not [1,2]"#)
        }
    }

    // MARK: - Typed reads in a transaction

    @Test func aTransactionReadsTypedValuesFromOneSnapshot() throws {
        try withTemporaryDatabase { db, _ throws in
            let store = try DocumentStore(database: db, schema: try typedSchema())
            let athletes = try store.collection("athletes", of: Athlete.self)
            let stations = try store.collection("stations", of: Station.self)
            try athletes.insert(ada)
            try athletes.insert(bo)
            let perth = Station(id: "PER", name: "Perth", loc: .init(lat: -31.9505, lon: 115.8605))
            let claremont = Station(id: "CLA", name: "Claremont", loc: .init(lat: -31.9801, lon: 115.7817))
            try stations.insert(perth)
            try stations.insert(claremont)
            let here = try GeoPoint(latitude: -31.951, longitude: 115.86)

            let (found, count, near, hits, visited) = try store.read { tx in
                // A write after the snapshot is not seen by any of the reads.
                try athletes.insert(Athlete(id: 3, name: "Cy", club: "Oslo IL", born: .now))
                var visited: [Int] = []
                try tx.forEach("athletes", DocumentQuery().orderBy("id"), as: Athlete.self) { visited.append($0.id) }
                return (
                    try tx.fetch(.find("athletes", DocumentQuery().where("club", .equal("Oslo IL")), as: Athlete.self)),
                    try tx.count("athletes", DocumentQuery().where("club", .equal("Oslo IL"))),
                    try tx.fetch(.near("stations", here, within: 20_000, as: Station.self)),
                    try tx.fetch(.search("athletes", "lovelace", as: Athlete.self)),
                    visited
                )
            }
            #expect(found == [bo])
            #expect(count == 1)
            #expect(near.map(\.value) == [perth, claremont])
            #expect(near.map(\.id) == ["PER", "CLA"])
            #expect(near[0].distance < 100 && near[1].distance > 7000)
            #expect(hits.map(\.value) == [ada])
            #expect(visited == [1, 2])
            #expect(try athletes.count() == 3)
        }
    }

    @Test func typedHitsCanBeMadeFromUntypedOnes() throws {
        try withTemporaryDatabase { db, _ throws in
            let store = try DocumentStore(database: db, schema: try typedSchema())
            try store.collection("stations", of: Station.self).insert(
                Station(id: "PER", name: "Perth", loc: .init(lat: -31.95, lon: 115.86)))
            let hit = try #require(
                try store.collection("stations").near(try GeoPoint(latitude: -31.95, longitude: 115.86)).first)
            let typed = try TypedNearHit<Station>(decoding: hit, dates: store.dateStrategy)
            #expect(typed.value.name == "Perth" && typed.id == "PER" && typed.distance == hit.distance)
            let made = TypedNearHit(id: "X", distance: 1.5, value: 7)
            #expect(made.value == 7 && made.distance == 1.5)
        }
    }

    @Test func aTypedReadOfADocumentOfAnotherShapeThrowsDecoding() throws {
        try withTemporaryDatabase { db, _ throws in
            let store = try DocumentStore(database: db, schema: try typedSchema())
            try store.collection("athletes").insert(["id": 9, "name": "No club"])
            let error = expectError(.decoding) { try store.read { try $0.fetch(.find("athletes", as: Athlete.self)) } }
            #expect(
                error?.message == #"stored document does not decode as Athlete: at the top level: no member "club""#)
        }
    }

    // MARK: - Typed batch writes

    @Test func aBatchWritesTypedValuesAllOrNone() throws {
        try withTemporaryDatabase { db, _ throws in
            let store = try DocumentStore(database: db, schema: try typedSchema())
            let athletes = try store.collection("athletes", of: Athlete.self)
            try store.write { batch in
                try batch.insert("athletes", encoding: ada)
                try batch.upsert("athletes", encoding: bo)
            }
            var renamed = bo
            renamed.name = "Bo B."
            try store.write { batch in
                try batch.update("athletes", encoding: renamed)
                try batch.delete("athletes", id: 1)
            }
            #expect(try athletes.find() == [renamed])
            // A failing write in the batch leaves nothing written.
            #expect(throws: KVDocsError.self) {
                try store.write { batch in
                    try batch.insert("athletes", encoding: ada)
                    try batch.update("athletes", encoding: Athlete(id: 99, name: "", club: "", born: .now))
                }
            }
            #expect(try athletes.find() == [renamed])
            // Dates in batches are written with the store's strategy.
            #expect(try store.collection("athletes").get(id: 2)?["born"] == .double(1_100_000_000.5))
        }
    }

    // MARK: - Date strategy

    @Test func aNewStoreRecordsUnixSecondsAndWhereAtGreaterThanUnixTimeFindsDates() throws {
        try withTemporaryDatabase { db, _ throws in
            let store = try DocumentStore(database: db, schema: try typedSchema())
            #expect(store.dateStrategy == .secondsSince1970)
            #expect(try DocumentCatalog().dateStrategy(in: db) == .secondsSince1970)
            let athletes = try store.collection("athletes", of: Athlete.self)
            try athletes.insert(ada)
            try athletes.insert(bo)
            #expect(try athletes.find(DocumentQuery().where("born", .greater(1_050_000_000))) == [bo])
            #expect(try athletes.count(DocumentQuery().where("born", .greater(900_000_000))) == 2)
            #expect(try store.collection("athletes").get(id: 1)?["born"] == 1_000_000_000)
        }
    }

    @Test(arguments: DateStrategy.allCases)
    func eachStrategyIsRecordedAndKeptOnReopen(_ strategy: DateStrategy) throws {
        try withTemporaryDatabase { db, _ throws in
            let store = try DocumentStore(database: db, schema: try typedSchema(), dates: strategy)
            let athletes = try store.collection("athletes", of: Athlete.self)
            try athletes.insert(ada)
            #expect(
                try store.collection("athletes").get(id: 1)?["born"] == JSONValue(encoding: ada.born, dates: strategy))
            let reopened = try DocumentStore(database: db)
            #expect(reopened.dateStrategy == strategy)
            #expect(try reopened.collection("athletes", of: Athlete.self).get(id: 1) == ada)
            #expect(try DocumentCatalog().dateStrategy(in: db) == strategy)
        }
    }

    @Test func openingWithAnotherStrategyThanTheRecordedOneIsRefused() throws {
        try withTemporaryDatabase { db, path throws in
            _ = try DocumentStore(database: db, schema: try typedSchema(), dates: .iso8601)
            let error = expectError(.invalidArgument) { try DocumentStore(database: db, dates: .secondsSince1970) }
            #expect(
                error?.message
                    == "the document store in \(path) stores dates as iso8601; opening it with dates: .secondsSince1970 would misread them (open it with dates: .iso8601, or without dates:)"
            )
            #expect(try DocumentStore(database: db, dates: .iso8601).dateStrategy == .iso8601)
        }
    }

    @Test func anEmptyDatabaseOpenedWithoutASchemaIsNotWrittenTo() throws {
        try withTemporaryDatabase { db, _ throws in
            let store = try DocumentStore(database: db)
            #expect(store.dateStrategy == .default)
            #expect(try db.entries(.all).collect().isEmpty)
        }
    }

    @Test func aStoreWrittenBeforeStrategiesWereRecordedKeepsSecondsSince2001() throws {
        try withTemporaryDatabase { db, _ throws in
            // As the earlier version left it: documents with dates as seconds since 2001
            // (JSONEncoder's default), and no record.
            let store = try DocumentStore(database: db, schema: try typedSchema())
            try store.collection("athletes").insert(try JSONValue(encoding: ada, dates: .secondsSince2001))
            try db.delete(DocumentCatalog().datesKey)
            #expect(try DocumentCatalog().dateStrategy(in: db) == nil)

            let reopened = try DocumentStore(database: db)
            #expect(reopened.dateStrategy == .secondsSince2001)
            #expect(try DocumentCatalog().dateStrategy(in: db) == .secondsSince2001)
            #expect(try reopened.collection("athletes", of: Athlete.self).get(id: 1) == ada)
            let error = expectError(.invalidArgument) { try DocumentStore(database: db, dates: .secondsSince1970) }
            #expect(error?.message.contains("stores dates as secondsSince2001") == true)
        }
    }

    @Test func anExistingStoreWithoutDocumentsOrRecordTakesTheGivenStrategy() throws {
        try withTemporaryDatabase { db, _ throws in
            _ = try DocumentStore(database: db, schema: try typedSchema())
            try db.delete(DocumentCatalog().datesKey)
            #expect(
                try DocumentStore(database: db, dates: .millisecondsSince1970).dateStrategy == .millisecondsSince1970)
            #expect(try DocumentCatalog().dateStrategy(in: db) == .millisecondsSince1970)
        }
    }

    @Test func aStrategyRecordedByANewerVersionIsRefused() throws {
        try withTemporaryDatabase { db, path throws in
            _ = try DocumentStore(database: db, schema: try typedSchema())
            try db.put(DocumentCatalog().datesKey, Tuple([.string("nanoseconds")]))
            let error = expectError(.notSupported) { try DocumentStore(database: db) }
            #expect(
                error?.message
                    == #"the document store in \#(path) stores dates as "nanoseconds", a strategy this version of KVDocs does not know (it knows secondsSince1970, millisecondsSince1970, iso8601, secondsSince2001)"#
            )
        }
    }

    @Test func theFixtureWrittenBeforeStrategiesReadsItsDates() throws {
        let dir = TemporaryDirectory()
        try FileManager.default.copyItem(
            atPath: packageRoot.appendingPathComponent("Tests/Fixtures/dates1-db").path, toPath: dir.child("db"))
        let db = try LevelDB(path: dir.child("db"))
        defer { db.close() }
        #expect(try DocumentCatalog().dateStrategy(in: db) == nil)
        let store = try DocumentStore(database: db)
        #expect(store.dateStrategy == .secondsSince2001)
        let runs = try store.collection("runs", of: FixtureRun.self)
        #expect(try runs.get(id: 1) == FixtureRun(id: 1, at: Date(timeIntervalSince1970: 1_700_000_000)))
        #expect(try runs.get(id: 2) == FixtureRun(id: 2, at: Date(timeIntervalSince1970: 1_600_000_000.5)))
        // Queries compare with the stored numbers: seconds since 2001 here.
        let cut = Date(timeIntervalSince1970: 1_650_000_000).timeIntervalSinceReferenceDate
        #expect(try runs.find(DocumentQuery().where("at", .greater(.double(cut)))).map(\.id) == [1])
    }
}

/// The documents of the dates1-db fixture.
struct FixtureRun: Codable, Equatable {
    var id: Int
    var at: Date
}

/// A store opened on an empty database without a schema records its date strategy when the
/// schema first makes it a store, so typed dates written then read back the same after a
/// reopen (and are not taken for the legacy layout).
@Suite struct DateRecordTests {
    @Test func aStoreGivenItsSchemaLaterRecordsItsDateStrategyWithIt() throws {
        try withTemporaryDatabase { db, _ in
            let born = Date(timeIntervalSince1970: 1_000_000_000)
            do {
                let store = try DocumentStore(database: db)
                #expect(try DocumentCatalog().dateStrategy(in: db) == nil)
                try store.apply(try DocumentSchema(collections: ["athletes": CollectionSchema()]))
                #expect(try DocumentCatalog().dateStrategy(in: db) == .secondsSince1970)
                try store.collection("athletes", of: Athlete.self).insert(
                    Athlete(id: 1, name: "a", club: "c", born: born))
            }
            let reopened = try DocumentStore(database: db)
            #expect(reopened.dateStrategy == .secondsSince1970)
            #expect(try reopened.collection("athletes", of: Athlete.self).get(id: 1)?.born == born)
        }
    }
}
