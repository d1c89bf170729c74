import KVStorage
import KVSupport

/// A reader of an ``EtcdKeyValueStore`` at one revision of the cluster.
///
/// **Invariants.** Every read names the snapshot's ``revision``, so every read sees the
/// same state, whatever is written since. Nothing is held on the server: when the cluster
/// compacts its history past the revision, reads throw `.compacted` (read again from a new
/// snapshot). After ``release()``, reads throw `.closed`.
public final class EtcdSnapshot: SnapshotReader, Sendable {
    /// The store read.
    public let store: EtcdKeyValueStore
    /// The cluster's revision the snapshot reads.
    public let revision: Int64
    private let released = Locked(false)

    init(store: EtcdKeyValueStore, revision: Int64) {
        self.store = store
        self.revision = revision
    }

    /// Every read is a request to the cluster.
    public var readsAreRoundTrips: Bool { true }

    /// The store's name and the revision.
    public var name: String { "\(store.name) at revision \(revision)" }

    /// The value under `key` at the snapshot's revision.
    /// - Throws: `.compacted` when the cluster has discarded the revision, `.closed` after
    ///   ``release()``, and as ``EtcdKeyValueStore/value(forKey:)``.
    public func value(forKey key: [UInt8]) throws -> [UInt8]? {
        try reading { try store.value(forKey: key, revision: revision) }
    }

    /// The values under `keys` at the snapshot's revision, read together
    /// (``EtcdKeyValueStore/values(forKeys:)``).
    public func values(forKeys keys: [[UInt8]]) throws -> [[UInt8]?] {
        try reading { try store.values(forKeys: keys, revision: revision).values.map(\.value) }
    }

    /// A cursor over `range` at the snapshot's revision.
    public func scan(_ range: KeyRange, order: ScanOrder) throws -> any KeyValueCursor {
        try reading {
            SnapshotCursor(snapshot: self, base: try store.scan(range, order: order, revision: revision))
        }
    }

    /// The number of keys in `range` at the snapshot's revision.
    public func count(_ range: KeyRange) throws -> Int {
        try reading { try store.count(range, revision: revision) }
    }

    /// Ends the snapshot: later reads throw `.closed`.
    public func release() { released.withLock { $0 = true } }

    /// Runs a read, refusing it after ``release()`` and saying which snapshot was compacted.
    func reading<R>(_ body: () throws -> R) throws -> R {
        if released.withLock({ $0 }) {
            throw KVDocsError(.closed, "the snapshot at etcd revision \(revision) is released", path: store.name)
        }
        do {
            return try body()
        } catch let error as KVDocsError where error.kind == .compacted {
            throw KVDocsError(
                .compacted,
                "the snapshot at etcd revision \(revision) was compacted (\(error.message)): read again from a new snapshot",
                path: store.name)
        }
    }

    /// A cursor whose pages are read through the snapshot's checks.
    private final class SnapshotCursor: KeyValueCursor {
        let snapshot: EtcdSnapshot
        let base: any KeyValueCursor
        init(snapshot: EtcdSnapshot, base: any KeyValueCursor) {
            self.snapshot = snapshot
            self.base = base
        }
        func next<R>(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> R) throws -> R? {
            try snapshot.reading { try base.next(body) }
        }
    }
}
