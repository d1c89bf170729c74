import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@testable import KVDocsEtcd

/// What happens to an ``EtcdKeyValueStore`` when its cluster discards history, fills its quota or
/// loses members: each on a cluster of the test's own (``PrivateEtcdCluster``).
@Suite(.requires(.etcd)) struct EtcdResilienceTests {
    @Test func aCompactedSnapshotSaysSoAndANewOneReads() throws {
        let cluster = try PrivateEtcdCluster(members: 1)
        let etcd = try EtcdKeyValueStore(endpoints: cluster.endpoints, root: "compaction")
        defer { etcd.close() }
        let batch = WriteBatch()
        batch.put([1], [1])
        try etcd.write(batch, sync: false)
        let snapshot = try etcd.snapshotReader()
        batch.clear()
        batch.put([1], [2])
        try etcd.write(batch, sync: false)
        #expect(try snapshot.value(forKey: [1]) == [1])
        try etcd.compactHistory(through: try etcd.currentRevision())
        let error = expectError(.compacted) { try snapshot.value(forKey: [1]) }
        let revision = (snapshot as? EtcdSnapshot)?.revision ?? -1
        #expect(
            error?.message.hasPrefix("the snapshot at etcd revision \(revision) was compacted") == true
                && error?.message.hasSuffix("read again from a new snapshot") == true, "\(String(describing: error))")
        expectError(.compacted) { try entries(snapshot.scan(.all, order: .forward)) }
        #expect(try etcd.snapshotReader().value(forKey: [1]) == [2])
        // A document read whose snapshot is compacted says so too.
        let store = try DocumentStore(
            store: etcd, schema: try DocumentSchema(json: Data(#"{"collections": {"c": {}}}"#.utf8)))
        try store.collection("c").insert(["id": 1])
        #expect(try store.collection("c").count() == 1)
    }

    @Test func aFullQuotaRefusesWritesNamingTheAlarmAndReadsGoOn() throws {
        let cluster = try PrivateEtcdCluster(members: 1, quotaBytes: 8 << 20)
        let etcd = try EtcdKeyValueStore(endpoints: cluster.endpoints, root: "quota")
        defer { etcd.close() }
        var refused: KVDocsError?
        var written = 0
        for i in 0..<60 {
            let batch = WriteBatch()
            batch.put([UInt8(i)], [UInt8](repeating: UInt8(i), count: 512 << 10))
            do {
                try etcd.write(batch, sync: false)
                written += 1
            } catch let error as KVDocsError {
                refused = error
                break
            }
        }
        #expect(refused?.kind == .limitExceeded, "\(String(describing: refused))")
        #expect(
            refused?.message.contains("alarm NOSPACE") == true
                && refused?.message.contains("etcdctl alarm disarm") == true)
        #expect(written > 3 && written < 60)
        #expect(try etcd.value(forKey: [0])?.count == 512 << 10)
        // The put that crossed the quota may have been applied before etcd raised the alarm
        // and refused it; every one acknowledged is there.
        let count = try etcd.count(.all)
        #expect(count == written || count == written + 1, "\(count) keys, \(written) acknowledged")
        #expect(try (0..<written).allSatisfy { try etcd.value(forKey: [UInt8($0)]) != nil })
    }

    @Test func writesGoOnWithAQuorumStopWithoutOneAndResumeWhenItReturns() throws {
        let cluster = try PrivateEtcdCluster(members: 3)
        let etcd = try EtcdKeyValueStore(
            endpoints: cluster.endpoints, root: "members", options: .init(maxTxnOps: 4096, requestTimeout: .seconds(3)))
        defer { etcd.close() }
        let store = try DocumentStore(
            store: etcd, schema: try DocumentSchema(json: Data(#"{"collections": {"c": {}}}"#.utf8)))
        let c = try store.collection("c")
        var acknowledged: [Int64] = []
        for i in 0..<10 {
            try c.insert(["id": .int(Int64(i))])
            acknowledged.append(Int64(i))
        }
        // One of three gone (the first endpoint, which the store was using): the others go on.
        try cluster.kill(1)
        for i in 10..<20 {
            try c.insert(["id": .int(Int64(i))])
            acknowledged.append(Int64(i))
        }
        // Two of three gone: no quorum, so a write is a clear error, not a hang.
        try cluster.kill(2)
        let error = expectError(.unavailable) { try c.insert(["id": 100]) }
        #expect(
            error.map { $0.message.contains("unknown") || $0.message.contains("unavailable") } == true,
            "\(String(describing: error))")
        try cluster.restart(1)
        try cluster.restart(2)
        // Writes resume once the members are back (a leader is elected within seconds).
        var resumed = false
        for attempt in 0..<40 {
            do {
                try c.upsert(["id": .int(Int64(200 + attempt))])
                acknowledged.append(Int64(200 + attempt))
                resumed = true
                break
            } catch let e as KVDocsError where e.kind == .unavailable {
                Thread.sleep(forTimeInterval: 0.5)
            }
        }
        #expect(resumed)
        // Nothing acknowledged was lost; the write whose outcome was unknown may be there or not.
        let ids = try c.find(DocumentQuery().orderBy("id")).compactMap { doc -> Int64? in
            if case .int(let n)? = doc["id"] { return n }
            return nil
        }
        #expect(Set(acknowledged).isSubset(of: Set(ids)), "\(ids)")
        #expect(Set(ids).subtracting(acknowledged).isSubset(of: [100]))
        #expect(try store.verify().isClean)
    }
}
