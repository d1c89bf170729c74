import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@testable import KVReplCore

/// The `near` command: its grammar, its text and `--json` output, `explain near`, and the
/// README's nearest-station story on the sample database.
@Suite struct KVReplNearTests {
    @Test func theNearGrammarTakesItsClausesInAnyOrder() throws {
        let perth = try GeoPoint(latitude: -31.95, longitude: 115.86)
        #expect(
            try ShellCommand.parse("near stations (-31.95, 115.86)")
                == .near(.init(collection: "stations", center: perth)))
        #expect(
            try ShellCommand.parse("near stations (-31.95,115.86) within 1500 limit 1")
                == .near(.init(collection: "stations", center: perth, within: 1500, query: DocumentQuery().limit(1))))
        #expect(
            try ShellCommand.parse(
                "NEAR stations ( -31.95 , 115.86 ) using by_location where zone = 1 and kind = \"rail\" limit 4 offset 2 within 1.5e3"
            )
                == .near(
                    .init(
                        collection: "stations", center: perth, within: 1500, index: "by_location",
                        query: DocumentQuery().where("zone", .equal(1)).where("kind", .equal("rail")).limit(4).offset(2)
                    )))
        #expect(
            try ShellCommand.parse("explain near stations (90, -180) limit 3")
                == .explainNear(
                    .init(
                        collection: "stations", center: try GeoPoint(latitude: 90, longitude: -180),
                        query: DocumentQuery().limit(3))))
    }

    @Test(arguments: [
        ("near", "expected a collection name"),
        ("near stations", "expected a point (LAT, LON)"),
        ("near stations (91, 0)", "column 16: the latitude must be a number in [-90, 90], not 91"),
        ("near stations (0, -180.5)", "the longitude must be a number in [-180, 180], not -180.5"),
        ("near stations (0 0)", "expected \",\" between the latitude and the longitude"),
        ("near stations (0, 0", "expected \")\" after the longitude"),
        ("near stations (\"a\", 0)", "the latitude must be a number"),
        ("near stations (0, 0) within -5", "within takes a distance in metres"),
        ("near stations (0, 0) within far", "expected a distance in metres"),
        ("near stations (0, 0) limit 1 limit 2", "limit is given twice"),
        ("near stations (0, 0) order by zone", "it takes no order by"),
        ("near stations (0, 0) sideways", "expected within, using, where, limit or offset"),
        ("explain stations", "expected \"find\", \"near\" or \"knn\" after explain")
    ])
    func malformedNearCommandsSayWhatWasExpected(line: String, message: String) {
        #expect(throws: ShellCommandError.self) { try ShellCommand.parse(line) }
        do { _ = try ShellCommand.parse(line) } catch {
            #expect("\(error)".contains(message), "\(error)")
        }
    }

    @Test func theNearestStationThenItsNextDeparturesInTheSampleDatabase() throws {
        let dir = TemporaryDirectory("kvrepl-near")
        let db = dir.child("demo")
        // The README's story: the nearest station within 1.5 km, then its next four departures.
        var r = try kvrepl([
            "--demo", db, "--json", "-c", "near stations (-31.9540, 115.8620) within 1500 limit 1",
            "-c", "find departures where station = \"PERTH\" and time >= 1700000000 order by time limit 4"
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = try jsonLines(r.stdout)
        #expect(lines.count == 5)
        guard lines.count == 5 else { return }
        // --json: exactly {"id", "distance"} per hit.
        #expect(lines[0]["id"] == "PERTH")
        if case .object(let hit) = lines[0] { #expect(Set(hit.keys) == ["id", "distance"]) }
        if case .double(let d)? = lines[0]["distance"] {
            #expect(
                d
                    == (try GeoPoint(latitude: -31.9540, longitude: 115.8620)).distance(
                        to: try GeoPoint(latitude: -31.9513, longitude: 115.8600)))
        } else {
            Issue.record("distance is not a number: \(lines[0])")
        }
        #expect(lines[1...].allSatisfy { $0["station"] == "PERTH" })

        // Nearest first, every hit within the radius, ties by id; a condition before the limit.
        r = try kvrepl([
            db, "--json", "-c", "near stations (-31.95, 115.86) within 5000", "-c",
            "near stations (-31.95, 115.86) where zone = 2 limit 2"
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let hits = try jsonLines(r.stdout)
        let within = Array(hits.dropLast(2)), zoned = Array(hits.suffix(2))
        let distances = within.compactMap { if case .double(let d)? = $0["distance"] { d } else { nil } }
        #expect(distances.count == within.count)
        #expect(distances.count > 5)
        #expect(zip(distances, distances.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(distances.allSatisfy { $0 <= 5000 })
        r = try kvrepl([db, "--json", "-c", "find stations where zone = 2"])
        let zoneTwo = Set(try jsonLines(r.stdout).compactMap { $0["id"] })
        #expect(zoned.count == 2)
        #expect(zoned.allSatisfy { zoneTwo.contains($0["id"] ?? .null) })

        // Text output: id, distance and the document.
        r = try kvrepl([db, "-c", "near stations (-31.9540, 115.8620) within 1500 limit 1"])
        #expect(r.stdout.hasPrefix("\"PERTH\"  354.6 m  {"), "\(r.stdout)")
        #expect(r.stdout.contains("\"name\":\"Perth\""))

        // explain near: the cells and ranges read.
        r = try kvrepl([db, "--json", "-c", "explain near stations (-31.9540, 115.8620) within 1500 limit 1"])
        let plan = try jsonLines(r.stdout)
        #expect(plan.count == 1)
        if case .array(let cells)? = plan.first?["cells"] {
            #expect(!cells.isEmpty)
        } else {
            Issue.record("no cells: \(r.stdout)")
        }
        if case .array(let ranges)? = plan.first?["ranges"] {
            #expect(!ranges.isEmpty)
        } else {
            Issue.record("no ranges")
        }
        #expect(plan.first?["index"] == "by_location")
        #expect(plan.first?["hits"] == 1)
        r = try kvrepl([db, "-c", "explain near stations (-31.9540, 115.8620) within 1500 limit 1"])
        #expect(r.stdout.contains("ring 1: radius 100 m"))
        #expect(r.stdout.contains("  cell "))
        #expect(r.stdout.contains("  range 0x"))
    }

    @Test func severalGeoIndexesNeedUsingAndTheErrorNamesThem() throws {
        let dir = TemporaryDirectory("kvrepl-near")
        let schema = dir.child("schema.json")
        try
            #"{"collections": {"people": {"indexes": [{"name": "by_home", "fields": ["home"], "type": "geo"}, {"name": "by_work", "fields": ["work"], "type": "geo"}]}}}"#
            .write(toFile: schema, atomically: true, encoding: .utf8)
        let db = dir.child("db")
        var r = try kvrepl([
            db, "--create", "--json", "-c", "schema load \(schema)",
            "-c",
            #"insert people {"id": "p", "home": {"lat": 0, "lon": 0}, "work": {"type": "Point", "coordinates": [1, 0]}}"#,
            "-c", "near people (0, 0)"
        ])
        #expect(r.status == 1)
        #expect(r.stderr.contains("by_home, by_work"), "\(r.stderr)")
        r = try kvrepl([
            db, "--json", "-c", "near people (0, 0) using by_work", "-c", "near people (0, 0) using by_school"
        ])
        #expect(r.status == 1)
        let hits = try jsonLines(r.stdout)
        #expect(hits.count == 1)
        #expect(hits.first?["id"] == "p")
        #expect(r.stderr.contains("no geo index \\\"by_school\\\""), "\(r.stderr)")
        // An invalid point is refused with the index, the field and the value.
        r = try kvrepl([db, "-c", #"insert people {"id": "q", "home": {"lat": 95, "lon": 0}}"#, "-c", "count people"])
        #expect(r.stderr.contains("geo index by_home"), "\(r.stderr)")
        #expect(r.stderr.contains("field home"))
        #expect(r.stderr.contains(#"{"lat":95,"lon":0}"#))
        #expect(r.stdout == "1\n")
        r = try kvrepl([db, "--json", "-c", "verify", "-c", "reindex people by_home", "-c", "indexes people"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try jsonLines(r.stdout).contains { $0["kind"] == "geo" && $0["name"] == "by_work" })
    }

    @Test func distancesAreShownToADecimetreInTablesAndExactInJSON() throws {
        let dir = TemporaryDirectory("kvrepl-near-format")
        let demo = dir.child("demo")
        var r = try kvrepl([
            "--demo", demo, "--format", "csv", "-c", "near stations (-31.9540, 115.8620) within 1500 limit 1"
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let rows = r.stdout.components(separatedBy: "\r\n")
        #expect(rows.count >= 2 && rows[1].hasPrefix("PERTH,354.6,"), "\(r.stdout)")
        r = try kvrepl([demo, "--format", "table", "-c", "near stations (-31.9540, 115.8620) within 1500 limit 1"])
        #expect(r.stdout.contains("| PERTH | 354.6    |") || r.stdout.contains("354.6 "), "\(r.stdout)")
        #expect(!r.stdout.contains("354.60095"))
        r = try kvrepl([demo, "--format", "jsonl", "-c", "near stations (-31.9540, 115.8620) within 1500 limit 1"])
        #expect(r.stdout.contains("354.60095"), "\(r.stdout)")
        r = try kvrepl([demo, "--json", "-c", "near stations (-31.9540, 115.8620) within 1500 limit 1"])
        #expect(r.stdout.contains("354.60095"), "\(r.stdout)")
    }
}
