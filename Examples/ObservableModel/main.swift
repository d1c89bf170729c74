// An app's model file as a SwiftUI app writes it: it imports KVDocs beside Foundation and
// Observation, declares an `@Observable` model (the macro expands to
// `Observation.Observable`, which a KVDocs type named `Observation` would shadow), and keeps
// the model current with an observed query. Built by every `swift build`, so a name of KVDocs
// that breaks such a file fails the build; run by Tests/KVReplTests/ExampleTests.swift.
//
// Usage: example-observable DIR (the store is created in DIR/db).
import Foundation
import KVDocs
import Observation

/// One departure of the board, decoded from the store.
struct Departure: Codable, Sendable, Equatable {
    var id: String
    var station: String
    var time: Int
}

/// The board of a station, kept current: what a SwiftUI view reads.
@Observable @MainActor
final class BoardModel {
    /// The next departures, soonest first.
    private(set) var departures: [Departure] = []
    /// Why the board stopped updating, if it did.
    private(set) var failure: String?
    /// How many times the observation delivered new departures.
    private(set) var updates = 0
    @ObservationIgnored private var task: Task<Void, Never>?

    /// Follows the next `limit` departures of `station` in `store`.
    func follow(_ station: String, in store: DocumentStore, limit: Int = 3) {
        let next = FindRequest.find(
            "departures", DocumentQuery().where("station", .equal(.string(station))).orderBy("time").limit(limit),
            as: Departure.self)
        task = Task { [weak self] in
            do {
                for try await departures in store.observe(next) {
                    self?.departures = departures
                    self?.updates += 1
                }
            } catch {
                self?.failure = "\(error)"
            }
        }
    }

    /// Stops following.
    func stop() { task?.cancel() }
}

/// Waits until `model`'s departures change (Observation's tracking, as SwiftUI uses it).
@MainActor
func nextChange(of model: BoardModel) async {
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        withObservationTracking {
            _ = model.departures
        } onChange: {
            done.resume()
        }
    }
}

@MainActor
func run(_ directory: String) async throws {
    let schema = try DocumentSchema(
        json: Data(
            #"""
            {"collections": {"departures": {"primaryKey": "id",
              "indexes": [{"name": "by_station_time", "fields": ["station", "time"]}]}}}
            """#.utf8))
    let db = try LevelDB(path: directory + "/db")
    defer { db.close() }
    let store = try DocumentStore(database: db, schema: schema)
    let departures = try store.collection("departures", of: Departure.self)
    try departures.upsert(Departure(id: "P-1000", station: "PERTH", time: 1000))
    try departures.upsert(Departure(id: "F-0930", station: "FREMANTLE", time: 930))

    let model = BoardModel()
    let first = Task { await nextChange(of: model) }
    model.follow("PERTH", in: store)
    await first.value
    print("board:", model.departures.map(\.id))

    let second = Task { await nextChange(of: model) }
    try await departures.async.upsert(Departure(id: "P-0900", station: "PERTH", time: 900))
    await second.value
    print("board:", model.departures.map(\.id))
    model.stop()
    if let failure = model.failure { throw KVDocsError(.invalidArgument, failure) }
    print("updates:", model.updates)
}

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: example-observable DIR\n".utf8))
    exit(2)
}
do {
    try await run(CommandLine.arguments[1])
} catch {
    FileHandle.standardError.write(Data("example-observable: \(error)\n".utf8))
    exit(1)
}
