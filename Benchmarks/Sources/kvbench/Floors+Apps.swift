import CBench
import Foundation
import KVDocs

extension Bench {
    /// The floor of an insert workload: the batches KVDocs writes when `write` runs (it
    /// returns its `store.write` calls), captured and replayed
    /// (``addWrites(_:to:documents:unique:)``: per document a get of its key and, per
    /// unique entry, the uniqueness get; every put byte-identical; one `leveldb_write` per
    /// batch) on a fresh database per repeat.
    func measureInsertFloor(
        _ section: String, _ name: String, schema: DocumentSchema, collections: [String], documents expected: Int,
        unique: [(collection: String, field: String, index: String)] = [], repeats: Int? = nil,
        write: @escaping (DocumentStore) throws -> Int
    ) throws {
        var uniquePrefixes: [[UInt8]] = []
        let captured = try captureWrites(
            schema: schema,
            phases: [
                { store in
                    for u in unique {
                        uniquePrefixes.append(
                            try self.uniqueStringPrefix(
                                try store.collection(u.collection), field: u.field, index: u.index))
                    }
                    return try write(store)
                }
            ])
        let documents = collections.map(Self.documentPrefix)
        let program = FloorProgram()
        Self.addWrites(captured.setup, to: program, documents: documents)
        let setup = program.units
        let written = Self.addWrites(captured.phases[0], to: program, documents: documents, unique: uniquePrefixes)
        guard written == expected else {
            throw BenchError("floor: \(name): the batches hold \(written) documents, not \(expected)")
        }
        try measureWriteFloor(
            section, name, program: program, workload: setup..<program.units, documents: written, repeats: repeats)
    }

    /// Runs a read floor program over and over (at most `maximum` passes, until `budget`
    /// seconds of its own time), checking what it read; returns seconds and queries.
    func measureReadFloor(
        _ section: String, _ name: String, program: FloorProgram, on db: FloorDatabase,
        maximum: Int = 1, budget: Double = 0, expect: (entries: Int, found: Int, gets: Int)
    ) throws {
        try measure(section, name, "leveldb-floor") {
            var seconds = 0.0, passes = 0
            var last = cb_floor_stats()
            repeat {
                let (s, stats) = try program.run(db, units: 0..<program.units)
                seconds += s
                passes += 1
                last = stats
            } while passes < maximum && seconds < budget
            guard last.entries == expect.entries, last.found == expect.found, last.gets == expect.gets else {
                throw BenchError(
                    "floor: \(name): read \(last.entries) entries and found \(last.found) of \(last.gets) gets; KVDocs' answers need \(expect.entries), \(expect.found) of \(expect.gets)"
                )
            }
            var extra = Self.floorExtra(last)
            for key in ["gets", "gets_found", "entries_read"] { extra[key] = (extra[key] ?? 0) / Double(program.units) }
            return (seconds, passes * program.units, extra)
        }
    }

    /// The floors of the athletes' queries, on the database KVDocs just queried (closed
    /// here, reopened through the C API with KVDocs' options). Each is the reads of
    /// KVDocs' plan, its key ranges taken from `explain`, with nothing else:
    /// - top 10: a reverse scan of the plan's `(country, points)` range, 10 entries, then
    ///   a get of each of the 10 documents KVDocs returned;
    /// - count: a scan of the plan's range, every entry of the country;
    /// - licence: a get of the unique entry (the plan's key), then of the document (KVDocs
    ///   seeks a cursor to that key instead: timed too, as the row's extra
    ///   `range_seek_then_get_us`).
    func measureAthleteQueryFloors(
        db: KVDocs.LevelDB, untyped: DocumentCollection, athletes: TypedCollection<AppAthlete>,
        countries: [String], licences: [String], names: (top: String, count: String, licence: String),
        top: (String) -> DocumentQuery, inCountry: (String) -> DocumentQuery, byLicence: (String) -> DocumentQuery,
        maximumPasses: Int, budget: Double
    ) throws {
        let documents = Subspace().subspace(["d", "athletes"])
        func plan(_ query: DocumentQuery, _ index: String) throws -> QueryPlan {
            let plan = try untyped.explain(query)
            guard plan.index == index, !plan.ranges.isEmpty else {
                throw BenchError("floor: athletes: \(query) did not plan on \(index):\n\(plan)")
            }
            return plan
        }
        let topProgram = FloorProgram(), countProgram = FloorProgram(), licenceProgram = FloorProgram(),
            licenceSeek = FloorProgram()
        var topRows = 0, counted = 0
        for country in countries {
            let p = try plan(top(country), "by_country_points")
            guard p.ranges.count == 1 else {
                throw BenchError("floor: athletes top 10 reads \(p.ranges.count) ranges:\n\(p)")
            }
            topProgram.scan(p.ranges[0], limit: 10, reverse: true)
            let ids = try athletes.find(top(country)).map(\.id)
            for id in ids { topProgram.get(documents.pack([.int(Int64(id))])) }
            topProgram.endUnit()
            topRows += ids.count
            for range in try plan(inCountry(country), "by_country_points").ranges { countProgram.scan(range) }
            countProgram.endUnit()
            counted += try athletes.count(inCountry(country))
        }
        for licence in licences {
            let p = try plan(byLicence(licence), "by_licence")
            guard let key = p.ranges[0].lower?.key, let id = try athletes.find(byLicence(licence)).first?.id else {
                throw BenchError("floor: athletes: no unique key or no athlete for licence \(licence)")
            }
            licenceProgram.get(key)
            licenceProgram.get(documents.pack([.int(Int64(id))]))
            licenceProgram.endUnit()
            licenceSeek.scan(p.ranges[0], limit: 1)
            licenceSeek.get(documents.pack([.int(Int64(id))]))
            licenceSeek.endUnit()
        }
        db.close()
        let floor = try FloorDatabase(path: db.path)
        try measureReadFloor(
            "apps", names.top, program: topProgram, on: floor, maximum: maximumPasses, budget: budget,
            expect: (topRows, topRows, topRows))
        try measureReadFloor(
            "apps", names.count, program: countProgram, on: floor, maximum: maximumPasses, budget: budget,
            expect: (counted, 0, 0))
        try measureReadFloor(
            "apps", names.licence, program: licenceProgram, on: floor,
            expect: (0, 2 * licences.count, 2 * licences.count))
        // KVDocs reads the unique entry through a cursor on the plan's range, not a get: the
        // same reads that way, for comparison (extra figure of the row).
        let (seconds, stats) = try licenceSeek.run(floor, units: 0..<licenceSeek.units)
        guard stats.entries == licences.count, stats.found == licences.count else {
            throw BenchError("floor: athletes: the licence seeks found \(stats.entries) entries")
        }
        results[results.count - 1].extra["range_seek_then_get_us"] = seconds * 1e6 / Double(licences.count)
    }

