import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// Every file under a directory (subdirectories included) with its bytes, to prove nothing changed.
func fingerprint(_ directory: String) throws -> [String: Data] {
    var result: [String: Data] = [:]
    let fm = FileManager.default
    for name in try fm.subpathsOfDirectory(atPath: directory) {
        var isDirectory: ObjCBool = false
        let path = directory + "/" + name
        _ = fm.fileExists(atPath: path, isDirectory: &isDirectory)
        result[name] =
            isDirectory.boolValue ? Data("<directory>".utf8) : try Data(contentsOf: URL(fileURLWithPath: path))
    }
    return result
}

@Suite struct PrivateCopyTests {
    /// A database with data in table files and in its log (which opening it in place would
    /// turn into a table), a document store, and a `lost/` directory.
    static func makeDatabase(at path: String) throws {
        let db = try LevelDB(path: path)
        defer { db.close() }
        let store = try DocumentStore(database: db, schema: try peopleSchema())
        for i in 0..<200 { try store.collection("people").insert(["id": .int(Int64(i)), "age": .int(Int64(i % 50))]) }
        try db.compact()
        for i in 0..<50 { try db.put("log:\(i)", "in the log") }
        try FileManager.default.createDirectory(atPath: path + "/lost", withIntermediateDirectories: true)
        try Data("kept".utf8).write(to: URL(fileURLWithPath: path + "/lost/old.log"))
    }

