import Foundation
import KVDocsTestSupport
import Testing
@testable import KVDocs

private let schemaJSON = #"""
{"collections": {
  "athletes": {"primaryKey": "id", "indexes": [{"name": "by_country", "fields": ["country"]}],
               "text": [{"name": "names", "fields": ["name"]}]},
  "groups": {"primaryKey": "id"}}}
"""#

private func files(_ dir: String) throws -> [String: Data] {
    var result: [String: Data] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: dir) where name != "LOCK" {
        result[name] = try Data(contentsOf: URL(fileURLWithPath: dir + "/" + name))
    }
    return result
}

/// Writes a base database of athletes `ids` (names tagged with `tag`) at `path`.
private func makeBase(_ path: String, ids: Range<Int>, tag: String) throws {
    let db = try Database(path: path)
    defer { db.close() }
    let store = try DocumentStore(database: db, schema: try Schema(json: Data(schemaJSON.utf8)))
    try store.write { batch in
        for i in ids {
            try batch.insert("athletes", ["id": .int(Int64(i)), "name": .string("athlete \(i) \(tag)"), "country": .string(["AUS", "NZL", "FRA"][i % 3])])
        }
    }
}

@Suite struct LayeredDatabaseTests {
    @Test func theBaseIsNeverModifiedAndItsCopyIsReused() throws {
        let dir = TemporaryDirectory("layers")
        try makeBase(dir.child("base"), ids: 0..<500, tag: "v1")
        let before = try files(dir.child("base"))
        var copy = ""
        do {
            let layers = try LayeredDatabase(user: dir.child("user"), base: dir.child("base"), create: true)
            defer { layers.close() }
            let athletes = try layers.store.collection("athletes")
            #expect(try athletes.count() == 500)
            try athletes.upsert(["id": 7, "name": "athlete 7 renamed", "country": "AUS"])
            #expect(try athletes.delete(id: 8))
            try layers.store.collection("groups").upsert(["id": "mine", "members": [7, 9]])
            #expect(try athletes.count() == 499)
            #expect(try athletes.search("renamed").map(\.id) == [7])
            // The change feed is the user's: the base's own history is not in it, and the
            // user's sequence numbers continue after the base's.
            let changes = try layers.store.changes()
            #expect(changes.map(\.id) == [7, 8, "mine"])
            #expect(changes.map(\.operation) == [.update, .delete, .insert])
            #expect(changes.first?.sequence == 501)
            copy = try LayersRecord.read(layers.layersPath)?.copy ?? ""
        }
        #expect(try files(dir.child("base")) == before)
        // Reopened: the same copy, the user's data as left.
        let layers = try LayeredDatabase(user: dir.child("user"), base: dir.child("base"))
        defer { layers.close() }
        #expect(try LayersRecord.read(layers.layersPath)?.copy == copy)
        #expect(try layers.store.collection("athletes").count() == 499)
        #expect(try layers.store.collection("athletes").get(id: 7)?["name"] == "athlete 7 renamed")
        #expect(try layers.store.verify().isClean)
        #expect(try files(dir.child("base")) == before)
        // Without create, a missing user database is an error.
        expectError(.invalidArgument) { try LayeredDatabase(user: dir.child("nobody"), base: dir.child("base")) }
    }

    @Test func replacingTheBaseKeepsTheUsersGroupsAndEdits() throws {
        let dir = TemporaryDirectory("layers")
        try makeBase(dir.child("v1"), ids: 0..<300, tag: "old")
        try makeBase(dir.child("v2"), ids: 100..<400, tag: "new")
        let v1 = try files(dir.child("v1")), v2 = try files(dir.child("v2"))
        let layers = try LayeredDatabase(user: dir.child("user"), base: dir.child("v1"), create: true)
        defer { layers.close() }
        let athletes = try layers.store.collection("athletes")
        try athletes.upsert(["id": 150, "name": "athlete 150 edited", "country": "FRA"])
        #expect(try athletes.delete(id: 200))
        try layers.store.collection("groups").upsert(["id": "squad", "members": [150, 200, 350]])
        let reader = try layers.storage.snapshotReader()
        try layers.replaceBase(with: dir.child("v2"))
        #expect(layers.basePath.hasSuffix("/v2"))
        #expect(try athletes.count() == 299)                         // 100..<400 without 200
        #expect(try athletes.get(id: 150)?["name"] == "athlete 150 edited")
        #expect(try athletes.get(id: 200) == nil)
        #expect(try athletes.get(id: 50) == nil)                      // gone with the old base
        #expect(try athletes.get(id: 350)?["name"] == "athlete 350 new")
        #expect(try layers.store.collection("groups").get(id: "squad")?["members"] == [150, 200, 350])
        #expect(try athletes.search("edited").map(\.id) == [150])
        #expect(try athletes.search("old").isEmpty)
        #expect(try athletes.count(Query().where("country", .equal("FRA"))) == 100)
        #expect(try layers.store.verify().isClean)
        // A snapshot taken before still reads the old base.
        #expect(try ReadTransaction(store: layers.store, reader: reader).count("athletes") == 299)
        #expect(try ReadTransaction(store: layers.store, reader: reader).get("athletes", id: 50) != nil)
        reader.release()
        #expect(try files(dir.child("v1")) == v1)
        #expect(try files(dir.child("v2")) == v2)
    }

    @Test func aBaseChangedInPlaceIsReplacedOnTheNextOpen() throws {
        let dir = TemporaryDirectory("layers")
        try makeBase(dir.child("base"), ids: 0..<100, tag: "v1")
        do {
            let layers = try LayeredDatabase(user: dir.child("user"), base: dir.child("base"), create: true)
            try layers.store.collection("athletes").upsert(["id": 5, "name": "mine", "country": "NZL"])
            layers.close()
        }
        // An app update ships a new base at the same path.
        try FileManager.default.removeItem(atPath: dir.child("base"))
        try makeBase(dir.child("base"), ids: 50..<150, tag: "v2")
        let layers = try LayeredDatabase(user: dir.child("user"), base: dir.child("base"))
        defer { layers.close() }
        let athletes = try layers.store.collection("athletes")
        #expect(try athletes.count() == 101)
        #expect(try athletes.get(id: 5)?["name"] == "mine")
        #expect(try athletes.search("v2").count == 100)
        #expect(try layers.store.verify().isClean)
        // Only the copy in use is left.
        #expect(try FileManager.default.contentsOfDirectory(atPath: layers.layersPath).filter { $0.hasPrefix("base-") }.count == 1)
    }

    @Test func aReplacementInterruptedAfterItWasRecordedIsFinishedOnOpen() throws {
        let dir = TemporaryDirectory("layers")
        try makeBase(dir.child("v1"), ids: 0..<100, tag: "old")
        try makeBase(dir.child("v2"), ids: 50..<150, tag: "new")
        do {
            let layers = try LayeredDatabase(user: dir.child("user"), base: dir.child("v1"), create: true)
            try layers.store.collection("athletes").upsert(["id": 60, "name": "edited", "country": "AUS"])
            layers.close()
        }
        // What a kill -9 between recording and committing leaves: the new copy and a pending record.
        let layersPath = dir.child("user") + ".layers"
        var record = try #require(try LayersRecord.read(layersPath))
        let copy = try LayeredDatabase.copyBase(dir.child("v2"), into: layersPath, progress: nil)
        record.pending = LayersRecord.Pending(base: dir.child("v2"), copy: copy, fingerprint: try LayeredDatabase.fingerprint(dir.child("v2")))
        try record.write(layersPath)
        // The next open (naming the new base) finishes it.
        let layers = try LayeredDatabase(user: dir.child("user"), base: dir.child("v2"))
        defer { layers.close() }
        #expect(try LayersRecord.read(layersPath)?.pending == nil)
        #expect(try LayersRecord.read(layersPath)?.copy == copy)
        let athletes = try layers.store.collection("athletes")
        #expect(try athletes.count() == 100)
        #expect(try athletes.get(id: 60)?["name"] == "edited")
        #expect(try athletes.search("old").isEmpty)
        #expect(try layers.store.verify().isClean)
    }
}
