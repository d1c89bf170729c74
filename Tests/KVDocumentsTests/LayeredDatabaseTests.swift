import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

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
    let db = try LevelDB(path: path)
    defer { db.close() }
    let store = try DocumentStore(database: db, schema: try DocumentSchema(json: Data(schemaJSON.utf8)))
    try store.write { batch in
        for i in ids {
            try batch.insert(
                "athletes",
                [
                    "id": .int(Int64(i)), "name": .string("athlete \(i) \(tag)"),
                    "country": .string(["AUS", "NZL", "FRA"][i % 3])
                ])
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
            let layers = try LayeredDocumentStore(user: dir.child("user"), base: dir.child("base"), create: true)
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
        let layers = try LayeredDocumentStore(user: dir.child("user"), base: dir.child("base"))
        defer { layers.close() }
        #expect(try LayersRecord.read(layers.layersPath)?.copy == copy)
        #expect(try layers.store.collection("athletes").count() == 499)
        #expect(try layers.store.collection("athletes").get(id: 7)?["name"] == "athlete 7 renamed")
        #expect(try layers.store.verify().isClean)
        #expect(try files(dir.child("base")) == before)
        // Without create, a missing user database is an error.
        expectError(.invalidArgument) { try LayeredDocumentStore(user: dir.child("nobody"), base: dir.child("base")) }
    }

    @Test func replacingTheBaseKeepsTheUsersGroupsAndEdits() throws {
        let dir = TemporaryDirectory("layers")
        try makeBase(dir.child("v1"), ids: 0..<300, tag: "old")
        try makeBase(dir.child("v2"), ids: 100..<400, tag: "new")
        let v1 = try files(dir.child("v1")), v2 = try files(dir.child("v2"))
        let layers = try LayeredDocumentStore(user: dir.child("user"), base: dir.child("v1"), create: true)
        defer { layers.close() }
        let athletes = try layers.store.collection("athletes")
        try athletes.upsert(["id": 150, "name": "athlete 150 edited", "country": "FRA"])
        #expect(try athletes.delete(id: 200))
        try layers.store.collection("groups").upsert(["id": "squad", "members": [150, 200, 350]])
        let reader = try layers.storage.snapshotReader()
        try layers.replaceBase(with: dir.child("v2"))
        #expect(layers.basePath.hasSuffix("/v2"))
        #expect(try athletes.count() == 299)  // 100..<400 without 200
        #expect(try athletes.get(id: 150)?["name"] == "athlete 150 edited")
        #expect(try athletes.get(id: 200) == nil)
        #expect(try athletes.get(id: 50) == nil)  // gone with the old base
        #expect(try athletes.get(id: 350)?["name"] == "athlete 350 new")
        #expect(try layers.store.collection("groups").get(id: "squad")?["members"] == [150, 200, 350])
        #expect(try athletes.search("edited").map(\.id) == [150])
        #expect(try athletes.search("old").isEmpty)
        #expect(try athletes.count(DocumentQuery().where("country", .equal("FRA"))) == 100)
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
            let layers = try LayeredDocumentStore(user: dir.child("user"), base: dir.child("base"), create: true)
            try layers.store.collection("athletes").upsert(["id": 5, "name": "mine", "country": "NZL"])
            layers.close()
        }
        // An app update ships a new base at the same path.
        try FileManager.default.removeItem(atPath: dir.child("base"))
        try makeBase(dir.child("base"), ids: 50..<150, tag: "v2")
        let layers = try LayeredDocumentStore(user: dir.child("user"), base: dir.child("base"))
        defer { layers.close() }
        let athletes = try layers.store.collection("athletes")
        #expect(try athletes.count() == 101)
        #expect(try athletes.get(id: 5)?["name"] == "mine")
        #expect(try athletes.search("v2").count == 100)
        #expect(try layers.store.verify().isClean)
        // Only the copy in use is left.
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: layers.layersPath).filter { $0.hasPrefix("base-") }
                .count == 1)
    }

    @Test func aReplacementInterruptedAfterItWasRecordedIsFinishedOnOpen() throws {
        let dir = TemporaryDirectory("layers")
        try makeBase(dir.child("v1"), ids: 0..<100, tag: "old")
        try makeBase(dir.child("v2"), ids: 50..<150, tag: "new")
        do {
            let layers = try LayeredDocumentStore(user: dir.child("user"), base: dir.child("v1"), create: true)
            try layers.store.collection("athletes").upsert(["id": 60, "name": "edited", "country": "AUS"])
            layers.close()
        }
        // What a kill -9 between recording and applying leaves: the new copy, its staged
        // derived data and a pending record (the user layer's derived data still the old).
        let layersPath = dir.child("user") + ".layers"
        var record = try #require(try LayersRecord.read(layersPath))
        do {
            let user = try LevelDB(path: dir.child("user"))
            defer { user.close() }
            record.pending = try LayeredDocumentStore.prepare(
                dir.child("v2"), layersPath: layersPath, user: user, root: Subspace(), expected: nil, dates: nil,
                allowingUnrelated: false, progress: nil)
        }
        try record.write(layersPath)
        let copy = try #require(record.pending?.copy)
        // The next open, naming the new base, applies it.
        let layers = try LayeredDocumentStore(user: dir.child("user"), base: dir.child("v2"))
        defer { layers.close() }
        #expect(layers.baseChangeFailure == nil)
        #expect(try LayersRecord.read(layersPath)?.pending == nil)
        #expect(try LayersRecord.read(layersPath)?.copy == copy)
        let athletes = try layers.store.collection("athletes")
        #expect(try athletes.count() == 100)
        #expect(try athletes.get(id: 60)?["name"] == "edited")
        #expect(try athletes.search("old").isEmpty)
        #expect(try layers.store.verify().isClean)
        // Nothing of the replacement is left beside the copy in force.
        #expect(try FileManager.default.contentsOfDirectory(atPath: layersPath).sorted() == ["LAYERS.json", copy])
    }
}