    static func copies(in parent: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: parent).filter { $0.hasPrefix("kvdocs-copy-") }
    }

    @Test func aPrivateCopyReadsTheDatabaseAndLeavesTheOriginalByteIdentical() throws {
        let dir = TemporaryDirectory()
        let original = dir.child("db")
        try Self.makeDatabase(at: original)
        let expected = try { () throws -> [KeyValueEntry] in
            // Read through a copy first: opening the original itself would change it.
            let db = try LevelDB.openPrivateCopy(of: original)
            defer { db.close() }
            return try db.entries().collect()
        }()
        let before = try fingerprint(original)
        #expect(before["LOCK"] != nil && before["lost/old.log"] != nil)

        let db = try LevelDB.openPrivateCopy(of: original)
        #expect(try db.entries().collect() == expected)
        #expect(try db.get("log:7", as: String.self) == "in the log")
        // Writes, a compaction and a schema change go to the copy only.
        let store = try DocumentStore(database: db)
        try store.collection("people").insert(["id": 1000, "age": 1])
        try store.apply(try DocumentSchema(json: Data(#"{"collections": {"people": {"primaryKey": "id"}}}"#.utf8)))
        try db.deleteRange(.prefix("log:"))
        try db.compact()
        db.close()

        #expect(try fingerprint(original) == before)
        let reopened = try LevelDB.openPrivateCopy(of: original)
        defer { reopened.close() }
        #expect(try reopened.entries().collect() == expected)
    }

    @Test func theCopyIsMadeUnderItsParentAndRemovedOnCloseOrDeinit() throws {
        let dir = TemporaryDirectory()
        let original = dir.child("db")
        let parent = dir.child("copies")
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        try Self.makeDatabase(at: original)

        let db = try LevelDB.openPrivateCopy(of: original, under: parent)
        #expect(db.copiedFrom == original)
        #expect(db.path != original && db.path.hasPrefix(parent + "/kvdocs-copy-"))
        #expect(try Self.copies(in: parent).count == 1)
        #expect(FileManager.default.fileExists(atPath: db.path + "/CURRENT"))
        db.close()
        #expect(try Self.copies(in: parent).isEmpty)
        db.close()  // twice: nothing more

        do {
            let scoped = try LevelDB.openPrivateCopy(of: original, under: parent)
            #expect(try scoped.get("log:1") != nil)
        }
        #expect(try Self.copies(in: parent).isEmpty)
        #expect(try LevelDB(path: original).copiedFrom == nil)
    }

    @Test func tableFilesAreHardLinkedAndTheOtherFilesCopied() throws {
        let dir = TemporaryDirectory()
        let original = dir.child("db")
        try Self.makeDatabase(at: original)
        // Made in the same directory as the original, so on its file system.
        let db = try LevelDB.openPrivateCopy(of: original, under: dir.path)
        defer { db.close() }
        func inode(_ path: String) throws -> Int? {
            try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int
        }
        let tables = try FileManager.default.contentsOfDirectory(atPath: original).filter { $0.hasSuffix(".ldb") }
        try #require(!tables.isEmpty)
        for table in tables where FileManager.default.fileExists(atPath: db.path + "/" + table) {
            #expect(try inode(original + "/" + table) == inode(db.path + "/" + table), "\(table)")
        }
        #expect(try inode(original + "/CURRENT") != inode(db.path + "/CURRENT"))
        #expect(FileManager.default.fileExists(atPath: db.path + "/lost/old.log"))
    }

    @Test func aDirectoryThatIsNotADatabaseIsRefusedAndLeftUntouched() throws {
        let dir = TemporaryDirectory()
        let parent = dir.child("copies")
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        let missing = dir.child("missing")
        var error = expectError(.invalidArgument) { try LevelDB.openPrivateCopy(of: missing, under: parent) }
        #expect(error?.message == "\(missing) is not a LevelDB database (it has no CURRENT file)")
        #expect(!FileManager.default.fileExists(atPath: missing))

        let foreign = dir.child("foreign")
        try FileManager.default.createDirectory(atPath: foreign, withIntermediateDirectories: true)
        try Data("notes".utf8).write(to: URL(fileURLWithPath: foreign + "/notes.txt"))
        let before = try fingerprint(foreign)
        var options = LevelDBOptions()
        options.createIfMissing = true
        error = expectError(.invalidArgument) {
            try LevelDB.openPrivateCopy(of: foreign, options: options, under: parent)
        }
        #expect(error?.path == foreign)
        #expect(try fingerprint(foreign) == before)
        #expect(try Self.copies(in: parent).isEmpty)
    }

    @Test func aDatabaseOpenInThisProcessIsRefusedAsLocked() throws {
        let dir = TemporaryDirectory()
        let original = dir.child("db")
        try Self.makeDatabase(at: original)
        let db = try LevelDB(path: original)
        let error = expectError(.locked) { try LevelDB.openPrivateCopy(of: original, under: dir.path) }
        #expect(error?.message == "the database at \(original) is in use by a handle of this process")
        #expect(try Self.copies(in: dir.path).isEmpty)
        try db.put("still", "open")
        // The check took and dropped no lock: a second handle is still refused.
        expectError(.locked) { try LevelDB(path: original) }
        db.close()
        try LevelDB.openPrivateCopy(of: original, under: dir.path).close()
    }

    @Test func aDatabaseOpenInAnotherProcessIsRefusedNamingThePid() throws {
        let dir = TemporaryDirectory()
        let original = dir.child("db")
        try Self.makeDatabase(at: original)
        let ready = dir.child("ready")
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: try referencePython())
        holder.arguments = [
            "-c",
            "import plyvel, sys, pathlib; d = plyvel.DB(\(pythonString(original))); pathlib.Path(\(pythonString(ready))).touch(); sys.stdin.read()"
        ]
        let stdin = Pipe()
        holder.standardInput = stdin
        try holder.run()
        defer {
            try? stdin.fileHandleForWriting.close()
            holder.waitUntilExit()
        }
        let deadline = Date().addingTimeInterval(20)
        while !FileManager.default.fileExists(atPath: ready) && Date() < deadline { usleep(20_000) }
        try #require(FileManager.default.fileExists(atPath: ready))
        let error = expectError(.locked) { try LevelDB.openPrivateCopy(of: original, under: dir.path) }
        #expect(
            error?.message
                == "the database at \(original) is in use by another process (pid \(holder.processIdentifier))")
        #expect(try Self.copies(in: dir.path).isEmpty)
        // A plain open names the holder too.
        let plain = expectError(.locked) { try LevelDB(path: original) }
        #expect(
            plain?.message.hasPrefix(
                "the database at \(original) is in use by another process (pid \(holder.processIdentifier)) (") == true,
            "\(plain?.message ?? "")")
    }

    @Test func aCopyThatCannotBeOpenedIsRemovedAndTheErrorNamesTheOriginal() throws {
        let dir = TemporaryDirectory()
        let original = dir.child("db")
        try Self.makeDatabase(at: original)
        try Data("MANIFEST-999999\n".utf8).write(to: URL(fileURLWithPath: original + "/CURRENT"))
        let before = try fingerprint(original)
        let error = #expect(throws: KVDocsError.self) { try LevelDB.openPrivateCopy(of: original, under: dir.path) }
        #expect(error?.message.contains(original + "/MANIFEST-999999") == true, "\(String(describing: error))")
        #expect(error?.message.contains("kvdocs-copy-") == false)
        #expect(error?.path == original)
        #expect(try Self.copies(in: dir.path).isEmpty)
        #expect(try fingerprint(original) == before)
    }

    @Test func errorIfExistsDoesNotStopACopyFromOpening() throws {
        let dir = TemporaryDirectory()
        let original = dir.child("db")
        try Self.makeDatabase(at: original)
        var options = LevelDBOptions()
        options.errorIfExists = true
        options.createIfMissing = false
        options.bloomFilterBitsPerKey = 10
        let db = try LevelDB.openPrivateCopy(of: original, options: options, under: dir.path)
        defer { db.close() }
        #expect(db.options.bloomFilterBitsPerKey == 10)
        #expect(try db.get("log:3", as: String.self) == "in the log")
    }
}
