import Foundation
import KVDocs

/// The README's app example: a data migration run when the store opens, async reads and
/// writes, requests fetched by several readers, and an observed query that keeps a
/// departure board current.
func appExample(_ path: String) async throws {
    let schema = try DocumentSchema(
        json: Data(
            #"""
            {"collections": {"departures": {"primaryKey": "id",
              "indexes": [{"name": "by_station_time", "fields": ["station", "time"]}]}}}
            """#.utf8))

    // Data migrations: named, run in order, each once per database, all or nothing.
    var migrator = DocumentMigrator()
    try migrator.register("default platform") { migration in
        try migration.forEach("departures") { departure in
            guard case .object(var fields) = departure, fields["platform"] == nil else { return }
            fields["platform"] = 1
            try migration.update("departures", .object(fields))
        }
    }
    let db = try LevelDB(path: path)
    defer { db.close() }
    let store = try DocumentStore(database: db, schema: schema, migrator: migrator) { _ in
    } migrationProgress: { p in
        print("migration \(p.name): \(p.phase) \(p.documents)")
    }
    let departures = try store.collection("departures")

    // Async access: LevelDB runs on the store's executor, never on the awaiting thread.
    try await departures.async.upsert(["id": "P-1000", "station": "PERTH", "time": 1000, "platform": 7])
    try await departures.async.delete(id: "P-0900")  // (left by an earlier run of this example)
    let (count, first) = try await store.read { tx in
        (try tx.count("departures"), try tx.find("departures", DocumentQuery().orderBy("time").limit(1)))
    }
    print("departures:", count, "first:", first.first?["id"] ?? .null)

    // Requests: a read as a value, fetched by any reader (a transaction, the store, async,
    // a migration, an observation), typed with `as:`.
    struct Departure: Codable, Sendable {
        var id: String
        var station: String
        var time: Int
        var platform: Int
    }
    let next: FindRequest<Departure> = .find(
        "departures", DocumentQuery().where("station", .equal("PERTH")).orderBy("time").limit(3),
        as: Departure.self)
    let rows = try await store.fetch(next)  // [Departure], off the caller's thread
    let (same, total) = try await store.read { tx in (try tx.fetch(next), try tx.fetch(.count("departures"))) }
    print("next:", rows.map(\.id), same.count == rows.count, total)

    // An observed query: the results now, then new results after each write that changes them.
    let perth = DocumentQuery().where("station", .equal("PERTH")).orderBy("time").limit(3)
    var board = store.observe(.find(departures, perth)).makeAsyncIterator()
    print("board:", try await board.next()?.compactMap { $0["id"] } ?? [])  // ["P-1000"]
    try await departures.async.upsert(["id": "P-0900", "station": "PERTH", "time": 900, "platform": 2])
    print("board:", try await board.next()?.compactMap { $0["id"] } ?? [])  // ["P-0900", "P-1000"]
}
