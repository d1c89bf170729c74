import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@testable import KVDocsSync

/// A ``SyncServer`` on a free loopback port for the length of a test.
final class RunningServer: Sendable {
    let task: Task<Void, any Error>
    let port: Int

    init(_ store: DocumentStore, credentials: (user: String, password: String)? = nil) async throws {
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let server = try SyncServer(store: store, port: 0, credentials: credentials)
        task = Task {
            defer { continuation.finish() }
            try await server.run { continuation.yield($0) }
        }
        var found: Int?
        for await port in ports {
            found = port
            break
        }
        guard let found else { throw KVDocsError(.ioError, "the server did not start: \(await task.result)") }
        port = found
    }

    func url(_ database: String, user: String? = nil) -> String {
        "http://\(user.map { "\($0)@" } ?? "")127.0.0.1:\(port)/\(database)"
    }

    func stop() async {
        task.cancel()
        _ = await task.result
    }
}

/// A database served by a `kvrepl serve` process of its own, for tests whose clients are
/// other processes (Python, node) with timeouts. An in-process server's work needs the
/// cooperative pool, which the suite's other tests can hold for minutes.
final class ServedDatabase {
    let directory = TemporaryDirectory("kvdocs-served")
    let path: String
    let server: ServerProcess
    let port: Int

    /// Creates the database with `schema`, lets `prepare` write to it, closes it, and
    /// serves it.
    init(schema: DocumentSchema, prepare: (DocumentStore) throws -> Void = { _ in }) throws {
        path = directory.child("db")
        let database = try LevelDB(path: path)
        do {
            try prepare(try DocumentStore(database: database, schema: schema))
        } catch {
            database.close()
            throw error
        }
        database.close()
        server = try ServerProcess(try kvreplBinary(), [path, "--json", "-c", "serve --port 0"])
        guard case .int(let port)? = try? JSONValue(parsing: Data(server.firstLine.utf8))["port"] else {
            throw KVDocsError(.ioError, "kvrepl serve did not report its port: \(server.firstLine)")
        }
        self.port = Int(port)
    }

    func url(_ database: String) -> String { "http://127.0.0.1:\(port)/\(database)" }

    /// Stops the server (Ctrl-C) and waits for it on a thread of its own; returns the exit
    /// status.
    func stop() async -> Int32 {
        await withCheckedContinuation { continuation in
            let server = UncheckedBox(server)
            Thread { continuation.resume(returning: server.value.stop()) }.start()
        }
    }

    /// Opens the database once the server has stopped.
    func open<R>(_ body: (DocumentStore) throws -> R) throws -> R {
        let database = try LevelDB(path: path)
        defer { database.close() }
        return try body(try DocumentStore(database: database))
    }
}

/// A value handed to another thread that alone uses it from then on.
struct UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

@Suite struct SyncHTTPTests {
    static let ids = (0..<8).map { "d\($0)" } + ["shared", "é/ü ?&"]

    @Test func replicationOverLoopbackHTTPConvergesBothWaysAndRerunsCopyNothing() async throws {
        let served = try SyncPeer()
        let local = try SyncPeer()
        try ReplicatorTests.fill(served, 5)
        try ReplicatorTests.fill(local, 8, prefix: "x")
        try served.docs.upsert(["_id": "shared", "tag": "served"])
        try local.docs.upsert(["_id": "shared", "tag": "local"])
        try local.docs.upsert(["_id": "é/ü ?&", "tag": "odd id"])
        let server = try await RunningServer(served.store)
        let remote = try HTTPPeer(url: server.url("docs"))
        let options = ReplicationOptions(batchSize: 3)
        let pushed = try await Replication(source: try local.peer, target: remote, options: options).run()
        let pulled = try await Replication(source: remote, target: try local.peer, options: options).run()
        #expect(pushed.documentsWritten == 10 && pulled.documentsWritten == 6)
        let ids = Self.ids + (0..<8).map { "x\($0)" }
        #expect(try served.state(ids: ids, tags: ["t0", "t1", "t2"]) == local.state(ids: ids, tags: ["t0", "t1", "t2"]))
        #expect(try local.docs.conflictInfo(id: "shared")?.conflicts.count == 1)
        for (source, target) in [
            (try local.peer as any ReplicationPeer, remote as any ReplicationPeer), (remote, try local.peer)
        ] {
            let again = try await Replication(source: source, target: target).run()
            #expect(again.documentsWritten == 0 && again.missingFound == 0)
        }
        // The checkpoint is on both sides, under the same id.
        let id = try await Replication(source: try local.peer, target: remote).replicationID()
        #expect(try served.docs.localDocument(id) != nil && local.docs.localDocument(id) != nil)
        await server.stop()
    }

