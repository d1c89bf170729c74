import CBench
import Foundation
import KVDocs

/// A station of the apps section, as an app declares it.
struct Station: Codable, Sendable {
    struct Location: Codable, Sendable {
        var lat: Double
        var lon: Double
    }
    var id: Int
    var name: String
    var location: Location
}

/// A departure: `time` in unix seconds.
struct Departure: Codable, Sendable {
    var id: Int
    var station: Int
    var time: Int
    var line: String
    var destination: String
}

/// Stations over one metropolitan region (40 km around Perth), most along twelve lines
/// radiating from the centre, the others scattered, denser near the centre; each with a
/// day of departures (distinct times per station, 05:00 to 24:00). Query points: most
/// within a kilometre of a station, the others anywhere in the region (some find none);
/// the time of each query anywhere from 04:30 to 00:30.
struct StationsData {
    var stations: [Station] = []
    var departures: [Departure] = []
    var queryLats: [Double] = []
    var queryLons: [Double] = []
    var queryNows: [Int64] = []

    static let centre = (lat: -31.95, lon: 115.86)
    static let radius = 40_000.0
    /// Midnight of the day the departures run (unix seconds).
    static let dayStart = 1_700_000_000

    init(stations count: Int, departuresPerStation: Int, queries: Int, seed: UInt64) {
        var rng = BenchRandom(seed: seed)
        func uniform() -> Double { Double(rng.next() >> 11) / Double(1 << 53) }
        let metresPerDegree = GeoPoint.earthRadius * Double.pi / 180
        func place(_ lat: Double, _ lon: Double, east: Double, north: Double) -> (Double, Double) {
            (lat + north / metresPerDegree, lon + east / (metresPerDegree * cos(lat * Double.pi / 180)))
        }
        let bearings = (0..<12).map { _ in uniform() * 2 * Double.pi }
        stations.reserveCapacity(count)
        departures.reserveCapacity(count * departuresPerStation)
        let interval = 19.0 * 60 / Double(max(1, departuresPerStation))  // minutes
        for s in 0..<count {
            let east: Double, north: Double
            let line = Int(rng.next() % 12)
            if uniform() < 0.55 {
                let along = Self.radius * pow(uniform(), 1.2), across = (uniform() - 0.5) * 600
                east = along * sin(bearings[line]) + across * cos(bearings[line])
                north = along * cos(bearings[line]) - across * sin(bearings[line])
            } else {
                let r = Self.radius * pow(uniform(), 0.7), bearing = uniform() * 2 * Double.pi
                east = r * sin(bearing)
                north = r * cos(bearing)
            }
            let (lat, lon) = place(Self.centre.lat, Self.centre.lon, east: east, north: north)
            stations.append(Station(id: s, name: "Station \(s)", location: .init(lat: lat, lon: lon)))
            for k in 0..<departuresPerStation {
                let minutes = 300 + Double(k) * interval + uniform() * interval * 0.8
                let other = k % 3 == 2 ? (line + 5) % 12 : line
                departures.append(
                    Departure(
                        id: s * 1000 + k, station: s, time: Self.dayStart + Int(minutes * 60),
                        line: "L\(other + 1)",
                        destination: k % 2 == 0 ? "Terminus \(other + 1) north" : "Terminus \(other + 1) south"))
            }
        }
        for _ in 0..<queries {
            let (lat, lon): (Double, Double)
            if !stations.isEmpty, uniform() < 0.8 {
                let near = stations[Int(rng.next() % UInt64(stations.count))].location
                (lat, lon) = place(near.lat, near.lon, east: (uniform() - 0.5) * 2000, north: (uniform() - 0.5) * 2000)
            } else {
                (lat, lon) = place(
                    Self.centre.lat, Self.centre.lon, east: (uniform() * 2 - 1) * Self.radius,
                    north: (uniform() * 2 - 1) * Self.radius)
            }
            queryLats.append(lat)
            queryLons.append(lon)
            queryNows.append(Int64(Self.dayStart + Int((270 + uniform() * 1200) * 60)))
        }
    }
}

