import Foundation
import KVKeys
import KVStorage
import KVSupport
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The storage seam (`KeyValueStore`) over an etcd cluster: what `DocumentStore` and the
/// text and geo layers read and write when the data lives on several machines.
///
/// ```swift
/// let etcd = try EtcdKeyValueStore(endpoints: ["http://127.0.0.1:23791"], root: "shop")
/// let store = try DocumentStore(store: etcd, schema: schema)
/// ```
///
/// **Keys.** Every key `k` of the store is etcd's key `P + k`, where `P` is the tuple
/// `("kvdocs", root)` packed: no root's keys are a prefix of another's, and no key is empty.
/// etcd orders keys bytewise, as LevelDB does, so scans and the tuple layer keep their order.
///
/// **Reads.** A point read is one Range request; a scan reads pages of
/// ``Options/pageSize`` keys (backwards, pages that grow from 64 to 16,384 keys, since etcd
/// sorts a descending range on the server), every page at the revision of the first, so a
/// scan sees one state even while others write. Reads of the store are linearizable: they
/// see every write acknowledged before them, by any process. A snapshot
/// (``snapshotReader()``) is a revision: its reads name it, and nothing is held on the
/// server, so the cluster's compaction can discard it: its reads then throw `.compacted`.
///
/// **Writes.** ``write(_:sync:)`` applies a batch as one etcd transaction: all of it or
/// nothing, at one revision, durable on a quorum of members when it returns (`sync` adds
/// nothing). The batch is collapsed first (its last operation on each key wins, as when
/// LevelDB applies it in order), and a batch that does not fit one transaction is refused
/// before anything is sent, with `.limitExceeded` naming the limit: ``Options/maxTxnOps``
/// operations, ``Options/maxRequestBytes`` bytes. A write is never split.
///
/// **Change streams.** A `DocumentStore` on the store delivers to its change streams and
/// observations the changes of every writer, this process's and the others', in sequence
/// order and each once: it follows the change feed with etcd's watch (``watch(prefix:onChange:)``).
///
/// **Other writers.** Any number of processes, on any machines, may write one store. The
/// writer lock (``withWriterLock(_:)``) excludes the writers of this process only; the others
/// are excluded optimistically. Inside ``withWriteTransaction(_:)``, the store's own reads on
/// that thread read one revision and are recorded (each key with the revision of its last
/// change, each range scanned), and each ``write(_:sync:)`` is one etcd transaction that
/// compares them all: when another writer changed anything the transaction read, nothing is
/// written and the write throws a retryable `.conflict`
/// (`KVDocsError/writeConflict(_:path:key:)`). ``transact(attempts:_:)`` then runs the
/// body again on the new state, with a random pause that doubles from 1 ms to 64 ms. A
/// document write reads its document, its unique index entries, the sequence counter and the
/// catalog's generation, so two processes never both insert one unique value, sequence
/// numbers stay unique and without gaps, and a schema change by one is seen by the others'
/// next writes.
///
/// Thread-safe. Blocking: call it from threads, not from an event loop of SwiftNIO.
public final class EtcdKeyValueStore: WatchableKeyValueStore, @unchecked Sendable {
    // @unchecked Sendable: the mutable state is in a `Locked` or the `WriterLock`; the rest
    // is immutable.

    /// The cluster's limits, and how the store pages and waits.
    ///
    /// etcd does not report its limits over its API, so they must match the cluster's flags:
    /// the defaults are etcd's defaults. The project's cluster (`scripts/etcd-cluster`) runs
    /// `--max-txn-ops 4096`.
    public struct Options: Sendable, Hashable {
        /// The most operations in one transaction: etcd's `--max-txn-ops` (128 by default).
        public var maxTxnOps: Int
        /// The largest request, in bytes: etcd's `--max-request-bytes` (1.5 MiB by default).
        public var maxRequestBytes: Int
        /// How long a request may take before it fails.
        public var requestTimeout: Duration
        /// The keys read per page of a forward scan.
        public var pageSize: Int

        /// Options with etcd's default limits, a 10-second timeout and pages of 256 keys.
        public init(
            maxTxnOps: Int = 128, maxRequestBytes: Int = 1_572_864, requestTimeout: Duration = .seconds(10),
            pageSize: Int = 256
        ) {
            self.maxTxnOps = maxTxnOps
            self.maxRequestBytes = maxRequestBytes
            self.requestTimeout = requestTimeout
            self.pageSize = pageSize
        }
    }

