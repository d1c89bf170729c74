import CBench
import Foundation
import GRDB
import KVDocs

/// An athlete of the apps section, as an app declares it (`Bench.Athlete` is the import
/// section's); for GRDB, a record of the `athlete` table.
struct AppAthlete: Codable, Sendable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "athlete"

    var id: Int
    var licence: String
    var name: String
    var country: String
    var club: String
    var points: Int
    var sport: String

    /// Sixty countries, most athletes in the first few (weights 1/rank, as team sizes go).
    static let countries = [
        "USA", "GER", "FRA", "GBR", "ITA", "CHN", "JPN", "AUS", "CAN", "ESP", "NED", "RUS", "BRA", "POL", "SWE",
        "NOR", "KOR", "SUI", "AUT", "CZE", "HUN", "BEL", "DEN", "FIN", "NZL", "UKR", "ARG", "MEX", "RSA", "IRL",
        "POR", "GRE", "TUR", "CRO", "SLO", "SVK", "ROU", "BUL", "SRB", "KEN", "ETH", "JAM", "CUB", "COL", "CHI",
        "IND", "EGY", "MAR", "NGR", "KAZ", "BLR", "LTU", "LAT", "EST", "ISL", "LUX", "CYP", "MLT", "FIJ", "SAM"
    ]
    static let sports = [
        "athletics", "swimming", "cycling", "rowing", "skiing", "biathlon", "judo", "fencing", "triathlon", "canoe",
        "shooting", "archery"
    ]

    /// `count` athletes from a seeded generator: licences unique, points skewed towards low
    /// values (so ties are common and both sides must break them the same way).
    static func make(count: Int, seed: UInt64) -> [AppAthlete] {
        var rng = BenchRandom(seed: seed)
        func uniform() -> Double { Double(rng.next() >> 11) / Double(1 << 53) }
        let weights = countries.indices.map { 1 / Double($0 + 1) }
        let total = weights.reduce(0, +)
        return (0..<count).map { i in
            var pick = uniform() * total
            var c = 0
            while c < countries.count - 1, pick > weights[c] {
                pick -= weights[c]
                c += 1
            }
            let country = countries[c]
            return AppAthlete(
                id: i + 1, licence: String(format: "L%08d", (i * 7919) % 100_000_000), name: "Athlete \(i)",
                country: country,
                club: "\(country) club \(rng.next() % 40)", points: Int(10_000 * pow(uniform(), 3)),
                sport: sports[Int(rng.next() % UInt64(sports.count))])
        }
    }
}

