import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@testable import KVDocsEtcd

/// A store on the tests' cluster under a root of its own, removed at the end.
func withEtcdStore<R>(
    options: EtcdKeyValueStore.Options = EtcdKeyValueStore.Options(maxTxnOps: 4096),
    _ body: (EtcdKeyValueStore) throws -> R
) throws -> R {
    let store = try EtcdKeyValueStore(
        endpoints: Reference.etcdEndpoints, root: "test-\(UUID().uuidString)", options: options)
    defer {
        _ = try? store.removeAll()
        store.close()
    }
    return try body(store)
}

/// Every entry a cursor yields.
func entries(_ cursor: any KeyValueCursor) throws -> [[UInt8]] {
    var out: [[UInt8]] = []
    while let pair = try cursor.next({ key, value in [Array(key), Array(value)] }) { out.append(contentsOf: pair) }
    return out
}

/// Every suite that uses the tests' etcd cluster, one test at a time (what would disturb
/// others, compaction, a full quota, killed members, runs on a cluster of its own:
/// ``EtcdResilienceTests``).
@Suite(.serialized, .requires(.etcd)) struct EtcdClusterTests {}

extension EtcdClusterTests {
    /// ``EtcdKeyValueStore`` on a real three-member cluster against LevelDB, operation for operation.
    @Suite struct EtcdStoreTests {
        /// Keys from a small alphabet with the bytes that matter to ranges: 0x00 and 0xFF.
        static func key(_ random: inout SplitMix64) -> [UInt8] {
            let alphabet: [UInt8] = [0x00, 0x01, 0x61, 0x62, 0xFF]
            return (0..<Int(random.next() % 4)).map { _ in alphabet[Int(random.next() % 5)] }
        }

        static func bound(_ random: inout SplitMix64) -> KeyRange.Bound? {
            switch random.next() % 3 {
            case 0: nil
            case 1: .included(key(&random))
            default: .excluded(key(&random))
            }
        }

        @Test(arguments: [1 as UInt64, 2])
        func readsAndBatchesAnswerAsLevelDBDoesPageByPage(seed: UInt64) throws {
            try withTemporaryDatabase { db, _ throws in
                // Pages of 3 keys, so that nearly every scan reads several.
                try withEtcdStore(options: .init(maxTxnOps: 4096, pageSize: 3)) { etcd throws in
                    var random = SplitMix64(seed: seed)
                    var snapshots: [(any SnapshotReader, any SnapshotReader)] = []
                    for round in 0..<12 {
                        let batch = WriteBatch()
                        for _ in 0..<(1 + random.next() % 12) {
                            let k = Self.key(&random)
                            if random.next() % 4 == 0 {
                                batch.delete(k)
                            } else {
                                batch.put(
                                    k,
                                    [UInt8](repeating: UInt8(truncatingIfNeeded: round), count: Int(random.next() % 5)))
                            }
                        }
                        try db.write(batch, sync: false)
                        try etcd.write(batch, sync: false)
                        if round % 4 == 1 { snapshots.append((try db.snapshotReader(), try etcd.snapshotReader())) }
                        let readers: [(any KeyValueReader, any KeyValueReader)] =
                            [(db, etcd)] + snapshots.map { ($0.0, $0.1) }
                        for (level, remote) in readers {
                            for _ in 0..<8 {
                                let range = KeyRange(lower: Self.bound(&random), upper: Self.bound(&random))
                                for order in [ScanOrder.forward, .reverse] {
                                    #expect(
                                        try entries(remote.scan(range, order: order))
                                            == entries(level.scan(range, order: order)), "\(range) \(order)")
                                }
                                #expect(try remote.count(range) == level.count(range), "count \(range)")
                                let k = Self.key(&random)
                                #expect(try remote.value(forKey: k) == level.value(forKey: k))
                                let keys = (0..<Int(random.next() % 7)).map { _ in Self.key(&random) }
                                #expect(try remote.values(forKeys: keys) == level.values(forKeys: keys), "\(keys)")
                            }
                        }
                    }
                    for (level, remote) in snapshots {
                        level.release()
                        remote.release()
                    }
                    #expect(throws: KVDocsError.self) { try snapshots[0].1.value(forKey: []) }
                }
            }
        }