    /// The name of the store within the cluster: its keys are under `("kvdocs", root)`.
    public let root: String
    /// The limits the store checks before it sends a write.
    public let options: Options
    let connection: EtcdConnection
    /// The etcd prefix of every key, and the first key after all of them.
    let prefix: [UInt8]
    let prefixEnd: [UInt8]
    private let closed = Locked(false)
    private let writerLock = WriterLock()
    /// The session of the thread inside ``withWriteTransaction(_:)``, if any.
    private let sessionSlot = Locked<SessionSlot?>(nil)
    private struct SessionSlot: @unchecked Sendable {
        // @unchecked Sendable: `session` is used by `thread` only; the slot is read under a lock.
        let thread: pthread_t
        let session: EtcdSession
    }
    /// How ``transact(attempts:_:)`` pauses between attempts.
    let retry = ConflictRetry()
    /// This store's writer key, outside the root's keys: every commit advances it, so that a
    /// commit whose answer was lost can be told applied or not (``resolveLostCommit``).
    let writerKey: [UInt8]
    /// The serial number of this store's last commit, and the revision of its writer key.
    private let writer = Locked<(serial: Int64, revision: Int64)>((0, 0))
    /// Held by each commit: a store's commits advance its writer key one at a time.
    private let committing = NSLock()

    /// A store named `root` on the etcd cluster at `endpoints`. Nothing is sent until the first
    /// read or write.
    /// - Parameters:
    ///   - endpoints: the client URLs of one or more members (`http://127.0.0.1:2379`).
    ///   - root: the store's name (not empty, no NUL); stores with other roots share the
    ///     cluster and never see each other's keys.
    ///   - options: the cluster's limits (they must match its flags), timeouts and paging.
    /// - Throws: `.invalidArgument` for no endpoint, an endpoint that is not a URL, an empty
    ///   root, or options below 1.
    public init(endpoints: [String], root: String, options: Options = Options()) throws {
        // A NUL would make one root's prefix a prefix of another's: the tuple encoding
        // writes "a\0b" as "a", 0x00, 0xFF, "b", 0x00, which starts with the encoding of "a".
        guard !root.isEmpty, !root.unicodeScalars.contains("\u{0}") else {
            throw KVDocsError(
                .invalidArgument,
                "an etcd store's root must be a name without NUL characters, not \(JSONValue.string(root).compactDescription)"
            )
        }
        guard options.maxTxnOps >= 2, options.maxRequestBytes >= 1024, options.pageSize >= 1,
            options.requestTimeout > .zero
        else {
            throw KVDocsError(
                .invalidArgument,
                "EtcdKeyValueStore.Options: maxTxnOps must be at least 2, maxRequestBytes at least 1024, pageSize at least 1 and requestTimeout positive"
            )
        }
        let (seconds, attoseconds) = options.requestTimeout.components
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let timeout: TimeAmount =
            nanoseconds.overflow ? .hours(24) : .nanoseconds(nanoseconds.partialValue + attoseconds / 1_000_000_000)
        connection = try EtcdConnection(endpoints: endpoints, timeout: timeout)
        self.root = root
        self.options = options
        prefix = Tuple("kvdocs", root).encoded
        writerKey = Tuple("kvdocs-writers", root, UUID().uuidString).encoded
        // The tuple's last byte is the string's terminating 0x00, so the successor exists.
        prefixEnd = KeyRange.prefixSuccessor(prefix) ?? prefix + [0xFF]
    }

    deinit { connection.shutdown() }

    /// `etcd:ROOT@ENDPOINTS`, for messages.
    public var name: String { "etcd:\(root)@\(connection.description)" }

    /// Closes the store's connections. Later reads and writes throw `.closed`; closing again
    /// does nothing.
    public func close() {
        let first = closed.withLock { wasClosed -> Bool in
            defer { wasClosed = true }
            return !wasClosed
        }
        guard first else { return }
        // Best effort: a writer key left behind is a few bytes, outside the root's keys.
        _ = try? connection.call("/v3/kv/deleterange", ["key": .string(EtcdMessages.base64(writerKey))], write: true)
        connection.shutdown()
    }

    /// Throws `.closed` after ``close()``.
    func checkOpen() throws {
        if closed.withLock({ $0 }) { throw KVDocsError(.closed, "the etcd store \(name) is closed", path: name) }
    }

    // MARK: Keys

    /// etcd's key for `key`.
    func etcdKey(_ key: [UInt8]) -> [UInt8] { prefix + key }