    /// The floor of the stations screen, on the database KVDocs just queried (closed here,
    /// reopened through the C API with KVDocs' options). Per query, the reads KVDocs' geo
    /// search and departures plan make: the probe (a seek to the centre's leaf cell, one
    /// entry), each ring's fresh cell ranges from `explainNear` through one iterator per
    /// ring (a seek per range, every entry in it), the get of the nearest station's
    /// document, then a scan of the departures plan's `(station, time)` range, 5 entries,
    /// and a get of each of the 5 departures KVDocs returned.
    func measureStationsFloor(
        db: KVDocs.LevelDB, store: DocumentStore, name: String, points: [GeoPoint], radius: Double,
        nearest: DocumentQuery, answers: [(station: Int, departures: [Int])?], upcoming: (Int, Int) -> DocumentQuery
    ) throws {
        let stations = try store.collection("stations"), departures = try store.collection("departures")
        let geo = Subspace().subspace(["g", "stations", "by_location"]).prefix
        let stationDocuments = Subspace().subspace(["d", "stations"]),
            departureDocuments = Subspace().subspace(["d", "departures"])
        func key(code: UInt64) -> [UInt8] {
            geo + (0..<8).map { UInt8(truncatingIfNeeded: code >> (56 - 8 * UInt64($0))) }
        }
        let program = FloorProgram()
        var entries = 0, gets = 0
        for (q, point) in points.enumerated() {
            let plan = try stations.explainNear(point, within: radius, query: nearest)
            program.scan(
                KeyRange(lower: .included(key(code: Self.leafCode(point))), upper: KeyRange.prefix(geo).upper), limit: 1
            )
            for ring in plan.rings {
                for (i, text) in ring.ranges.enumerated() {
                    let bounds = text.split(separator: ".").filter { !$0.isEmpty }.map {
                        UInt64($0.dropFirst(2), radix: 16)
                    }
                    guard bounds.count == 2, let low = bounds[0], let high = bounds[1] else {
                        throw BenchError("floor: stations: a range \(text)")
                    }
                    program.scan(
                        KeyRange(lower: .included(key(code: low)), upper: .excluded(key(code: high + 1))),
                        sameIterator: i > 0)
                }
            }
            entries += plan.candidates
            if let answer = answers[q] {
                program.get(stationDocuments.pack([.int(Int64(answer.station))]))
                let p = try departures.explain(upcoming(q, answer.station))
                guard p.index == "by_station_time", p.ranges.count == 1 else {
                    throw BenchError("floor: stations: the departures plan:\n\(p)")
                }
                program.scan(p.ranges[0], limit: 5)
                for id in answer.departures { program.get(departureDocuments.pack([.int(Int64(id))])) }
                entries += answer.departures.count
                gets += 1 + answer.departures.count
            }
            program.endUnit()
        }
        db.close()
        let floor = try FloorDatabase(path: db.path)
        try measureReadFloor("apps", name, program: program, on: floor, expect: (entries, gets, gets))
    }

    /// KVDocs' leaf cell code of a point (`GeoCell(leafOf:)`, internal to the library): 31
    /// bits of latitude and of longitude, interleaved on a Z-order curve, latitude first.
    static func leafCode(_ point: GeoPoint) -> UInt64 {
        let scale = Double(UInt32(1) << 31), last = (UInt32(1) << 31) - 1
        func index(_ unit: Double) -> UInt32 {
            let scaled = (unit * scale).rounded(.down)
            return scaled <= 0 ? 0 : min(last, UInt32(scaled))
        }
        func spread(_ x: UInt32) -> UInt64 {
            var v = UInt64(x)
            v = (v | v << 16) & 0x0000_FFFF_0000_FFFF
            v = (v | v << 8) & 0x00FF_00FF_00FF_00FF
            v = (v | v << 4) & 0x0F0F_0F0F_0F0F_0F0F
            v = (v | v << 2) & 0x3333_3333_3333_3333
            v = (v | v << 1) & 0x5555_5555_5555_5555
            return v
        }
        return spread(index((point.latitude + 90) / 180)) << 1 | spread(index((point.longitude + 180) / 360))
    }
}
