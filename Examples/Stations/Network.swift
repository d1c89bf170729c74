import Foundation
import KVDocs

struct Location: Codable, Sendable {
    var lat: Double
    var lon: Double
}

struct Station: Codable, Sendable {
    var id: String
    var name: String
    var location: Location
}

/// A departure. `time` is a `Date`, stored as Unix seconds (the store's default
/// ``DateStrategy``), so the index on (station, time) orders departures by time.
struct Departure: Codable, Sendable {
    var id: String
    var station: String
    var time: Date
    var line: String
    var destination: String
}

/// The schema, as the JSON file an app would ship: a geo index on `location`, and a plain
/// compound index that serves `where station = ? and time >= ? order by time limit 5`.
let stationsSchemaJSON = #"""
    {"collections": {
      "stations":   {"primaryKey": "id",
                     "indexes": [{"name": "by_location", "fields": ["location"], "type": "geo"}]},
      "departures": {"primaryKey": "id",
                     "indexes": [{"name": "by_station_time", "fields": ["station", "time"]}]}}}
    """#

/// A small town's network, generated deterministically: line 1 runs west–east, line 2
/// north–south, crossing at Central; each line runs both ways from 06:00 to 10:00 UTC on
/// 2024-05-01, two minutes between stations.
enum Network {
    /// 2024-05-01 06:00:00 UTC, in Unix seconds.
    static let firstDeparture = 1_714_543_200
    static let lastDeparture = firstDeparture + 4 * 3600

    struct Line {
        var name: String
        var stations: [String]
        /// Minutes between trains.
        var headway: Int
        /// Minutes after 06:00 of the first train from each end (forward, backward).
        var starts: (forward: Int, backward: Int)
    }

    static let stations: [Station] = [
        ("HARBOUR", "Harbour", 59.913, 10.7125), ("QUAY", "Quay", 59.913, 10.725),
        ("MARKET", "Market", 59.913, 10.7375), ("CENTRAL", "Central", 59.913, 10.75),
        ("CATHEDRAL", "Cathedral", 59.913, 10.7625), ("OLD-MILL", "Old Mill", 59.913, 10.775),
        ("RIVERSIDE", "Riverside", 59.913, 10.7875),
        ("UNIVERSITY", "University", 59.934, 10.75), ("HOSPITAL", "Hospital", 59.927, 10.75),
        ("PARK", "Park", 59.920, 10.75), ("STADIUM", "Stadium", 59.906, 10.75), ("DOCKS", "Docks", 59.899, 10.75)
    ].map { Station(id: $0.0, name: $0.1, location: Location(lat: $0.2, lon: $0.3)) }

    static let lines = [
        Line(
            name: "1", stations: ["HARBOUR", "QUAY", "MARKET", "CENTRAL", "CATHEDRAL", "OLD-MILL", "RIVERSIDE"],
            headway: 10, starts: (0, 5)),
        Line(
            name: "2", stations: ["UNIVERSITY", "HOSPITAL", "PARK", "CENTRAL", "STADIUM", "DOCKS"],
            headway: 15, starts: (2, 9))
    ]

    /// Every departure of every line, both ways, from every station but the terminus.
    static func departures() -> [Departure] {
        let names = Dictionary(uniqueKeysWithValues: stations.map { ($0.id, $0.name) })
        var result: [Departure] = []
        for line in lines {
            for (stops, start) in [
                (line.stations, line.starts.forward), (line.stations.reversed(), line.starts.backward)
            ] {
                let destination = names[stops[stops.count - 1]] ?? stops[stops.count - 1]
                var train = firstDeparture + start * 60
                while train <= lastDeparture {
                    for (position, station) in stops.dropLast().enumerated() {
                        let time = train + position * 120
                        result.append(
                            Departure(
                                id: "\(station)-\(time)-\(line.name)\(destination.prefix(3).uppercased())",
                                station: station, time: Date(timeIntervalSince1970: TimeInterval(time)),
                                line: line.name, destination: destination))
                    }
                    train += line.headway * 60
                }
            }
        }
        return result
    }
}
