import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

// MARK: - The reference: brute force, written independently of the library

/// The haversine distance in metres on a sphere of radius 6,371,008.8 m, written as the
/// formula is usually written (radians by multiplying by π/180).
private func referenceDistance(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double {
    let toRadians = Double.pi / 180
    let p1 = lat1 * toRadians, p2 = lat2 * toRadians
    let dLat = p2 - p1
    let dLon = lon2 * toRadians - lon1 * toRadians
    let a = sin(dLat / 2) * sin(dLat / 2) + cos(p1) * cos(p2) * (sin(dLon / 2) * sin(dLon / 2))
    return 6_371_008.8 * (2 * asin(sqrt(min(1, max(0, a)))))
}

/// A station of the model: an id (strings and integers, to check the order of ties), a
/// point, and a kind for combined conditions.
private struct Place {
    let id: JSONValue
    let lat: Double
    let lon: Double
    let kind: String

    var document: JSONValue { ["id": id, "loc": ["lat": .double(lat), "lon": .double(lon)], "kind": .string(kind)] }
}

/// Primary-key order: strings (by UTF-8 bytes) before integers (by value).
private func idLess(_ a: JSONValue, _ b: JSONValue) -> Bool {
    switch (a, b) {
    case (.string(let x), .string(let y)): return Array(x.utf8).lexicographicallyPrecedes(Array(y.utf8))
    case (.string, _): return true
    case (_, .string): return false
    case (.int(let x), .int(let y)): return x < y
    default: return false
    }
}

/// The answer by brute force: every place within the radius passing the filter, nearest
/// first, ties by id, after the offset, up to the limit.
private func bruteForce(
    _ places: [Place], lat: Double, lon: Double, within: Double?, kind: String?, limit: Int?, offset: Int
) -> [(JSONValue, Double)] {
    var hits: [(JSONValue, Double)] = []
    for p in places {
        let d = referenceDistance(lat, lon, p.lat, p.lon)
        if let within, d > within { continue }
        if let kind, p.kind != kind { continue }
        hits.append((p.id, d))
    }
    hits.sort { $0.1 != $1.1 ? $0.1 < $1.1 : idLess($0.0, $1.0) }
    let start = min(offset, hits.count)
    let end = limit.map { min(hits.count, start + $0) } ?? hits.count
    return Array(hits[start..<end])
}

private let geoSchemaJSON = #"""
    {"collections": {"places": {"primaryKey": "id", "indexes": [
      {"name": "by_kind", "fields": ["kind"]},
      {"name": "by_loc", "fields": ["loc"], "type": "geo"}]}}}
    """#

private func withPlaces<R>(_ body: (DocumentStore, DocumentCollection) throws -> R) throws -> R {
    try withTemporaryDatabase { db, _ throws in
        let store = try DocumentStore(database: db, schema: try DocumentSchema(json: Data(geoSchemaJSON.utf8)))
        return try body(store, try store.collection("places"))
    }
}

/// Places clustered like stops in cities, plus the hard places: both poles, both sides of
/// the antimeridian, exact duplicates (ties) and points spread over the whole sphere.
private func makePlaces(_ rng: inout SplitMix64, count: Int) -> [Place] {
    func uniform(_ lo: Double, _ hi: Double) -> Double { lo + (hi - lo) * Double(rng.next() >> 11) / Double(1 << 53) }
    let cities: [(Double, Double, Double)] = [
        (-31.95, 115.86, 0.2), (51.5, -0.12, 0.1), (89.9, 10, 0.3), (-89.95, 0, 0.2), (0, 179.99, 0.05),
        (10, -179.98, 0.05),
        (64.8, -147.7, 0.5), (35.68, 139.76, 0.02)
    ]
    var places: [Place] = []
    for i in 0..<count {
        let id: JSONValue = i % 3 == 0 ? .int(Int64(i)) : .string("p\(i)")
        let kind = ["rail", "bus", "ferry"][Int(rng.next() % 3)]
        let roll = rng.next() % 20
        var lat: Double, lon: Double
        if roll < 13 {
            let c = cities[Int(rng.next() % UInt64(cities.count))]
            lat = max(-90, min(90, c.0 + uniform(-c.2, c.2)))
            lon = c.1 + uniform(-c.2, c.2) * 3
            if lon > 180 { lon -= 360 }
            if lon < -180 { lon += 360 }
        } else if roll < 15, let previous = places.last {
            (lat, lon) = (previous.lat, previous.lon)  // an exact duplicate: a tie
        } else if roll < 16 {
            lat = [90, -90, 89.9999999, -89.9999999][Int(rng.next() % 4)]
            lon = uniform(-180, 180)
        } else if roll < 17 {
            lat = uniform(-60, 60)
            lon = [180, -180, 179.9999999, -179.9999999][Int(rng.next() % 4)]
        } else {
            lat = asin(uniform(-1, 1)) * 180 / Double.pi
            lon = uniform(-180, 180)
        }
        places.append(Place(id: id, lat: lat, lon: lon, kind: kind))
    }
    return places
}

@Suite struct GeoIndexTests {
    @Test(arguments: TestBackend.differential)
    func randomQueriesAgreeWithABruteForceHaversineFilterAndSort(backend: TestBackend) throws {
        var rng = SplitMix64(seed: 14)
        // Over etcd, where each query is many requests, a sixth of the queries.
        let (count, rounds) = backend == .etcd ? (1500, 100) : (2500, 600)
        let places = makePlaces(&rng, count: count)
        try backend.withStore(schema: try DocumentSchema(json: Data(geoSchemaJSON.utf8))) { store throws in
            let collection = try store.collection("places")
            // In writes of 200 (one write of them all is more than an etcd transaction holds).
            for start in stride(from: 0, to: places.count, by: 200) {
                try store.write { batch in
                    for p in places[start..<min(start + 200, places.count)] { try batch.insert("places", p.document) }
                }
            }
            func uniform(_ lo: Double, _ hi: Double) -> Double {
                lo + (hi - lo) * Double(rng.next() >> 11) / Double(1 << 53)
            }
            var checked = 0
            for round in 0..<rounds {
                // Centres: on places, at the poles, on both sides of the antimeridian, anywhere.
                let lat: Double, lon: Double
                switch round % 6 {
                case 0, 1:
                    let p = places[Int(rng.next() % UInt64(places.count))]
                    (lat, lon) = (max(-90, min(90, p.lat + uniform(-0.01, 0.01))), p.lon)
                case 2: (lat, lon) = ([90, -90][Int(rng.next() % 2)], uniform(-180, 180))
                case 3: (lat, lon) = (uniform(-60, 60), [180, -180, 179.99999, -179.99999][Int(rng.next() % 4)])
                default: (lat, lon) = (asin(uniform(-1, 1)) * 180 / Double.pi, uniform(-180, 180))
                }
                // Radii from 1 m to 20,000 km, log-uniform; or none (k-nearest).
                let within: Double? = rng.next() % 4 == 0 ? nil : pow(10, uniform(0, log10(20_000_000)))
                let limit: Int? = within == nil || rng.next() % 2 == 0 ? [1, 4, 50, 7][Int(rng.next() % 4)] : nil
                let offset = rng.next() % 4 == 0 ? Int(rng.next() % 5) : 0
                let kind: String? = rng.next() % 3 == 0 ? "rail" : nil
                var query = DocumentQuery()
                if let kind { query = query.where("kind", .equal(.string(kind))) }
                if let limit { query = query.limit(limit) }
                query = query.offset(offset)
                let center = try GeoPoint(latitude: lat, longitude: lon)
                let hits = try collection.near(center, within: within, query: query)
                let expected = bruteForce(
                    places, lat: lat, lon: lon, within: within, kind: kind, limit: limit, offset: offset)
                let context =
                    "centre (\(lat), \(lon)) within \(within.map { "\($0)" } ?? "-") limit \(limit.map { "\($0)" } ?? "-") offset \(offset) kind \(kind ?? "-")"
                #expect(hits.map(\.id) == expected.map(\.0), "\(context)")
                #expect(hits.map(\.distance) == expected.map(\.1), "\(context)")
                for hit in hits { #expect(hit.document["id"] == hit.id) }
                checked += hits.count
            }
            #expect(checked > rounds * 8)
            #expect(try store.verify().isClean)
        }
    }

    @Test func ringsOfKNearestQueriesAndTiesAreExact() throws {
        // Many documents at one point: the order among them is by primary key, across rings.
        try withPlaces { store, collection throws in
            for i in 0..<30 {
                try collection.insert(["id": .int(Int64(100 - i)), "loc": ["lat": 10, "lon": 20], "kind": "rail"])
            }
            for i in 0..<30 {
                try collection.insert(["id": .string("s\(i)"), "loc": ["lat": 10, "lon": 20], "kind": "bus"])
            }
            try collection.insert(["id": "far", "loc": ["lat": -10, "lon": -160], "kind": "rail"])
            let center = try GeoPoint(latitude: 10.001, longitude: 20)
            let hits = try collection.near(center, query: DocumentQuery().limit(35))
            #expect(
                hits.map(\.id) == (0..<30).map { JSONValue.string("s\($0)") }.sorted { idLess($0, $1) }
                    + (71...75).map { JSONValue.int(Int64($0)) })
            #expect(Set(hits.map(\.distance)).count == 1)
            // The far one is found by widening rings all the way.
            let all = try collection.near(center, query: DocumentQuery().where("kind", .equal("rail")).limit(31))
            #expect(all.last?.id == "far")
            #expect(all.count == 31)
            let plan = try collection.explainNear(
                center, query: DocumentQuery().where("kind", .equal("rail")).limit(31))
            #expect(plan.rings.count > 3)
            #expect(plan.hits == 31)
        }
    }

    @Test func pointsAreReadInBothFormsAndDocumentsWithoutTheFieldAreNotIndexed() throws {
        try withPlaces { store, collection throws in
            try collection.insert(["id": "geojson", "loc": ["type": "Point", "coordinates": [115.86, -31.95]]])
            try collection.insert(["id": "geojson3d", "loc": ["type": "Point", "coordinates": [115.86, -31.95, 12.5]]])
            try collection.insert(["id": "latlon", "loc": ["lat": -31.95, "lon": 115.86, "accuracy": 5]])
            try collection.insert(["id": "integers", "loc": ["lat": -32, "lon": 116]])
            try collection.insert(["id": "corners", "loc": ["lat": 90, "lon": -180]])
            try collection.insert(["id": "none", "name": "no location"])
            let center = try GeoPoint(latitude: -31.95, longitude: 115.86)
            let hits = try collection.near(center, within: 20_000)
            #expect(hits.map(\.id) == ["geojson", "geojson3d", "latlon", "integers"])
            #expect(hits[0].distance == 0)
            #expect(try collection.near(center).count == 5)
            #expect(try store.verify().isClean)
        }
    }

    @Test func invalidPointsAreRejectedNamingTheIndexFieldAndValueAndNothingIsWritten() throws {
        try withPlaces { store, collection throws in
            try collection.insert(["id": "ok", "loc": ["lat": 1, "lon": 2]])
            let sequence = try store.lastSequence
            let bad: [(JSONValue, String)] = [
                (["lat": 91, "lon": 0], "latitude 91.0 is outside [-90, 90]"),
                (["lat": -90.0000001, "lon": 0], "outside [-90, 90]"),
                (["lat": 0, "lon": 180.5], "longitude 180.5 is outside [-180, 180]"),
                (["lat": "1", "lon": 2], "needs numbers \"lat\" and \"lon\""),
                (["lat": 1], "needs numbers"),
                (["latitude": 1, "longitude": 2], "needs numbers"),
                (["type": "Point", "coordinates": [1]], "[LON, LAT]"),
                (["type": "Point", "coordinates": [200, 1]], "longitude 200.0"),
                (["type": "Point", "coordinates": "1,2"], "[LON, LAT]"),
                ([1, 2], "an array is not a point"),
                (.null, "null is not a point"),
                ("here", "a string is not a point")
            ]
            for (value, reason) in bad {
                let error = expectError(.invalidArgument) { try collection.insert(["id": "bad", "loc": value]) }
                let message = error?.message ?? ""
                #expect(message.contains("geo index by_loc"), "\(message)")
                #expect(message.contains("field loc"), "\(message)")
                #expect(message.contains(value.compactDescription), "\(message)")
                #expect(message.contains(reason), "\(message)")
                expectError(.invalidArgument) { try collection.upsert(["id": "ok", "loc": value]) }
                expectError(.invalidArgument) {
                    try store.write { batch in
                        try batch.insert("places", ["id": "good", "loc": ["lat": 3, "lon": 4]])
                        try batch.insert("places", ["id": "bad", "loc": value])
                    }
                }

            }
            #expect(try store.lastSequence == sequence)
            #expect(try collection.count() == 1)
            // A refused write leaves the batch usable: the caller may go on without it.
            let kept = try store.write { batch -> DocumentChange in
                do { try batch.insert("places", ["id": "bad", "loc": ["lat": 91, "lon": 0]]) } catch {}
                return try batch.insert("places", ["id": "kept", "loc": ["lat": 3, "lon": 4]])
            }
            #expect(kept.sequence == sequence + 1)
            try collection.delete(id: "kept")
            #expect(try collection.get(id: "ok")?["loc"] == ["lat": 1, "lon": 2])
            #expect(try store.verify().isClean)
        }
    }

    @Test func buildingOverAnInvalidPointFailsAndKeepsNothingOfTheNewSchema() throws {
        try withTemporaryDatabase { db, _ throws in
            let plain = try DocumentSchema(collections: ["places": CollectionSchema()])
            let store = try DocumentStore(database: db, schema: plain)
            let places = try store.collection("places")
            try places.insert(["id": "a", "loc": ["lat": 1, "lon": 2]])
            try places.insert(["id": "b", "loc": ["lat": 100, "lon": 2]])
            var withGeo = plain
            withGeo.collections["places"]?.geo = [GeoIndexDefinition(name: "by_loc", field: "loc")]
            withGeo.collections["places"]?.indexes = [SecondaryIndexDefinition(name: "by_id", fields: ["id"])]
            let error = expectError(.invalidArgument) { try store.apply(withGeo) }
            #expect(error?.message.contains("geo index by_loc") == true)
            #expect(error?.message.contains("document \"b\"") == true)
            #expect(try store.schema == plain)
            #expect(try db.entries(.prefix(store.layout.geo("places", "by_loc").prefix)).collect().isEmpty)
            #expect(try db.entries(.prefix(store.layout.index("places", "by_id").prefix)).collect().isEmpty)
            #expect(try store.catalog().states.isEmpty)
            // Once the document is fixed, the index builds and answers.
            try places.upsert(["id": "b", "loc": ["lat": 1.001, "lon": 2]])
            try store.apply(withGeo)
            #expect(try places.near(try GeoPoint(latitude: 1, longitude: 2), within: 200).map(\.id) == ["a", "b"])
            #expect(try store.verify().isClean)
        }
    }

    @Test func verifyFindsDamageToAGeoIndexAndReindexRepairsIt() throws {
        try withPlaces { store, collection throws in
            for i in 0..<50 {
                try collection.insert(["id": .int(Int64(i)), "loc": ["lat": .double(Double(i) / 10), "lon": 5]])
            }
            let prefix = store.layout.geo("places", "by_loc").prefix
            let entries = try store.leveldb.entries(.prefix(prefix)).collect()
            #expect(entries.count == 50)
            try store.leveldb.delete(entries[3].key)
            try store.leveldb.put(entries[7].key, [UInt8](repeating: 0, count: 16))
            try store.leveldb.put(
                prefix + [0, 0, 0, 0, 0, 0, 0, 1] + Tuple([.int(999)]).encoded,
                GeoIndexMaintainer.value(try GeoPoint(latitude: 0, longitude: 0)))
            let report = try store.verify()
            #expect(!report.isClean)
            #expect(report.missingEntries == 1, "\(report)")
            #expect(report.danglingEntries == 2, "\(report)")
            #expect(report.problems.contains { $0.contains("geo entry of document 999") }, "\(report)")
            try store.reindex(collection: "places", index: "by_loc")
            #expect(try store.verify().isClean)
            #expect(
                try collection.near(try GeoPoint(latitude: 0, longitude: 5), query: DocumentQuery().limit(3)).map(\.id)
                    == [
                        0, 1, 2
                    ])
        }
    }

    @Test func movingAndDeletingDocumentsMovesAndRemovesTheirEntries() throws {
        try withPlaces { store, collection throws in
            try collection.insert(["id": "a", "loc": ["lat": 0, "lon": 0]])
            try collection.insert(["id": "b", "loc": ["lat": 0, "lon": 1]])
            let origin = try GeoPoint(latitude: 0, longitude: 0)
            #expect(try collection.near(origin, query: DocumentQuery().limit(1)).map(\.id) == ["a"])
            try collection.update(["id": "a", "loc": ["lat": 0, "lon": 2]])
            #expect(try collection.near(origin, query: DocumentQuery().limit(1)).map(\.id) == ["b"])
            try collection.update(["id": "b", "name": "no longer placed"])
            #expect(try collection.near(origin).map(\.id) == ["a"])
            try collection.delete(id: "a")
            #expect(try collection.near(origin).isEmpty)
            #expect(try store.leveldb.entries(.prefix(store.layout.geo("places", "by_loc").prefix)).collect().isEmpty)
            #expect(try store.verify().isClean)
        }
    }

    @Test func theIndexIsChosenByNameAndSeveralGeoIndexesNeedOne() throws {
        let json = #"""
            {"collections": {"people": {"indexes": [
              {"name": "by_home", "fields": ["home"], "type": "geo"},
              {"name": "by_work", "fields": ["work"], "type": "geo"}]}}}
            """#
        try withTemporaryDatabase { db, _ throws in
            let store = try DocumentStore(database: db, schema: try DocumentSchema(json: Data(json.utf8)))
            let people = try store.collection("people")
            try people.insert(["id": "p", "home": ["lat": 0, "lon": 0], "work": ["lat": 0, "lon": 1]])
            let origin = try GeoPoint(latitude: 0, longitude: 0)
            let error = expectError(.schema) { try people.near(origin) }
            #expect(error?.message.contains("by_home, by_work") == true)
            #expect(try people.near(origin, index: "by_home").first?.distance == 0)
            #expect(try people.near(origin, index: "by_work").first?.distance ?? 0 > 111_000)
            expectError(.schema) { try people.near(origin, index: "by_school") }
        }
    }

    @Test func badArgumentsAreRefused() throws {
        try withPlaces { _, collection throws in
            let origin = try GeoPoint(latitude: 0, longitude: 0)
            expectError(.invalidArgument) { try collection.near(origin, within: -1) }
            expectError(.invalidArgument) { try collection.near(origin, within: .nan) }
            expectError(.invalidArgument) { try collection.near(origin, within: .infinity) }
            expectError(.invalidArgument) { try collection.near(origin, query: DocumentQuery().limit(-1)) }
            expectError(.invalidArgument) { try collection.near(origin, query: DocumentQuery().orderBy("kind")) }
            expectError(.invalidArgument) { try GeoPoint(latitude: 90.5, longitude: 0) }
            expectError(.invalidArgument) { try GeoPoint(latitude: 0, longitude: -180.5) }
            expectError(.invalidArgument) { try GeoPoint(latitude: .nan, longitude: 0) }
            #expect(try collection.near(origin, query: DocumentQuery().limit(0)).isEmpty)
        }
    }

    @Test func typedCollectionsReturnDecodedValuesWithDistances() throws {
        struct Location: Codable, Sendable {
            var lat: Double
            var lon: Double
        }
        struct Station: Codable, Sendable {
            var id: String
            var loc: Location
            var kind: String
        }
        try withPlaces { store, _ throws in
            let stations = try store.collection("places", of: Station.self)
            try stations.insert(Station(id: "perth", loc: Location(lat: -31.9512, lon: 115.8605), kind: "rail"))
            try stations.insert(Station(id: "fremantle", loc: Location(lat: -32.0530, lon: 115.7456), kind: "rail"))
            let hits = try stations.near(try GeoPoint(latitude: -31.95, longitude: 115.86), within: 1500)
            #expect(hits.map(\.value.id) == ["perth"])
            #expect(hits[0].distance == referenceDistance(-31.95, 115.86, -31.9512, 115.8605))
        }
    }

    @Test func theSchemaJSONDeclaresGeoIndexesAndRefusesBadOnes() throws {
        let schema = try DocumentSchema(json: Data(geoSchemaJSON.utf8))
        #expect(schema.collections["places"]?.geo == [GeoIndexDefinition(name: "by_loc", field: "loc")])
        #expect(try DocumentSchema(json: schema.jsonData()) == schema)
        let bad: [(String, String)] = [
            (#"{"name": "g", "fields": ["a", "b"], "type": "geo"}"#, "exactly one field"),
            (#"{"name": "g", "fields": ["a[]"], "type": "geo"}"#, "one point per document"),
            (#"{"name": "g", "fields": ["a"], "type": "rtree"}"#, #""type" must be "geo""#),
            (#"{"name": "g", "fields": ["a"], "type": "geo", "unique": true}"#, #"unknown member "unique""#),
            (#"{"name": "g", "fields": ["a"], "type": "geo"}, {"name": "g", "fields": ["b"]}"#, "declared twice")
        ]
        for (index, message) in bad {
            let json = #"{"collections": {"c": {"indexes": ["# + index + "]}}}"
            let error = expectError(.schema) { try DocumentSchema(json: Data(json.utf8)) }
            #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
        }
    }
}

@Suite struct GeoCoveringTests {
    /// Every point within a cap lies in a cell of its covering: random caps from 1 m to
    /// 20,000 km, centres at the poles and on the antimeridian, points at the cap's edge.
    @Test func everyPointWithinTheRadiusIsInTheCovering() throws {
        var rng = SplitMix64(seed: 7)
        func uniform(_ lo: Double, _ hi: Double) -> Double {
            lo + (hi - lo) * Double(rng.next() >> 11) / Double(1 << 53)
        }
        var inside = 0
        for round in 0..<400 {
            let lat = round % 5 == 0 ? [90.0, -90.0][round % 2] : asin(uniform(-1, 1)) * 180 / Double.pi
            let lon = round % 7 == 0 ? [180.0, -180.0][round % 2] : uniform(-180, 180)
            let radius = pow(10, uniform(0, log10(20_000_000)))
            let cap = GeoCap(center: try GeoPoint(latitude: lat, longitude: lon), radius: radius)
            let covering = GeoIntervals(cap.covering(maxCells: 16))
            for _ in 0..<200 {
                // Points near the centre, at random bearings, up to just inside the radius.
                let angle = radius / GeoPoint.earthRadius * uniform(0, 1.0)
                let bearing = uniform(0, 2 * Double.pi)
                let p1 = lat * Double.pi / 180, l1 = lon * Double.pi / 180
                let p2 = asin(min(1, max(-1, sin(p1) * cos(angle) + cos(p1) * sin(angle) * cos(bearing))))
                var l2 =
                    (l1 + atan2(sin(bearing) * sin(angle) * cos(p1), cos(angle) - sin(p1) * sin(p2))) * 180 / Double.pi
                while l2 > 180 { l2 -= 360 }
                while l2 < -180 { l2 += 360 }
                let point = try GeoPoint(latitude: p2 * 180 / Double.pi, longitude: l2)
                guard referenceDistance(lat, lon, point.latitude, point.longitude) <= radius else { continue }
                inside += 1
                let code = GeoCell(leafOf: point).code
                #expect(
                    covering.intervals.contains { $0.contains(code) },
                    "cap (\(lat), \(lon)) r \(radius): \(point) not covered")
            }
        }
        #expect(inside > 50_000)
    }

    @Test func intervalDifferenceLeavesExactlyWhatWasNotScanned() {
        var rng = SplitMix64(seed: 3)
        for _ in 0..<300 {
            func randomSet() -> (GeoIntervals, Set<UInt64>) {
                var cells: [GeoCell] = []
                for _ in 0..<(1 + rng.next() % 6) {
                    let level = 29 + Int(rng.next() % 3)
                    let n = UInt32(1) << UInt32(level)
                    // Cells near the origin of a small area, so the sets overlap.
                    cells.append(
                        GeoCell(
                            level: level, latitudeIndex: n / 2 + UInt32(rng.next() % 4),
                            longitudeIndex: n / 2 + UInt32(rng.next() % 4)))
                }
                let set = GeoIntervals(cells)
                var members = Set<UInt64>()
                for r in set.intervals { for c in r { members.insert(c) } }
                return (set, members)
            }
            let (a, am) = randomSet(), (b, bm) = randomSet()
            var members = Set<UInt64>()
            for r in a.subtracting(b).intervals { for c in r { members.insert(c) } }
            #expect(members == am.subtracting(bm))
            var union = a
            union.formUnion(b)
            var unionMembers = Set<UInt64>()
            for r in union.intervals { for c in r { unionMembers.insert(c) } }
            #expect(unionMembers == am.union(bm))
        }
    }
}
