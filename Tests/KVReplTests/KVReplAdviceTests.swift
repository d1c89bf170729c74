import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@testable import KVReplCore

/// Recovery advice fits the failure: each hint names a command that fixes it in that
/// session, and following the hint works.
@Suite struct KVReplAdviceTests {
    /// A demo base and a user database over it holding one station of the user's, HOME.
    static func layered(_ dir: TemporaryDirectory) throws -> (base: String, user: String) {
        let base = dir.child("base"), user = dir.child("user")
        var r = try kvrepl(["--demo", base, "-c", "count stations"])
        #expect(r.status == 0, "\(r.stderr)")
        r = try kvrepl([
            user, "--base", base, "--create",
            "-c",
            #"upsert stations {"id": "HOME", "name": "Home", "zone": 1, "lines": [], "location": {"lat": -31.9541, "lon": 115.8621}}"#
        ])
        #expect(r.status == 0, "\(r.stderr)")
        return (base, user)
    }

    /// Opens the layered session and counts its stations: 61 when it opens.
    static func countLayered(_ user: String, _ base: String) throws -> ProcessResult {
        try kvrepl([user, "--base", base, "-c", "count stations", "-c", #"doc stations "HOME""#])
    }

    @Test func aLockedLayeredDatabaseSaysToQuitTheOtherSessionNotToRepair() throws {
        let dir = TemporaryDirectory("kvrepl-advice")
        let (base, user) = try Self.layered(dir)
        let holder = try LevelDB(path: user)  // another process, to kvrepl
        var r = try Self.countLayered(user, base)
        #expect(r.status == 1)
        #expect(r.stderr.contains("has it open: quit that kvrepl or app, then open it again"), "\(r.stderr)")
        #expect(!r.stderr.contains("--repair"), "\(r.stderr)")
        holder.close()
        r = try Self.countLayered(user, base)
        #expect(r.status == 0 && r.stdout.hasPrefix("61\n"), "\(r.stderr)")
    }

    @Test func aDamagedBaseCopySaysToRemoveItAndOpenWithTheBaseAgain() throws {
        let dir = TemporaryDirectory("kvrepl-advice")
        let (base, user) = try Self.layered(dir)
        let fm = FileManager.default
        let copies = try fm.contentsOfDirectory(atPath: user + ".layers").filter { $0.hasPrefix("base-") }
        let copy = user + ".layers/" + (try #require(copies.first))
        let tables = try fm.contentsOfDirectory(atPath: copy).filter { $0.hasSuffix(".ldb") }
        try #require(!tables.isEmpty)
        for table in tables {
            // A new file in place of the copy's (the base's own file, linked, is untouched).
            try fm.removeItem(atPath: copy + "/" + table)
            try Data(String(repeating: "garbage ", count: 40).utf8).write(to: URL(fileURLWithPath: copy + "/" + table))
        }
        var r = try Self.countLayered(user, base)
        #expect(r.status == 1)
        #expect(
            r.stderr.contains(
                "the copy of the base in \(copy) is damaged: remove that directory, then open \(user) again with --base \(base)"
            ), "\(r.stderr)")
        #expect(!r.stderr.contains("--repair"), "\(r.stderr)")
        // The advice works.
        try fm.removeItem(atPath: copy)
        r = try Self.countLayered(user, base)
        #expect(r.status == 0 && r.stdout.hasPrefix("61\n") && r.stdout.contains("\"HOME\""), "\(r.stderr)")
    }

    @Test func anUnreadableLayersRecordSaysToRemoveItAndOpenWithTheBaseAgain() throws {
        let dir = TemporaryDirectory("kvrepl-advice")
        let (base, user) = try Self.layered(dir)
        let record = user + ".layers/LAYERS.json"
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: record))
        var r = try Self.countLayered(user, base)
        #expect(r.status == 1)
        #expect(r.stderr.contains("remove \(record), then open \(user) again with --base \(base)"), "\(r.stderr)")
        #expect(!r.stderr.contains("--repair"), "\(r.stderr)")
        try FileManager.default.removeItem(atPath: record)
        r = try Self.countLayered(user, base)
        #expect(r.status == 0 && r.stdout.hasPrefix("61\n") && r.stdout.contains("\"HOME\""), "\(r.stderr)")
        #expect(try kvrepl([user, "--base", base, "-c", "verify"]).stdout.hasSuffix(": ok\n"))
    }

    /// The user database itself damaged: repair it, with its base.
    @Test func aUserDatabaseWithoutItsCurrentFileSaysToRepairItWithItsBase() throws {
        let dir = TemporaryDirectory("kvrepl-advice")
        let (base, user) = try Self.layered(dir)
        try FileManager.default.removeItem(atPath: user + "/CURRENT")
        var r = try Self.countLayered(user, base)
        #expect(r.status == 1)
        #expect(
            r.stderr.contains(
                "has no CURRENT file (if the user database is damaged, kvrepl \(user) --base \(base) --repair rebuilds it"
            ), "\(r.stderr)")
        #expect(!r.stderr.contains("--create"), "\(r.stderr)")
        r = try kvrepl([user, "--base", base, "--repair", "-c", "count stations", "-c", #"doc stations "HOME""#])
        #expect(r.status == 0 && r.stdout.contains("61\n") && r.stdout.contains("\"HOME\""), "\(r.stderr)")
    }

    /// A backup of a layered session's user database holds tagged values: it reads only
    /// over its base, and says so instead of "no schema".
    @Test(arguments: [false, true])
    func aLayeredBackupOpenedWithoutItsBaseSaysToOpenItWithBase(readOnly: Bool) throws {
        let dir = TemporaryDirectory("kvrepl-advice")
        let (base, user) = try Self.layered(dir)
        let backup = dir.child("backup")
        #expect(try kvrepl([user, "--base", base, "-c", "backup \(backup)"]).status == 0)
        var r = try kvrepl([backup] + (readOnly ? ["--read-only"] : []) + ["-c", "count stations"])
        #expect(r.status == 1)
        #expect(
            r.stderr.contains(
                "\(backup) is the user layer of a layered database (a backup or a copy of one: its values carry layer tags): open it with --base"
            ), "\(r.stderr)")
        #expect(!r.stderr.contains("no schema"))
        r = try Self.countLayered(backup, base)
        #expect(r.status == 0 && r.stdout.hasPrefix("61\n"), "\(r.stderr)")
    }