extension Bench {
    /// Stations: the nearest station within 1.5 km of a point, then its next 5 departures.
    /// KVDocs: typed collections, a geo index on `location` and a `(station, time)` index.
    /// SQLite: an R*Tree of the stations (bounding box of the circle, exact haversine on the
    /// candidates) and `departure(station, time)`.
    func runStations() throws {
        let count = quick ? 500 : 5_000, perStation = quick ? 20 : 100
        let queryCount = quick ? 300 : 4_000
        let data = StationsData(stations: count, departuresPerStation: perStation, queries: queryCount, seed: 2810)
        let total = data.departures.count
        let radius = 1500.0, next = 5
        let label = "\(count) stations, \(total) departures"

        // KVDocs.
        let db = try KVDocs.LevelDB(path: freshPath("apps-stations"))
        defer { db.close() }
        let schema = try DocumentSchema(collections: [
            "stations": CollectionSchema(
                primaryKey: "id", geo: [GeoIndexDefinition(name: "by_location", field: "location")]),
            "departures": CollectionSchema(
                primaryKey: "id",
                indexes: [SecondaryIndexDefinition(name: "by_station_time", fields: ["station", "time"])])
        ])
        let store = try DocumentStore(database: db, schema: schema)
        let stations = try store.collection("stations", of: Station.self)
        let departures = try store.collection("departures", of: Departure.self)
        try measure("apps", "stations: insert \(label), batches of 1000", "kvdocs", repeats: 1) {
            let start = now()
            for chunk in stride(from: 0, to: count, by: 1000) {
                try store.write { b in
                    for s in data.stations[chunk..<min(chunk + 1000, count)] { try b.insert("stations", encoding: s) }
                }
            }
            for chunk in stride(from: 0, to: total, by: 1000) {
                try store.write { b in
                    for d in data.departures[chunk..<min(chunk + 1000, total)] {
                        try b.insert("departures", encoding: d)
                    }
                }
            }
            return (now() - start, count + total, [:])
        }
        try db.compact()  // level 0 drained before reads

        // SQLite.
        var error: UnsafeMutablePointer<CChar>?
        guard let sqlite = ca_stations_open(freshPath("apps-stations") + ".sqlite", &error) else {
            throw appsError(error)
        }
        defer { ca_stations_close(sqlite) }
        let stationIDs = data.stations.map { Int64($0.id) }, lats = data.stations.map(\.location.lat),
            lons = data.stations.map(\.location.lon)
        let names = CStrings(data.stations.map(\.name))
        let departureIDs = data.departures.map { Int64($0.id) },
            departureStations = data.departures.map { Int64($0.station) }
        let times = data.departures.map { Int64($0.time) }
        let lines = CStrings(data.departures.map(\.line)), destinations = CStrings(data.departures.map(\.destination))
        try measure("apps", "stations: insert \(label), batches of 1000", "sqlite-c", repeats: 1) {
            let stationSeconds = try c { e in
                stationIDs.withUnsafeBufferPointer { i in
                    lats.withUnsafeBufferPointer { la in
                        lons.withUnsafeBufferPointer { lo in
                            ca_stations_insert(
                                sqlite, i.baseAddress, names.pointer, la.baseAddress, lo.baseAddress, Int32(count), e)
                        }
                    }
                }
            }
            let departureSeconds = try c { e in
                departureIDs.withUnsafeBufferPointer { i in
                    departureStations.withUnsafeBufferPointer { s in
                        times.withUnsafeBufferPointer { t in
                            ca_departures_insert(
                                sqlite,
                                ca_departure_rows(
                                    id: i.baseAddress, station: s.baseAddress, time: t.baseAddress,
                                    line: lines.pointer, destination: destinations.pointer), Int32(total), 1000, e)
                        }
                    }
                }
            }
            return (stationSeconds + departureSeconds, count + total, [:])
        }

        // KVDocs' screen: the nearest station (decoded), then its next departures (decoded).
        let points = try zip(data.queryLats, data.queryLons).map { try GeoPoint(latitude: $0, longitude: $1) }
        let nearest = DocumentQuery().limit(1)
        func upcoming(_ station: Int, _ time: Int64) -> DocumentQuery {
            DocumentQuery().where("station", .equal(.int(Int64(station)))).where("time", .greaterOrEqual(.int(time)))
                .orderBy(
                    "time"
                ).limit(next)
        }
        func screen(_ q: Int) throws -> (Station, [Departure])? {
            guard let hit = try stations.near(points[q], within: radius, query: nearest).first else { return nil }
            return (hit.value, try departures.find(upcoming(hit.value.id, data.queryNows[q])))
        }
        func sqliteScreens(
            _ n: Int, _ outStations: UnsafeMutablePointer<Int64>?, _ outDepartures: UnsafeMutablePointer<Int64>?,
            _ candidates: inout Int
        ) throws -> Double {
            try c { e in
                data.queryLats.withUnsafeBufferPointer { la in
                    data.queryLons.withUnsafeBufferPointer { lo in
                        data.queryNows.withUnsafeBufferPointer { t in
                            ca_stations_next(
                                sqlite, la.baseAddress, lo.baseAddress, t.baseAddress, Int32(n), radius, Int32(next),
                                outStations, outDepartures, &candidates, e)
                        }
                    }
                }
            }
        }

        let name = "stations: nearest within 1.5 km, then next 5 departures (\(label))"
        let plan = try store.collection("departures").explain(upcoming(0, Int64(StationsData.dayStart)))
        notes["apps: stations next departures, kvdocs plan"] = plan.description
        notes[Report.appsPlanKey + name] =
            "geo index by_location, then " + (plan.index.map { "index \($0)" } ?? "SCAN (every departure read)")
        notes["apps: stations nearest, sqlite plan"] = try sqlitePlan { ca_stations_plan(sqlite, 0, $0, $1, $2) }
        notes["apps: stations next departures, sqlite plan"] = try sqlitePlan {
            ca_stations_plan(sqlite, 1, $0, $1, $2)
        }

        // Both sides give the same station and the same departures, in the same order.
        let checked = min(queryCount, 300)
        var cStations = [Int64](repeating: -1, count: checked),
            cDepartures = [Int64](repeating: -1, count: checked * next)
        var candidates = 0
        _ = try sqliteScreens(checked, &cStations, &cDepartures, &candidates)
        var found = 0
        for q in 0..<checked {
            let answer = try screen(q)
            let k = (Int64(answer?.0.id ?? -1), answer?.1.map { Int64($0.id) } ?? [])
            let s = (cStations[q], Array(cDepartures[(q * next)..<((q + 1) * next)].prefix { $0 >= 0 }))
            guard k == s else {
                throw BenchError("apps: the sides disagree on stations query \(q): kvdocs \(k), sqlite-c \(s)")
            }
            if k.0 >= 0 { found += 1 }
        }
        guard found > 0 else { throw BenchError("apps: no stations query found a station; the check proves nothing") }
        FileHandle.standardError.write(
            Data("  apps: stations: \(checked) queries agree (\(found) found a station)\n".utf8))

        let extra = ["queries finding a station": Double(found) / Double(checked)]
        try measureAlternating(
            "apps", name,
            [
                (
                    "kvdocs",
                    {
                        let start = now()
                        for q in 0..<queryCount { _ = try screen(q) }
                        return (now() - start, queryCount, extra)
                    }
                ),
                (
                    "sqlite-c",
                    {
                        var candidates = 0
                        let seconds = try sqliteScreens(queryCount, nil, nil, &candidates)
                        return (
                            seconds, queryCount,
                            extra.merging(["candidates per query": Double(candidates) / Double(queryCount)]) { a, _ in a
                            }
                        )
                    }
                )
            ])

        // The physical floors (Floors+Apps.swift): the insert's batches replayed, then the
        // screen's reads on this database (closed by the last).
        try measureInsertFloor(
            "apps", "stations: insert \(label), batches of 1000", schema: schema,
            collections: ["stations", "departures"],
            documents: count + total
        ) { store in
            for chunk in stride(from: 0, to: count, by: 1000) {
                try store.write { b in
                    for s in data.stations[chunk..<min(chunk + 1000, count)] { try b.insert("stations", encoding: s) }
                }
            }
            for chunk in stride(from: 0, to: total, by: 1000) {
                try store.write { b in
                    for d in data.departures[chunk..<min(chunk + 1000, total)] {
                        try b.insert("departures", encoding: d)
                    }
                }
            }
            return (count + 999) / 1000 + (total + 999) / 1000
        }
        let answers = try (0..<queryCount).map { q in
            try screen(q).map { (station: $0.0.id, departures: $0.1.map(\.id)) }
        }
        try measureStationsFloor(
            db: db, store: store, name: name, points: points, radius: radius, nearest: nearest, answers: answers,
            upcoming: { q, station in upcoming(station, data.queryNows[q]) })
    }
}
