import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@Suite struct MaintenanceTests {
    @Test func propertiesReportLevelDBState() throws {
        try withTemporaryDatabase { db, _ throws in
            for i in 0..<5000 { try db.put(String(format: "key%06d", i), String(repeating: "v", count: 100)) }
            try db.compact()
            let stats = try #require(try db.property("leveldb.stats"))
            #expect(stats.contains("Compactions"))
            let sstables = try #require(try db.property("leveldb.sstables"))
            #expect(sstables.contains("level"))
            let filesPerLevel = try (0...6).map { try #require(try db.numberOfFiles(atLevel: $0)) }
            #expect(filesPerLevel.reduce(0, +) > 0)
            #expect(try db.approximateMemoryUsage() ?? 0 > 0)
            #expect(try db.property("leveldb.no-such-property") == nil)
        }
    }

    @Test func approximateSizesGrowWithTheRangeAndCompactionRemovesDeletedData() throws {
        var options = LevelDBOptions()
        options.compression = .none
        try withTemporaryDatabase(options: options) { db, _ throws in
            for i in 0..<20_000 { try db.put(String(format: "key%06d", i), String(repeating: "v", count: 100)) }
            try db.compact()
            let all = try db.approximateSize()
            let half = try db.approximateSize(of: KeyRange(from: "key000000", to: "key010000"))
            let none = try db.approximateSize(of: .prefix("zzz"))
            #expect(all > 1_500_000)
            #expect(half > all / 4 && half < all * 3 / 4)
            #expect(none == 0)
            let sizes = try db.approximateSizes(of: [.prefix("key00"), .prefix("key01")])
            #expect(sizes.count == 2 && sizes.allSatisfy { $0 > 0 })
            #expect(try db.approximateSizes(of: []) == [])

            for i in 0..<20_000 { try db.delete(String(format: "key%06d", i)) }
            try db.compact(KeyRange(from: "key", to: "kez"))
            #expect(try db.approximateSize() < all / 10)
            #expect(try db.entries().collect().isEmpty)
        }
    }
}

@Suite struct ConcurrencyTests {
    @Test func manyThreadsWriteAndReadOneDatabase() throws {
        try withTemporaryDatabase { db, _ throws in
            let threads = 8, perThread = 500
            DispatchQueue.concurrentPerform(iterations: threads) { t in
                for i in 0..<perThread {
                    try? db.put("t\(t):\(i)", "\(t * perThread + i)")
                    _ = try? db.get("t\(t):\(i / 2)")
                    if i % 50 == 0 { _ = try? db.entries(.prefix("t\(t):"), limit: 10).collect() }
                }
            }
            #expect(try db.entries().collect().count == threads * perThread)
            for t in 0..<threads {
                #expect(try db.get("t\(t):\(perThread - 1)", as: String.self) == "\(t * perThread + perThread - 1)")
            }
        }
    }

    @Test func closingWhileOtherThreadsReadNeverCrashes() throws {
        let dir = TemporaryDirectory()
        let db = try LevelDB(path: dir.child("db"))
        for i in 0..<1000 { try db.put("k\(i)", "v\(i)") }
        let unexpected = ManagedAtomicFlag()
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            if worker == 0 {
                usleep(5_000)
                db.close()
                return
            }
            for _ in 0..<200 {
                do {
                    _ = try db.get("k1")
                    _ = try db.entries(limit: 100).collect()
                } catch let error as KVDocsError where error.kind == .closed {
                    return
                } catch {
                    unexpected.set()
                }
            }
        }
        #expect(!unexpected.isSet)
        #expect(db.isClosed)
    }
}
