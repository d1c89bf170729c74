import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@Suite struct RepairTests {
    @Test func aDirectoryWithoutLevelDBFilesIsRefusedAndNothingIsCreated() throws {
        let dir = TemporaryDirectory()
        let missing = dir.child("missing")
        let error = expectError(.invalidArgument) { try LevelDB.repair(path: missing) }
        #expect(
            error?.message
                == "\(missing) is not a LevelDB database (it holds no CURRENT, MANIFEST, log or table file): nothing to repair"
        )
        #expect(!FileManager.default.fileExists(atPath: missing))
        let foreign = dir.child("foreign")
        try FileManager.default.createDirectory(atPath: foreign, withIntermediateDirectories: true)
        try Data("notes".utf8).write(to: URL(fileURLWithPath: foreign + "/notes.txt"))
        let before = try fingerprint(foreign)
        expectError(.invalidArgument) { try LevelDB.repair(path: foreign) }
        #expect(try fingerprint(foreign) == before)
    }

    @Test func aDatabaseOpenInThisProcessIsRefusedAndKeepsWorking() throws {
        try withTemporaryDatabase { db, path throws in
            try db.put("a", "1")
            let error = expectError(.locked) { try LevelDB.repair(path: path) }
            #expect(
                error?.message
                    == "the database at \(path) is in use by a handle of this process: it cannot be repaired while open"
            )
            #expect(!FileManager.default.fileExists(atPath: path + "/lost"))
            try db.put("b", "2")
            #expect(try db.get("a", as: String.self) == "1")
        }
    }

    /// Data in a table and in the log, then the table damaged: the report names the log
    /// converted, the manifest replaced and the damaged table, and what was readable is kept.
    @Test func theReportNamesTheConvertedLogsReplacedManifestsAndDamagedTables() throws {
        let dir = TemporaryDirectory()
        let path = dir.child("db")
        do {
            let db = try LevelDB(path: path)
            try db.put("early", "1")
            try db.compact()
            try db.put("late", "2")
            db.close()
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: path)
        let tables = names.filter { $0.hasSuffix(".ldb") }.sorted()
        let logs = names.filter { $0.hasSuffix(".log") }.sorted()
        try #require(!tables.isEmpty && !logs.isEmpty)
        for table in tables { try Data("garbage".utf8).write(to: URL(fileURLWithPath: path + "/" + table)) }

        let report = try LevelDB.repair(path: path)
        #expect(report.tablesBefore == tables.count)
        #expect(report.logsBefore == logs.count)
        #expect(report.damagedTables == tables)
        #expect(report.convertedLogs == logs)
        #expect(report.replacedManifests.count == 1 && report.replacedManifests[0].hasPrefix("MANIFEST-"))
        #expect(report.otherLost.isEmpty)
        #expect(report.movedToLost == report.replacedManifests + report.convertedLogs + report.damagedTables)
        #expect(report.tablesAfter >= 1)
        for name in report.movedToLost { #expect(FileManager.default.fileExists(atPath: path + "/lost/" + name)) }

        let db = try LevelDB(path: path)
        defer { db.close() }
        #expect(try db.get("late", as: String.self) == "2")
        #expect(try db.get("early") == nil)  // only in the damaged table

        // A second repair reports only what it moved itself (the log the last open made).
        db.close()
        let again = try LevelDB.repair(path: path)
        #expect(again.damagedTables.isEmpty)
        #expect(Set(again.movedToLost).isDisjoint(with: report.movedToLost))
    }
}
