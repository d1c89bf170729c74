import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// The two app stories of `Examples/` (`example-athletes`, `example-stations`), built by
/// `swift build` like `kvdocs-example`, run on a temporary directory, and their printed
/// answers checked: the athletes' against a brute force over the JSON lines files the story
/// downloads (the data the base was imported from) with the user's edits applied; the
/// stations' against answers worked out independently (a haversine and a sort in Python,
/// over the network the story describes).
@Suite struct AppStoryTests {
    /// The built example `name`, or nil (with an issue recorded) when it was not built.
    func binary(_ name: String) -> String? {
        let path = packageRoot.appendingPathComponent(".build/debug/\(name)").path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            Issue.record("\(path) is missing: run swift build first (scripts/test does)")
            return nil
        }
        return path
    }

    // MARK: - Athletes

    /// An athlete as the downloaded file holds it, read with Foundation's JSON parser.
    struct Row {
        var id: Int, licence: String, country: String, club: String, points: Int, born: Int
    }

    /// The athletes of a downloaded file, by id.
    func rows(_ path: String) throws -> [Int: Row] {
        var rows: [Int: Row] = [:]
        for line in try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let row = Row(
                id: try #require(object["id"] as? Int), licence: try #require(object["licence"] as? String),
                country: try #require(object["country"] as? String), club: try #require(object["club"] as? String),
                points: try #require(object["points"] as? Int), born: try #require(object["born"] as? Int))
            rows[row.id] = row
        }
        return rows
    }

    /// The `#id name (points)` entries of a printed line, as (id, points).
    func entries(_ line: String) throws -> [[Int]] {
        try line.matches(of: Regex(#"#(\d+) [^()]+ \((\d+)\)"#, as: (Substring, Substring, Substring).self)).compactMap
        { match in
            guard let id = Int(match.output.1), let points = Int(match.output.2) else { return nil }
            return [id, points]
        }
    }

    /// The ids of the `#id ` entries of a printed line.
    func ids(_ line: String) throws -> [Int] {
        try line.matches(of: Regex(#"#(\d+) "#, as: (Substring, Substring).self)).compactMap { Int($0.output.1) }
    }

    /// The line of `section` starting with `prefix`, without it.
    func line(_ section: [String], _ prefix: String) throws -> String {
        String(
            try #require(section.first { $0.hasPrefix(prefix) }, "no line \"\(prefix)…\" in \(section)").dropFirst(
                prefix.count))
    }

    @Test func theAthletesStoryAnswersAsABruteForceOverItsDownloadsWithTheUsersEditsKept() throws {
        guard let binary = binary("example-athletes") else { return }
        let dir = TemporaryDirectory("example-athletes")
        let r = try runProcess(binary, [dir.path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.isEmpty, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(
            lines.contains("user layer: athlete #42 now Oulun Hiihtoseura, 5000 points; groups relay, rivals"),
            "\(r.stdout)")
        #expect(lines.contains("replaced the base: now athletes-2026.db"), "\(r.stdout)")

        for (season, count) in [(2025, 18_000), (2026, 18_150)] {
            // The section of the output that reports this season.
            let start = try #require(lines.firstIndex { $0.hasPrefix("season \(season):") }, "\(r.stdout)")
            let section = Array(lines[start...].prefix { $0 == lines[start] || !$0.hasPrefix("downloaded") })
            let file = dir.child("athletes-\(season).jsonl")
            #expect(
                lines.contains(
                    "downloaded athletes-\(season).db: \(count) athletes imported from athletes-\(season).jsonl"))

            // What the merged store holds: the download, with the user's correction of #42
            // (made over the 2025 base, and kept over the 2026 one).
            var athletes = try rows(file)
            #expect(athletes.count == count)
            let original = try #require(try rows(dir.child("athletes-2025.jsonl"))[42])
            athletes[42] = Row(
                id: 42, licence: original.licence, country: original.country, club: "Oulun Hiihtoseura",
                points: 5_000, born: original.born)

            #expect(section[0] == "season \(season): \(count) athletes")
            // Top 10 of Finland: points descending, ties by id descending.
            let finns = athletes.values.filter { $0.country == "FIN" }
                .sorted { ($0.points, $0.id) > ($1.points, $1.id) }.prefix(10)
            #expect(try entries(try line(section, "top 10 FIN: ")) == finns.map { [$0.id, $0.points] })
            #expect(finns.first?.id == 42)
            // Counts per country.
            let counted = ["FIN", "NOR", "SWE", "GER", "JPN"].map { country in
                "\(country) \(athletes.values.filter { $0.country == country }.count)"
            }
            #expect(try line(section, "athletes per country: ") == counted.joined(separator: ", "))
            // The unique licence.
            let nor23 = try #require(athletes.values.first { $0.licence == "NOR-00023" })
            #expect(try line(section, "licence NOR-00023: ").hasPrefix("#\(nor23.id) "))
            #expect(try line(section, "licence NOR-00023: ").contains(", \(nor23.club), \(nor23.points) points, "))
            // Born after 2005-01-01 in Unix seconds: the count, and the three youngest.
            let young = athletes.values.filter { $0.born > 1_104_537_600 }
            let youngest = young.sorted { ($0.born, $0.id) > ($1.born, $1.id) }.prefix(3).map(\.id)
            let bornLine = try line(section, "born after 1104537600 (2005-01-01): ")
            #expect(bornLine.hasPrefix("\(young.count) athletes; youngest: "), "\(bornLine)")
            #expect(try ids(bornLine) == youngest)
            // The user's group, read with its members' points of this season.
            #expect(
                try entries(try line(section, "group relay (Relay team): "))
                    == [42, 7, 1_001, 12_345].compactMap { id in athletes[id].map { [id, $0.points] } })
        }

        // The user's database over the new base is exact: every index agrees with the documents.
        let layers = try LayeredDocumentStore(user: dir.child("user.db"), base: dir.child("athletes-2026.db"))
        defer { layers.close() }
        let report = try layers.store.verify()
        #expect(report.isClean, "\(report)")
        #expect(report.documents == 18_150 + 2)
    }

    // MARK: - Stations

    @Test func theStationsStoryFindsTheNearestStationAndItsNextDeparturesInOneSnapshot() throws {
        guard let binary = binary("example-stations") else { return }
        let dir = TemporaryDirectory("example-stations")
        // Twice on the same directory: the second run starts over.
        for run in 1...2 {
            let r = try runProcess(binary, [dir.path])
            #expect(r.status == 0, "run \(run): \(r.stderr)")
            let lines = r.stdout.split(separator: "\n").map(String.init)
            // Worked out independently: haversine distances to the 12 stations (Central
            // 216.28 m, Cathedral 532.6 m; from the hills Harbour 5.39 km, nothing within
            // 1.5 km), and Central's departures at or after 07:58 sorted by time.
            #expect(
                lines == [
                    "12 stations, 454 departures",
                    "nearest station within 1.5 km of (59.9141, 10.7532): Central (CENTRAL), 216.3 m",
                    "next departures after 07:58 UTC (1714550280):",
                    "  07:58  line 2 to University  (1714550280)",
                    "  08:01  line 1 to Harbour  (1714550460)",
                    "  08:06  line 1 to Riverside  (1714550760)",
                    "  08:08  line 2 to Docks  (1714550880)",
                    "  08:11  line 1 to Harbour  (1714551060)",
                    "no station within 1.5 km of (59.95, 10.65)",
                    "  the nearest is Harbour, 5.4 km away",
                    // 12 stations and 454 departures, each a document, 2 index entries
                    // per departure (its key; the compound index), 12 × 2 of the geo index
                    // and the catalog's records.
                    "watch base: 1405 entries, uncompressed",
                    "watch: Central, next at 07:58; favourites CENTRAL"
                ], "run \(run): \(r.stdout)")
            // Where an app keeps them: DIRECTORY stands for the container (Application
            // Support is $XDG_DATA_HOME here); the shipped base has no compressed table.
            for store in ["stations.db", "stations-user.db", "bundle/stations.db"] {
                #expect(FileManager.default.fileExists(atPath: dir.child(store) + "/CURRENT"), "\(store)")
            }
            #expect(SnappyTables.find(in: dir.child("bundle/stations.db"), thorough: true).isEmpty)
            #expect(
                try !FileManager.default.contentsOfDirectory(atPath: dir.child("bundle/stations.db")).filter {
                    $0.hasSuffix(".ldb")
                }.isEmpty)
        }
    }

    @Test(arguments: ["example-athletes", "example-stations"])
    func anExampleWithoutItsDirectoryPrintsItsUsageAndExits2(_ name: String) throws {
        guard let binary = binary(name) else { return }
        let r = try runProcess(binary, [])
        #expect(r.status == 2)
        #expect(r.stderr == "usage: \(name) DIRECTORY\n")
        #expect(r.stdout.isEmpty)
    }

    @Test func anErrorIsPrintedWithANonZeroExit() throws {
        guard let binary = binary("example-stations") else { return }
        let dir = TemporaryDirectory("example-stations")
        // The directory is a file: nothing can be made in it.
        let file = dir.child("file")
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        let r = try runProcess(binary, [file])
        #expect(r.status == 1)
        #expect(r.stderr.hasPrefix("example-stations: "), "\(r.stderr)")
    }
}
