import Foundation
import KVDocs

/// The sample database of `kvrepl --demo`: train stations and their departures, with a
/// schema (secondary and text indexes) and a declared keyspace for raw departure keys.
/// Deterministic: the same content every time.
public enum DemoDatabase {
    public static let schemaJSON = #"""
        {"collections": {
          "stations": {
            "primaryKey": "id",
            "indexes": [
              {"name": "by_zone", "fields": ["zone"]},
              {"name": "by_line", "fields": ["lines[]"]},
              {"name": "by_name", "fields": ["name"], "unique": true},
              {"name": "by_location", "fields": ["location"], "type": "geo"}
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
        "Fremantle": [
            "Perth", "City West", "West Leederville", "Subiaco", "Daglish", "Shenton Park", "Karrakatta", "Loch Street",
            "Claremont", "Swanbourne", "Cottesloe", "Mosman Park", "North Fremantle", "Fremantle"
        ],
        "Midland": [
            "Perth", "Claisebrook", "East Perth", "Mount Lawley", "Maylands", "Meltham", "Bayswater", "Ashfield",
            "Bassendean", "Success Hill", "Guildford", "East Guildford", "Woodbridge", "Midland"
        ],
        "Armadale": [
            "Perth", "Burswood", "Victoria Park", "Carlisle", "Oats Street", "Queens Park", "Cannington", "Beckenham",
            "Kenwick", "Maddington", "Gosnells", "Seaforth", "Kelmscott", "Armadale"
        ],
        "Joondalup": [
            "Perth Underground", "Leederville", "Glendalough", "Stirling", "Warwick", "Greenwood", "Whitfords",
            "Edgewater", "Joondalup"
        ],
        "Mandurah": [
            "Perth Underground", "Elizabeth Quay", "Canning Bridge", "Bull Creek", "Murdoch", "Cockburn Central",
            "Aubin Grove", "Kwinana", "Wellard", "Rockingham", "Warnbro", "Mandurah"
        ]
    ]
    /// Where each station is, approximately (latitude, longitude in degrees).
    static let locations: [String: (Double, Double)] = [
        "Perth": (-31.9513, 115.8600), "City West": (-31.9475, 115.8466), "West Leederville": (-31.9432, 115.8333),
        "Subiaco": (-31.9460, 115.8236), "Daglish": (-31.9496, 115.8139), "Shenton Park": (-31.9558, 115.8032),
        "Karrakatta": (-31.9655, 115.7958), "Loch Street": (-31.9730, 115.7893), "Claremont": (-31.9810, 115.7822),
        "Swanbourne": (-31.9840, 115.7690), "Cottesloe": (-31.9960, 115.7594), "Mosman Park": (-32.0097, 115.7610),
        "North Fremantle": (-32.0330, 115.7547), "Fremantle": (-32.0535, 115.7454),
        "Claisebrook": (-31.9509, 115.8724), "East Perth": (-31.9516, 115.8792), "Mount Lawley": (-31.9380, 115.8786),
        "Maylands": (-31.9313, 115.8929), "Meltham": (-31.9270, 115.9080), "Bayswater": (-31.9201, 115.9170),
        "Ashfield": (-31.9141, 115.9383), "Bassendean": (-31.9036, 115.9477), "Success Hill": (-31.8985, 115.9582),
        "Guildford": (-31.8990, 115.9710), "East Guildford": (-31.8958, 115.9825), "Woodbridge": (-31.8920, 115.9920),
        "Midland": (-31.8888, 116.0061),
        "Burswood": (-31.9591, 115.8890), "Victoria Park": (-31.9740, 115.8950), "Carlisle": (-31.9823, 115.9100),
        "Oats Street": (-31.9923, 115.9205), "Queens Park": (-32.0040, 115.9300), "Cannington": (-32.0158, 115.9372),
        "Beckenham": (-32.0270, 115.9570), "Kenwick": (-32.0350, 115.9700), "Maddington": (-32.0470, 115.9880),
        "Gosnells": (-32.0790, 115.9980), "Seaforth": (-32.0920, 116.0040), "Kelmscott": (-32.1120, 116.0160),
        "Armadale": (-32.1530, 116.0140),
        "Perth Underground": (-31.9503, 115.8585), "Leederville": (-31.9380, 115.8425),
        "Glendalough": (-31.9205, 115.8220),
        "Stirling": (-31.8925, 115.8075), "Warwick": (-31.8420, 115.8010), "Greenwood": (-31.8170, 115.7920),
        "Whitfords": (-31.7935, 115.7775), "Edgewater": (-31.7680, 115.7780), "Joondalup": (-31.7450, 115.7680),
        "Elizabeth Quay": (-31.9573, 115.8570), "Canning Bridge": (-32.0075, 115.8530),
        "Bull Creek": (-32.0560, 115.8620),
        "Murdoch": (-32.0700, 115.8400), "Cockburn Central": (-32.1210, 115.8480), "Aubin Grove": (-32.1660, 115.8520),
        "Kwinana": (-32.2410, 115.8160), "Wellard": (-32.2690, 115.8120), "Rockingham": (-32.2900, 115.7560),
        "Warnbro": (-32.3390, 115.7650), "Mandurah": (-32.5300, 115.7440)
    ]
    static let patterns = ["all stations", "express", "limited stops", "skip-stop A", "skip-stop B"]

    /// Builds the sample database at `path` if it has no sample schema yet, and returns the number of documents.
    @discardableResult
    public static func build(at path: String) throws -> Int {
        let db = try LevelDB(path: path)
        defer { db.close() }
        let schema = try DocumentSchema(json: Data(schemaJSON.utf8), file: "demo schema")
        if try DocumentStore.exists(in: db) {
            // A sample database made by an earlier version gets the current sample schema
            // (its new indexes), unless it holds other collections.
            let store = try DocumentStore(database: db)
            let stored = try store.schema
            if stored != schema, Set(stored.collections.keys) == Set(schema.collections.keys) {
                try store.apply(schema)
            }
            return 0
        }
        let store = try DocumentStore(database: db, schema: schema)
        try KeySchema(json: Data(keyspacesJSON.utf8), file: "demo keyspaces").store(in: db)
        var rng = SplitMix64(seed: 2024)
        var stationLines: [String: [String]] = [:]
        for (line, stops) in lines { for s in stops { stationLines[s, default: []].append(line) } }
        let names = stationLines.keys.sorted()
        let stations = try store.collection("stations")
        for name in names {
            let lineNames = stationLines[name, default: []].sorted()
            let zone =
                name.hasPrefix("Perth") || name == "Elizabeth Quay" || name == "City West" || name == "Claisebrook"
                ? 1 : 1 + Int(rng.next() % 4)
            _ = rng.next()  // drawn by the earlier made-up locations: the rest of the sample stays the same
            try stations.insert(
                .object([
                    "id": .string(code(name)), "name": .string(name), "zone": .int(Int64(zone)),
                    "lines": .array(lineNames.map { .string($0) }),
                    "location": [
                        "lat": .double(locations[name]?.0 ?? -31.95), "lon": .double(locations[name]?.1 ?? 115.86)
                    ],
                    "description": .string(
                        "\(name) station is in zone \(zone), served by the \(lineNames.joined(separator: " and ")) line\(lineNames.count == 1 ? "" : "s")."
                            + (lineNames.count > 1 ? " Interchange between lines." : "")
                            + (rng.next() % 3 == 0 ? " Parking and bicycle lockers available." : ""))
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
                    try departures.insert(
                        .object([
                            "id": .string(id), "station": .string(code(station)), "line": .string(line),
                            "destination": .string(destination), "pattern": .string(pattern), "time": .int(time),
                            "platform": .int(Int64(1 + rng.next() % 4))
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