    /// etcd's `[start, end)` for `range`.
    func etcdRange(_ range: KeyRange) -> (start: [UInt8], end: [UInt8]) {
        let start: [UInt8]
        switch range.lower {
        case nil: start = prefix
        case .included(let k)?: start = prefix + k
        case .excluded(let k)?: start = prefix + k + [0]
        }
        let end: [UInt8]
        switch range.upper {
        case nil: end = prefixEnd
        case .excluded(let k)?: end = prefix + k
        case .included(let k)?: end = prefix + k + [0]
        }
        return (start, end)
    }

    // MARK: Reads

    /// The value under `key` now.
    /// - Throws: `.closed`, `.unavailable`, and etcd's errors mapped.
    public func value(forKey key: [UInt8]) throws -> [UInt8]? {
        guard let session = currentSession() else { return try value(forKey: key, revision: 0) }
        try checkOpen()
        let etcdKey = etcdKey(key)
        let answer = try EtcdMessages.rangeResponse(
            try range(key: etcdKey, end: nil, revision: session.revision))
        if session.revision == 0 { session.revision = answer.revision }
        if session.checking { session.read(etcdKey, modRevision: answer.kvs.first?.modRevision ?? 0) }
        return answer.kvs.first?.value
    }

    /// Runs `body` with its reads, inside a write transaction, at the transaction's revision
    /// but not compared by its commits (see `KeyValueStore/withUncheckedReads(_:)`): a
    /// text index's segments, which only a writer that also changes the index's statistics or
    /// merge state (both read and compared) creates or deletes.
    public func withUncheckedReads<R>(_ body: () throws -> R) rethrows -> R {
        guard let session = currentSession() else { return try body() }
        let was = session.checking
        session.checking = false
        defer { session.checking = was }
        return try body()
    }

    /// Every read is a request to the cluster.
    public var readsAreRoundTrips: Bool { true }

    /// The values under `keys`, in their order, read together: one request per
    /// ``Options/maxTxnOps`` keys (a read-only transaction of point reads, at one revision).
    /// Inside a write transaction, at its revision, each key recorded as a point read.
    public func values(forKeys keys: [[UInt8]]) throws -> [[UInt8]?] {
        guard let session = currentSession() else { return try values(forKeys: keys, revision: 0).values.map(\.value) }
        try checkOpen()
        let (values, revision) = try values(forKeys: keys, revision: session.revision)
        if session.revision == 0 { session.revision = revision }
        if session.checking {
            for (key, value) in zip(keys, values) { session.read(etcdKey(key), modRevision: value.modRevision) }
        }
        return values.map(\.value)
    }

    /// The values under `keys` at `revision` (0: now), with their mod revisions, and the
    /// revision they were read at.
    func values(forKeys keys: [[UInt8]], revision: Int64) throws -> (
        values: [(value: [UInt8]?, modRevision: Int64)], revision: Int64
    ) {
        try checkOpen()
        var out: [(value: [UInt8]?, modRevision: Int64)] = []
        out.reserveCapacity(keys.count)
        var at = revision
        var start = 0
        while start < keys.count {
            let chunk = keys[start..<min(start + max(1, options.maxTxnOps), keys.count)].map { etcdKey($0) }
            func request(serializable: Bool) -> JSONValue {
                EtcdMessages.txnGets(chunk, revision: at, serializable: serializable)
            }
            let answer: JSONValue
            if at > 0 {
                do {
                    answer = try connection.call("/v3/kv/txn", request(serializable: true))
                } catch let error as KVDocsError where error.message.contains("future revision") {
                    answer = try connection.call("/v3/kv/txn", request(serializable: false))
                }
            } else {
                answer = try connection.call("/v3/kv/txn", request(serializable: false))
            }
            let (values, answered) = try EtcdMessages.txnGetsResponse(answer, count: chunk.count)
            // Later chunks at the revision of the first, so that all are read at one.
            if at == 0 { at = answered }
            out += values
            start += chunk.count
        }
        return (out, at)
    }

    /// A range request. At a revision already known (a snapshot's, a transaction's), it is
    /// served from the member's own state, without a round of the quorum (a serializable
    /// read), which at that revision is the cluster's exactly; a member that has not applied
    /// the revision yet says so, and the request is made linearizable. At revision 0 (now),
    /// it is linearizable.
    func range(
        key: [UInt8], end: [UInt8]?, limit: Int = 0, revision: Int64, descending: Bool = false,
        countOnly: Bool = false
    ) throws -> JSONValue {
        func request(serializable: Bool) -> JSONValue {
            EtcdMessages.range(
                key: key, end: end, limit: limit, revision: revision, descending: descending, countOnly: countOnly,
                serializable: serializable)
        }
        guard revision > 0 else { return try connection.call("/v3/kv/range", request(serializable: false)) }
        do {
            return try connection.call("/v3/kv/range", request(serializable: true))
        } catch let error as KVDocsError where error.message.contains("future revision") {
            return try connection.call("/v3/kv/range", request(serializable: false))
        }
    }