    @Test func aContinuousPullOverHTTPDeliversNewWrites() async throws {
        let served = try SyncPeer()
        let local = try SyncPeer()
        let server = try await RunningServer(served.store)
        let replication = Replication(
            source: try HTTPPeer(url: server.url("docs")), target: try local.peer,
            options: .init(continuous: true, pollTimeout: .seconds(2)))
        let task = Task { try await replication.run() }
        try served.docs.upsert(["_id": "first", "tag": "t"])
        try await ReplicatorTests.waitUntil { try local.docs.get(id: "first") != nil }
        try served.docs.upsert(["_id": "second", "tag": "t"])
        try await ReplicatorTests.waitUntil { try local.docs.get(id: "second") != nil }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        await server.stop()
    }

    @Test func credentialsAreCheckedAndAServerThatIsDownIsRetried() async throws {
        let served = try SyncPeer()
        let local = try SyncPeer()
        try ReplicatorTests.fill(local, 2)
        let server = try await RunningServer(served.store, credentials: ("ada", "s3cret"))
        let wrong = try HTTPPeer(url: server.url("docs"), user: "ada", password: "nope")
        await #expect(throws: (any Error).self) { try await Replication(source: try local.peer, target: wrong).run() }
        let right = try HTTPPeer(url: "http://ada:s3cret@127.0.0.1:\(server.port)/docs")
        #expect(try await Replication(source: try local.peer, target: right).run().documentsWritten == 2)
        await server.stop()
        // Nothing listens any more: transient failures, retried, then given up.
        let down = ReplicationOptions(initialRetryDelay: .milliseconds(1), maximumRetries: 2)
        await #expect(throws: TransientPeerError.self) {
            try await Replication(source: try local.peer, target: right, options: down).run()
        }
    }

    // MARK: - The Python reference peer

    /// refpeer's server on a free port, with one database "docs" (its first line ends with
    /// `:PORT`).
    final class ReferenceServer {
        let server: ServerProcess
        let port: Int

        init() throws {
            server = try ServerProcess(
                try referencePython(),
                [
                    packageRoot.appendingPathComponent("Tests/SyncReference/refpeer.py").path, "serve", "--port", "0",
                    "--db", "docs"
                ])
            let text = server.firstLine
            guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]) else {
                throw KVDocsError(.ioError, "refpeer did not say where it listens: \(text)")
            }
            self.port = port
        }

        var url: String { "http://127.0.0.1:\(port)/docs" }
    }

    /// `_changes?feed=continuous` over HTTP is sent as it is produced: a client reads the
    /// rows of a feed that never ends (a heartbeat keeps it open), then goes.
    @Test(.requires(.python)) func aContinuousFeedIsStreamedOverHTTP() async throws {
        let served = try ServedDatabase(schema: SyncPeer.schema) { store in
            for k in 0..<3 { try store.collection("docs").upsert(["_id": .string("d\(k)"), "tag": "t0"]) }
        }
        let script = """
            import json, sys, urllib.request
            feed = urllib.request.urlopen(sys.argv[1] + "/_changes?feed=continuous&heartbeat=50", timeout=30)
            rows = []
            while len(rows) < 3:
                line = feed.readline().strip()
                if line:
                    rows.append(json.loads(line)["id"])
            print(json.dumps(rows))
            """
        let result = try await runProcessAwaiting(try referencePython(), ["-c", script, served.url("docs")])
        #expect(await served.stop() == 0)
        #expect(result.status == 0 && result.stdout == "[\"d0\", \"d1\", \"d2\"]\n", "\(result)")
    }

    /// The CouchDB documentation's request and response examples, replayed against KVDocs'
    /// server by the reference peer's replayer: the same status, and every documented key
    /// with the same JSON type (exactly the documented body where the example says so).
    /// One example is compared by shape only (below).
    @Test(.requires(.python)) func theDocumentationsExamplesGetTheirDocumentedAnswers() async throws {
        let examples = try JSONValue(
            parsing: Data(contentsOf: packageRoot.appendingPathComponent("Tests/SyncReference/doc_examples.json")))
        guard case .array(let list)? = examples["examples"] else {
            Issue.record("doc_examples.json has no examples")
            return
        }
        // Example n replays in the database "ex<n>": a replicated collection here.
        var collections: [String: CollectionSchema] = [:]
        for n in list.indices { collections["ex\(n)"] = CollectionSchema(replicated: true) }
        let served = try ServedDatabase(schema: try DocumentSchema(collections: collections))
        let result = try await runProcessAwaiting(
            try referencePython(),
            [
                packageRoot.appendingPathComponent("Tests/SyncReference/replay_examples.py").path,
                "http://127.0.0.1:\(served.port)",
                // The example reads a revision that is no longer a leaf: KVDocs keeps the
                // bodies of leaves only, as CouchDB does once compacted, and answers
                // `missing` for it, an answer of the documented shape.
                "--shape-only", "bulk_get with revs"
            ])
        #expect(await served.stop() == 0)
        let report = try JSONValue(parsing: Data(result.stdout.utf8))
        #expect(result.status == 0 && report["failed"] == [], "\(result.stdout) \(result.stderr)")
        guard case .array(let passed)? = report["passed"] else { return }
        #expect(passed.count == list.count, "\(result.stdout)")
    }

    /// PouchDB 2.2.3 (a third implementation of the protocol, under node) replicates with
    /// KVDocs' server both ways: it pushes, the server's side then edits (a concurrent
    /// edit, a delete, new documents), PouchDB pulls and pushes again. Both sides end with
    /// the same winners, conflicts and leaves (PouchDB's own winner rule agreeing), and
    /// replicating again writes nothing either way (Tests/SyncReference/pouchdb223).
    @Test(.requires(.python, .pouchDB2)) func pouchDB2ReplicatesWithKVDocsServerBothWays() async throws {
        let served = try ServedDatabase(
            schema: try DocumentSchema(collections: ["r": CollectionSchema(replicated: true)]))
        let result = try await runProcessAwaiting(
            try referencePython(),
            [
                packageRoot.appendingPathComponent("Tests/SyncReference/pouchdb223/run_interop.py").path,
                "--bundle", Reference.pouchDBBundle, "--url", served.url("r")
            ])
        #expect(await served.stop() == 0)
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("RESULT identical states, re-run wrote 0"), "\(result.stdout)")
        // The conflict PouchDB and KVDocs agree on is in KVDocs' store.
        #expect(try served.open { try $0.collection("r").conflictInfo(id: "shared")?.conflicts.count } == 1)
    }

    /// KVDocs' replicator pushes to and pulls from refpeer (an independent implementation
    /// written from CouchDB's documentation), and refpeer's replicator pushes to and pulls
    /// from KVDocs' server; every side ends with the same winners and conflicts.
    @Test(.requires(.python)) func theReferencePeerReplicatesWithKVDocsBothWays() async throws {
        let a = try SyncPeer()
        let b = try SyncPeer()
        try ReplicatorTests.fill(a, 6)
        try a.docs.upsert(["_id": "shared", "tag": "from a"])
        try a.docs.delete(id: "d2")
        try b.docs.upsert(["_id": "shared", "tag": "from b"])
        try b.docs.upsert(["_id": "é/ü ?&", "tag": "odd"])
        let reference = try ReferenceServer()
        let remote = try HTTPPeer(url: reference.url)
        // KVDocs' replicator: a -> refpeer -> b, and b -> refpeer.
        try await Replication(source: try a.peer, target: remote).run()
        try await Replication(source: remote, target: try b.peer).run()
        try await Replication(source: try b.peer, target: remote).run()
        // refpeer's replicator: refpeer -> KVDocs' server over c (a store of its own,
        // served by a kvrepl process), and back.
        let served = try ServedDatabase(schema: SyncPeer.schema)
        for (source, target) in [(reference.url, served.url("docs")), (served.url("docs"), reference.url)] {
            let run = try await runProcessAwaiting(
                try referencePython(),
                [packageRoot.appendingPathComponent("Tests/SyncReference/refpeer.py").path, "replicate", source, target]
            )
            #expect(run.status == 0, "\(run.stderr)")
            let output = run.stdout
            let result = try JSONValue(parsing: output)
            #expect(result["error"] == nil, "\(output)")
        }
        #expect(await served.stop() == 0)
        // KVDocs' replicator brings refpeer's revisions (a's and b's) to a.
        try await Replication(source: remote, target: try a.peer).run()
        let ids = Self.ids
        #expect(try a.state(ids: ids, tags: ["t0", "t1"]) == b.state(ids: ids, tags: ["t0", "t1"]))
        let c = try served.open { store in
            try SyncPeer.state(try store.collection("docs"), ids: ids, tags: ["t0", "t1"])
        }
        #expect(try c == a.state(ids: ids, tags: ["t0", "t1"]))
        #expect(try a.docs.conflictInfo(id: "shared")?.conflicts.count == 1)
        // refpeer agrees on the winner and the conflict.
        let winner = try #require(try a.docs.conflictInfo(id: "shared"))
        let answer = try await HTTPPeer(url: reference.url).fetch([
            PeerRevisionRequest(id: "shared", revision: winner.winner)
        ])
        #expect(answer.first?.body["tag"] == (try a.docs.get(id: "shared")?["tag"]))
        // Rerunning KVDocs' replications copies nothing.
        #expect(try await Replication(source: remote, target: try a.peer).run().documentsWritten == 0)
        #expect(try await Replication(source: try b.peer, target: remote).run().documentsWritten == 0)
    }
}
