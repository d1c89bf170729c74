import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@testable import KVReplCore

/// kvrepl's `backup DIR`: it writes only DIR, removes only its own leftovers, leaves nothing
/// behind when it fails, and stays out of a layered database's layers directory.
@Suite struct KVReplBackupTests {
    /// The user's `keep.partial-notes/` and `keep.partial-2024.csv` survive `backup keep`.
    @Test func aBackupLeavesTheUsersFilesNamedLikeItsPartialDirectory() throws {
        let dir = TemporaryDirectory("kvrepl-backup")
        let fm = FileManager.default
        try fm.createDirectory(atPath: dir.child("keep.partial-notes"), withIntermediateDirectories: true)
        try "mine".write(toFile: dir.child("keep.partial-notes/notes.txt"), atomically: true, encoding: .utf8)
        try "a,b\n".write(toFile: dir.child("keep.partial-2024.csv"), atomically: true, encoding: .utf8)
        var r = try kvrepl(["--demo", dir.child("db"), "-c", "backup \(dir.child("keep"))"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try String(contentsOfFile: dir.child("keep.partial-notes/notes.txt"), encoding: .utf8) == "mine")
        #expect(try String(contentsOfFile: dir.child("keep.partial-2024.csv"), encoding: .utf8) == "a,b\n")
        r = try kvrepl([dir.child("keep"), "-c", "count stations"])
        #expect(r.stdout == "60\n", "\(r.stderr)")
    }

    /// `backup newdir/` writes `newdir`; a backup that fails leaves no directory behind.
    @Test func aTrailingSlashIsTheSameDirectoryAndAFailedBackupLeavesNothing() throws {
        let dir = TemporaryDirectory("kvrepl-backup")
        let db = dir.child("db")
        var r = try kvrepl(["--demo", db, "-c", "backup \(dir.path)/newdir/"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasSuffix(" to \(dir.path)/newdir\n"), "\(r.stdout)")
        r = try kvrepl([dir.child("newdir"), "-c", "count stations"])
        #expect(r.stdout == "60\n", "\(r.stderr)")
        // Into an existing directory, with or without the slash: refused, nothing changes.
        let before = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        for target in ["\(dir.path)/newdir/", "\(dir.path)/newdir", "\(dir.path)/db/"] {
            r = try kvrepl([db, "-c", "backup \(target)"])
            #expect(r.status == 1)
            #expect(
                r.stderr.contains(
                    "cannot back up to \(dir.path)/\(target.hasSuffix("db/") ? "db" : "newdir"): it exists"),
                "\(r.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == before)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: dir.child("newdir")).allSatisfy {
                !$0.contains("partial")
            })
    }

    /// A backup into `u.db.layers/base-mine` would be removed as an unused base copy when
    /// the session closes: kvrepl refuses it, and writes nothing there.
    @Test func aBackupInsideTheLayersDirectoryIsRefused() throws {
        let dir = TemporaryDirectory("kvrepl-backup")
        let base = dir.child("base"), user = dir.child("u.db")
        var r = try kvrepl(["--demo", base, "-c", "count stations"])
        #expect(r.status == 0, "\(r.stderr)")
        r = try kvrepl([user, "--base", base, "--create", "-c", #"remove stations "PERTH""#])
        #expect(r.status == 0, "\(r.stderr)")
        let layers = user + ".layers"
        let before = try FileManager.default.contentsOfDirectory(atPath: layers).sorted()
        for target in ["\(layers)/base-mine", "\(layers)/base-mine/"] {
            r = try kvrepl([user, "--base", base, "-c", "backup \(target)"])
            #expect(r.status == 1, "\(r.stdout)")
            #expect(
                r.stderr.contains("cannot back up to \(layers)/base-mine: it is inside the layers directory \(layers)"),
                "\(r.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: layers).sorted() == before)
        r = try kvrepl([user, "--base", base, "-c", "count stations"])
        #expect(r.stdout == "59\n", "\(r.stderr)")
    }

    /// `write-base DIR` writes a base an Apple app can ship: no Snappy block in any table,
    /// entries in tables (compacted), the same documents; a layered session opens over it.
    /// `backup --compression` writes what it says, and refuses another word.
    @Test func writeBaseWritesAnUncompressedCompactedBaseAndBackupTakesACompression() throws {
        let dir = TemporaryDirectory("kvrepl-base")
        let db = dir.child("db"), base = dir.child("base")
        var r = try kvrepl(["--demo", db, "--json", "-c", "write-base \(base)"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains(#""compression":"none""#), "\(r.stdout)")
        #expect(SnappyTables.find(in: base, thorough: true).isEmpty)
        let tables = try FileManager.default.contentsOfDirectory(atPath: base).filter { $0.hasSuffix(".ldb") }
        #expect(!tables.isEmpty)
        r = try kvrepl([dir.child("user"), "--base", base, "--create", "-c", "count stations"])
        #expect(r.stdout == "60\n", "\(r.stderr)")
        // The same base from a layered session is refused: it would be the user layer's.
        r = try kvrepl([dir.child("user"), "--base", base, "-c", "write-base \(dir.child("again"))"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("write-base writes a base from a plain database"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.child("again")))

        // A backup's tables are compressed as --compression says (what LevelDB flushes
        // while copying; the small sample stays in the copy's log), and the copy opens.
        r = try kvrepl([db, "-c", "backup \(dir.child("plain")) --compression none"])
        #expect(r.status == 0, "\(r.stderr)")
        r = try kvrepl([dir.child("plain"), "-c", "count stations"])
        #expect(r.stdout == "60\n", "\(r.stderr)")
        #expect(
            try ShellCommand.parse("backup out --compression none")
                == .backup("out", compression: LevelDBOptions.Compression.none))
        #expect(try ShellCommand.parse("backup out --compression snappy") == .backup("out", compression: .snappy))
        #expect(try ShellCommand.parse("backup out") == .backup("out"))
        #expect(try ShellCommand.parse("write-base out") == .writeBase("out"))
        r = try kvrepl([db, "-c", "backup \(dir.child("zstd")) --compression zstd"])
        #expect(r.status == 1)
        #expect(r.stderr.contains(#"unknown compression "zstd": expected none or snappy"#), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.child("zstd")))
    }
}
