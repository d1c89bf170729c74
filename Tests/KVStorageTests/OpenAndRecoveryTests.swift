import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@Suite struct OpenAndRecoveryTests {
    @Test func openingAMissingDatabaseWithoutCreateIfMissingFailsClearly() throws {
        let dir = TemporaryDirectory()
        var options = LevelDBOptions()
        options.createIfMissing = false
        do {
            _ = try LevelDB(path: dir.child("nothing-here"), options: options)
            Issue.record("opened a missing database")
        } catch let error as KVDocsError {
            #expect(error.kind == .invalidArgument)
            #expect(error.message.contains(dir.child("nothing-here")))
            #expect(error.message.contains("does not exist"))
        }
        #expect(!FileManager.default.fileExists(atPath: dir.child("nothing-here")))
    }

    @Test func createIfMissingMakesMissingParentDirectories() throws {
        let dir = TemporaryDirectory()
        let path = dir.child("a/b/c/db")
        let db = try LevelDB(path: path)
        try db.put("k", "v")
        db.close()
        #expect(FileManager.default.fileExists(atPath: path + "/CURRENT"))
    }

    @Test func aFileInTheWayGivesAnIOError() throws {
        let dir = TemporaryDirectory()
        let path = dir.child("file")
        _ = FileManager.default.createFile(atPath: path, contents: Data("not a database".utf8))
        #expect(throws: KVDocsError.self) { _ = try LevelDB(path: path) }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "not a database")
    }

    @Test func secondHandleInTheSameProcessGetsLockedError() throws {
        try withTemporaryDatabase { _, path throws in
            do {
                _ = try LevelDB(path: path)
                Issue.record("a second handle opened the database")
            } catch let error as KVDocsError {
                #expect(error.kind == .locked)
                #expect(error.path == path)
                #expect(error.description.contains(path))
            }
        }
    }

    /// Another process (Python's plyvel, a different LevelDB client) holds the database.
    @Test(.requires(.plyvel))
    func databaseHeldByAnotherProcessGivesLockedErrorNamingThePath() throws {
        let dir = TemporaryDirectory()
        let path = dir.child("db")
        try LevelDB(path: path).close()
        let holder = try PlyvelHolder(path: path)
        defer { holder.close() }
        let error = #expect(throws: KVDocsError.self) { _ = try LevelDB(path: path) }
        #expect(error?.kind == .locked)
        #expect(error?.description.contains(path) == true)
    }

    @Test func deletedCurrentFileIsReportedAndRepairRestoresTheData() throws {
        let dir = TemporaryDirectory()
        let path = dir.child("db")
        do {
            let db = try LevelDB(path: path)
            for i in 0..<500 { try db.put("key\(i)", "value\(i)") }
            try db.compact()
            db.close()
        }
        try FileManager.default.removeItem(atPath: path + "/CURRENT")
        for createIfMissing in [true, false] {
            var options = LevelDBOptions()
            options.createIfMissing = createIfMissing
            do {
                _ = try LevelDB(path: path, options: options)
                Issue.record("opened a database with no CURRENT file")
            } catch let error as KVDocsError {
                #expect(error.kind == .corruption)
                #expect(error.message.contains("CURRENT"))
                #expect(error.message.contains(path))
            }
        }
        try LevelDB.repair(path: path)
        let db = try LevelDB(path: path)
        defer { db.close() }
        #expect(try db.entries().collect().count == 500)
        #expect(try db.get("key42", as: String.self) == "value42")
    }

    @Test func corruptedTableFileReadWithVerifyChecksumsGivesCorruption() throws {
        let dir = TemporaryDirectory()
        let path = dir.child("db")
        var options = LevelDBOptions()
        options.compression = .none
        do {
            let db = try LevelDB(path: path, options: options)
            for i in 0..<2000 { try db.put(String(format: "key%05d", i), String(repeating: "x", count: 100)) }
            try db.compact()
            db.close()
        }
        let tables = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".ldb") }
        try #require(!tables.isEmpty)
        for table in tables {
            let handle = try #require(FileHandle(forUpdatingAtPath: path + "/" + table))
            try handle.seek(toOffset: 2000)
            handle.write(Data(repeating: 0x5A, count: 64))
            try handle.close()
        }
        let db = try LevelDB(path: path, options: options)
        defer { db.close() }
        do {
            _ = try db.entries(options: LevelDBReadOptions(verifyChecksums: true)).collect()
            Issue.record("read a corrupted table without an error")
        } catch let error as KVDocsError {
            #expect(error.kind == .corruption)
            #expect(error.message.contains("checksum"))
        }
    }

    @Test func destroyRemovesTheDatabase() throws {
        let dir = TemporaryDirectory()
        let path = dir.child("db")
        let db = try LevelDB(path: path)
        try db.put("k", "v")
        #expect(throws: KVDocsError.self) { try LevelDB.destroy(path: path) }  // still open: locked
        db.close()
        try LevelDB.destroy(path: path)
        var options = LevelDBOptions()
        options.createIfMissing = false
        #expect(throws: KVDocsError.self) { _ = try LevelDB(path: path, options: options) }
    }
}