        @Test func manyKeysAreReadInOneRequestPerTransactionBoundAndCheckedInsideAWrite() throws {
            try withEtcdStore(options: .init(maxTxnOps: 8)) { etcd throws in
                for part in [0..<10, 10..<20] {
                    let batch = WriteBatch()
                    for i in part where i % 3 != 0 { batch.put([UInt8(i)], [UInt8(i), 1]) }
                    try etcd.write(batch, sync: true)
                }
                let keys = (0..<20).reversed().map { [UInt8($0)] }
                let expected = keys.map { $0[0] % 3 == 0 ? nil : [$0[0], 1] as [UInt8]? }
                let before = etcd.connection.requests.withLock { $0 }
                #expect(try etcd.values(forKeys: keys) == expected)
                #expect(etcd.connection.requests.withLock { $0 } - before == 3)  // 8 + 8 + 4 keys
                let snapshot = try etcd.snapshotReader()
                let batch = WriteBatch()
                batch.put([1], [9])
                try etcd.write(batch, sync: true)
                #expect(try snapshot.values(forKeys: keys) == expected)
                // Inside a write, the keys read are compared: another writer's change to one
                // of them makes the commit conflict, writing nothing.
                let other = try EtcdKeyValueStore(
                    endpoints: Reference.etcdEndpoints, root: etcd.root, options: .init(maxTxnOps: 8))
                defer { other.close() }
                let error = expectError(.conflict) {
                    try etcd.withWriteTransaction {
                        _ = try etcd.values(forKeys: [[2], [4], [30]])
                        let change = WriteBatch()
                        change.put([30], [1])
                        try other.write(change, sync: true)
                        let mine = WriteBatch()
                        mine.put([5], [5])
                        try etcd.write(mine, sync: true)
                    }
                }
                #expect(error?.isRetryable == true)
                #expect(try etcd.value(forKey: [5]) == [5, 1])
            }
        }

        @Test func readsAtAKnownRevisionAskOneMemberAndFallBackWhenItHasNotAppliedIt() throws {
            try withEtcdStore { etcd throws in
                let batch = WriteBatch()
                batch.put([1], [10])
                try etcd.write(batch, sync: true)
                let snapshot = try etcd.snapshotReader()
                batch.put([1], [11])
                try etcd.write(batch, sync: true)
                var before = etcd.connection.requests.withLock { $0 }
                #expect(try snapshot.value(forKey: [1]) == [10])
                #expect(etcd.connection.requests.withLock { $0 } - before == 1)
                // A revision no member has applied: "future revision" from the member, then
                // from the quorum, which is the error.
                let future = EtcdSnapshot(store: etcd, revision: try etcd.currentRevision() + 1_000_000)
                before = etcd.connection.requests.withLock { $0 }
                let error = #expect(throws: KVDocsError.self) { try future.value(forKey: [1]) }
                #expect(error?.message.contains("future revision") == true, "\(String(describing: error))")
                #expect(etcd.connection.requests.withLock { $0 } - before == 2)
            }
        }

        @Test func aReverseScanOfManyKeysGrowsItsPagesAndMissesNone() throws {
            try withEtcdStore { etcd throws in
                let batch = WriteBatch()
                for i in 0..<3000 { batch.put(Array(String(format: "k%05d", i).utf8), [UInt8(i % 256)]) }
                try etcd.write(batch, sync: false)
                let keys = try entries(etcd.scan(.all, order: .reverse)).enumerated().filter { $0.offset % 2 == 0 }.map(
                    \.element)
                #expect(keys == (0..<3000).reversed().map { Array(String(format: "k%05d", $0).utf8) })
                #expect(try etcd.count(.all) == 3000)
                #expect(try etcd.removeAll() == 3000)
                #expect(try etcd.count(.all) == 0)
            }
        }

