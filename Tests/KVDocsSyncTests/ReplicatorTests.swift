import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@testable import KVDocsSync

/// A store with one replicated collection, "docs", indexed on "tag", in a temporary
/// directory.
final class SyncPeer: @unchecked Sendable {
    let directory = TemporaryDirectory("kvdocs-sync")
    let database: LevelDB
    let store: DocumentStore
    let docs: DocumentCollection

    /// One replicated collection, "docs", indexed by `tag`.
    static var schema: DocumentSchema {
        get throws {
            try DocumentSchema(collections: [
                "docs": CollectionSchema(
                    indexes: [SecondaryIndexDefinition(name: "by_tag", fields: ["tag"])], replicated: true)
            ])
        }
    }

    init() throws {
        database = try LevelDB(path: directory.child("db"))
        store = try DocumentStore(database: database, schema: try Self.schema)
        docs = try store.collection("docs")
    }

    deinit { database.close() }

    var peer: LocalPeer { get throws { try LocalPeer(docs) } }

    /// Every document's leaves, conflicts and winner body, and the index's answers: what
    /// converged peers must agree on.
    func state(ids: [String], tags: [String]) throws -> [String] {
        try Self.state(docs, ids: ids, tags: tags)
    }

    /// ``state(ids:tags:)`` of any collection of that schema.
    static func state(_ docs: DocumentCollection, ids: [String], tags: [String]) throws -> [String] {
        var lines: [String] = []
        for id in ids {
            let leaves = try docs.revisionLeaves(id: id).map { "\($0.revision)\($0.deleted ? "D" : "")" }
            let info = try docs.conflictInfo(id: id)
            let body = try docs.get(id: .string(id))?.compactDescription ?? "-"
            lines.append(
                "\(id) leaves=\(leaves.sorted()) winner=\(info.map { "\($0.winner)" } ?? "-") conflicts=\(info?.conflicts.map(\.description) ?? []) deleted=\(info?.deletedConflicts.map(\.description) ?? []) body=\(body)"
            )
        }
        for tag in tags {
            let found = try docs.find(DocumentQuery().where("tag", .equal(.string(tag)))).map(\.compactDescription)
                .sorted()
            lines.append("tag \(tag): \(found)")
        }
        return lines
    }
}

/// An error injected by ``FaultyPeer``.
struct InjectedFault: Error {}

/// A peer whose `n`-th call fails (a store that wrote counts as a call after the write, so
/// that a failure can fall between the write and the checkpoint, as a killed process's
/// would): with an error, a transient error, by cancelling the replication's task, or by
/// cancelling the call while it runs (over HTTP: its request in flight, the server's write
/// done or not) and failing the replication.
struct FaultyPeer: ReplicationPeer {
    enum Fault: CaseIterable { case error, transient, cancellation, cancellationInFlight }

    let base: any ReplicationPeer
    let remaining: TestLock<Int>
    let fault: Fault

    init(_ base: any ReplicationPeer, failingAt call: Int, fault: Fault = .error) {
        self.base = base
        self.remaining = TestLock(call)
        self.fault = fault
    }

    init(_ base: any ReplicationPeer, failingAt call: Int, transient: Bool) {
        self.init(base, failingAt: call, fault: transient ? .transient : .error)
    }

    /// Whether this call is the one that fails.
    func due() -> Bool {
        remaining.withLock { n -> Bool in
            n -= 1
            return n == 0
        }
    }

    func fail() throws {
        switch fault {
        case .error: throw InjectedFault()
        case .transient: throw TransientPeerError("injected")
        case .cancellation: withUnsafeCurrentTask { $0?.cancel() }
        case .cancellationInFlight: throw CancellationError()
        }
    }