    /// The session of the calling thread, when it is inside ``withWriteTransaction(_:)``.
    func currentSession() -> EtcdSession? {
        sessionSlot.withLock { slot in
            guard let slot, pthread_equal(slot.thread, pthread_self()) != 0 else { return nil }
            return slot.session
        }
    }

    func value(forKey key: [UInt8], revision: Int64) throws -> [UInt8]? {
        try checkOpen()
        let answer = try range(key: etcdKey(key), end: nil, revision: revision)
        return try EtcdMessages.rangeResponse(answer).kvs.first?.value
    }

    /// A cursor over `range` in `order`, every page read at one revision (the first page's).
    public func scan(_ range: KeyRange, order: ScanOrder) throws -> any KeyValueCursor {
        guard let session = currentSession() else { return try scan(range, order: order, revision: 0) }
        try checkOpen()
        if session.revision == 0 { session.revision = try currentRevision() }
        let (start, end) = etcdRange(range)
        guard session.checking else {
            return EtcdCursor(store: self, start: start, end: end, order: order, revision: session.revision)
        }
        if compareBytes(start, end) < 0 { session.ranges.append((start, end, session.revision)) }
        return EtcdCursor(
            store: self, start: start, end: end, order: order, revision: session.revision, session: session)
    }

    func scan(_ range: KeyRange, order: ScanOrder, revision: Int64) throws -> any KeyValueCursor {
        try checkOpen()
        let (start, end) = etcdRange(range)
        return EtcdCursor(store: self, start: start, end: end, order: order, revision: revision)
    }

    /// The number of keys in `range`, counted by the server. Inside a write transaction,
    /// at its revision, the range recorded: a key inserted or changed in it by another writer
    /// fails the commit (a delete does not: a count is not the ground of a write's decisions).
    public func count(_ range: KeyRange) throws -> Int {
        guard let session = currentSession() else { return try count(range, revision: 0) }
        try checkOpen()
        if session.revision == 0 { session.revision = try currentRevision() }
        let (start, end) = etcdRange(range)
        guard compareBytes(start, end) < 0 else { return 0 }
        if session.checking { session.ranges.append((start, end, session.revision)) }
        return try count(range, revision: session.revision)
    }

    func count(_ range: KeyRange, revision: Int64) throws -> Int {
        try checkOpen()
        let (start, end) = etcdRange(range)
        guard compareBytes(start, end) < 0 else { return 0 }
        let answer = try self.range(key: start, end: end, revision: revision, countOnly: true)
        return Int(clamping: try EtcdMessages.rangeResponse(answer).count)
    }

    /// The cluster's revision now: the state a snapshot made now reads.
    public func currentRevision() throws -> Int64 {
        try checkOpen()
        let answer = try connection.call("/v3/kv/range", EtcdMessages.range(key: prefix, end: nil, countOnly: true))
        return try EtcdMessages.revision(answer)
    }

    /// A reader of the state at the cluster's revision now (``EtcdSnapshot``).
    public func snapshotReader() throws -> any SnapshotReader {
        EtcdSnapshot(store: self, revision: try currentRevision())
    }

    // MARK: Writes

    /// Applies `batch` as one etcd transaction (see the type's Writes).
    /// - Throws: `.limitExceeded` naming the limit for a batch that does not fit one
    ///   transaction (nothing is sent); `.unavailable` when the cluster has no quorum or a
    ///   write's outcome is unknown; `.closed`.
    public func write(_ batch: WriteBatch, sync: Bool) throws {
        try checkOpen()
        let operations = try transactionOperations(batch)
        guard !operations.isEmpty else { return }
        guard let session = currentSession() else {
            guard try commit(operations, compares: []) != nil else {
                throw KVDocsError.writeConflict("another writer of this store's writer key interfered", path: name)
            }
            return
        }
        let compares = session.compares()
        if compares.count + 1 > options.maxTxnOps {
            throw KVDocsError(
                .limitExceeded,
                "the write read \(compares.count) keys and ranges, which one etcd transaction must compare; the cluster allows \(options.maxTxnOps) (--max-txn-ops; EtcdKeyValueStore.Options.maxTxnOps)",
                path: name)
        }
        guard let revision = try commit(operations, compares: compares) else {
            throw KVDocsError.writeConflict("another writer changed what this write read", path: name)
        }
        session.committed(operations, at: revision)
    }