        @Test func aBatchTooLargeForOneTransactionIsRefusedBeforeItIsSent() throws {
            try withEtcdStore(options: .init(maxTxnOps: 128)) { etcd throws in
                // The batch and the store's writer key: one operation more than the batch.
                let batch = WriteBatch()
                for i in 0..<128 { batch.put([UInt8(i)], [1]) }
                let error = expectError(.limitExceeded) { try etcd.write(batch, sync: false) }
                #expect(
                    error?.message
                        == "the write needs 129 operations in one etcd transaction; the cluster allows 128 (--max-txn-ops; EtcdKeyValueStore.Options.maxTxnOps)"
                )
                #expect(try etcd.count(.all) == 0)
                // Collapsed first: a key written twice and deleted counts once.
                let collapsed = WriteBatch()
                for i in 0..<127 { collapsed.put([UInt8(i)], [1]) }
                collapsed.delete([0])
                collapsed.put([1], [2])
                try etcd.write(collapsed, sync: false)
                #expect(try etcd.count(.all) == 126)
                #expect(try etcd.value(forKey: [0]) == nil && etcd.value(forKey: [1]) == [2])
                // 1.6 MiB in one request.
                let big = WriteBatch()
                big.put([0xAA], [UInt8](repeating: 7, count: 1_600_000))
                let tooBig = expectError(.limitExceeded) { try etcd.write(big, sync: false) }
                #expect(
                    tooBig?.message.contains("etcd takes requests up to 1.50 MiB (1572864 bytes) (--max-request-bytes")
                        == true)
                #expect(try etcd.value(forKey: [0xAA]) == nil)
            }
        }

        @Test func limitsSetAboveTheClustersAreRefusedByItWithTheSameKind() throws {
            // The tests' cluster allows 4096 operations; options that claim more let the
            // cluster refuse, and its refusal is the same kind.
            try withEtcdStore(options: .init(maxTxnOps: 10_000)) { etcd throws in
                let batch = WriteBatch()
                for i in 0..<4097 { batch.put(Array(String(i).utf8), [1]) }
                let error = expectError(.limitExceeded) { try etcd.write(batch, sync: false) }
                #expect(
                    error?.message.contains("too many operations in txn request") == true,
                    "\(String(describing: error))")
                #expect(try etcd.count(.all) == 0)
            }
        }

        @Test(arguments: [EtcdConnection.WriteFault.answerLost, .requestLost])
        func aWriteWhoseAnswerIsLostIsToldAppliedOrRunAgainOnce(fault: EtcdConnection.WriteFault) throws {
            try withEtcdStore { etcd throws in
                let store = try DocumentStore(
                    store: etcd, schema: try DocumentSchema(json: Data(#"{"collections": {"c": {}}}"#.utf8)))
                let c = try store.collection("c")
                try c.insert(["id": 1])
                etcd.connection.nextWriteFault.withLock { $0 = fault }
                let change = try c.insert(["id": 2, "v": "lost"])
                #expect(change.sequence == 2)
                try c.insert(["id": 3])
                #expect(try c.find(DocumentQuery().orderBy("id")).map { $0["id"] } == [1, 2, 3])
                #expect(try store.changes(since: 0).map(\.sequence) == [1, 2, 3])
                #expect(try store.verify().isClean)
                // A plain write too: applied, or refused as a conflict to run again.
                etcd.connection.nextWriteFault.withLock { $0 = fault }
                let batch = WriteBatch()
                batch.put([9], [9])
                if fault == .answerLost {
                    try etcd.write(batch, sync: false)
                    #expect(try etcd.value(forKey: [9]) == [9])
                } else {
                    let error = expectError(.conflict) { try etcd.write(batch, sync: false) }
                    #expect(error?.isRetryable == true && error?.message.contains("not applied") == true)
                    #expect(try etcd.value(forKey: [9]) == nil)
                }
            }
        }

        @Test func anEndpointThatIsDownIsPassedOverAndNoneUpIsUnavailable() throws {
            let live = Reference.etcdEndpoints
            let store = try EtcdKeyValueStore(
                endpoints: ["http://127.0.0.1:1"] + live, root: "test-\(UUID().uuidString)")
            defer { store.close() }
            let batch = WriteBatch()
            batch.put([1], [2])
            try store.write(batch, sync: false)
            #expect(try store.value(forKey: [1]) == [2])
            try store.removeAll()
            let down = try EtcdKeyValueStore(endpoints: ["http://127.0.0.1:1", "http://127.0.0.1:2"], root: "x")
            defer { down.close() }
            let error = expectError(.unavailable) { try down.value(forKey: [1]) }
            #expect(error?.message.contains("http://127.0.0.1:2") == true, "\(String(describing: error))")
            store.close()
            expectError(.closed) { try store.value(forKey: [1]) }
        }
    }
}
