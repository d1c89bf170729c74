#if KVBENCH_SYNC
import Foundation
import KVDocs
import KVDocsSync

extension Bench {
    /// Replication over CouchDB's protocol (KVDocsSync):
    ///
    /// - **Copying a collection**: documents per second pulled from a server over loopback,
    ///   pushed to one, and replicated in process, against the floor: the target writing the
    ///   same revisions directly (`bulkWriteReplicated` in the replicator's batches), which
    ///   every replication must do.
    /// - **An idle continuous replication**: the time from a write on the source to the
    ///   target having it, over loopback (the replicator parked in a long poll) and in
    ///   process (parked on the change hub).
    /// - **Catch-up**: a one-shot pull, resuming from its checkpoint, after 10,000 edits made
    ///   on the source while the target was away.
    func runSync() throws {
        let count = quick ? 1_000 : 10_000
        let edits = quick ? 1_000 : 10_000
        let source = try SyncBenchStore(freshPath("sync-source"))
        try source.fill(count)
        let server = try blocking { try await SyncBenchServer(source.store) }
        defer { blocking { await server.stop() } }
        // What every target ends up writing: each document's revision with its history.
        let requests = try (0..<count).map { i in
            let id = SyncBenchStore.id(i)
            guard let winner = try source.docs.revisionLeaves(id: id).first else {
                throw KVDocsError(.notFound, "the source has no revision of \(id)")
            }
            return PeerRevisionRequest(id: id, revision: winner.revision)
        }
        let revisions = try blocking { try await LocalPeer(source.docs).fetch(requests) }
        let copy = "copy \(count) documents"
        try measureAlternating(
            "sync", copy,
            [
                (
                    "direct write",
                    {
                        let target = try SyncBenchStore(self.freshPath("sync-direct"))
                        let start = now()
                        for batch in stride(from: 0, to: revisions.count, by: 500) {
                            let results = try target.docs.bulkWriteReplicated(
                                Array(revisions[batch..<min(batch + 500, revisions.count)]))
                            try SyncBenchStore.check(results)
                        }
                        return (now() - start, count, [:])
                    }
                ),
                (
                    "in process",
                    {
                        let target = try SyncBenchStore(self.freshPath("sync-local"))
                        return try self.timedReplication(try LocalPeer(source.docs), try LocalPeer(target.docs), count)
                    }
                ),
                (
                    "pull over loopback",
                    {
                        let target = try SyncBenchStore(self.freshPath("sync-pull"))
                        return try self.timedReplication(
                            try HTTPPeer(url: server.url), try LocalPeer(target.docs), count)
                    }
                ),
                (
                    "push over loopback",
                    {
                        let target = try SyncBenchStore(self.freshPath("sync-push"))
                        let targetServer = try blocking { try await SyncBenchServer(target.store) }
                        defer { blocking { await targetServer.stop() } }
                        return try self.timedReplication(
                            try LocalPeer(source.docs), try HTTPPeer(url: targetServer.url), count)
                    }
                )
            ])
        try runContinuousLatency(source, server)
        try runCatchUp(count: count, edits: edits)
    }

    /// One one-shot replication from an empty target, timed; checks it copied everything.
    func timedReplication(_ from: any ReplicationPeer, _ to: any ReplicationPeer, _ count: Int) throws
        -> (seconds: Double, operations: Int, extra: [String: Double])
    {
        let start = now()
        let outcome = try blocking { try await Replication(source: from, target: to).run() }
        let seconds = now() - start
        guard outcome.documentsWritten == count else {
            throw KVDocsError(
                .invalidArgument, "the replication wrote \(outcome.documentsWritten) documents, not \(count)")
        }
        return (seconds, count, [:])
    }

    /// The time from a write on the source to the target having it, while a continuous
    /// replication is idle: over loopback, and in process.
    func runContinuousLatency(_ source: SyncBenchStore, _ server: SyncBenchServer) throws {
        let deliveries = quick ? 5 : 25
        for (variant, makeSource) in [
            ("over loopback", { () throws -> any ReplicationPeer in try HTTPPeer(url: server.url) }),
            ("in process", { () throws -> any ReplicationPeer in try LocalPeer(source.docs) })
        ] {
            let target = try SyncBenchStore(freshPath("sync-continuous"))
            let replication = Replication(
                source: try makeSource(), target: try LocalPeer(target.docs),
                options: ReplicationOptions(continuous: true, pollTimeout: .seconds(30)))
            let task = Task { try await replication.run() }
            defer {
                task.cancel()
                blocking { _ = await task.result }
            }
            // Caught up once the last document written so far has arrived.
            var next = 0
            func deliver() throws -> Double {
                let id = "live-\(variant)-\(next)"
                next += 1
                let since = try target.docs.updateSequence()
                // Idle: the replicator is parked, waiting for a change.
                Thread.sleep(forTimeInterval: 0.02)
                let start = now()
                try source.docs.upsert(["_id": .string(id), "name": "live", "country": "AUS", "born": 2000])
                while try target.docs.get(id: .string(id)) == nil {
                    _ = try blocking { try await target.docs.waitForChanges(since: since, timeout: .seconds(10)) }
                    guard now() - start < 10 else {
                        throw KVDocsError(.ioError, "the continuous replication did not deliver \(id) in 10 s")
                    }
                }
                return now() - start
            }
            _ = try deliver()
            try measure("sync", "idle continuous: a new write delivered", variant, repeats: deliveries) {
                (try deliver(), 1, [:])
            }
        }
    }