    /// Runs one call of `base`, failing before it (after it for `store`, whose write is then
    /// done) or, for `cancellationInFlight`, racing it against a timer of up to 3 ms.
    func call<R: Sendable>(failsAfter: Bool = false, _ body: @escaping @Sendable () async throws -> R) async throws
        -> R
    {
        guard fault == .cancellationInFlight else {
            if !failsAfter, due() { try fail() }
            let result = try await body()
            if failsAfter, due() { try fail() }
            return result
        }
        guard due() else { return try await body() }
        let delay = Duration.microseconds(Int.random(in: 0..<3_000))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { _ = try await body() }
            group.addTask { try await Task.sleep(for: delay) }
            defer { group.cancelAll() }
            try await group.next()
        }
        throw CancellationError()
    }

    func identity() async throws -> String { try await base.identity() }
    func updateSequence() async throws -> JSONValue { try await call { try await base.updateSequence() } }
    func changes(since: JSONValue, limit: Int, documentIDs: Set<String>?, wait: Duration?) async throws
        -> PeerChanges
    {
        try await call { try await base.changes(since: since, limit: limit, documentIDs: documentIDs, wait: wait) }
    }
    func revsDiff(_ offered: [String: [DocumentRevision]]) async throws -> [String: RevsDiffEntry] {
        try await call { try await base.revsDiff(offered) }
    }
    func fetch(_ requests: [PeerRevisionRequest]) async throws -> [ReplicatedDocument] {
        try await call { try await base.fetch(requests) }
    }
    func store(_ documents: [ReplicatedDocument]) async throws -> [ReplicatedWriteResult] {
        try await call(failsAfter: true) { try await base.store(documents) }
    }
    func ensureFullCommit() async throws { try await call {} }
    func localDocument(_ id: String) async throws -> (rev: String, body: JSONObject)? {
        try await call { try await base.localDocument(id) }
    }
    func putLocalDocument(_ id: String, body: JSONObject, rev: String?) async throws -> String {
        try await call { try await base.putLocalDocument(id, body: body, rev: rev) }
    }
}

/// A source that refuses checkpoints, as a read-only database does.
struct ReadOnlyCheckpoints: ReplicationPeer {
    let base: LocalPeer
    func identity() async throws -> String { try await base.identity() }
    func updateSequence() async throws -> JSONValue { try await base.updateSequence() }
    func changes(since: JSONValue, limit: Int, documentIDs: Set<String>?, wait: Duration?) async throws
        -> PeerChanges
    { try await base.changes(since: since, limit: limit, documentIDs: documentIDs, wait: wait) }
    func revsDiff(_ offered: [String: [DocumentRevision]]) async throws -> [String: RevsDiffEntry] {
        try await base.revsDiff(offered)
    }
    func fetch(_ requests: [PeerRevisionRequest]) async throws -> [ReplicatedDocument] {
        try await base.fetch(requests)
    }
    func store(_ documents: [ReplicatedDocument]) async throws -> [ReplicatedWriteResult] {
        try await base.store(documents)
    }
    func ensureFullCommit() async throws {}
    func localDocument(_ id: String) async throws -> (rev: String, body: JSONObject)? {
        try await base.localDocument(id)
    }
    func putLocalDocument(_ id: String, body: JSONObject, rev: String?) async throws -> String {
        throw KVDocsError(.notSupported, "the database is read-only")
    }
}

@Suite struct ReplicatorTests {
    static func fill(_ peer: SyncPeer, _ count: Int, prefix: String = "d") throws {
        for k in 0..<count {
            try peer.docs.upsert(["_id": .string("\(prefix)\(k)"), "tag": .string("t\(k % 3)"), "n": .int(Int64(k))])
        }
    }

