import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// Every file of a directory with its bytes (LOCK aside, which only says who holds it).
private func layerFingerprint(_ dir: String) throws -> [String: Data] {
    var result: [String: Data] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: dir) where name != "LOCK" {
        result[name] = try Data(contentsOf: URL(fileURLWithPath: dir + "/" + name))
    }
    return result
}

private let layeredSchemaJSON = #"""
    {"collections": {
      "stations": {"primaryKey": "id", "indexes": [
         {"name": "by_zone", "fields": ["zone"]},
         {"name": "by_name", "fields": ["name"], "unique": true},
         {"name": "by_location", "fields": ["location"], "type": "geo"}],
       "text": [{"name": "about", "fields": ["name", "description"]}]},
      "groups": {"primaryKey": "id", "indexes": [{"name": "by_owner", "fields": ["owner"]}]}}}
    """#

@Suite struct LayeredStoreTests {
    /// Raw keys: the merged view against a dictionary model, through random puts and
    /// deletes of base keys and new ones, scanned in both orders over random ranges, and
    /// read through a snapshot taken part-way.
    @Test func theMergedViewOfRawKeysMatchesAModel() throws {
        let dir = TemporaryDirectory("layered")
        var rng = SplitMix64(seed: 15)
        var model: [[UInt8]: [UInt8]] = [:]
        func key() -> [UInt8] { (0..<(1 + Int(rng.next() % 3))).map { _ in UInt8(rng.next() % 6) } }
        do {
            let base = try LevelDB(path: dir.child("base"))
            for _ in 0..<60 {
                let k = key(), v = [UInt8(rng.next() % 256)]
                try base.put(k, v)
                model[k] = v
            }
            base.close()
        }
        let before = try layerFingerprint(dir.child("base"))
        let base = try LevelDB.openPrivateCopy(of: dir.child("base"), under: dir.path)
        let user = try LevelDB(path: dir.child("user"))
        let layered = try LayeredKeyValueStore(base: base, user: user)
        var frozen: (reader: any SnapshotReader, model: [[UInt8]: [UInt8]])?
        for step in 0..<400 {
            let k = key()
            let batch = WriteBatch()
            if rng.next() % 3 == 0 {
                batch.delete(k)
                model[k] = nil
            } else {
                let v = (0..<Int(rng.next() % 3)).map { _ in UInt8(rng.next() % 256) }
                batch.put(k, v)
                model[k] = v
            }
            try layered.write(batch, sync: false)
            if step == 200 { frozen = (try layered.snapshotReader(), model) }
        }
        func check(_ reader: any KeyValueReader, _ model: [[UInt8]: [UInt8]]) throws {
            for _ in 0..<100 {
                let a = key(), b = key()
                let (low, high) = a.lexicographicallyPrecedes(b) ? (a, b) : (b, a)
                let range = KeyRange(from: low, to: high)
                let expected = model.filter { range.contains($0.key) }.sorted {
                    $0.key.lexicographicallyPrecedes($1.key)
                }
                for order in [ScanOrder.forward, .reverse] {
                    let cursor = try reader.scan(range, order: order)
                    var got: [([UInt8], [UInt8])] = []
                    while let e = try cursor.next({ (Array($0), Array($1)) }) { got.append(e) }
                    let want = order == .forward ? expected : expected.reversed()
                    #expect(got.map(\.0) == want.map(\.key))
                    #expect(got.map(\.1) == want.map(\.value))
                }
                #expect(try reader.value(forKey: a) == model[a])
            }
        }
        try check(layered, model)
        if let frozen {
            try check(frozen.reader, frozen.model)
            frozen.reader.release()
        }
        base.close()
        user.close()
        #expect(try layerFingerprint(dir.child("base")) == before)
    }

    /// Documents: a layered store agrees with one database holding the merged documents,
    /// through random upserts and deletes of base documents and new ones: find, count,
    /// search (hits and BM25), near, unique violations across layers, verify.
    @Test func aLayeredDocumentStoreAnswersAsOneDatabaseOfTheMergedDocuments() throws {
        let dir = TemporaryDirectory("layered")
        let schema = try DocumentSchema(json: Data(layeredSchemaJSON.utf8))
        var rng = SplitMix64(seed: 16)
        func uniform() -> Double { Double(rng.next() >> 11) / Double(1 << 53) }
        let words = [
            "interchange", "parking", "bicycle", "lockers", "express", "platform", "river", "beach", "city", "hills"
        ]
        func station(_ i: Int, version: Int) -> JSONValue {
            let description = (0..<(2 + Int(rng.next() % 6))).map { _ in words[Int(rng.next() % UInt64(words.count))] }
                .joined(separator: " ")
            var o: JSONObject = [
                "id": .string("s\(i)"), "name": .string("Station \(i) v\(version)"),
                "zone": .int(Int64(1 + rng.next() % 4)),
                "description": .string(description)
            ]
            if rng.next() % 5 != 0 {
                o["location"] = ["lat": .double(-32 + uniform() * 0.5), "lon": .double(115.7 + uniform() * 0.5)]
            }
            return .object(o)
        }
        var merged: [String: JSONValue] = [:]
        do {
            let db = try LevelDB(path: dir.child("base"))
            let store = try DocumentStore(database: db, schema: schema)
            try store.write { batch in
                for i in 0..<300 {
                    let doc = station(i, version: 0)
                    try batch.insert("stations", doc)
                    merged["s\(i)"] = doc
                }
            }
            db.close()
        }
        let before = try layerFingerprint(dir.child("base"))
        let base = try LevelDB.openPrivateCopy(of: dir.child("base"), under: dir.path)
        let user = try LevelDB(path: dir.child("user"))
        let store = try DocumentStore(layered: try LayeredKeyValueStore(base: base, user: user), schema: schema)
        let stations = try store.collection("stations")
        #expect(try stations.count() == 300)
        for step in 0..<400 {
            let i = Int(rng.next() % 400)
            if rng.next() % 4 == 0 {
                _ = try stations.delete(id: .string("s\(i)"))
                merged["s\(i)"] = nil
            } else {
                let doc = station(i, version: step + 1)
                try stations.upsert(doc)
                merged["s\(i)"] = doc
            }
            if step % 50 == 0 { try store.collection("groups").upsert(["id": .int(Int64(step)), "owner": "me"]) }
        }
        // Unique constraints span both layers.
        if let (takenID, taken) = merged.first(where: { $0.key != "fresh" }) {
            let error = expectError(.uniqueViolation) {
                try stations.insert(["id": "fresh", "name": taken["name"] ?? .null])
            }
            #expect(error != nil, "\(takenID)")
        }
        // The reference: one database holding the merged documents.
        let reference = try LevelDB(path: dir.child("reference"))
        defer { reference.close() }
        let single = try DocumentStore(database: reference, schema: schema)
        try single.write { batch in for (_, doc) in merged { try batch.insert("stations", doc) } }
        let one = try single.collection("stations")

        #expect(try stations.count() == merged.count)
        #expect(try stations.find().map { $0["id"] } == (try one.find().map { $0["id"] }))
        for zone in 1...4 {
            let q = DocumentQuery().where("zone", .equal(.int(Int64(zone)))).orderBy("name").limit(20)
            #expect(try stations.find(q) == (try one.find(q)))
            #expect(
                try stations.count(DocumentQuery().where("zone", .greaterOrEqual(.int(Int64(zone)))))
                    == (try one.count(DocumentQuery().where("zone", .greaterOrEqual(.int(Int64(zone)))))))
        }
        var searchHits = 0, nearHits = 0
        for query in [
            "interchange", "parking OR beach", "express platform", "\"river beach\"", "hill*", "city NOT lockers"
        ] {
            let a = try stations.search(query, options: SearchOptions(includeDocuments: false))
            let b = try one.search(query, options: SearchOptions(includeDocuments: false))
            #expect(Set(a.map(\.id)) == Set(b.map(\.id)), "\(query)")
            searchHits += a.count
            let scores = Dictionary(uniqueKeysWithValues: b.map { ($0.id, $0.score) })
            for hit in a { #expect(abs(hit.score - (scores[hit.id] ?? .nan)) <= 1e-9, "\(query) \(hit.id)") }
        }
        for _ in 0..<30 {
            let center = try GeoPoint(latitude: -32 + uniform() * 0.5, longitude: 115.7 + uniform() * 0.5)
            let radius = 500 + uniform() * 20_000
            let a = try stations.near(center, within: radius, query: DocumentQuery().limit(25))
            let b = try one.near(center, within: radius, query: DocumentQuery().limit(25))
            #expect(a.map(\.id) == b.map(\.id))
            #expect(a.map(\.distance) == b.map(\.distance))
            nearHits += a.count
        }
        #expect(searchHits > 100)
        #expect(nearHits > 100)
        // Some base documents were replaced or deleted, some kept: all three kinds were checked.
        #expect(merged.keys.contains { Int($0.dropFirst()).map { $0 >= 300 } ?? false })
        #expect(merged.count < 400)
        #expect(try store.verify().isClean)
        base.close()
        user.close()
        #expect(try layerFingerprint(dir.child("base")) == before)
    }

    @Test func baseAndUserSchemasMustAgreeOnSharedCollections() throws {
        let dir = TemporaryDirectory("layered")
        let schema = try DocumentSchema(json: Data(layeredSchemaJSON.utf8))
        do {
            let db = try LevelDB(path: dir.child("base"))
            _ = try DocumentStore(database: db, schema: schema)
            db.close()
        }
        var other = schema
        other.collections["stations"]?.indexes.removeAll { $0.name == "by_zone" }
        let base = try LevelDB.openPrivateCopy(of: dir.child("base"), under: dir.path)
        defer { base.close() }
        let user = try LevelDB(path: dir.child("user"))
        defer { user.close() }
        let error = expectError(.schema) {
            try DocumentStore(layered: try LayeredKeyValueStore(base: base, user: user), schema: other)
        }
        #expect(error?.message.contains("collection \"stations\"") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("index \"by_zone\"") == true)
        // A user-only collection is the user's business.
        var extended = schema
        extended.collections["notes"] = CollectionSchema()
        _ = try DocumentStore(layered: try LayeredKeyValueStore(base: base, user: user), schema: extended)
    }

    /// Replacing the base: the user's documents and deletes stay, derived data is made exact
    /// over the new base (an index over the merged documents), user-only collections are
    /// untouched, and a reader holding a snapshot keeps the old base.
    @Test func replacingTheBaseKeepsTheUsersDataAndMakesDerivedDataExact() throws {
        let dir = TemporaryDirectory("layered")
        let schema = try DocumentSchema(json: Data(layeredSchemaJSON.utf8))
        var rng = SplitMix64(seed: 17)
        func uniform() -> Double { Double(rng.next() >> 11) / Double(1 << 53) }
        func station(_ i: Int, _ tag: String) -> JSONValue {
            [
                "id": .string("s\(i)"), "name": .string("Station \(i) \(tag)"), "zone": .int(Int64(1 + rng.next() % 4)),
                "description": .string(
                    ["river beach", "city express", "hills parking", "interchange"][Int(rng.next() % 4)] + " " + tag),
                "location": ["lat": .double(-32 + uniform() * 0.3), "lon": .double(115.8 + uniform() * 0.3)]
            ]
        }
        func makeBase(_ name: String, ids: Range<Int>, tag: String) throws -> [String: JSONValue] {
            var docs: [String: JSONValue] = [:]
            let db = try LevelDB(path: dir.child(name))
            defer { db.close() }
            let store = try DocumentStore(database: db, schema: schema)
            try store.write { batch in
                for i in ids {
                    let doc = station(i, tag)
                    try batch.insert("stations", doc)
                    docs["s\(i)"] = doc
                }
            }
            return docs
        }
        let first = try makeBase("base1", ids: 0..<200, tag: "old")
        let second = try makeBase("base2", ids: 100..<320, tag: "new")
        let base1 = try LevelDB.openPrivateCopy(of: dir.child("base1"), under: dir.path)
        let user = try LevelDB(path: dir.child("user"))
        defer { user.close() }
        let layered = try LayeredKeyValueStore(base: base1, user: user)
        let store = try DocumentStore(layered: layered, schema: schema)
        let stations = try store.collection("stations")
        var userDocs: [String: JSONValue?] = [:]  // the user's own writes: a document, or a delete
        for step in 0..<150 {
            let i = Int(rng.next() % 350)
            if rng.next() % 4 == 0 {
                // A delete hides the base's document (a tombstone); a document only the user
                // wrote is simply gone, so a new base may bring one with its id.
                if try stations.delete(id: .string("s\(i)")) {
                    if first["s\(i)"] != nil { userDocs["s\(i)"] = .some(nil) } else { userDocs["s\(i)"] = nil }
                }
            } else {
                let doc = station(i, "user\(step)")
                try stations.upsert(doc)
                userDocs["s\(i)"] = .some(doc)
            }
        }
        try store.collection("groups").upsert(["id": 1, "owner": "me", "stations": ["s1", "s150"]])
        let snapshot = try store.leveldb.snapshot()  // the user layer only: a raw check below
        let reader = try layered.snapshotReader()
        let countBefore = try ReadTransaction(store: store, reader: reader).count("stations")

        let base2 = try LevelDB.openPrivateCopy(of: dir.child("base2"), under: dir.path)
        let old = try layered.replaceBase(with: base2)
        try store.rederive(layered)

        var merged = second
        for (id, doc) in userDocs { merged[id] = doc ?? nil }
        for (id, doc) in userDocs where doc == nil { merged[id] = nil }
        let reference = try LevelDB(path: dir.child("reference"))
        defer { reference.close() }
        let single = try DocumentStore(database: reference, schema: schema)
        try single.write { batch in for (_, doc) in merged { try batch.insert("stations", doc) } }
        let one = try single.collection("stations")
        #expect(try stations.count() == merged.count)
        #expect(try stations.find() == (try one.find()))
        for query in ["river", "new", "user1*", "city OR hills", "interchange NOT old"] {
            let a = try stations.search(query, options: SearchOptions(includeDocuments: false))
            let b = try one.search(query, options: SearchOptions(includeDocuments: false))
            #expect(a.map(\.id) == b.map(\.id), "\(query)")
            for (x, y) in zip(a, b) { #expect(abs(x.score - y.score) <= 1e-9, "\(query)") }
        }
        let center = try GeoPoint(latitude: -31.85, longitude: 115.95)
        #expect(
            try stations.near(center, query: DocumentQuery().limit(40)).map(\.id)
                == (try one.near(center, query: DocumentQuery().limit(40)).map(\.id)))
        #expect(
            try stations.find(DocumentQuery().where("zone", .equal(2)))
                == (try one.find(DocumentQuery().where("zone", .equal(2)))))
        #expect(try store.collection("groups").get(id: 1)?["owner"] == "me")
        #expect(try store.verify().isClean)
        // The reader that held a snapshot still sees the old base.
        #expect(try ReadTransaction(store: store, reader: reader).count("stations") == countBefore)
        reader.release()
        snapshot.release()
        old.close()
        base2.close()
    }
}
