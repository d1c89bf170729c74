import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

#if canImport(KVDocsEtcd)
import KVDocsEtcd
#endif

/// The storage a differential suite runs over: LevelDB, and etcd (``EtcdStore`` on the
/// tests' cluster) when the package is built with its networked half. The same
/// operations give the same answers, compared with the same reference, over both.
enum TestBackend: String, Sendable, CustomTestStringConvertible {
    case leveldb
    case etcd

    var testDescription: String { rawValue }

    /// LevelDB, and etcd when this build has KVDocsEtcd and a cluster answers at
    /// `KVDOCS_ETCD_ENDPOINTS` (scripts/test starts one); in CI etcd always, so that a
    /// missing cluster fails rather than skips.
    static var differential: [TestBackend] {
        #if canImport(KVDocsEtcd)
        return Reference.available.contains(.etcd) || Reference.isCI ? [.leveldb, .etcd] : [.leveldb]
        #else
        return [.leveldb]
        #endif
    }

    /// Runs `body` with a new, empty document store of this backend (over etcd, under a
    /// root of its own, removed afterwards).
    func withStore<R>(schema: Schema, _ body: (DocumentStore) throws -> R) throws -> R {
        switch self {
        case .leveldb:
            return try withTemporaryDatabase { db, _ throws in try body(try DocumentStore(database: db, schema: schema))
            }
        case .etcd:
            #if canImport(KVDocsEtcd)
            let store = try EtcdStore(
                endpoints: Reference.etcdEndpoints, root: "differential-\(UUID().uuidString)",
                options: EtcdStore.Options(maxTxnOps: 4096))
            defer {
                _ = try? store.removeAll()
                store.close()
            }
            return try body(try DocumentStore(store: store, schema: schema))
            #else
            throw KVDocsError(.unsupported, "this build has no KVDocsEtcd (KVDOCS_WITHOUT_SYNC)")
            #endif
        }
    }
}
