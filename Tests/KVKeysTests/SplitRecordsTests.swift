import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@Suite struct RecordStoreTests {
    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var rng = SplitMix64(seed: seed)
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    /// The keys the store wrote under one record, as chunk numbers.
    static func chunkNumbers(_ db: LevelDB, _ store: SplitRecords, _ key: Tuple) throws -> [Int] {
        try db.entries(store.subspace.subspace(key).range).collect().map { entry in
            let tuple = try Tuple(decoding: entry.key)
            return try tuple.int(at: tuple.count - 1)
        }
    }

    @Test(arguments: [0, 1, 99, 100, 101, 250, 1000])
    func valuesAtBelowAndAboveTheThresholdRoundTrip(size: Int) throws {
        try withTemporaryDatabase { db, _ throws in
            let store = try SplitRecords(database: db, subspace: Subspace(["blob"]), splitThreshold: 100)
            let value = Self.bytes(size, seed: UInt64(size))
            try store.put(["r", 1], value)
            #expect(try store.get(["r", 1]) == value)
            let expectedChunks = size <= 100 ? [0] : Array(1...((size + 99) / 100))
            #expect(try Self.chunkNumbers(db, store, ["r", 1]) == expectedChunks)
            var streamed: [[UInt8]] = []
            #expect(try store.read(["r", 1]) { streamed.append(Array($0)) })
            #expect(streamed.flatMap { $0 } == value)
            #expect(streamed.allSatisfy { $0.count <= 100 })
        }
    }

    @Test func defaultThresholdIs100KB() throws {
        try withTemporaryDatabase { db, _ throws in
            let store = try SplitRecords(database: db, subspace: Subspace(["b"]))
            #expect(store.splitThreshold == 100_000)
            let big = Self.bytes(1_000_001, seed: 3)
            try store.put(["big"], big)
            #expect(try Self.chunkNumbers(db, store, ["big"]) == Array(1...11))
            #expect(try store.get(["big"]) == big)
        }
    }

    @Test func overwritingLargeWithSmallLeavesNoStaleChunks() throws {
        try withTemporaryDatabase { db, _ throws in
            let store = try SplitRecords(database: db, subspace: Subspace(["blob"]), splitThreshold: 10)
            try store.put(["k"], Self.bytes(95, seed: 1))
            #expect(try Self.chunkNumbers(db, store, ["k"]).count == 10)
            try store.put(["k"], Self.bytes(25, seed: 2))
            #expect(try Self.chunkNumbers(db, store, ["k"]) == [1, 2, 3])
            try store.put(["k"], [1, 2, 3])
            #expect(try Self.chunkNumbers(db, store, ["k"]) == [0])
            #expect(try store.get(["k"]) == [1, 2, 3])
            try store.put(["k"], Self.bytes(30, seed: 4))
            #expect(try Self.chunkNumbers(db, store, ["k"]) == [1, 2, 3])
            try store.delete(["k"])
            #expect(try db.entries(store.subspace.range).collect().isEmpty)
            #expect(try store.get(["k"]) == nil)
            try store.delete(["k"])  // deleting a missing record is fine
        }
    }

    @Test func recordsWhoseKeysExtendOthersStaySeparate() throws {
        try withTemporaryDatabase { db, _ throws in
            let store = try SplitRecords(database: db, subspace: Subspace(["blob"]), splitThreshold: 4)
            try store.put(["a"], Self.bytes(10, seed: 1))
            try store.put(["a", 5], [9])
            try store.put(["a", "x"], Self.bytes(9, seed: 2))
            try store.put(["a"], [1])  // must not delete the other records' keys
            #expect(try store.get(["a"]) == [1])
            #expect(try store.get(["a", 5]) == [9])
            #expect(try store.get(["a", "x"]) == Self.bytes(9, seed: 2))
            // tuple order: strings (0x02) before integers (0x14)
            #expect(try store.keys() == [["a"], ["a", "x"], ["a", 5]])
        }
    }

    @Test func aMissingChunkIsReportedAsCorruption() throws {
        try withTemporaryDatabase { db, _ throws in
            let store = try SplitRecords(database: db, subspace: Subspace(["blob"]), splitThreshold: 10)
            try store.put(["k"], Self.bytes(50, seed: 1))
            try db.delete(store.subspace.pack(["k", 3]))
            var delivered = 0
            do {
                try store.read(["k"]) { delivered += $0.count }
                Issue.record("read a record with a gap")
            } catch let error as KVDocsError {
                #expect(error.kind == .corruption)
                #expect(error.message.contains("found chunk 4 where chunk 3 was expected"))
            }
            #expect(delivered == 20)
        }
    }

    @Test func readersNeverSeeAMixOfTwoVersions() throws {
        try withTemporaryDatabase { db, _ throws in
            let store = try SplitRecords(database: db, subspace: Subspace(["blob"]), splitThreshold: 64)
            let versions = (0..<6).map { [UInt8](repeating: UInt8($0), count: 64 * (1 + $0 % 3) + $0) }
            try store.put(["k"], versions[0])
            let done = ManagedAtomicFlag()
            let writer = Thread {
                for round in 0..<300 { try? store.put(["k"], versions[round % versions.count]) }
                done.set()
            }
            writer.start()
            var reads = 0
            while !done.isSet || reads == 0 {
                let value = try #require(try store.get(["k"]))
                #expect(versions.contains(value))
                reads += 1
            }
        }
    }

    @Test func invalidThresholdIsRejected() throws {
        try withTemporaryDatabase { db, _ throws in
            #expect(throws: KVDocsError.self) {
                _ = try SplitRecords(database: db, subspace: Subspace(), splitThreshold: 0)
            }
        }
    }
}