private let layeredPeopleSchema = #"""
    {"collections": {"people": {"primaryKey": "id", "indexes": [{"name": "by_email", "fields": ["email"], "unique": true}, {"name": "by_zone", "fields": ["zone"]}],
                                "text": [{"name": "bio", "fields": ["bio"]}]},
                     "groups": {"primaryKey": "id"}}}
    """#

/// A base of people `ids` with emails `<prefix><id>@x.org`, zone `zone(id)`.
private func makePeople(
    _ path: String, ids: Range<Int>, prefix: String, schema: String = layeredPeopleSchema,
    zone: (Int) -> Int = { $0 % 10 }
) throws {
    let db = try LevelDB(path: path)
    defer { db.close() }
    let store = try DocumentStore(database: db, schema: try DocumentSchema(json: Data(schema.utf8)))
    try store.write { batch in
        for i in ids {
            try batch.insert(
                "people",
                [
                    "id": .int(Int64(i)), "email": .string("\(prefix)\(i)@x.org"), "zone": .int(Int64(zone(i))),
                    "bio": .string("person \(i) river")
                ])
        }
    }
}

/// Replaces the directory `path` by a copy of `from` (an app update shipping a new base).
private func ship(_ from: String, to path: String) throws {
    try FileManager.default.removeItem(atPath: path)
    try FileManager.default.copyItem(atPath: from, toPath: path)
}

@Suite struct LayeredDatabaseSafetyTests {
    /// A user layer whose documents take the emails u0…u49.
    func userOver(_ dir: TemporaryDirectory, base: String) throws {
        let layers = try LayeredDocumentStore(user: dir.child("user"), base: base, create: true)
        defer { layers.close() }
        let people = try layers.store.collection("people")
        try layers.store.write { batch in
            for i in 0..<50 {
                try batch.insert(
                    "people",
                    ["id": .int(Int64(10_000 + i)), "email": .string("u\(i)@x.org"), "zone": 3, "bio": "user lake"])
            }
        }
        #expect(try people.count() == 250)
    }

    @Test func aConflictingReplacementLeavesTheOldBaseAndNothingBehind() throws {
        let dir = TemporaryDirectory("layers-safe")
        try makePeople(dir.child("b1"), ids: 0..<200, prefix: "b")
        try makePeople(dir.child("b3"), ids: 0..<200, prefix: "u")
        try userOver(dir, base: dir.child("b1"))
        let layers = try LayeredDocumentStore(user: dir.child("user"), base: dir.child("b1"))
        defer { layers.close() }
        let before = try FileManager.default.contentsOfDirectory(atPath: layers.layersPath).sorted()
        expectError(.uniqueViolation) { try layers.replaceBase(with: dir.child("b3")) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: layers.layersPath).sorted() == before)
        #expect(layers.basePath == dir.child("b1"))
        #expect(try layers.store.collection("people").count() == 250)
        #expect(try layers.store.verify().isClean)
        expectError(.uniqueViolation) {
            try layers.store.collection("people").insert(["id": 5000, "email": "u1@x.org"])
        }
    }

    @Test func aReplacementKilledBeforeItWasRecordedLeavesTheOldBase() throws {
        // What the code before layers format 2 left after a kill: a pending record of a
        // conflicting base that was never checked. Every later open failed on it.
        let dir = TemporaryDirectory("layers-safe")
        try makePeople(dir.child("b1"), ids: 0..<200, prefix: "b")
        try makePeople(dir.child("b3"), ids: 0..<200, prefix: "u")
        try userOver(dir, base: dir.child("b1"))
        let layersPath = dir.child("user") + ".layers"
        let data = try Data(contentsOf: URL(fileURLWithPath: layersPath + "/LAYERS.json"))
        guard case .object(var stored) = try JSONValue(parsing: data), case .string(let oldCopy)? = stored["copy"]
        else {
            Issue.record("no record")
            return
        }
        let legacyCopy = "base-legacy"
        try FileManager.default.copyItem(atPath: dir.child("b3"), toPath: layersPath + "/" + legacyCopy)
        stored["format"] = 1
        stored["files"] = nil
        stored["fingerprint"] = ["CURRENT:16"]
        stored["pending"] = [
            "base": .string(dir.child("b3")), "copy": .string(legacyCopy), "fingerprint": ["CURRENT:16"]
        ]
        try Data(JSONValue.object(stored).description.utf8).write(to: URL(fileURLWithPath: layersPath + "/LAYERS.json"))
        // A kill during the checks of a format-2 replacement leaves directories, no record.
        try FileManager.default.copyItem(atPath: dir.child("b3"), toPath: layersPath + "/base-killed")
        try FileManager.default.createDirectory(
            atPath: layersPath + "/derive-killed", withIntermediateDirectories: false)
        for base in ["b1", "b3", "b1"] {
            let layers = try LayeredDocumentStore(user: dir.child("user"), base: dir.child(base))
            #expect(try layers.store.collection("people").count() == 250)
            #expect(try layers.store.verify().isClean)
            #expect(layers.basePath == dir.child("b1"))
            // Opening over b3 tries the replacement again and says why it keeps b1.
            #expect(layers.baseChangeFailure?.kind == (base == "b3" ? .uniqueViolation : nil))
            layers.close()
            // The legacy record was migrated (its base copied again); nothing else is left.
            let names = try FileManager.default.contentsOfDirectory(atPath: layersPath).sorted()
            let copy = try #require(try LayersRecord.read(layersPath)?.copy)
            #expect(names == ["LAYERS.json", copy])
            #expect(copy != oldCopy)
        }
    }

    @Test func aBaseRebuiltWithTheSameFileSizesIsDetectedByContent() throws {
        let dir = TemporaryDirectory("layers-safe")
        // Two builds that differ only in a fixed-width value: zone 7 against zone 8.
        try makePeople(dir.child("build-a"), ids: 0..<200, prefix: "b", zone: { $0 % 4 == 0 ? 7 : 1 })
        try makePeople(dir.child("build-b"), ids: 0..<200, prefix: "b", zone: { $0 % 4 == 0 ? 8 : 1 })
        let sizes = { (path: String) in
            try FileManager.default.contentsOfDirectory(atPath: path).filter { $0 != "LOCK" && !$0.hasPrefix("LOG") }
                .sorted()
                .map {
                    "\($0):\(try FileManager.default.attributesOfItem(atPath: path + "/" + $0)[.size] as? Int ?? -1)"
                }
        }
        #expect(try sizes(dir.child("build-a")) == sizes(dir.child("build-b")))
        try FileManager.default.copyItem(atPath: dir.child("build-a"), toPath: dir.child("shipped"))
        try userOver(dir, base: dir.child("shipped"))
        try ship(dir.child("build-b"), to: dir.child("shipped"))
        let layers = try LayeredDocumentStore(user: dir.child("user"), base: dir.child("shipped"))
        defer { layers.close() }
        #expect(layers.baseChangeFailure == nil)
        let people = try layers.store.collection("people")
        #expect(try people.count(DocumentQuery().where("zone", .equal(7))) == 0)
        #expect(try people.count(DocumentQuery().where("zone", .equal(8))) == 50)
        #expect(try layers.store.verify().isClean)
    }

    @Test func filesOverwrittenInPlaceInTheBaseLeaveTheCopyAloneAndAreNoticedOnOpen() throws {
        let dir = TemporaryDirectory("layers-safe")
        try makePeople(dir.child("new"), ids: 0..<199, prefix: "b")
        try makePeople(dir.child("shipped"), ids: 0..<200, prefix: "b")
        try userOver(dir, base: dir.child("shipped"))
        let layersPath = dir.child("user") + ".layers"
        let copy = try #require(try LayersRecord.read(layersPath)?.copy)
        let copied = try files(layersPath + "/" + copy)
        // `cp new/* shipped/`: the same inodes, new bytes.
        for name in try FileManager.default.contentsOfDirectory(atPath: dir.child("new")) where name != "LOCK" {
            let handle =
                try FileHandle(forWritingTo: URL(fileURLWithPath: dir.child("shipped") + "/" + name)) as FileHandle?
                ?? FileHandle(forWritingAtPath: dir.child("shipped") + "/" + name)
            if let handle {
                try handle.truncate(atOffset: 0)
                try handle.write(contentsOf: Data(contentsOf: URL(fileURLWithPath: dir.child("new") + "/" + name)))
                try handle.close()
            } else {
                try FileManager.default.copyItem(
                    atPath: dir.child("new") + "/" + name, toPath: dir.child("shipped") + "/" + name)
            }
        }
        for name in try FileManager.default.contentsOfDirectory(atPath: dir.child("shipped"))
        where !FileManager.default.fileExists(atPath: dir.child("new") + "/" + name) && name != "LOCK" {
            try FileManager.default.removeItem(atPath: dir.child("shipped") + "/" + name)
        }
        #expect(try files(layersPath + "/" + copy) == copied)
        let layers = try LayeredDocumentStore(user: dir.child("user"), base: dir.child("shipped"))
        defer { layers.close() }
        #expect(layers.baseChangeFailure == nil)
        #expect(try layers.store.collection("people").count() == 249)
        #expect(try layers.store.collection("people").count(DocumentQuery().where("zone", .equal(9))) == 19)
        #expect(try layers.store.verify().isClean)
    }

    @Test func aBaseChangedInPlaceIsCheckedAgainstTheSchemaLikeAReplacement() throws {
        let dir = TemporaryDirectory("layers-safe")
        try makePeople(dir.child("shipped"), ids: 0..<200, prefix: "b")
        let loose = layeredPeopleSchema.replacingOccurrences(of: #""unique": true"#, with: #""unique": false"#)
        try makePeople(dir.child("loose"), ids: 0..<200, prefix: "c", schema: loose)
        try userOver(dir, base: dir.child("shipped"))
        try ship(dir.child("loose"), to: dir.child("shipped"))
        let layers = try LayeredDocumentStore(user: dir.child("user"), base: dir.child("shipped"))
        defer { layers.close() }
        #expect(layers.baseChangeFailure?.kind == .schema)
        #expect(layers.baseChangeFailure?.message.contains("by_email") == true)
        // The old base stays in force, and so does the unique index.
        #expect(try layers.store.collection("people").get(id: 0)?["email"] == "b0@x.org")
        expectError(.uniqueViolation) {
            try layers.store.collection("people").insert(["id": 5000, "email": "u1@x.org"])
        }
        #expect(try layers.store.verify().isClean)
    }

    @Test func basesThatWouldHideTheUsersDocumentsAreRefusedUnlessAskedFor() throws {
        let dir = TemporaryDirectory("layers-safe")
        try makePeople(dir.child("b1"), ids: 0..<200, prefix: "b")
        try userOver(dir, base: dir.child("b1"))
        let empty = try LevelDB(path: dir.child("empty"))
        empty.close()
        do {
            let other = try LevelDB(path: dir.child("other"))
            defer { other.close() }
            let store = try DocumentStore(
                database: other,
                schema: try DocumentSchema(json: Data(#"{"collections": {"stations": {"primaryKey": "id"}}}"#.utf8)))
            try store.write { batch in for i in 0..<10 { try batch.insert("stations", ["id": .int(Int64(i))]) } }
        }
        let layers = try LayeredDocumentStore(user: dir.child("user"), base: dir.child("b1"))
        defer { layers.close() }
        let before = try FileManager.default.contentsOfDirectory(atPath: layers.layersPath).sorted()
        for (path, words) in [
            (dir.child("empty"), "no document store"), (dir.child("other"), "none of the store's collections"),
            (dir.child("user"), "is the user database"), (dir.child("user") + "/", "is the user database"),
            (
                layers.layersPath + "/" + (before.first { $0.hasPrefix("base-") } ?? ""),
                "inside the user database's layers"
            )
        ] {
            let e = expectError(.invalidArgument) { try layers.replaceBase(with: path) }
            #expect(e?.message.contains(words) == true, "\(path): \(e?.message ?? "")")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: layers.layersPath).sorted() == before)
        #expect(try layers.store.collection("people").count() == 250)
        // Asked for explicitly, an unrelated base is used.
        try layers.replaceBase(with: dir.child("other"), allowingUnrelatedBase: true)
        #expect(try layers.store.collection("stations").count() == 10)
    }

    @Test func aBaseThatIsTheUserDatabaseIsRefusedBeforeAnythingIsWritten() throws {
        let dir = TemporaryDirectory("layers-safe")
        try makePeople(dir.child("b"), ids: 0..<20, prefix: "b")
        let before = try files(dir.child("b"))
        expectError(.invalidArgument) { try LayeredDocumentStore(user: dir.child("b"), base: dir.child("b")) }
        expectError(.invalidArgument) {
            try LayeredDocumentStore(user: dir.child("b") + "/inner", base: dir.child("b"), create: true)
        }
        #expect(try files(dir.child("b")) == before)
        #expect(!FileManager.default.fileExists(atPath: dir.child("b") + ".layers"))
        // The plain database still opens.
        let db = try LevelDB(path: dir.child("b"))
        #expect(try DocumentStore(database: db).collection("people").count() == 20)
        db.close()
    }

    @Test(.readsSnappyFixture) func aLayersRecordOfFormat1IsMigratedOnOpen() throws {
        let dir = TemporaryDirectory("layers-fixture")
        let fixture = packageRoot.appendingPathComponent("Tests/Fixtures/layers1").path
        for name in ["base-db", "user-db", "user-db.layers"] {
            try FileManager.default.copyItem(atPath: fixture + "/" + name, toPath: dir.child(name))
        }
        #expect(try LayersRecord.read(dir.child("user-db.layers"))?.legacy == true)
        do {
            let layers = try LayeredDocumentStore(user: dir.child("user-db"), base: dir.child("base-db"))
            #expect(layers.baseChangeFailure == nil)
            let people = try layers.store.collection("people")
            #expect(try people.count() == 44)  // 0..<45 without 3
            #expect(try people.get(id: 3) == nil)
            #expect(try people.get(id: 36)?["email"] == "u36@x.org")
            #expect(try people.count(DocumentQuery().where("zone", .equal(7))) == 10)
            #expect(try people.search("lake").count == 10)
            #expect(try layers.store.collection("groups").get(id: "g")?["members"] == [1, 2, 36])
            #expect(try layers.store.verify().isClean)
            layers.close()
        }
        let record = try #require(try LayersRecord.read(dir.child("user-db.layers")))
        #expect(!record.legacy)
        #expect(record.files.map(\.name).contains("CURRENT"))
        let raw = try Data(contentsOf: URL(fileURLWithPath: dir.child("user-db.layers") + "/LAYERS.json"))
        #expect(try JSONValue(parsing: raw)["format"] == 2)
    }
}

extension LayeredDatabaseSafetyTests {
    @Test func aBackupOpenedOverABaseWithNoDocumentStoreIsRefusedUnlessAskedFor() throws {
        let dir = TemporaryDirectory("layers-safe")
        try makePeople(dir.child("b1"), ids: 0..<200, prefix: "b")
        try userOver(dir, base: dir.child("b1"))
        do {
            let layers = try LayeredDocumentStore(user: dir.child("user"), base: dir.child("b1"))
            try layers.backup(to: dir.child("backup"))
            layers.close()
        }
        try LevelDB(path: dir.child("empty")).close()
        let e = expectError(.invalidArgument) {
            try LayeredDocumentStore(user: dir.child("backup"), base: dir.child("empty"))
        }
        #expect(e?.message.contains("has no document store") == true)
        #expect(!FileManager.default.fileExists(atPath: dir.child("backup") + ".layers"))
        let layers = try LayeredDocumentStore(user: dir.child("backup"), base: dir.child("b1"))
        defer { layers.close() }
        #expect(try layers.store.collection("people").count() == 250)
        #expect(try layers.store.verify().isClean)
    }
}

extension LayeredDatabaseSafetyTests {
    @Test func theSameBaseAtAnotherPathIsRecognisedByContentAndNotReplaced() throws {
        let dir = TemporaryDirectory("layers-safe")
        try makePeople(dir.child("bundle-1"), ids: 0..<200, prefix: "b")
        try userOver(dir, base: dir.child("bundle-1"))
        let layersPath = dir.child("user") + ".layers"
        let copy = try #require(try LayersRecord.read(layersPath)?.copy)
        // An app reinstalled: the same base, another bundle path.
        try FileManager.default.moveItem(atPath: dir.child("bundle-1"), toPath: dir.child("bundle-2"))
        let layers = try LayeredDocumentStore(user: dir.child("user"), base: dir.child("bundle-2"))
        defer { layers.close() }
        #expect(layers.baseChangeFailure == nil)
        #expect(try LayersRecord.read(layersPath)?.copy == copy)
        #expect(layers.basePath == dir.child("bundle-2"))
        #expect(try layers.store.collection("people").count() == 250)
    }
}

extension LayeredDatabaseSafetyTests {
    @Test func aFailedCreateLeavesTheDirectoryAsItWasAndNamesTheBaseGiven() throws {
        let dir = TemporaryDirectory("layers-safe")
        try makePeople(dir.child("b1"), ids: 0..<20, prefix: "b")
        let before = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        let mismatched = try DocumentSchema(
            json: Data(
                #"{"collections": {"people": {"primaryKey": "id", "indexes": [{"name": "by_email", "fields": ["email"]}]}}}"#
                    .utf8))
        let e = expectError(.schema) {
            try LayeredDocumentStore(user: dir.child("user"), base: dir.child("b1"), schema: mismatched, create: true)
        }
        #expect(
            e?.message.hasPrefix("the base \(dir.child("b1")) and the user layer disagree on collection \"people\"")
                == true, "\(e?.message ?? "")")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == before)
    }
}

extension LayeredDatabaseSafetyTests {
    @Test func aLiveReplacementFailingAfterItWasRecordedGoesBackToTheOldBaseBeforeAnyWrite() throws {
        let dir = TemporaryDirectory("layers-safe")
        try makePeople(dir.child("b1"), ids: 0..<200, prefix: "b")
        try makePeople(dir.child("b2"), ids: 100..<300, prefix: "c")
        try userOver(dir, base: dir.child("b1"))
        let layers = try LayeredDocumentStore(user: dir.child("user"), base: dir.child("b1"))
        let before = try FileManager.default.contentsOfDirectory(atPath: layers.layersPath).sorted()
        LayeredDocumentStore.faultAfterRecording.withLock {
            $0[dir.child("user")] = { throw KVDocsError(.ioError, "injected") }
        }
        defer { _ = LayeredDocumentStore.faultAfterRecording.withLock { $0.removeValue(forKey: dir.child("user")) } }
        let e = expectError(.ioError) { try layers.replaceBase(with: dir.child("b2")) }
        #expect(e?.message == "injected")
        // The old base, exact, and nothing of the attempt left, on disk or in memory.
        #expect(layers.basePath == dir.child("b1"))
        #expect(try LayersRecord.read(layers.layersPath)?.pending == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: layers.layersPath).sorted() == before)
        let people = try layers.store.collection("people")
        #expect(try people.count() == 250)
        #expect(try people.get(id: 0)?["email"] == "b0@x.org")
        #expect(try layers.store.verify().isClean)
        try people.insert(["id": 9999, "email": "new@x.org", "zone": 1])
        layers.close()
        let again = try LayeredDocumentStore(user: dir.child("user"), base: dir.child("b1"))
        defer { again.close() }
        #expect(try again.store.collection("people").count() == 251)
        #expect(try again.store.verify().isClean)
    }

    @Test func aConflictingBaseChangedInPlaceIsRefusedAndNotTriedAgainUntilItsFilesChange() throws {
        let dir = TemporaryDirectory("layers-safe")
        try makePeople(dir.child("shipped"), ids: 0..<200, prefix: "b")
        try makePeople(dir.child("conflicting"), ids: 0..<200, prefix: "u")
        try userOver(dir, base: dir.child("shipped"))
        try ship(dir.child("conflicting"), to: dir.child("shipped"))
        var messages: [String] = []
        for _ in 0..<2 {
            // A conflicting base changed in place: the old base stays, and the open says why.
            let layers = try LayeredDocumentStore(user: dir.child("user"), base: dir.child("shipped"))
            #expect(layers.baseChangeFailure?.kind == .uniqueViolation)
            #expect(try layers.store.collection("people").get(id: 0)?["email"] == "b0@x.org")
            #expect(try layers.store.verify().isClean)
            messages.append(layers.baseChangeFailure?.message ?? "")
            layers.close()
        }
        #expect(!messages[0].contains("refused when the base was last opened"))
        #expect(messages[1].contains("refused when the base was last opened"))
        // New files: tried again, and replaced.
        try makePeople(dir.child("fixed"), ids: 0..<200, prefix: "f")
        try ship(dir.child("fixed"), to: dir.child("shipped"))
        let layers = try LayeredDocumentStore(user: dir.child("user"), base: dir.child("shipped"))
        defer { layers.close() }
        #expect(layers.baseChangeFailure == nil)
        #expect(try layers.store.collection("people").get(id: 0)?["email"] == "f0@x.org")
        // A damaged base's error names the base given, not the copy that was removed.
        try FileManager.default.copyItem(atPath: dir.child("fixed"), toPath: dir.child("damaged"))
        for _ in 0..<2 {
            let db = try LevelDB(path: dir.child("damaged"))
            try db.compact()
            db.close()
        }
        let table = try #require(
            try FileManager.default.contentsOfDirectory(atPath: dir.child("damaged")).first { $0.hasSuffix(".ldb") })
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: dir.child("damaged") + "/" + table)))
        for i in stride(from: bytes.count / 4, to: bytes.count / 2, by: 7) { bytes[i] ^= 0x5A }
        try Data(bytes).write(to: URL(fileURLWithPath: dir.child("damaged") + "/" + table))
        let e = expectError(.corruption) { try layers.replaceBase(with: dir.child("damaged")) }
        #expect(e?.description.contains(dir.child("damaged")) == true, "\(e?.description ?? "")")
        #expect(e?.description.contains(".layers/base-") == false, "\(e?.description ?? "")")
    }

    @Test func aBackupWithItsOwnSchemaIsCheckedAgainstTheBaseItIsOpenedOver() throws {
        let dir = TemporaryDirectory("layers-safe")
        try makePeople(dir.child("b1"), ids: 0..<50, prefix: "b")
        do {
            // The user's own schema (a collection of its own), stored in the user layer.
            let own = layeredPeopleSchema.replacingOccurrences(
                of: #""groups": {"primaryKey": "id"}"#,
                with: #""groups": {"primaryKey": "id"}, "notes": {"primaryKey": "id"}"#)
            let layers = try LayeredDocumentStore(
                user: dir.child("user"), base: dir.child("b1"), schema: try DocumentSchema(json: Data(own.utf8)),
                create: true)
            try layers.store.collection("people").insert(["id": 500, "email": "mine@x.org"])
            try layers.backup(to: dir.child("backup"))
            layers.close()
        }
        let loose = layeredPeopleSchema.replacingOccurrences(of: #""unique": true"#, with: #""unique": false"#)
        try makePeople(dir.child("loose"), ids: 0..<50, prefix: "c", schema: loose)
        let e = expectError(.schema) { try LayeredDocumentStore(user: dir.child("backup"), base: dir.child("loose")) }
        #expect(e?.message.contains("by_email") == true, "\(e?.message ?? "")")
        #expect(e?.message.contains(dir.child("loose")) == true, "\(e?.message ?? "")")
    }
}

/// A new base must store typed dates the way the user's store reads them.
@Suite struct LayeredDatesTests {
    private func base(_ path: String, dates: DateStrategy, ids: Range<Int>) throws {
        let db = try LevelDB(path: path)
        defer { db.close() }
        let store = try DocumentStore(
            database: db, schema: try DocumentSchema(json: Data(schemaJSON.utf8)), dates: dates)
        try store.write { batch in
            for i in ids { try batch.insert("athletes", ["id": .int(Int64(i)), "name": "a", "country": "NZL"]) }
        }
    }

    @Test func aBaseStoringDatesAnotherWayIsRefusedAndTheOldBaseStays() throws {
        let dir = TemporaryDirectory("layers")
        try base(dir.child("v1"), dates: .secondsSince1970, ids: 0..<5)
        try base(dir.child("iso"), dates: .iso8601, ids: 0..<6)
        try base(dir.child("v2"), dates: .secondsSince1970, ids: 0..<7)
        let layers = try LayeredDocumentStore(user: dir.child("user"), base: dir.child("v1"), create: true)
        defer { layers.close() }
        let athletes = try layers.store.collection("athletes")
        try athletes.upsert(["id": 100, "name": "mine", "country": "AUS"])
        let error = expectError(.invalidArgument) { try layers.replaceBase(with: dir.child("iso")) }
        #expect(
            error?.message.contains(
                "stores typed dates as iso8601, but the user's store reads them as secondsSince1970") == true)
        #expect(try athletes.count() == 6)
        try layers.replaceBase(with: dir.child("v2"))
        #expect(try athletes.count() == 8)
    }

    /// The user layer records the strategy itself even when the base records it, so a
    /// later base (one with no document store, allowed on purpose) cannot take it away.
    @Test func theUserLayerKeepsItsOwnDateRecord() throws {
        let dir = TemporaryDirectory("layers")
        try base(dir.child("v1"), dates: .iso8601, ids: 0..<3)
        do {
            let layers = try LayeredDocumentStore(user: dir.child("user"), base: dir.child("v1"), create: true)
            defer { layers.close() }
            #expect(layers.store.dateStrategy == .iso8601)
        }
        let user = try LevelDB(path: dir.child("user"))
        defer { user.close() }
        #expect(try LayeredDocumentStore.ownDates(user, root: Subspace()) == .iso8601)
    }

    /// Opening with the strategy the app expects: the same as the layers' opens, another
    /// fails naming both, and nothing is created for a new user database.
    @Test func theExpectedDateStrategyIsCheckedWhenOpening() throws {
        let dir = TemporaryDirectory("layers")
        try base(dir.child("v1"), dates: .iso8601, ids: 0..<3)
        let error = expectError(.invalidArgument) {
            try LayeredDocumentStore(
                user: dir.child("user"), base: dir.child("v1"), create: true, dates: .secondsSince1970)
        }
        #expect(error?.message.contains("iso8601") == true)
        #expect(!FileManager.default.fileExists(atPath: dir.child("user")))
        #expect(!FileManager.default.fileExists(atPath: dir.child("user") + ".layers"))
        let layers = try LayeredDocumentStore(
            user: dir.child("user"), base: dir.child("v1"), create: true, dates: .iso8601)
        defer { layers.close() }
        #expect(layers.store.dateStrategy == .iso8601)
    }
}
