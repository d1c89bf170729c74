import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// Where an app keeps its databases (LevelDBDirectory), and the protection option, as far as
/// this platform has them: Linux has Application Support ($XDG_DATA_HOME), no App Groups
/// and no protection classes.
@Suite struct LevelDBDirectoryTests {
    @Test func namesThatLeaveTheDirectoryAreRefused() {
        for name in ["", "/etc/db", "..", "../db", "a/../b", "a//b", "./db", "db/"] {
            let error = expectError(.invalidArgument) { try LevelDBDirectory.applicationSupport(name) }
            #expect(
                error?.message.contains("database name \"\(name)\"") == true, "\(name): \(String(describing: error))")
            expectError(.invalidArgument) { try LevelDBDirectory.appGroup("group.example", name) }
        }
    }

    @Test func applicationSupportIsInsideTheAppsDataDirectoryWhichExists() throws {
        #if !canImport(Darwin)
        // Linux's Application Support is $XDG_DATA_HOME: a temporary one, not the user's
        // ~/.local/share (no other test of this process asks for it).
        let dir = TemporaryDirectory()
        setenv("XDG_DATA_HOME", dir.child("data"), 1)
        #endif
        let path = try LevelDBDirectory.applicationSupport("stations.db")
        #if !canImport(Darwin)
        #expect(path == dir.child("data") + "/stations.db")
        #endif
        #expect(path.hasSuffix("/stations.db"))
        let parent = URL(fileURLWithPath: path).deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: parent, isDirectory: &isDirectory) && isDirectory.boolValue)
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(try LevelDBDirectory.applicationSupport("nested/user.db").hasSuffix("/nested/user.db"))
    }

    #if !canImport(Darwin)
    @Test func appGroupsAreRefusedWhereThereAreNone() {
        let error = expectError(.notSupported) { try LevelDBDirectory.appGroup("group.example.stations", "s.db") }
        #expect(error?.message.contains("group.example.stations") == true)
    }

    /// Linux has no protection classes: the option is accepted, and the database opens,
    /// reads and writes as without it.
    @Test func aProtectionClassIsAcceptedAndChangesNothingHere() throws {
        for protection: LevelDBOptions.FileProtection in [
            .complete, .completeUnlessOpen, .completeUntilFirstUserAuthentication, .unprotected
        ] {
            let dir = TemporaryDirectory()
            var options = LevelDBOptions()
            options.fileProtection = protection
            let db = try LevelDB(path: dir.child("db"), options: options)
            try db.put("k", "v")
            #expect(try db.get("k").map { String(decoding: $0, as: UTF8.self) } == "v")
            db.close()
        }
    }
    #endif
}
