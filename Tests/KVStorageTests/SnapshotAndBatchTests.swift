import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@Suite struct SnapshotTests {
    @Test func writesAfterASnapshotAreInvisibleThroughIt() throws {
        try withTemporaryDatabase { db, _ throws in
            try db.put("a", "1")
            try db.put("b", "1")
            let snapshot = try db.snapshot()
            try db.put("a", "2")
            try db.delete("b")
            try db.put("c", "2")
            #expect(try snapshot.get("a", as: String.self) == "1")
            #expect(try snapshot.get("b", as: String.self) == "1")
            #expect(try snapshot.get("c") == nil)
            #expect(try snapshot.entries().collect().map(\.key) == [Array("a".utf8), Array("b".utf8)])
            #expect(try snapshot.entries(order: .reverse, limit: 1).collect().map(\.key) == [Array("b".utf8)])
            let cursor = try db.makeCursor(options: snapshot.readOptions(verifyChecksums: true))
            try cursor.seekToLast()
            #expect(try cursor.key() == Array("b".utf8))
            #expect(try db.get("a", as: String.self) == "2")
        }
    }

    @Test func releasedSnapshotThrowsOnUse() throws {
        try withTemporaryDatabase { db, _ throws in
            let snapshot = try db.snapshot()
            #expect(snapshot.isValid)
            snapshot.release()
            snapshot.release()
            #expect(!snapshot.isValid)
            do {
                _ = try snapshot.get("a")
                Issue.record("read through a released snapshot")
            } catch let error as KVDocsError {
                #expect(error.kind == .closed)
                #expect(error.message.contains("released"))
            }
        }
    }

    @Test func snapshotOfAnotherDatabaseIsRejected() throws {
        try withTemporaryDatabase { db, _ throws in
            try withTemporaryDatabase { other, _ throws in
                let snapshot = try other.snapshot()
                #expect(throws: KVDocsError.self) { _ = try db.get("k", options: snapshot.readOptions()) }
            }
        }
    }

    @Test func snapshotAfterCloseThrowsAndManySnapshotsAreFreedByClose() throws {
        let dir = TemporaryDirectory()
        let db = try LevelDB(path: dir.child("db"))
        let snapshots = try (0..<20).map { _ in try db.snapshot() }
        db.close()
        for s in snapshots { #expect(throws: KVDocsError.self) { _ = try s.get("x") } }
    }
}

@Suite struct WriteBatchTests {
    @Test func batchAppliesAllOperationsInOrder() throws {
        try withTemporaryDatabase { db, _ throws in
            try db.put("gone", "x")
            let batch = WriteBatch()
            batch.put("a", "1")
            batch.put("a", "2")
            batch.delete("gone")
            batch.put("", "")
            #expect(batch.count == 4)
            #expect(
                batch.operations == [
                    .put(key: Array("a".utf8), value: Array("1".utf8)),
                    .put(key: Array("a".utf8), value: Array("2".utf8)),
                    .delete(key: Array("gone".utf8)),
                    .put(key: [], value: [])
                ])
            try db.write(batch, sync: true)
            #expect(try db.get("a", as: String.self) == "2")
            #expect(try db.get("gone") == nil)
            #expect(try db.get("") == [])
        }
    }

    @Test func clearAndAppend() throws {
        let a = WriteBatch(), b = WriteBatch()
        a.put("x", "1")
        a.clear()
        #expect(a.count == 0 && a.operations.isEmpty)
        a.put("x", "1")
        b.delete("y")
        a.append(b)
        #expect(a.count == 2)
        #expect(a.operations == [.put(key: Array("x".utf8), value: Array("1".utf8)), .delete(key: Array("y".utf8))])
    }

    @Test func aThrowingBatchBodyWritesNothing() throws {
        struct Stop: Error {}
        try withTemporaryDatabase { db, _ throws in
            #expect(throws: Stop.self) {
                try db.write { batch in
                    batch.put("a", "1")
                    throw Stop()
                }
            }
            #expect(try db.get("a") == nil)
        }
    }

    /// A reader never sees half a batch: every batch sets all keys to the same round number.
    @Test func readersSeeAllOfABatchOrNoneOfIt() throws {
        try withTemporaryDatabase { db, _ throws in
            let keys = (0..<20).map { "k\($0)" }
            try db.write { b in for k in keys { b.put(k, "0") } }
            let done = ManagedAtomicFlag()
            let writer = Thread {
                for round in 1...300 {
                    try? db.write { b in for k in keys { b.put(k, "\(round)") } }
                }
                done.set()
            }
            writer.start()
            var checks = 0
            while !done.isSet || checks == 0 {
                let snapshot = try db.snapshot()
                let values = try Set(keys.map { try snapshot.get($0, as: String.self) })
                #expect(values.count == 1, "a snapshot saw a partial batch: \(values)")
                let scanned = try Set(db.entries(.prefix("k")).collect().map(\.value))
                #expect(scanned.count == 1, "an iterator saw a partial batch")
                checks += 1
            }
            #expect(try db.get("k0", as: String.self) == "300")
        }
    }
}