    /// Commits `operations` when every compare holds, in one transaction that also advances
    /// this store's writer key. Returns the commit's revision, or `nil` when a compare failed
    /// (nothing was written). A commit whose answer was lost is resolved: it was applied (its
    /// revision is returned), or it is fenced off so that it never can be, and the write
    /// throws a retryable conflict (``transact(attempts:_:)`` runs it again).
    func commit(_ operations: [EtcdMessages.Operation], compares: [JSONValue]) throws -> Int64? {
        committing.lock()
        defer { committing.unlock() }
        let (serial, seen) = writer.withLock { $0 }
        let next = serial + 1
        let request = EtcdMessages.txn(
            compares: [writerCompare(seen)] + compares,
            operations: operations + [.put(key: writerKey, value: Self.serialBytes(next))])
        do {
            let answer = try connection.call("/v3/kv/txn", request, write: true)
            let revision = try EtcdMessages.revision(answer)
            guard try EtcdMessages.succeeded(answer) else { return nil }
            writer.withLock { $0 = (next, revision) }
            return revision
        } catch let error as KVDocsError where error.kind == .unavailable && error.message.contains("unknown") {
            return try resolveLostCommit(serial: next, seen: seen, lost: error)
        }
    }

    /// After a commit whose answer was lost: moves the writer key past it unless the commit
    /// moved it, so that it cannot be applied later (its compare on the writer key then fails),
    /// and says which happened. Retried until the cluster answers, within the request timeout.
    private func resolveLostCommit(serial: Int64, seen: Int64, lost: KVDocsError) throws -> Int64 {
        let fence = serial + 1
        let deadline = Date().addingTimeInterval(Double(connection.timeout.nanoseconds) / 1e9)
        var last = lost
        while Date() < deadline {
            do {
                let answer = try connection.call(
                    "/v3/kv/txn",
                    EtcdMessages.txn(
                        compares: [writerCompare(seen)],
                        operations: [.put(key: writerKey, value: Self.serialBytes(fence))]), write: true)
                if try EtcdMessages.succeeded(answer) {
                    let revision = try EtcdMessages.revision(answer)
                    writer.withLock { $0 = (fence, revision) }
                    throw KVDocsError.writeConflict(
                        "the write's answer was lost and it was not applied (fenced at etcd revision \(revision)); run it again",
                        path: name)
                }
                // The writer key moved: by the lost commit, or by a fence whose answer was lost too.
                let now = try EtcdMessages.rangeResponse(
                    try connection.call("/v3/kv/range", EtcdMessages.range(key: writerKey, end: nil)))
                guard let kv = now.kvs.first else { break }
                writer.withLock { $0 = (Self.serial(kv.value), kv.modRevision) }
                if kv.value == Self.serialBytes(serial) { return kv.modRevision }
                throw KVDocsError.writeConflict(
                    "the write's answer was lost and it was not applied (fenced); run it again", path: name)
            } catch let error as KVDocsError where error.kind == .unavailable {
                last = error
                Thread.sleep(forTimeInterval: 0.2)
            }
        }
        throw KVDocsError(
            .unavailable, "\(last.message); the cluster did not answer in time to tell whether it was applied",
            path: name)
    }

    /// The compare of the writer key: unchanged since this store's last commit.
    private func writerCompare(_ revision: Int64) -> JSONValue {
        [
            "key": .string(EtcdMessages.base64(writerKey)), "target": "MOD", "result": "EQUAL",
            "mod_revision": .string(String(revision))
        ]
    }

    static func serialBytes(_ serial: Int64) -> [UInt8] { Array(String(serial).utf8) }
    static func serial(_ bytes: [UInt8]) -> Int64 { Int64(String(decoding: bytes, as: UTF8.self)) ?? 0 }

    /// The collapsed operations of `batch` in etcd's keys, checked against the limits.
    func transactionOperations(_ batch: WriteBatch, extraOperations: Int = 1) throws -> [EtcdMessages.Operation] {
        var last: [[UInt8]: EtcdMessages.Operation] = [:]
        for operation in batch.operations {
            switch operation {
            case .put(let key, let value): last[key] = .put(key: etcdKey(key), value: value)
            case .delete(let key): last[key] = .delete(key: etcdKey(key))
            }
        }
        let operations = last.keys.sorted { compareBytes($0, $1) < 0 }.compactMap { last[$0] }
        try checkLimits(operations, extraOperations: extraOperations)
        return operations
    }

