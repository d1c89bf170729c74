import Foundation
import KVDocs

/// What the app's screen shows: the nearest station and its next departures, both read
/// from one snapshot, so a timetable update between the two reads cannot mix versions.
struct Board {
    var station: TypedNearHit<Station>?
    var departures: [Departure] = []
}

/// In ONE `store.read { tx in … }`: the nearest station within `radius` metres of `here`
/// (a typed `near`), then its next five departures at or after `after` (a typed `find`
/// served by the index on (station, time)).
func board(_ store: DocumentStore, here: GeoPoint, radius: Double, after: Date) throws -> Board {
    // A Date operand as the store writes dates (Unix seconds by default).
    let from = try JSONValue(encoding: after, dates: store.dateStrategy)
    return try store.read { tx in
        guard
            let nearest = try tx.fetch(
                .near("stations", here, within: radius, query: DocumentQuery().limit(1), as: Station.self)
            ).first
        else {
            return Board()
        }
        let next = DocumentQuery().where("station", .equal(.string(nearest.value.id))).where(
            "time", .greaterOrEqual(from)
        )
        .orderBy("time").limit(5)
        return Board(station: nearest, departures: try tx.fetch(.find("departures", next, as: Departure.self)))
    }
}

/// `HH:MM` in UTC.
func clock(_ date: Date) -> String {
    let minutes = Int(date.timeIntervalSince1970) / 60 % (24 * 60)
    return String(format: "%02d:%02d", minutes / 60, minutes % 60)
}

func printBoard(_ store: DocumentStore, here: GeoPoint, radius: Double, after: Date) throws {
    let board = try board(store, here: here, radius: radius, after: after)
    guard let station = board.station else {
        print("no station within \(radius / 1000) km of \(here)")
        // Without a radius, a limit makes it k-nearest: the nearest station at any distance.
        if let nearest = try store.collection("stations", of: Station.self).near(here, query: DocumentQuery().limit(1))
            .first
        {
            print("  the nearest is \(nearest.value.name), \(String(format: "%.1f", nearest.distance / 1000)) km away")
        }
        return
    }
    print(
        "nearest station within \(radius / 1000) km of \(here): \(station.value.name) (\(station.value.id)), "
            + "\(String(format: "%.1f", station.distance)) m")
    print("next departures after \(clock(after)) UTC (\(Int(after.timeIntervalSince1970))):")
    for departure in board.departures {
        print(
            "  \(clock(departure.time))  line \(departure.line) to \(departure.destination)  (\(Int(departure.time.timeIntervalSince1970)))"
        )
    }
}

func runStory(in directory: String) throws {
    // The iPhone app: the network in Application Support (made again on every run).
    let (path, options) = try AppPaths.phoneStore()
    if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }

    let db = try LevelDB(path: path, options: options)
    defer { db.close() }
    let store = try DocumentStore(database: db, schema: try DocumentSchema(json: Data(stationsSchemaJSON.utf8)))
    // Typed batch writes: the whole network in one atomic batch.
    let departures = Network.departures()
    try store.write { batch in
        for station in Network.stations { try batch.insert("stations", encoding: station) }
        for departure in departures { try batch.insert("departures", encoding: departure) }
    }
    print("\(Network.stations.count) stations, \(departures.count) departures")

    // 07:58 UTC on 2024-05-01.
    let after = Date(timeIntervalSince1970: TimeInterval(Network.firstDeparture + 118 * 60))
    // Near Central (about 220 m away).
    let nearCentral = try GeoPoint(latitude: 59.9141, longitude: 10.7532)
    try printBoard(store, here: nearCentral, radius: 1500, after: after)
    // In the hills north-west of town: no station within 1.5 km.
    try printBoard(store, here: try GeoPoint(latitude: 59.95, longitude: 10.65), radius: 1500, after: after)

    try runWatchStory(from: db, in: directory, here: nearCentral, after: after)
}

/// The watch app: the timetable as a base shipped in the bundle (written here, as the app's
/// build would, with `writeBase`), the user's favourites in a user layer over it; the same
/// board, read from the merged layers in one snapshot.
func runWatchStory(from phone: LevelDB, in directory: String, here: GeoPoint, after: Date) throws {
    let built = URL(fileURLWithPath: directory).appendingPathComponent("bundle/stations.db").path
    if FileManager.default.fileExists(atPath: built) { try FileManager.default.removeItem(atPath: built) }
    let written = try LayeredDocumentStore.writeBase(of: phone, to: built)
    print("watch base: \(written.entries) entries, uncompressed")

    let user = try AppPaths.watchUserStore()
    for leftover in [user, user + ".layers"] where FileManager.default.fileExists(atPath: leftover) {
        try FileManager.default.removeItem(atPath: leftover)
    }
    // The shipped schema, and the user's own collection (in the user layer only).
    var schema = try DocumentSchema(json: Data(stationsSchemaJSON.utf8))
    schema.collections["favourites"] = CollectionSchema(primaryKey: "id")
    let layers = try LayeredDocumentStore(
        user: user, base: AppPaths.watchBase(built: built), schema: schema, create: true)
    defer { layers.close() }
    let board = try board(layers.store, here: here, radius: 1500, after: after)
    guard let station = board.station else {
        print("watch: no station near \(here)")
        return
    }
    // The user's favourite goes to the user layer; the base is never written.
    try layers.store.collection("favourites").upsert(["id": .string(station.value.id)])
    let favourites = try layers.store.collection("favourites").find().compactMap { document -> String? in
        if case .string(let id)? = document["id"] { return id }
        return nil
    }
    print(
        "watch: \(station.value.name), next at \(board.departures.first.map { clock($0.time) } ?? "none"); favourites \(favourites.joined(separator: ", "))"
    )
}
