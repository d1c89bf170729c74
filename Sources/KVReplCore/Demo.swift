import Foundation
import KVDocs

/// The sample database of `kvrepl --demo`: train stations and their departures, with a
/// schema (secondary and text indexes) and a declared keyspace for raw departure keys.
/// Deterministic: the same content every time.
public enum Demo {
    public static let schemaJSON = #"""
    {"collections": {
      "stations": {
        "primaryKey": "id",
        "indexes": [
          {"name": "by_zone", "fields": ["zone"]},
          {"name": "by_line", "fields": ["lines[]"]},
          {"name": "by_name", "fields": ["name"], "unique": true}
        ],
        "text": [{"name": "station_text", "fields": ["name", "description"]}]
      },
      "departures": {
        "primaryKey": "id",
        "indexes": [
          {"name": "by_station_time", "fields": ["station", "time"]},
          {"name": "by_destination", "fields": ["destination"]},
          {"name": "by_pattern", "fields": ["pattern"]}
        ],
        "text": [{"name": "departure_text", "fields": ["destination", "pattern"], "tokenizer": "porter"}]
      }}}
    """#

    public static let keyspacesJSON = #"""
    {"keyspaces": {"departure": {"prefix": ["dep"],
      "components": [{"name": "station", "type": "string"}, {"name": "time", "type": "int"}]}}}
    """#

    static let lines: [String: [String]] = [
        "Fremantle": ["Perth", "City West", "West Leederville", "Subiaco", "Daglish", "Shenton Park", "Karrakatta", "Loch Street", "Claremont", "Swanbourne", "Cottesloe", "Mosman Park", "North Fremantle", "Fremantle"],
        "Midland": ["Perth", "Claisebrook", "East Perth", "Mount Lawley", "Maylands", "Meltham", "Bayswater", "Ashfield", "Bassendean", "Success Hill", "Guildford", "East Guildford", "Woodbridge", "Midland"],
        "Armadale": ["Perth", "Burswood", "Victoria Park", "Carlisle", "Oats Street", "Queens Park", "Cannington", "Beckenham", "Kenwick", "Maddington", "Gosnells", "Seaforth", "Kelmscott", "Armadale"],
        "Joondalup": ["Perth Underground", "Leederville", "Glendalough", "Stirling", "Warwick", "Greenwood", "Whitfords", "Edgewater", "Joondalup"],
        "Mandurah": ["Perth Underground", "Elizabeth Quay", "Canning Bridge", "Bull Creek", "Murdoch", "Cockburn Central", "Aubin Grove", "Kwinana", "Wellard", "Rockingham", "Warnbro", "Mandurah"],
    ]
    static let patterns = ["all stations", "express", "limited stops", "skip-stop A", "skip-stop B"]

    /// Builds the sample database at `path` if it has no sample schema yet, and returns the number of documents.
    @discardableResult
    public static func build(at path: String) throws -> Int {
        let db = try Database(path: path)
        defer { db.close() }
        if try DocumentStore.exists(in: db) { return 0 }
        let store = try DocumentStore(database: db, schema: try Schema(json: Data(schemaJSON.utf8), file: "demo schema"))
        try KeySchema(json: Data(keyspacesJSON.utf8), file: "demo keyspaces").store(in: db)
        var rng = SplitMix64(seed: 2024)
        var stationLines: [String: [String]] = [:]
        for (line, stops) in lines { for s in stops { stationLines[s, default: []].append(line) } }
        let names = stationLines.keys.sorted()
        let stations = try store.collection("stations")
        for (i, name) in names.enumerated() {
            let lineNames = stationLines[name, default: []].sorted()
            let zone = name.hasPrefix("Perth") || name == "Elizabeth Quay" || name == "City West" || name == "Claisebrook" ? 1 : 1 + Int(rng.next() % 4)
            try stations.insert(.object([
                "id": .string(code(name)), "name": .string(name), "zone": .int(Int64(zone)),
                "lines": .array(lineNames.map { .string($0) }),
                "location": ["lat": .double(Double(-319500 - i * 130) / 10000), "lon": .double(Double(1158600 - Int(rng.next() % 100) * 25) / 10000)],
                "description": .string("\(name) station is in zone \(zone), served by the \(lineNames.joined(separator: " and ")) line\(lineNames.count == 1 ? "" : "s")."
                    + (lineNames.count > 1 ? " Interchange between lines." : "") + (rng.next() % 3 == 0 ? " Parking and bicycle lockers available." : "")),
            ]))
        }
        let departures = try store.collection("departures")
        let start: Int64 = 1_700_000_000
        var n = 0
        for (line, stops) in lines.sorted(by: { $0.key < $1.key }) {
            for (s, station) in stops.enumerated() {
                for trip in 0..<12 {
                    let outbound = trip % 2 == 0
                    let destination = outbound ? stops[stops.count - 1] : stops[0]
                    guard destination != station else { continue }
                    let time = start + Int64(trip) * 900 + Int64(s) * 180
                    let pattern = patterns[Int(rng.next() % UInt64(patterns.count))]
                    let id = "\(code(station))-\(time)-\(line.prefix(3).uppercased())"
                    try departures.insert(.object([
                        "id": .string(id), "station": .string(code(station)), "line": .string(line),
                        "destination": .string(destination), "pattern": .string(pattern), "time": .int(time),
                        "platform": .int(Int64(1 + rng.next() % 4)),
                    ]))
                    try db.put(Tuple(["dep", .string(station), .int(time)]), "\(destination) (\(pattern))")
                    n += 1
                }
            }
        }
        return names.count + n
    }

    /// A short id from a station name: "Perth Underground" -> "PERTH-UNDERGROUND".
    static func code(_ name: String) -> String {
        name.uppercased().replacingOccurrences(of: " ", with: "-")
    }
}