    /// A plain store is not taken for a user layer.
    @Test func aPlainStoreIsNotAUserLayer() throws {
        let dir = TemporaryDirectory("kvrepl-advice")
        let path = dir.child("db")
        let db = try LevelDB(path: path)
        defer { db.close() }
        #expect(try DocumentStore.isUserLayer(db) == false)
        let store = try DocumentStore(database: db, schema: try DocumentSchema(json: Data(peopleSchema.utf8)))
        try store.collection("people").insert(["id": "p1", "age": 3])
        #expect(try DocumentStore.isUserLayer(db) == false)
    }

    // MARK: - Damaged catalog records

    /// A people store whose catalog record `key` holds `value`.
    static func storeWithDamagedCatalog(_ dir: TemporaryDirectory, key: Tuple, value: String) throws -> String {
        let path = dir.child("db")
        let db = try LevelDB(path: path)
        defer { db.close() }
        let store = try DocumentStore(database: db, schema: try DocumentSchema(json: Data(peopleSchema.utf8)))
        for i in 0..<4 { try store.collection("people").insert(["id": .string("p\(i)"), "age": .int(Int64(i % 2))]) }
        try db.put(key, Array(value.utf8))
        return path
    }

    /// An index's state, the sequence number or the generation that cannot be read: the
    /// advice is salvage, and salvage repairs the catalog.
    @Test(arguments: [
        Tuple(["m", "index", "people", "by_age"]), Tuple(["m", "seq"]), Tuple(["m", "generation"])
    ])
    func aDamagedCatalogRecordThatSalvageRebuildsIsSalvaged(key: Tuple) throws {
        let dir = TemporaryDirectory("kvrepl-advice")
        let db = try Self.storeWithDamagedCatalog(dir, key: key, value: "garbage")
        var r = try kvrepl([db, "-c", "count people"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("run salvage"), "\(r.stderr)")
        r = try kvrepl([
            db, "--json", "-c", "salvage", "-c", "count people where age = 1", "-c", "verify",
            "-c", #"insert people {"id": "p9", "age": 1}"#
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = try jsonLines(r.stdout)
        try #require(lines.count == 4)
        #expect(lines[0]["ok"] == true)
        guard case .array(let repairs)? = lines[0]["catalog_repairs"] else {
            Issue.record("\(lines[0])")
            return
        }
        #expect(repairs.count == 1, "\(repairs)")
        #expect(lines[1] == ["count": 2])
        #expect(lines[2]["ok"] == true)
        #expect(lines[3]["sequence"] == 5, "the sequence goes on from the change feed's last")
        #expect(try kvrepl([db, "-c", "verify"]).status == 0)
    }

    /// A stored schema that cannot be read: salvage cannot rebuild it, so the advice is to
    /// load the schema again, and that works.
    @Test func aDamagedStoredSchemaSaysToLoadTheSchemaAgain() throws {
        let dir = TemporaryDirectory("kvrepl-advice")
        let db = try Self.storeWithDamagedCatalog(dir, key: Tuple(["m", "schema"]), value: "{broken")
        var r = try kvrepl([db, "-c", "count people"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("the stored schema cannot be read: run schema load FILE"), "\(r.stderr)")
        #expect(!r.stderr.contains("run salvage"), "\(r.stderr)")
        r = try kvrepl([db, "-c", "salvage"])
        #expect(r.status == 1)
        #expect(
            r.stderr.contains("salvage cannot open the document layer") && r.stderr.contains("run schema load FILE"),
            "\(r.stderr)")
        r = try kvrepl([
            db, "--json", "-c", "schema load \(try schemaFile(in: dir))", "-c", "count people where age = 1", "-c",
            "verify"
        ])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try jsonLines(r.stdout).dropFirst().first == ["count": 2])
        #expect(try kvrepl([db, "-c", "count people"]).stdout == "4\n")
    }

    /// The format version: nothing in the store records it again.
    @Test func aDamagedFormatVersionAdvisesNoSalvage() throws {
        let dir = TemporaryDirectory("kvrepl-advice")
        let db = try Self.storeWithDamagedCatalog(dir, key: Tuple(["m", "format"]), value: "garbage")
        let r = try kvrepl([db, "-c", "salvage"])
        #expect(r.status == 1)
        #expect(!r.stderr.contains("run salvage"), "\(r.stderr)")
        #expect(r.stderr.contains("restore the database from a backup"), "\(r.stderr)")
    }
}