extension Bench {
    /// Athletes: top 10 by points in one country, count per country and lookup by licence,
    /// on a typed collection with a `(country, points)` index and a unique `licence` index,
    /// against SQLite's `athlete` table with `(country, points)` and `licence UNIQUE`.
    func runAthletes() throws {
        let count = appAthletes
        let people = AppAthlete.make(count: count, seed: 2800)
        let label = "\(count) athletes"

        // KVDocs: the queries written naturally, on a typed collection.
        let db = try KVDocs.LevelDB(path: freshPath("apps-athletes"))
        defer { db.close() }
        let schema = try DocumentSchema(collections: [
            "athletes": CollectionSchema(
                primaryKey: "id",
                indexes: [
                    SecondaryIndexDefinition(name: "by_country_points", fields: ["country", "points"]),
                    SecondaryIndexDefinition(name: "by_licence", fields: ["licence"], unique: true)
                ])
        ])
        let store = try DocumentStore(database: db, schema: schema)
        let athletes = try store.collection("athletes", of: AppAthlete.self)
        try measure("apps", "athletes: insert \(label), batches of 1000", "kvdocs", repeats: 1) {
            let start = now()
            for chunk in stride(from: 0, to: count, by: 1000) {
                try store.write { b in
                    for a in people[chunk..<min(chunk + 1000, count)] { try b.insert("athletes", encoding: a) }
                }
            }
            return (now() - start, count, [:])
        }
        try db.compact()  // level 0 drained before reads

        // SQLite: the same rows through the C API.
        var error: UnsafeMutablePointer<CChar>?
        guard let sqlite = ca_athletes_open(freshPath("apps-athletes") + ".sqlite", &error) else {
            throw appsError(error)
        }
        defer { ca_athletes_close(sqlite) }
        let ids = people.map { Int64($0.id) }, points = people.map { Int64($0.points) }
        let licences = CStrings(people.map(\.licence)), names = CStrings(people.map(\.name)),
            countries = CStrings(people.map(\.country))
        let clubs = CStrings(people.map(\.club)), sports = CStrings(people.map(\.sport))
        try measure("apps", "athletes: insert \(label), batches of 1000", "sqlite-c", repeats: 1) {
            let seconds = try ids.withUnsafeBufferPointer { i in
                try points.withUnsafeBufferPointer { p in
                    let rows = ca_athlete_rows(
                        id: i.baseAddress, licence: licences.pointer, name: names.pointer, country: countries.pointer,
                        club: clubs.pointer, points: p.baseAddress, sport: sports.pointer)
                    return try c { ca_athletes_insert(sqlite, rows, Int32(count), 1000, $0) }
                }
            }
            return (seconds, count, [:])
        }

        // GRDB: the same table and index, Codable records, a read or write per request.
        let grdb = try openSQLite(freshPath("apps-athletes-grdb") + ".sqlite")
        try grdb.write { db in
            try db.execute(
                sql:
                    "CREATE TABLE athlete (id INTEGER PRIMARY KEY, licence TEXT UNIQUE, name TEXT, country TEXT, club TEXT, points INTEGER, sport TEXT)"
            )
            try db.execute(sql: "CREATE INDEX athlete_country_points ON athlete(country, points)")
        }
        try measure("apps", "athletes: insert \(label), batches of 1000", "grdb", repeats: 1) {
            let start = now()
            for chunk in stride(from: 0, to: count, by: 1000) {
                try grdb.write { db in for a in people[chunk..<min(chunk + 1000, count)] { try a.insert(db) } }
            }
            return (now() - start, count, [:])
        }
        func grdbTop(_ country: String) -> QueryInterfaceRequest<AppAthlete> {
            AppAthlete.filter(Column("country") == country).order(Column("points").desc, Column("id").desc).limit(10)
        }
        func grdbInCountry(_ country: String) -> QueryInterfaceRequest<AppAthlete> {
            AppAthlete.filter(Column("country") == country)
        }
        func grdbByLicence(_ licence: String) -> QueryInterfaceRequest<AppAthlete> {
            AppAthlete.filter(Column("licence") == licence)
        }

        // The queries: one per country in turn, and licences of random athletes.
        let countryNames = AppAthlete.countries
        let queryCountries = CStrings(countryNames)
        func top(_ country: String) -> DocumentQuery {
            DocumentQuery().where("country", .equal(.string(country))).orderBy("points", descending: true).limit(10)
        }
        func inCountry(_ country: String) -> DocumentQuery {
            DocumentQuery().where("country", .equal(.string(country)))
        }
        func byLicence(_ licence: String) -> DocumentQuery {
            DocumentQuery().where("licence", .equal(.string(licence))).limit(1)
        }
        var rng = BenchRandom(seed: 2801)
        let lookups = (0..<(quick ? 2_000 : 20_000)).map { _ in people[Int(rng.next() % UInt64(count))].licence }
        let lookupStrings = CStrings(lookups)

        let topName = "athletes: top 10 by points in a country (\(label))",
            countName = "athletes: count in a country (\(label))"
        let licenceName = "athletes: find by licence, limit 1 (\(label))"

        // The plans each side uses, in the report beside the figures.
        let untyped = try store.collection("athletes")
        for (name, key, query) in [
            (topName, "top 10", top("NOR")), (countName, "count", inCountry("NOR")),
            (licenceName, "licence", byLicence(lookups[0]))
        ] {
            let plan = try untyped.explain(query)
            notes["apps: athletes \(key), kvdocs plan"] = plan.description
            notes[Report.appsPlanKey + name] = plan.index.map { "index \($0)" } ?? "SCAN (every document read)"
        }
        notes["apps: athletes top 10, sqlite plan"] = try sqlitePlan { ca_athletes_plan(sqlite, 0, $0, $1, $2) }
        notes["apps: athletes count, sqlite plan"] = try sqlitePlan { ca_athletes_plan(sqlite, 1, $0, $1, $2) }
        notes["apps: athletes licence, sqlite plan"] = try sqlitePlan { ca_athletes_plan(sqlite, 2, $0, $1, $2) }

        // Both sides give the same answers, in the same order, before anything is timed.
        var cTop = [Int64](repeating: -1, count: countryNames.count * 10)
        var cCounts = [Int64](repeating: -1, count: countryNames.count)
        _ = try c { ca_athletes_top(sqlite, queryCountries.pointer, Int32(countryNames.count), 10, &cTop, $0) }
        _ = try c { ca_athletes_count(sqlite, queryCountries.pointer, Int32(countryNames.count), &cCounts, $0) }
        for (i, country) in countryNames.enumerated() {
            let k = try athletes.find(top(country)).map { Int64($0.id) }
            let s = Array(cTop[(i * 10)..<(i * 10 + 10)].prefix { $0 >= 0 })
            guard k == s else {
                throw BenchError("apps: the sides disagree on the top 10 of \(country): kvdocs \(k), sqlite-c \(s)")
            }
            let g = try grdb.read { db in try grdbTop(country).fetchAll(db).map { Int64($0.id) } }
            guard k == g else {
                throw BenchError("apps: the sides disagree on the top 10 of \(country): kvdocs \(k), grdb \(g)")
            }
            let n = try athletes.count(inCountry(country))
            let gn = try grdb.read { db in try grdbInCountry(country).fetchCount(db) }
            guard Int64(n) == cCounts[i], n == gn else {
                throw BenchError(
                    "apps: the sides disagree on the count of \(country): kvdocs \(n), sqlite-c \(cCounts[i]), grdb \(gn)"
                )
            }
        }
        let checked = min(lookups.count, 500)
        var cFound = [Int64](repeating: -1, count: checked)
        _ = try c { ca_athletes_by_licence(sqlite, lookupStrings.pointer, Int32(checked), &cFound, $0) }
        for i in 0..<checked {
            let k = try athletes.find(byLicence(lookups[i])).first.map { Int64($0.id) } ?? -1
            let g = try grdb.read { db in try grdbByLicence(lookups[i]).fetchOne(db) }.map { Int64($0.id) } ?? -1
            guard k == cFound[i], k == g, k >= 0 else {
                throw BenchError(
                    "apps: the sides disagree on licence \(lookups[i]): kvdocs \(k), sqlite-c \(cFound[i]), grdb \(g)")
            }
        }

        // Passes over every country until a time budget is spent: a full scan stays bounded.
        let maximumPasses = quick ? 2 : 20, budget = quick ? 0.2 : 1.0
        try measureAlternating(
            "apps", topName,
            [
                (
                    "kvdocs",
                    {
                        let (seconds, operations) = try self.timedPasses(maximum: maximumPasses, budget: budget) {
                            for country in countryNames { _ = try athletes.find(top(country)) }
                            return countryNames.count
                        }
                        return (seconds, operations, [:])
                    }
                ),
                (
                    "sqlite-c",
                    {
                        let (seconds, operations) = try self.timedPasses(maximum: maximumPasses, budget: budget) {
                            _ = try self.c {
                                ca_athletes_top(sqlite, queryCountries.pointer, Int32(countryNames.count), 10, nil, $0)
                            }
                            return countryNames.count
                        }
                        return (seconds, operations, [:])
                    }
                ),
                (
                    "grdb",
                    {
                        let (seconds, operations) = try self.timedPasses(maximum: maximumPasses, budget: budget) {
                            for country in countryNames {
                                _ = try grdb.read { db in try grdbTop(country).fetchAll(db) }
                            }
                            return countryNames.count
                        }
                        return (seconds, operations, [:])
                    }
                )
            ])
        try measureAlternating(
            "apps", countName,
            [
                (
                    "kvdocs",
                    {
                        let (seconds, operations) = try self.timedPasses(maximum: maximumPasses, budget: budget) {
                            for country in countryNames { _ = try athletes.count(inCountry(country)) }
                            return countryNames.count
                        }
                        return (seconds, operations, [:])
                    }
                ),
                (
                    "sqlite-c",
                    {
                        let (seconds, operations) = try self.timedPasses(maximum: maximumPasses, budget: budget) {
                            _ = try self.c {
                                ca_athletes_count(sqlite, queryCountries.pointer, Int32(countryNames.count), nil, $0)
                            }
                            return countryNames.count
                        }
                        return (seconds, operations, [:])
                    }
                ),
                (
                    "grdb",
                    {
                        let (seconds, operations) = try self.timedPasses(maximum: maximumPasses, budget: budget) {
                            for country in countryNames {
                                _ = try grdb.read { db in try grdbInCountry(country).fetchCount(db) }
                            }
                            return countryNames.count
                        }
                        return (seconds, operations, [:])
                    }
                )
            ])
        try measureAlternating(
            "apps", licenceName,
            [
                (
                    "kvdocs",
                    {
                        let start = now()
                        for licence in lookups { _ = try athletes.find(byLicence(licence)).first }
                        return (now() - start, lookups.count, [:])
                    }
                ),
                (
                    "sqlite-c",
                    {
                        (
                            try self.c {
                                ca_athletes_by_licence(sqlite, lookupStrings.pointer, Int32(lookups.count), nil, $0)
                            }, lookups.count, [:]
                        )
                    }
                ),
                (
                    "grdb",
                    {
                        let start = now()
                        for licence in lookups { _ = try grdb.read { db in try grdbByLicence(licence).fetchOne(db) } }
                        return (now() - start, lookups.count, [:])
                    }
                )
            ])

        // The physical floors (Floors+Apps.swift): the insert's batches replayed, then the
        // queries' reads on this database (closed by the last).
        try measureInsertFloor(
            "apps", "athletes: insert \(label), batches of 1000", schema: schema, collections: ["athletes"],
            documents: count,
            unique: [("athletes", "licence", "by_licence")]
        ) { store in
            for chunk in stride(from: 0, to: count, by: 1000) {
                try store.write { b in
                    for a in people[chunk..<min(chunk + 1000, count)] { try b.insert("athletes", encoding: a) }
                }
            }
            return (count + 999) / 1000
        }
        try measureAthleteQueryFloors(
            db: db, untyped: untyped, athletes: athletes, countries: countryNames, licences: lookups,
            names: (topName, countName, licenceName), top: top, inCountry: inCountry, byLicence: byLicence,
            maximumPasses: maximumPasses, budget: budget)
    }
}

func appsError(_ error: UnsafeMutablePointer<CChar>?) -> BenchError {
    defer { free(error) }
    return BenchError("sqlite-c: " + (error.map { String(cString: $0) } ?? "cannot open"))
}
