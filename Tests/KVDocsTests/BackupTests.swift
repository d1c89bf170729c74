import Foundation
import KVDocsTestSupport
import Testing
@testable import KVDocs

@Suite struct BackupTests {
    /// A backup taken while another thread writes pairs of keys atomically holds whole
    /// pairs only, every entry of one moment, and opens as a database of its own.
    @Test func aBackupWhileWritesGoOnIsOneConsistentSnapshot() throws {
        let dir = TemporaryDirectory("backup")
        let db = try Database(path: dir.child("db"))
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
        let copy = try Database(path: dir.child("copy"))
        defer { copy.close() }
        let a = try copy.entries(.prefix(Tuple(["a"]))).collect().map { try Tuple(decoding: $0.key).int64(at: 1) }
        let b = try copy.entries(.prefix(Tuple(["b"]))).collect().map { try Tuple(decoding: $0.key).int64(at: 1) }
        #expect(a == b)
        #expect(a.count == 2000)
        #expect(try copy.entries().collect().count == report.entries)
        #expect(FileManager.default.fileExists(atPath: dir.child("copy") + "/CURRENT"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.contains(".partial-") }.isEmpty)
    }

    @Test func aBackupOfADocumentStoreVerifiesCleanAndAnExistingTargetIsRefused() throws {
        let dir = TemporaryDirectory("backup")
        let db = try Database(path: dir.child("db"))
        defer { db.close() }
        let store = try DocumentStore(database: db, schema: try peopleSchema())
        for i in 0..<200 {
            try store.collection("people").insert(["id": .string("p\(i)"), "age": .int(Int64(i % 90)), "email": .string("p\(i)@x"), "bio": "likes trains"])
        }
        try db.backup(to: dir.child("copy"))
        let copy = try Database(path: dir.child("copy"))
        defer { copy.close() }
        let restored = try DocumentStore(database: copy)
        #expect(try restored.verify().isClean)
        #expect(try restored.collection("people").count() == 200)
        #expect(try restored.collection("people").search("trains").count == 200)
        let error = expectError(.invalidArgument) { try db.backup(to: dir.child("copy")) }
        #expect(error?.message.contains("it exists") == true)
        // A leftover of an interrupted backup is removed by the next one to that path.
        try FileManager.default.createDirectory(atPath: dir.child("second.partial-1234"), withIntermediateDirectories: true)
        try db.backup(to: dir.child("second"))
        #expect(!FileManager.default.fileExists(atPath: dir.child("second.partial-1234")))
    }
}
