import Foundation
import KVDocs
import Testing

#if canImport(KVDocsEtcd)
import KVDocsEtcd
#endif

/// The storage a differential suite runs over: LevelDB; LevelDB read as over a network
/// (``RoundTripStore``); and etcd (``EtcdKeyValueStore`` on the tests' cluster) when the package is
/// built with its networked half. The same operations give the same answers, compared with
/// the same reference, over each.
package enum TestBackend: String, Sendable, CustomTestStringConvertible {
    case leveldb
    /// LevelDB behind a store that says its reads are round trips: the read-ahead paths
    /// meant for etcd, run over LevelDB in every environment.
    case roundTrips
    case etcd

    package var testDescription: String { rawValue }

    /// LevelDB both ways, and etcd when this build has KVDocsEtcd and a cluster answers at
    /// `KVDOCS_ETCD_ENDPOINTS` (scripts/test starts one); in CI etcd always, so that a
    /// missing cluster fails rather than skips.
    package static var differential: [TestBackend] {
        #if canImport(KVDocsEtcd)
        return Reference.available.contains(.etcd) || Reference.isCI
            ? [.leveldb, .roundTrips, .etcd] : [.leveldb, .roundTrips]
        #else
        return [.leveldb, .roundTrips]
        #endif
    }

    /// Runs `body` with a new, empty document store of this backend (over etcd, under a
    /// root of its own, removed afterwards).
    package func withStore<R>(schema: DocumentSchema, _ body: (DocumentStore) throws -> R) throws -> R {
        switch self {
        case .leveldb:
            return try withTemporaryDatabase { db, _ throws in
                try body(try DocumentStore(database: db, schema: schema))
            }
        case .roundTrips:
            return try withTemporaryDatabase { db, _ throws in
                try body(try DocumentStore(store: RoundTripStore(db), schema: schema))
            }
        case .etcd:
            #if canImport(KVDocsEtcd)
            let store = try EtcdKeyValueStore(
                endpoints: Reference.etcdEndpoints, root: "differential-\(UUID().uuidString)",
                options: EtcdKeyValueStore.Options(maxTxnOps: 4096))
            defer {
                _ = try? store.removeAll()
                store.close()
            }
            return try body(try DocumentStore(store: store, schema: schema))
            #else
            throw KVDocsError(.notSupported, "this build has no KVDocsEtcd (KVDOCS_WITHOUT_SYNC)")
            #endif
        }
    }
}

/// A LevelDB database behind the storage seam whose readers say that each read is a round
/// trip (``KeyValueReader/readsAreRoundTrips``), as etcd's do: queries, searches and geo
/// queries then read ahead and fetch documents many at a time, over LevelDB.
package final class RoundTripStore: KeyValueStore, @unchecked Sendable {
    // @unchecked Sendable: `database` is thread-safe and the only state.
    let database: LevelDB

    package init(_ database: LevelDB) { self.database = database }

    package var name: String { database.name }
    package var readsAreRoundTrips: Bool { true }
    package func value(forKey key: [UInt8]) throws -> [UInt8]? { try database.value(forKey: key) }
    package func scan(_ range: KeyRange, order: ScanOrder) throws -> any KeyValueCursor {
        try database.scan(range, order: order)
    }
    package func count(_ range: KeyRange) throws -> Int { try database.count(range) }
    package func write(_ batch: WriteBatch, sync: Bool) throws { try database.write(batch, sync: sync) }
    package func snapshotReader() throws -> any SnapshotReader { RoundTripSnapshot(try database.snapshotReader()) }
    package func withWriterLock<R>(_ body: () throws -> R) rethrows -> R { try database.withWriterLock(body) }
    package func withWriteTransaction<R>(_ body: () throws -> R) throws -> R { try database.withWriteTransaction(body) }
}

/// A snapshot of a ``RoundTripStore``: LevelDB's, saying its reads are round trips.
package final class RoundTripSnapshot: SnapshotReader {
    let base: any SnapshotReader

    package init(_ base: any SnapshotReader) { self.base = base }

    package var name: String { base.name }
    package var readsAreRoundTrips: Bool { true }
    package func value(forKey key: [UInt8]) throws -> [UInt8]? { try base.value(forKey: key) }
    package func scan(_ range: KeyRange, order: ScanOrder) throws -> any KeyValueCursor {
        try base.scan(range, order: order)
    }
    package func count(_ range: KeyRange) throws -> Int { try base.count(range) }
    package func release() { base.release() }
}