    @Test func aOneShotReplicationCopiesEverythingAndARerunCopiesNothing() async throws {
        let a = try SyncPeer()
        let b = try SyncPeer()
        try Self.fill(a, 30)
        try a.docs.delete(id: "d3")
        let replication = Replication(source: try a.peer, target: try b.peer, options: .init(batchSize: 7))
        let first = try await replication.run()
        #expect(first.state == .completed)
        #expect(first.documentsWritten == 30)
        #expect(first.missingFound == 30)
        #expect(first.documentWriteFailures == 0)
        #expect(first.checkpointedSequence == first.sourceSequence)
        let ids = (0..<30).map { "d\($0)" }
        #expect(try a.state(ids: ids, tags: ["t0", "t1", "t2"]) == b.state(ids: ids, tags: ["t0", "t1", "t2"]))

        let second = try await replication.run()
        #expect(second.documentsWritten == 0)
        #expect(second.missingChecked == 0)
        #expect(second.documentsRead == 0)

        // A new replication object with the same peers finds the same checkpoint.
        let third = try await Replication(source: try a.peer, target: try b.peer).run()
        #expect(third.missingChecked == 0)
        #expect(
            try await replication.replicationID() == Replication(source: try a.peer, target: try b.peer).replicationID()
        )
    }

    @Test func theCheckpointIsCouchDBsReplicationLogOnBothSides() async throws {
        let a = try SyncPeer()
        let b = try SyncPeer()
        try Self.fill(a, 4)
        let replication = Replication(source: try a.peer, target: try b.peer)
        let progress = try await replication.run()
        let id = try await replication.replicationID()
        #expect(id.count == 32)
        let onSource = try #require(try a.docs.localDocument(id))
        let onTarget = try #require(try b.docs.localDocument(id))
        #expect(onSource.body == onTarget.body)
        let log = onTarget.body
        #expect(log["replication_id_version"] == 3)
        #expect(log["source_last_seq"] == progress.sourceSequence)
        guard case .array(let history)? = log["history"], case .object(let entry)? = history.first else {
            Issue.record("no history in \(log)")
            return
        }
        #expect(history.count == 1)
        #expect(entry["session_id"] == log["session_id"])
        #expect(entry["recorded_seq"] == progress.sourceSequence)
        #expect(entry["docs_written"] == 4)
        #expect(entry["start_last_seq"] == 0)
        for key in [
            "start_time", "end_time", "end_last_seq", "missing_checked", "missing_found", "docs_read",
            "doc_write_failures"
        ] {
            #expect(entry[key] != nil, "\(key)")
        }
        // A second session with new changes adds its entry in front.
        try a.docs.upsert(["_id": "late", "tag": "t9"])
        try await replication.run()
        let next = try #require(try b.docs.localDocument(id)).body
        guard case .array(let later)? = next["history"] else { return }
        #expect(later.count == 2)
        #expect(later.last == .object(entry))
    }

    @Test(arguments: [
        // The target fails right after its third write reached it, before the checkpoints:
        // the third batch is offered again.
        (call: 2 * 4 + 3, offeredAgain: 5),
        // It fails writing the third checkpoint, after the source took it: the source's
        // history names the session, so the resumed run starts after the third batch
        // (CouchDB's comparison of replication logs).
        (call: 3 * 4 + 1, offeredAgain: 0)
    ])
    func anInterruptedReplicationResumesFromItsCheckpointWithoutCopyingTwice(call: Int, offeredAgain: Int) async throws
    {
        let a = try SyncPeer()
        let b = try SyncPeer()
        try Self.fill(a, 20)
        let options = ReplicationOptions(batchSize: 5, checkpointInterval: .zero)
        // Target calls: reading the checkpoint, then per batch _revs_diff, _bulk_docs,
        // _ensure_full_commit and the checkpoint.
        let faulty = FaultyPeer(try b.peer, failingAt: call)
        await #expect(throws: InjectedFault.self) {
            try await Replication(source: try a.peer, target: faulty, options: options).run()
        }
        let stored = try b.docs.changes().results.count
        #expect(stored == 15)
        let resumed = try await Replication(source: try a.peer, target: try b.peer, options: options).run()
        #expect(resumed.documentsWritten == 5)
        #expect(resumed.missingChecked == 5 + offeredAgain)
        let ids = (0..<20).map { "d\($0)" }
        #expect(try a.state(ids: ids, tags: []) == b.state(ids: ids, tags: []))
    }

    @Test func transientFailuresAreRetriedAndAOneShotGivesUpAfterItsLimit() async throws {
        let a = try SyncPeer()
        let b = try SyncPeer()
        try Self.fill(a, 12)
        let states = TestLock<[ReplicationProgress.State]>([])
        let options = ReplicationOptions(batchSize: 4, initialRetryDelay: .milliseconds(1))
        let flaky = FaultyPeer(try b.peer, failingAt: 6, transient: true)
        let done = try await Replication(source: try a.peer, target: flaky, options: options).run { progress in
            states.withLock { $0.append(progress.state) }
        }
        #expect(done.state == .completed)
        #expect(states.withLock { $0.contains(.retrying("injected")) })
        let ids = (0..<12).map { "d\($0)" }
        #expect(try a.state(ids: ids, tags: []) == b.state(ids: ids, tags: []))

        // A peer that always fails transiently: the one-shot stops after its retries.
        struct Down: Error {}
        let c = try SyncPeer()
        let limited = ReplicationOptions(initialRetryDelay: .milliseconds(1), maximumRetries: 3)
        let calls = TestLock(0)
        let alwaysDown = AlwaysDown(base: try c.peer, calls: calls)
        await #expect(throws: TransientPeerError.self) {
            try await Replication(source: try a.peer, target: alwaysDown, options: limited).run()
        }
        #expect(calls.withLock { $0 } == 4)
    }

    @Test func aReadOnlySourceReplicatesWithTheTargetsCheckpointOnly() async throws {
        let a = try SyncPeer()
        let b = try SyncPeer()
        try Self.fill(a, 5)
        let source = ReadOnlyCheckpoints(base: try a.peer)
        let first = try await Replication(source: source, target: try b.peer).run()
        #expect(first.documentsWritten == 5)
        let again = try await Replication(source: source, target: try b.peer).run()
        // No common checkpoint: the changes are offered again, and nothing is copied.
        #expect(again.documentsWritten == 0)
        #expect(again.missingFound == 0)
    }

    @Test func aDocumentIDFilterCopiesOnlyThoseDocumentsUnderItsOwnID() async throws {
        let a = try SyncPeer()
        let b = try SyncPeer()
        try Self.fill(a, 6)
        let filtered = Replication(
            source: try a.peer, target: try b.peer, options: .init(documentIDs: ["d1", "d4", "absent"]))
        let progress = try await filtered.run()
        #expect(progress.documentsWritten == 2)
        #expect(try b.docs.get(id: "d1") != nil)
        #expect(try b.docs.get(id: "d2") == nil)
        let unfiltered = Replication(source: try a.peer, target: try b.peer)
        #expect(try await filtered.replicationID() != unfiltered.replicationID())
        #expect(try await unfiltered.run().documentsWritten == 4)
        #expect(
            try await Replication(source: try b.peer, target: try a.peer).replicationID()
                != unfiltered.replicationID())
    }

    @Test func aContinuousReplicationDeliversNewWritesUntilCancelled() async throws {
        let a = try SyncPeer()
        let b = try SyncPeer()
        try Self.fill(a, 3)
        let replication = Replication(
            source: try a.peer, target: try b.peer, options: .init(continuous: true, pollTimeout: .milliseconds(200)))
        let task = Task { try await replication.run() }
        try await Self.waitUntil { try b.docs.get(id: "d2") != nil }
        try a.docs.upsert(["_id": "later", "tag": "t1"])
        try await Self.waitUntil { try b.docs.get(id: "later") != nil }
        try a.docs.delete(id: "d0")
        try await Self.waitUntil { try b.docs.get(id: "d0") == nil }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    @Test func progressIsASequenceEndingWithTheFinalReportOrTheError() async throws {
        let a = try SyncPeer()
        let b = try SyncPeer()
        try Self.fill(a, 7)
        let replication = Replication(source: try a.peer, target: try b.peer, options: .init(batchSize: 3))
        var reports: [ReplicationProgress] = []
        for try await progress in replication.progress() { reports.append(progress) }
        // Batches of 3: the count written only grows, and the last report is the total.
        #expect(reports.count >= 3)
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.documentsWritten <= $1.documentsWritten })
        #expect(reports.last?.documentsWritten == 7)
        #expect(try b.docs.get(id: "d6") != nil)
        // A failing peer ends the sequence with its error.
        let failing = Replication(source: try a.peer, target: FaultyPeer(try b.peer, failingAt: 1))
        await #expect(throws: InjectedFault.self) {
            for try await _ in failing.progress() {}
        }
    }

    @Test func leavingTheProgressSequenceCancelsAContinuousReplication() async throws {
        let a = try SyncPeer()
        let b = try SyncPeer()
        try Self.fill(a, 2)
        // The replication's end is an event: its source peer is released when its task
        // ends, which a continuous replication's does only when it is cancelled.
        let released = TestLock(false)
        // The replication's running task holds the only reference to it and to its source
        // (and the sequence is left, and dropped, at the break).
        func start() throws -> AsyncThrowingStream<ReplicationProgress, any Error> {
            Replication(
                source: ReleaseSignallingPeer(try a.peer, released: released), target: try b.peer,
                options: .init(continuous: true, pollTimeout: .milliseconds(100))
            ).progress()
        }
        for try await report in try start() where report.documentsWritten == 2 { break }
        try await Self.waitUntil { released.withLock { $0 } }
        // Ended, so a later write is not copied.
        try a.docs.upsert(["_id": "after", "tag": "t0"])
        #expect(try b.docs.get(id: "d1") != nil && b.docs.get(id: "after") == nil)
    }

    /// Waits (up to a minute, never asserting on time) until `condition` holds.
    static func waitUntil(_ condition: () throws -> Bool) async throws {
        for _ in 0..<6_000 {
            if try condition() { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("the condition did not hold within a minute")
    }

    @Test func aCollectionThatIsNotReplicatedIsNotAPeer() throws {
        try withTemporaryDatabase { db, _ in
            let store = try DocumentStore(
                database: db, schema: try DocumentSchema(collections: ["plain": CollectionSchema()]))
            #expect(throws: KVDocsError.self) { try LocalPeer(try store.collection("plain")) }
        }
    }
}

/// A peer that sets `released` when it is deinitialized: when nothing (a replication's
/// task) holds it any more.
final class ReleaseSignallingPeer: ReplicationPeer {
    let base: any ReplicationPeer
    let released: TestLock<Bool>
    init(_ base: any ReplicationPeer, released: TestLock<Bool>) {
        self.base = base
        self.released = released
    }
    deinit { released.withLock { $0 = true } }
    func identity() async throws -> String { try await base.identity() }
    func updateSequence() async throws -> JSONValue { try await base.updateSequence() }
    func changes(since: JSONValue, limit: Int, documentIDs: Set<String>?, wait: Duration?) async throws
        -> PeerChanges
    { try await base.changes(since: since, limit: limit, documentIDs: documentIDs, wait: wait) }
    func revsDiff(_ offered: [String: [DocumentRevision]]) async throws -> [String: RevsDiffEntry] {
        try await base.revsDiff(offered)
    }
    func fetch(_ requests: [PeerRevisionRequest]) async throws -> [ReplicatedDocument] {
        try await base.fetch(requests)
    }
    func store(_ documents: [ReplicatedDocument]) async throws -> [ReplicatedWriteResult] {
        try await base.store(documents)
    }
    func ensureFullCommit() async throws { try await base.ensureFullCommit() }
    func localDocument(_ id: String) async throws -> (rev: String, body: JSONObject)? {
        try await base.localDocument(id)
    }
    func putLocalDocument(_ id: String, body: JSONObject, rev: String?) async throws -> String {
        try await base.putLocalDocument(id, body: body, rev: rev)
    }
}

/// A target whose every call fails transiently.
struct AlwaysDown: ReplicationPeer {
    let base: LocalPeer
    let calls: TestLock<Int>
    func down() -> TransientPeerError {
        calls.withLock { $0 += 1 }
        return TransientPeerError("connection refused")
    }
    func identity() async throws -> String { try await base.identity() }
    func updateSequence() async throws -> JSONValue { throw down() }
    func changes(since: JSONValue, limit: Int, documentIDs: Set<String>?, wait: Duration?) async throws
        -> PeerChanges
    { throw down() }
    func revsDiff(_ offered: [String: [DocumentRevision]]) async throws -> [String: RevsDiffEntry] { throw down() }
    func fetch(_ requests: [PeerRevisionRequest]) async throws -> [ReplicatedDocument] { throw down() }
    func store(_ documents: [ReplicatedDocument]) async throws -> [ReplicatedWriteResult] { throw down() }
    func ensureFullCommit() async throws { throw down() }
    func localDocument(_ id: String) async throws -> (rev: String, body: JSONObject)? { throw down() }
    func putLocalDocument(_ id: String, body: JSONObject, rev: String?) async throws -> String { throw down() }
}