    /// A target in sync with the source goes away; the source takes `edits` edits; the
    /// target pulls them over loopback, from its checkpoint.
    func runCatchUp(count: Int, edits: Int) throws {
        try measure("sync", "catch up after \(edits) offline edits", "pull over loopback", repeats: 1) {
            let source = try SyncBenchStore(freshPath("sync-catchup-source"))
            try source.fill(count)
            let server = try blocking { try await SyncBenchServer(source.store) }
            defer { blocking { await server.stop() } }
            let target = try SyncBenchStore(freshPath("sync-catchup-target"))
            let replication = Replication(source: try HTTPPeer(url: server.url), target: try LocalPeer(target.docs))
            _ = try blocking { try await replication.run() }
            // Offline: edits spread over the documents, some edited more than once.
            for batch in stride(from: 0, to: edits, by: 500) {
                try source.store.write { b in
                    for k in batch..<min(batch + 500, edits) {
                        try b.upsert("athletes", SyncBenchStore.document((k * 7) % count, edit: k + 1))
                    }
                }
            }
            let start = now()
            let outcome = try blocking { try await replication.run() }
            let seconds = now() - start
            let edited = Set((0..<edits).map { ($0 * 7) % count }).count
            guard outcome.documentsWritten >= edited else {
                throw KVDocsError(
                    .invalidArgument, "the catch-up wrote \(outcome.documentsWritten) documents, not \(edited)")
            }
            return (
                seconds, edits,
                [
                    "documents written": Double(outcome.documentsWritten),
                    "changes read": Double(outcome.missingChecked)
                ]
            )
        }
    }
}

/// A store with one replicated collection of athletes, indexed by country.
final class SyncBenchStore: @unchecked Sendable {
    let database: KVDocs.LevelDB
    let store: DocumentStore
    let docs: DocumentCollection

    init(_ path: String) throws {
        database = try KVDocs.LevelDB(path: path)
        store = try DocumentStore(
            database: database,
            schema: try DocumentSchema(collections: [
                "athletes": CollectionSchema(
                    indexes: [SecondaryIndexDefinition(name: "by_country", fields: ["country"])], replicated: true)
            ]))
        docs = try store.collection("athletes")
    }

    deinit { database.close() }

    static func id(_ i: Int) -> String { String(format: "a%06d", i) }

    static let countries = ["AUS", "NZL", "FRA", "KEN", "USA", "JPN", "BRA", "NOR"]

    static func document(_ i: Int, edit: Int = 0) -> JSONValue {
        [
            "_id": .string(id(i)), "name": .string("athlete \(i)"), "country": .string(countries[i % countries.count]),
            "born": .int(Int64(1970 + i % 30)), "points": .int(Int64((i * 37 + edit) % 1000)),
            "events": ["100 m", "relay"], "edit": .int(Int64(edit))
        ]
    }

    /// `count` new documents, in batches of 500.
    func fill(_ count: Int) throws {
        for batch in stride(from: 0, to: count, by: 500) {
            try store.write { b in
                for i in batch..<min(batch + 500, count) { try b.insert("athletes", Self.document(i)) }
            }
        }
    }

    static func check(_ results: [ReplicatedWriteResult]) throws {
        for result in results {
            if case .rejected(let id, _, let error, let reason) = result {
                throw KVDocsError(.invalidArgument, "\(id) was rejected: \(error) \(reason)")
            }
        }
    }
}

/// A `SyncServer` on a free loopback port, serving until stopped.
final class SyncBenchServer: Sendable {
    let task: Task<Void, any Error>
    let port: Int

    init(_ store: DocumentStore) async throws {
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let server = try SyncServer(store: store, port: 0)
        task = Task {
            defer { continuation.finish() }
            try await server.run { continuation.yield($0) }
        }
        var found: Int?
        for await port in ports {
            found = port
            break
        }
        guard let found else { throw KVDocsError(.ioError, "the sync server did not start: \(await task.result)") }
        port = found
    }

    var url: String { "http://127.0.0.1:\(port)/athletes" }

    func stop() async {
        task.cancel()
        _ = await task.result
    }
}

/// Runs `body` to completion from kvbench's synchronous code, blocking this thread (the
/// task runs on the cooperative pool).
func blocking<R: Sendable>(_ body: @escaping @Sendable () async throws -> R) throws -> R {
    let semaphore = DispatchSemaphore(value: 0)
    let box = BlockingResult<R>()
    Task {
        do { box.result = .success(try await body()) } catch { box.result = .failure(error) }
        semaphore.signal()
    }
    semaphore.wait()
    guard let result = box.result else { throw KVDocsError(.ioError, "a task ended without a result") }
    return try result.get()
}

/// `blocking` for a body that cannot fail.
func blocking(_ body: @escaping @Sendable () async -> Void) {
    _ = try? blocking { () async throws -> Bool in
        await body()
        return true
    }
}

/// The result a blocked thread reads once the task signalled (the semaphore orders the two).
final class BlockingResult<R: Sendable>: @unchecked Sendable {
    var result: Result<R, any Error>?
}
#endif
