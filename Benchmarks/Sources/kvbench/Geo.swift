import CBench
import Foundation
import KVDocs

/// Points clustered like public-transport stops: most in cities of different sizes, denser
/// towards the centre and along lines radiating from it, some scattered between cities,
/// a few anywhere (including both sides of the antimeridian and the far north).
struct GeoBenchData {
    var lats: [Double] = []
    var lons: [Double] = []
    /// Query centres: most near a stop (within 300 m), some anywhere.
    var centerLats: [Double] = []
    var centerLons: [Double] = []
    /// Whether each centre was drawn near a stop (the others are anywhere).
    var centerNearStop: [Bool] = []

    static let cities: [(lat: Double, lon: Double, weight: Double, radiusKm: Double)] = [
        (-31.95, 115.86, 1, 25), (51.51, -0.13, 3, 30), (48.86, 2.35, 2, 15), (35.68, 139.76, 3, 35),
        (40.71, -74.0, 2.5, 25),
        (-33.87, 151.21, 1.5, 30), (52.52, 13.40, 1, 18), (-23.55, -46.63, 2, 25), (19.07, 72.88, 2, 20),
        (43.65, -79.38, 1, 20),
        (64.15, -21.94, 0.2, 8), (-36.85, 174.76, 0.5, 15), (-18.14, 178.44, 0.1, 6), (61.22, -149.90, 0.2, 10),
        (69.65, 18.96, 0.1, 5)
    ]

    init(count: Int, queries: Int, seed: UInt64) {
        var rng = BenchRandom(seed: seed)
        func uniform() -> Double { Double(rng.next() >> 11) / Double(1 << 53) }
        let metresPerDegree = GeoPoint.earthRadius * Double.pi / 180
        func place(_ lat: Double, _ lon: Double, east: Double, north: Double) -> (Double, Double) {
            let newLat = max(-90, min(90, lat + north / metresPerDegree))
            var newLon = lon + east / (metresPerDegree * max(0.01, cos(lat * Double.pi / 180)))
            if newLon > 180 { newLon -= 360 }
            if newLon < -180 { newLon += 360 }
            return (newLat, newLon)
        }
        let totalWeight = Self.cities.reduce(0) { $0 + $1.weight }
        // Each city's lines: bearings fixed per city.
        let lines = Self.cities.map { _ in (0..<10).map { _ in uniform() * 2 * Double.pi } }
        lats.reserveCapacity(count)
        lons.reserveCapacity(count)
        for _ in 0..<count {
            let roll = uniform()
            if roll < 0.03 {
                // Anywhere: between 60° S and 75° N.
                lats.append(
                    asin(
                        uniform() * (sin(75 * Double.pi / 180) + sin(60 * Double.pi / 180)) - sin(60 * Double.pi / 180))
                        * 180 / Double.pi)
                lons.append(uniform() * 360 - 180)
                continue
            }
            var pick = uniform() * totalWeight
            var c = 0
            while c < Self.cities.count - 1, pick > Self.cities[c].weight {
                pick -= Self.cities[c].weight
                c += 1
            }
            let city = Self.cities[c]
            let east: Double, north: Double
            if roll < 0.6 {
                // Along a line: stops every few hundred metres, a little off the line.
                let bearing = lines[c][Int(rng.next() % 10)]
                let along = city.radiusKm * 1000 * pow(uniform(), 1.3)
                let across = (uniform() - 0.5) * 400
                east = along * sin(bearing) + across * cos(bearing)
                north = along * cos(bearing) - across * sin(bearing)
            } else {
                // Anywhere in the city, denser near the centre.
                let r = city.radiusKm * 1000 * pow(uniform(), 0.8)
                let bearing = uniform() * 2 * Double.pi
                east = r * sin(bearing)
                north = r * cos(bearing)
            }
            let (lat, lon) = place(city.lat, city.lon, east: east, north: north)
            lats.append(lat)
            lons.append(lon)
        }
        for _ in 0..<queries {
            if uniform() < 0.1 {
                centerLats.append(asin(uniform() * 2 - 1) * 180 / Double.pi)
                centerLons.append(uniform() * 360 - 180)
                centerNearStop.append(false)
            } else {
                let p = Int(rng.next() % UInt64(count))
                let (lat, lon) = place(lats[p], lons[p], east: (uniform() - 0.5) * 600, north: (uniform() - 0.5) * 600)
                centerLats.append(lat)
                centerLons.append(lon)
                centerNearStop.append(true)
            }
        }
    }
}

