import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// Documents in a build without Snappy (SnappyAbsenceTests has the storage side): salvage
/// refuses Snappy-compressed tables, and a base written for Apple platforms
/// (`LayeredDocumentStore.writeBase`) has none and opens there, plain and as a layered base.
@Suite struct SnappyAbsenceDocumentTests {
    static let withSnappy = LevelDBOptions.Compression.snappyIsAvailable
    static let fixture = packageRoot.appendingPathComponent("Tests/Fixtures/snappy1-db").path

    @Test(.disabled(if: withSnappy, "a build with Snappy salvages such tables"))
    func salvageRefusesATableWithSnappyBlocksAndChangesNothing() throws {
        let dir = TemporaryDirectory()
        let path = dir.child("db")
        let db = try LevelDB(path: path)
        defer { db.close() }
        let store = try DocumentStore(
            database: db, schema: try DocumentSchema(json: Data(#"{"collections": {"c": {}}}"#.utf8)))
        try store.collection("c").insert(["id": "a"])
        // A Snappy table among the database's files, which the open did not see (it is
        // copied in afterwards): salvage reads every table first, and refuses.
        try FileManager.default.copyItem(atPath: Self.fixture + "/000005.ldb", toPath: path + "/000999.ldb")
        let error = expectError(.unsupportedCompression) { try store.salvage() }
        #expect(error?.message.contains("000999.ldb") == true, "\(String(describing: error))")
        #expect(error?.message.contains("salvage refused") == true)
        expectError(.unsupportedCompression) { try DocumentStore.salvage(database: db) }
        #expect(try store.collection("c").count() == 1)
        #expect(try store.schema.collections["quarantine"] == nil)
    }

    /// A base written for Apple platforms: every committed fixture database whose tables are
    /// Snappy-compressed is refused by a build without Snappy; rewritten by
    /// `LayeredDocumentStore.writeBase`, it has no compressed table and opens in either build.
    @Test func everyFixtureWithSnappyTablesIsRefusedWithoutSnappyAndItsWrittenBaseOpens() throws {
        let fixtures = packageRoot.appendingPathComponent("Tests/Fixtures").path
        var compressed = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: fixtures).sorted() where name.hasSuffix("-db") {
            let dir = TemporaryDirectory()
            let path = dir.child(name)
            try FileManager.default.copyItem(atPath: fixtures + "/" + name, toPath: path)
            let snappy = !SnappyTables.find(in: path, thorough: true).isEmpty
            #expect(snappy == !SnappyTables.find(in: path, thorough: false).isEmpty, "\(name)")
            if snappy { compressed += 1 }
            guard snappy, !Self.withSnappy else {
                if Self.withSnappy {
                    let db = try LevelDB(path: path)
                    try LayeredDocumentStore.writeBase(of: db, to: dir.child("base"))
                    db.close()
                    #expect(SnappyTables.find(in: dir.child("base"), thorough: true).isEmpty, "\(name)")
                    #expect(
                        try !FileManager.default.contentsOfDirectory(atPath: dir.child("base")).filter {
                            $0.hasSuffix(".ldb")
                        }.isEmpty)
                    let base = try LevelDB(path: dir.child("base"))
                    #expect(try base.entries().collect().count > 0)
                    base.close()
                }
                continue
            }
            expectError(.unsupportedCompression) { try LevelDB(path: path) }
        }
        #expect(compressed >= 6)
    }

    /// The base of the seed's story, written by `write-base` in a build with Snappy, opens in
    /// either build: plainly, and as a layered store's base with a new user database.
    @Test func aBaseWrittenWithoutCompressionOpensPlainAndAsALayeredBase() throws {
        let dir = TemporaryDirectory()
        let base = dir.child("base1-db")
        try FileManager.default.copyItem(
            atPath: packageRoot.appendingPathComponent("Tests/Fixtures/base1-db").path, toPath: base)
        #expect(SnappyTables.find(in: base, thorough: true).isEmpty)
        let plain = try LevelDB.openPrivateCopy(of: base, under: dir.child("copies"))
        #expect(try DocumentStore(database: plain).collection("stations").count() == 3)
        plain.close()
        let layers = try LayeredDocumentStore(user: dir.child("user.db"), base: base, create: true)
        defer { layers.close() }
        let stations = try layers.store.collection("stations")
        #expect(try stations.count() == 3)
        #expect(try stations.find(DocumentQuery().where("name", .equal("Skøyen"))).map { $0["id"] } == ["SKO"])
        try stations.upsert(["id": "LYS", "name": "Lysaker"])
        #expect(try stations.count() == 4)
    }
}
