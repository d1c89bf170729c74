import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// A build without Snappy (the bundled LevelDB of Apple platforms; on Linux
/// `KVDOCS_WITHOUT_SNAPPY=1`, as scripts/test-bundled builds) and Snappy-compressed tables:
/// reported as exactly that, never as damage, and never touched by repair or salvage. The
/// tests of both kinds of build run in each; those that need one kind say so.
@Suite struct SnappyAbsenceTests {
    static let withSnappy = LevelDBOptions.Compression.snappyIsAvailable
    static let fixture = packageRoot.appendingPathComponent("Tests/Fixtures/snappy1-db").path

    /// A copy of snappy1-db (one table, every block Snappy-compressed).
    private func snappyDatabase(in dir: TemporaryDirectory) throws -> String {
        let path = dir.child("snappy.db")
        try FileManager.default.copyItem(atPath: Self.fixture, toPath: path)
        return path
    }

    /// The bytes of every file in `path`, by name.
    private func files(_ path: String) throws -> [String: Data] {
        var result: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: path) {
            result[name] = try Data(contentsOf: URL(fileURLWithPath: path + "/" + name))
        }
        return result
    }

    @Test func theDefaultCompressionIsWhatTheBuildHas() {
        #expect(LevelDBOptions().compression == (Self.withSnappy ? .snappy : .none))
        #expect(LevelDBOptions.Compression.preferred == LevelDBOptions().compression)
    }

    @Test func bothLooksFindTheFixturesTableAndNoneInAnUncompressedDatabase() throws {
        for thorough in [false, true] {
            let found = SnappyTables.find(in: Self.fixture, thorough: thorough)
            #expect(found.count == 1 && found[0].hasPrefix("000005.ldb ("), "\(found)")
        }
        let dir = TemporaryDirectory()
        var options = LevelDBOptions()
        options.compression = .none
        let db = try LevelDB(path: dir.child("plain"), options: options)
        for i in 0..<3000 { try db.put(String(format: "key%05d", i), String(repeating: "compressible ", count: 10)) }
        try db.compact()
        db.close()
        #expect(SnappyTables.find(in: dir.child("plain"), thorough: true).isEmpty)
        #expect(SnappyTables.find(in: dir.child("plain"), thorough: false).isEmpty)
    }

    /// Differential against the thorough look (every block of every table): the quick one
    /// never names a table that has no compressed block, and names every table the thorough
    /// one names, on databases of compressible, incompressible and mixed values.
    @Test(.enabled(if: withSnappy, "writes Snappy-compressed tables"))
    func theQuickLookAgreesWithReadingEveryBlock() throws {
        var rng = SplitMix64(seed: 52)
        for round in 0..<12 {
            let dir = TemporaryDirectory()
            let path = dir.child("db")
            var options = LevelDBOptions()
            options.compression = round % 3 == 0 ? .none : .snappy
            options.blockSize = 1024 << (round % 3)
            let db = try LevelDB(path: path, options: options)
            for i in 0..<(500 + Int(rng.next() % 3000)) {
                let random = (round % 4 == 1) || (round % 4 == 2 && i % 3 == 0)
                let value =
                    random
                    ? (0..<100).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                    : Array(String(repeating: "value \(i) ", count: 10).utf8)
                try db.put(Array(String(format: "key%06d", i).utf8), value)
            }
            try db.compact()
            db.close()
            let thorough = Set(SnappyTables.find(in: path, thorough: true).map { $0.prefix(10) })
            let quick = Set(SnappyTables.find(in: path, thorough: false).map { $0.prefix(10) })
            #expect(quick == thorough, "round \(round): quick \(quick), thorough \(thorough)")
            if options.compression == .none { #expect(thorough.isEmpty) }
        }
    }

    @Test(.enabled(if: withSnappy)) func aBuildWithSnappyReadsTheFixture() throws {
        let dir = TemporaryDirectory()
        let db = try LevelDB(path: try snappyDatabase(in: dir))
        defer { db.close() }
        let entries = try db.entries().collect()
        #expect(entries.count == 600)
        #expect(
            try db.get("key00042").map { String(decoding: $0, as: UTF8.self) }
                == String(repeating: "value 42 ", count: 8))
    }

    @Test(.disabled(if: withSnappy, "a build with Snappy reads such tables"))
    func openingASnappyDatabaseIsRefusedNamingTheTableAndChangesNothing() throws {
        let dir = TemporaryDirectory()
        let path = try snappyDatabase(in: dir)
        let before = try files(path)
        let error = expectError(.unsupportedCompression) { try LevelDB(path: path) }
        #expect(error?.message.contains("000005.ldb") == true, "\(String(describing: error))")
        #expect(error?.message.contains("no Snappy") == true)
        #expect(error?.path == path)
        #expect(try files(path) == before)
        // Not damage: the remedy is none (neither repair nor salvage).
        if let error { #expect(DocumentStore.remedy(for: error) == .none) }
        // A private copy (kvrepl --read-only) is refused the same way, and leaves no copy.
        expectError(.unsupportedCompression) { try LevelDB.openPrivateCopy(of: path, under: dir.child("copies")) }
    }

    @Test(.disabled(if: withSnappy, "a build with Snappy repairs such tables"))
    func repairRefusesASnappyDatabaseAndChangesNothing() throws {
        let dir = TemporaryDirectory()
        let path = try snappyDatabase(in: dir)
        // Damage of the kind repair is for: the CURRENT file gone.
        try FileManager.default.removeItem(atPath: path + "/CURRENT")
        let before = try files(path)
        let error = expectError(.unsupportedCompression) { try LevelDB.repair(path: path) }
        #expect(error?.message.contains("repair refused") == true, "\(String(describing: error))")
        #expect(try files(path) == before)
        #expect(!FileManager.default.fileExists(atPath: path + "/lost"))
    }

    @Test(.disabled(if: withSnappy, "a build with Snappy writes Snappy"))
    func theSnappyOptionIsRefusedAndTheDefaultWritesUncompressedTables() throws {
        let dir = TemporaryDirectory()
        var options = LevelDBOptions()
        options.compression = .snappy
        let error = expectError(.unsupportedCompression) { try LevelDB(path: dir.child("refused"), options: options) }
        #expect(error?.message.contains("compression = .snappy") == true)
        #expect(!FileManager.default.fileExists(atPath: dir.child("refused")))
        let db = try LevelDB(path: dir.child("db"))
        for i in 0..<3000 { try db.put(String(format: "key%05d", i), String(repeating: "compressible ", count: 10)) }
        try db.compact()
        db.close()
        #expect(SnappyTables.find(in: dir.child("db"), thorough: true).isEmpty)
    }

    /// LevelDB's only word for a Snappy block it cannot read is corruption: a build without
    /// Snappy reports it as the compression it is; a build with Snappy keeps it as damage.
    @Test func levelDBsCompressedBlockErrorIsACompressionErrorOnlyWithoutSnappy() {
        let error = KVDocsError(levelDBStatus: "Corruption: corrupted compressed block contents", path: "/db")
        #expect(error.kind == (Self.withSnappy ? .corruption : .unsupportedCompression))
        #expect(error.message.hasPrefix("Corruption: corrupted compressed block contents"))
        #expect(KVDocsError(levelDBStatus: "Corruption: block checksum mismatch", path: "/db").kind == .corruption)
    }

    /// The quick look reads what a damaged file gives it and never traps: a table cut at
    /// every length, or with a byte changed anywhere, is named or not, and a file of random
    /// bytes (no table magic) never is.
    @Test func theQuickLookSurvivesCutAndDamagedTables() throws {
        let table = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.fixture + "/000005.ldb")))
        let dir = TemporaryDirectory()
        let file = dir.child("000001.ldb")
        var rng = SplitMix64(seed: 7)
        for round in 0..<300 {
            var bytes = table
            if round % 2 == 0 {
                bytes = Array(bytes.prefix(Int(rng.next() % UInt64(bytes.count))))
            } else {
                bytes[Int(rng.next() % UInt64(bytes.count))] ^= UInt8(1 + rng.next() % 255)
            }
            try Data(bytes).write(to: URL(fileURLWithPath: file))
            _ = SnappyTables.find(in: dir.path, thorough: false)
            _ = SnappyTables.find(in: dir.path, thorough: true)
        }
        let random = (0..<5000).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        try Data(random).write(to: URL(fileURLWithPath: file))
        #expect(SnappyTables.find(in: dir.path, thorough: false).isEmpty)
        #expect(SnappyTables.find(in: dir.path, thorough: true).isEmpty)
    }
}