extension Bench {
    /// Geo queries: KVDocs' geo index against SQLite's R*Tree (bounding box, exact haversine
    /// filter and sort, through the C API) and a brute-force scan, on clustered points.
    func runGeo() throws {
        let count = geoPoints
        let queryCount = quick ? 500 : 2000
        let data = GeoBenchData(count: count, queries: queryCount, seed: 1414)
        let label = count >= 1_000_000 ? "\(count / 1_000_000)M" : "\(count / 1000)k"

        // KVDocs: one collection with a geo index.
        let path = freshPath("geo-kvdocs")
        let db = try LevelDB(path: path)
        defer { db.close() }
        let schema = try DocumentSchema(
            json: Data(
                #"{"collections": {"stops": {"indexes": [{"name": "by_location", "fields": ["location"], "type": "geo"}]}}}"#
                    .utf8))
        let store = try DocumentStore(database: db, schema: schema)
        var start = now()
        var i = 0
        while i < count {
            let end = min(count, i + 5000)
            try store.write { batch in
                for j in i..<end {
                    try batch.insert(
                        "stops",
                        ["id": .int(Int64(j)), "location": ["lat": .double(data.lats[j]), "lon": .double(data.lons[j])]]
                    )
                }
            }
            i = end
        }
        try db.compact()
        let kvdocsBuild = now() - start
        results.append(
            Measurement(
                section: "geo", name: "build \(label) points", variant: "kvdocs", operations: count,
                seconds: kvdocsBuild))

        var error: UnsafeMutablePointer<CChar>?
        let sqlitePath = freshPath("geo-rtree") + ".sqlite"
        guard let rtree = cg_open(sqlitePath, &error) else { throw rtreeError(error) }
        defer { cg_close(rtree) }
        start = now()
        let inserted = data.lats.withUnsafeBufferPointer { lats in
            data.lons.withUnsafeBufferPointer { lons in
                cg_insert(rtree, lats.baseAddress, lons.baseAddress, Int32(count), &error)
            }
        }
        if inserted < 0 { throw rtreeError(error) }
        results.append(
            Measurement(
                section: "geo", name: "build \(label) points", variant: "rtree", operations: count,
                seconds: now() - start))

        let stops = try store.collection("stops")
        let centers = try zip(data.centerLats, data.centerLons).map { try GeoPoint(latitude: $0, longitude: $1) }
        let shapes: [(name: String, radius: Double?, k: Int?, queries: Int)] = [
            ("within 500 m", 500, nil, queryCount), ("within 1.5 km", 1500, nil, queryCount),
            ("within 20 km", 20_000, nil, max(20, queryCount / 20)),
            ("nearest 1", nil, 1, queryCount), ("nearest 4", nil, 4, queryCount),
            ("nearest 50", nil, 50, queryCount / 2)
        ]
        let maxOut = 64
        for shape in shapes {
            let n = shape.queries
            let query = shape.k.map { DocumentQuery().limit($0) } ?? DocumentQuery()
            // Exactness and candidates, outside the timing: KVDocs against the R*Tree.
            var kvdocsIDs = [Int64](repeating: -1, count: n * maxOut)
            var kvdocsCandidates = 0, kvdocsHits = 0, nearStopCandidates = 0, nearStopHits = 0
            for q in 0..<n {
                let plan = try stops.explainNear(centers[q], within: shape.radius, query: query)
                kvdocsCandidates += plan.candidates
                if data.centerNearStop[q] {
                    nearStopCandidates += plan.candidates
                    nearStopHits += plan.hits
                }
                let hits = try stops.near(centers[q], within: shape.radius, query: query, includeDocuments: false)
                kvdocsHits += hits.count
                for (j, hit) in hits.prefix(maxOut).enumerated() {
                    if case .int(let id) = hit.id { kvdocsIDs[q * maxOut + j] = id }
                }
            }
            var rtreeIDs = [Int64](repeating: -1, count: n * maxOut)
            var rtreeCandidates = 0, rtreeHits = 0
            try data.centerLats.withUnsafeBufferPointer { lats in
                try data.centerLons.withUnsafeBufferPointer { lons in
                    if cg_query(
                        rtree, lats.baseAddress, lons.baseAddress, Int32(n), shape.radius ?? 0, Int32(shape.k ?? 0),
                        &rtreeIDs, Int32(maxOut), &rtreeCandidates, &rtreeHits, &error) < 0
                    {
                        throw rtreeError(error)
                    }
                }
            }
            let mismatches = (0..<n).filter { q in
                kvdocsIDs[(q * maxOut)..<((q + 1) * maxOut)] != rtreeIDs[(q * maxOut)..<((q + 1) * maxOut)]
            }.count
            if mismatches > 0 || kvdocsHits != rtreeHits {
                FileHandle.standardError.write(
                    Data(
                        "  geo \(shape.name): KVDocs and the R*Tree disagree on \(mismatches) of \(n) queries (hits \(kvdocsHits) / \(rtreeHits))\n"
                            .utf8))
            }
            let extraKVDocs: [String: Double] = [
                "candidates per hit": Double(kvdocsCandidates) / Double(max(1, kvdocsHits)),
                "hits per query": Double(kvdocsHits) / Double(n),
                "mismatched queries": Double(mismatches),
                "candidates per hit, centres near a stop": Double(nearStopCandidates) / Double(max(1, nearStopHits))
            ]
            let extraRTree: [String: Double] = [
                "candidates per hit": Double(rtreeCandidates) / Double(max(1, rtreeHits)),
                "hits per query": Double(rtreeHits) / Double(n)
            ]
            try measureAlternating(
                "geo", shape.name,
                [
                    (
                        "kvdocs",
                        {
                            let t = now()
                            for q in 0..<n {
                                _ = try stops.near(
                                    centers[q], within: shape.radius, query: query, includeDocuments: false)
                            }
                            return (now() - t, n, extraKVDocs)
                        }
                    ),
                    (
                        "rtree",
                        {
                            var candidates = 0, hits = 0
                            let seconds = data.centerLats.withUnsafeBufferPointer { lats in
                                data.centerLons.withUnsafeBufferPointer { lons in
                                    cg_query(
                                        rtree, lats.baseAddress, lons.baseAddress, Int32(n), shape.radius ?? 0,
                                        Int32(shape.k ?? 0), nil, 0, &candidates, &hits, &error)
                                }
                            }
                            if seconds < 0 { throw rtreeError(error) }
                            return (seconds, n, extraRTree)
                        }
                    )
                ])
            // Brute force: a few queries are enough (each reads every point).
            let bruteQueries = min(n, quick ? 10 : 20)
            measure("geo", shape.name, "brute") {
                var hits = 0
                let seconds = data.lats.withUnsafeBufferPointer { plats in
                    data.lons.withUnsafeBufferPointer { plons in
                        data.centerLats.withUnsafeBufferPointer { lats in
                            data.centerLons.withUnsafeBufferPointer { lons in
                                cg_brute(
                                    plats.baseAddress, plons.baseAddress, Int32(count), lats.baseAddress,
                                    lons.baseAddress, Int32(bruteQueries),
                                    shape.radius ?? 0, Int32(shape.k ?? 0), nil, 0, &hits)
                            }
                        }
                    }
                }
                return (seconds, bruteQueries, [:])
            }
        }
    }
}

private func rtreeError(_ error: UnsafeMutablePointer<CChar>?) -> BenchError {
    BenchError("rtree: " + (error.map { String(cString: $0) } ?? "failed"))
}