    /// Refuses a transaction that the cluster would refuse, before it is sent.
    func checkLimits(_ operations: [EtcdMessages.Operation], extraOperations: Int) throws {
        let count = operations.count + extraOperations
        if count > options.maxTxnOps {
            throw KVDocsError(
                .limitExceeded,
                "the write needs \(count) operations in one etcd transaction; the cluster allows \(options.maxTxnOps) (--max-txn-ops; EtcdKeyValueStore.Options.maxTxnOps)",
                path: name)
        }
        let bytes = EtcdMessages.estimatedSize(operations)
        if bytes > options.maxRequestBytes {
            throw KVDocsError(
                .limitExceeded,
                "the write is \(Self.mebibytes(bytes)); etcd takes requests up to \(Self.mebibytes(options.maxRequestBytes)) (--max-request-bytes; EtcdKeyValueStore.Options.maxRequestBytes)",
                path: name)
        }
    }

    static func mebibytes(_ bytes: Int) -> String {
        String(format: "%.2f MiB (%d bytes)", Double(bytes) / 1_048_576, bytes)
    }

    /// Runs `body` holding this store's writer lock: no other holder in this process runs meanwhile.
    public func withWriterLock<R>(_ body: () throws -> R) rethrows -> R {
        try writerLock.withLock(body)
    }

    /// Runs `body` as a write transaction: holding the writer lock, refusing to start inside
    /// another holder of it on the same thread.
    /// - Throws: `.invalidArgument` for a nested write, or what `body` throws.
    public func withWriteTransaction<R>(_ body: () throws -> R) throws -> R {
        try writerLock.withTransaction(
            path: name, nested: "a write cannot start inside another write of the same store"
        ) {
            sessionSlot.withLock { $0 = SessionSlot(thread: pthread_self(), session: EtcdSession()) }
            defer { sessionSlot.withLock { $0 = nil } }
            return try body()
        }
    }

    /// Runs `body` as a write transaction (``withWriteTransaction(_:)``); when another writer
    /// changed what it read, runs it again on the new state, pausing a random time that
    /// doubles from 1 ms to 64 ms, at most `attempts` times in all.
    /// - Throws: `.invalidArgument` for `attempts` below 1 or a nested write; what `body`
    ///   throws; after `attempts` conflicts, a retryable `.conflict` saying so.
    public func transact<R>(attempts: Int, _ body: () throws -> R) throws -> R {
        try retry.run(attempts: attempts) { try withWriteTransaction(body) }
    }

    /// The operations a batch may hold: the cluster's bound less the store's writer key.
    public var maximumBatchCount: Int? { options.maxTxnOps - 1 }

    // MARK: Watching

    /// Follows the writes under `prefix` by every writer of the store (etcd's watch; see
    /// `WatchableKeyValueStore`). A `DocumentStore` on this store uses it to deliver
    /// other processes' changes to its change streams and observations.
    /// - Throws: `.unavailable` when no endpoint created the watch within the request timeout.
    public func watch(prefix: [UInt8], onChange: @escaping @Sendable () -> Void) throws -> any KeyValueWatch {
        try checkOpen()
        let key = etcdKey(prefix)
        let watch = try EtcdWatch(
            store: self, key: key, end: KeyRange.prefixSuccessor(key) ?? prefixEnd, onChange: onChange)
        try watch.start()
        return watch
    }

    // MARK: Administration

    /// Deletes every key of the store's root, in one request. Other roots are untouched.
    /// - Returns: the number of keys deleted.
    @discardableResult
    public func removeAll() throws -> Int {
        try checkOpen()
        let answer = try connection.call(
            "/v3/kv/deleterange", EtcdMessages.deleteRange(key: prefix, end: prefixEnd), write: true)
        return Int(clamping: try EtcdMessages.integer(answer["deleted"], "deleted", answer))
    }

    /// Discards the cluster's history up to `revision` (etcd's Compact): snapshots at an
    /// older revision then throw `.compacted`. It concerns the whole cluster, every root.
    package func compactHistory(through revision: Int64) throws {
        try checkOpen()
        _ = try connection.call(
            "/v3/kv/compaction", ["revision": .string(String(revision)), "physical": .bool(true)], write: true)
    }
}
