import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@Suite struct BackupTests {
    /// A backup taken while another thread writes pairs of keys atomically holds whole
    /// pairs only, every entry of one moment, and opens as a database of its own.
    @Test func aBackupWhileWritesGoOnIsOneConsistentSnapshot() throws {
        let dir = TemporaryDirectory("backup")
        let db = try LevelDB(path: dir.child("db"))
        defer { db.close() }
        for i in 0..<2000 {
            let batch = WriteBatch()
            batch.put(Tuple(["a", .int(Int64(i))]), Tuple([.int(Int64(i))]))
            batch.put(Tuple(["b", .int(Int64(i))]), Tuple([.int(Int64(i))]))
            try db.write(batch)
        }
        let stop = Locked(false)
        let writer = Thread {
            var i = 2000
            while !stop.withLock({ $0 }) {
                let batch = WriteBatch()
                batch.put(Tuple(["a", .int(Int64(i))]), Tuple([.int(Int64(i))]))
                batch.put(Tuple(["b", .int(Int64(i))]), Tuple([.int(Int64(i))]))
                batch.delete(Tuple(["a", .int(Int64(i - 2000))]))
                batch.delete(Tuple(["b", .int(Int64(i - 2000))]))
                try? db.write(batch)
                i += 1
            }
        }
        writer.start()
        var reported: [Int] = []
        let report = try db.backup(to: dir.child("copy")) { reported.append($0) }
        stop.withLock { $0 = true }
        while writer.isExecuting { usleep(1000) }
        #expect(report.entries >= 4000)
        #expect(reported.last == report.entries)
        let copy = try LevelDB(path: dir.child("copy"))
        defer { copy.close() }
        let a = try copy.entries(.prefix(Tuple(["a"]))).collect().map { try Tuple(decoding: $0.key).int64(at: 1) }
        let b = try copy.entries(.prefix(Tuple(["b"]))).collect().map { try Tuple(decoding: $0.key).int64(at: 1) }
        #expect(a == b)
        #expect(a.count == 2000)
        #expect(try copy.entries().collect().count == report.entries)
        #expect(FileManager.default.fileExists(atPath: dir.child("copy") + "/CURRENT"))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.contains(".partial-") }.isEmpty)
    }

    @Test func aBackupOfADocumentStoreVerifiesCleanAndAnExistingTargetIsRefused() throws {
        let dir = TemporaryDirectory("backup")
        let db = try LevelDB(path: dir.child("db"))
        defer { db.close() }
        let store = try DocumentStore(database: db, schema: try peopleSchema())
        for i in 0..<200 {
            try store.collection("people").insert([
                "id": .string("p\(i)"), "age": .int(Int64(i % 90)), "email": .string("p\(i)@x"), "bio": "likes trains"
            ])
        }
        try db.backup(to: dir.child("copy"))
        let copy = try LevelDB(path: dir.child("copy"))
        defer { copy.close() }
        let restored = try DocumentStore(database: copy)
        #expect(try restored.verify().isClean)
        #expect(try restored.collection("people").count() == 200)
        #expect(try restored.collection("people").search("trains").count == 200)
        let error = expectError(.invalidArgument) { try db.backup(to: dir.child("copy")) }
        #expect(error?.message.contains("it exists") == true)
    }

    /// Files and directories that merely share the backup's name, `DIR.partial-…`, are the
    /// user's: a backup leaves them as they are. Only a leftover that an interrupted backup
    /// marked as its own is removed.
    @Test func aBackupRemovesOnlyTheLeftoversOfItsOwnInterruptedBackups() throws {
        let dir = TemporaryDirectory("backup")
        let db = try LevelDB(path: dir.child("db"))
        defer { db.close() }
        try db.put(Array("k".utf8), Array("v".utf8))
        let fm = FileManager.default
        let notes = dir.child("keep.partial-notes"), csv = dir.child("keep.partial-2024.csv")
        let unmarked = dir.child("keep.partial-" + UUID().uuidString)
        for directory in [notes, unmarked] {
            try fm.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try Data("mine".utf8).write(to: URL(fileURLWithPath: directory + "/notes.txt"))
        }
        try Data("a,b\n".utf8).write(to: URL(fileURLWithPath: csv))
        // What a backup killed part-way leaves: its partial directory, with its marker.
        let leftover = dir.child("keep.partial-" + UUID().uuidString)
        try fm.createDirectory(atPath: leftover, withIntermediateDirectories: true)
        try Data(LevelDB.backupMarkerContents.utf8).write(
            to: URL(fileURLWithPath: leftover + "/" + LevelDB.backupMarkerName))
        try Data("half a table".utf8).write(to: URL(fileURLWithPath: leftover + "/000005.ldb"))
        // A backup to the same directory still running (its marker locked) is not a leftover.
        let running = dir.child("keep.partial-" + UUID().uuidString)
        try fm.createDirectory(atPath: running, withIntermediateDirectories: true)
        let marker = try BackupMarker(creatingIn: running)
        defer { marker.release() }

        let report = try db.backup(to: dir.child("keep"))
        #expect(report.entries == 1)
        #expect(!fm.fileExists(atPath: leftover))
        #expect(fm.fileExists(atPath: running + "/" + LevelDB.backupMarkerName))
        #expect(try Data(contentsOf: URL(fileURLWithPath: notes + "/notes.txt")) == Data("mine".utf8))
        #expect(try Data(contentsOf: URL(fileURLWithPath: unmarked + "/notes.txt")) == Data("mine".utf8))
        #expect(try Data(contentsOf: URL(fileURLWithPath: csv)) == Data("a,b\n".utf8))
        // The finished backup carries no marker.
        #expect(!fm.fileExists(atPath: dir.child("keep") + "/" + LevelDB.backupMarkerName))
        let copy = try LevelDB(path: dir.child("keep"))
        defer { copy.close() }
        #expect(try copy.get(Array("k".utf8)) == Array("v".utf8))
    }

    /// `DIR/` is `DIR`: the backup is written there, and the report names `DIR`.
    @Test(arguments: ["/", "//"])
    func aTrailingSlashNamesTheSameNewDirectory(_ slashes: String) throws {
        let dir = TemporaryDirectory("backup")
        let db = try LevelDB(path: dir.child("db"))
        defer { db.close() }
        try db.put(Array("k".utf8), Array("v".utf8))
        let report = try db.backup(to: dir.child("newdir") + slashes)
        #expect(report.path == dir.child("newdir"))
        #expect(report.entries == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["db", "newdir"])
        let copy = try LevelDB(path: dir.child("newdir"))
        defer { copy.close() }
        #expect(try copy.get(Array("k".utf8)) == Array("v".utf8))
    }

    /// A backup that fails leaves nothing behind: not its partial directory, not the
    /// missing parent directories it made for the target.
    @Test func aFailedBackupLeavesNothingBehind() throws {
        let dir = TemporaryDirectory("backup")
        let db = try LevelDB(path: dir.child("db"))
        defer { db.close() }
        try db.put(Array("k".utf8), Array("v".utf8))
        var bad = LevelDBOptions()
        bad.blockSize = 1
        for target in [dir.path + "/new/deeper/copy/", dir.child("copy")] {
            let error = expectError(.invalidArgument) { try db.backup(to: target, options: bad) }
            #expect(error?.message.contains("blockSize") == true, "\(error?.message ?? "")")
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["db"])
        }
        // `.` and `..` name no new directory.
        for target in [dir.path + "/.", dir.path + "/new/.."] {
            let error = expectError(.invalidArgument) { try db.backup(to: target) }
            #expect(error?.message.contains("cannot back up") == true, "\(error?.message ?? "")")
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["db"])
        }
        // Under a file: refused, naming the file.
        try Data().write(to: URL(fileURLWithPath: dir.child("file")))
        let error = expectError(.invalidArgument) { try db.backup(to: dir.path + "/file/new/copy") }
        #expect(error?.message == "cannot back up to \(dir.path)/file/new/copy: \(dir.path)/file is not a directory")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["db", "file"])
    }

    /// A backup inside a layered database's layers directory would be taken for a stale
    /// base copy and removed when the layered database closes: it is refused, for every
    /// caller, with nothing written. A directory that only ends in `.layers` is fine.
    @Test func aBackupInsideALayersDirectoryIsRefused() throws {
        let dir = TemporaryDirectory("backup")
        let fm = FileManager.default
        do {
            let base = try LevelDB(path: dir.child("base"))
            defer { base.close() }
            try DocumentStore(database: base, schema: try peopleSchema()).collection("people").insert([
                "id": "p1", "email": "p1@x"
            ])
        }
        let layers = try LayeredDocumentStore(user: dir.child("u.db"), base: dir.child("base"), create: true)
        defer { layers.close() }
        try layers.store.collection("people").insert(["id": "p2", "email": "p2@x"])
        let before = try fm.contentsOfDirectory(atPath: layers.layersPath).sorted()
        for target in [
            layers.layersPath + "/base-mine", layers.layersPath + "/new/deeper/", dir.path + "/u.db.layers/./base-x"
        ] {
            let error = expectError(.invalidArgument) { try layers.backup(to: target) }
            #expect(
                error?.message.contains("inside the layers directory \(layers.layersPath)") == true,
                "\(error?.message ?? "")")
            #expect(try fm.contentsOfDirectory(atPath: layers.layersPath).sorted() == before)
        }
        // Through a plain Database too, and through a symbolic link to the layers directory.
        let plain = try LevelDB(path: dir.child("plain"))
        defer { plain.close() }
        try fm.createSymbolicLink(atPath: dir.child("link"), withDestinationPath: layers.layersPath)
        for target in [layers.layersPath + "/base-mine", dir.path + "/link/base-mine"] {
            expectError(.invalidArgument) { try plain.backup(to: target) }
        }
        #expect(try fm.contentsOfDirectory(atPath: layers.layersPath).sorted() == before)
        // A directory that is no layers directory may end in `.layers`.
        try fm.createDirectory(atPath: dir.child("photos.layers"), withIntermediateDirectories: true)
        try plain.backup(to: dir.child("photos.layers/copy"))
        #expect(fm.fileExists(atPath: dir.child("photos.layers/copy/CURRENT")))
    }
}
