import Dispatch
import Foundation
import KVDocs
import KVDocsSync
import KVReplCore

/// kvrepl's sync commands, over KVDocsSync: `replicate SOURCE TARGET [--continuous]` and
/// `serve`.
///
/// An endpoint is, in this order: a replicated collection of the session's store (its
/// name); a URL (`http://…`, `https://…`); or another database, `PATH:COLLECTION` (split
/// at the last colon), opened for the command and closed after it.
public final class SyncCommands: SyncCommandHandler {
    /// The handler kvrepl installs.
    public init() {}

    public func replicate(
        source: String, target: String, continuous: Bool, store: DocumentStore?, readOnly: Bool,
        report: (JSONValue, String) -> Void
    ) throws -> (json: JSONValue, text: String) {
        var opened: [LevelDB] = []
        defer { for database in opened { database.close() } }
        let from = try endpoint(source, store: store, opened: &opened)
        let to = try endpoint(target, store: store, opened: &opened)
        if readOnly, to.isSessionStore {
            throw KVDocsError(
                .invalidArgument, "this session is read-only: \(target), its store, cannot be a replication target")
        }
        if from.identityHint == to.identityHint {
            throw KVDocsError(.invalidArgument, "\(source) and \(target) are the same collection")
        }
        let replication = Replication(
            source: from.peer, target: to.peer, options: ReplicationOptions(continuous: continuous))
        let reports = ReportQueue<ReplicationProgress>()
        let outcome = Self.runBlocking(interruptible: continuous) { () async throws -> ReplicationProgress in
            try await replication.run { reports.append($0) }
        } whileWaiting: {
            for progress in reports.drain() { report(Self.json(progress), Self.text(progress, source, target)) }
        }
        for progress in reports.drain() { report(Self.json(progress), Self.text(progress, source, target)) }
        switch outcome {
        case .success(let progress):
            return (Self.json(progress), Self.text(progress, source, target))
        case .failure(is CancellationError):
            // Ctrl-C ends a continuous replication: what it copied stays, checkpointed.
            guard let last = reports.last else {
                throw KVDocsError(.invalidArgument, "the replication was interrupted before it started")
            }
            return (Self.json(last), Self.text(last, source, target) + " (stopped)")
        case .failure(let error):
            throw error
        }
    }

    public func serve(
        port: Int, bind: String, user: String?, passwordFile: String?, store: DocumentStore?,
        report: (JSONValue, String) -> Void
    ) throws -> (json: JSONValue, text: String) {
        guard let store else {
            throw KVDocsError(.schema, "this database has no document store to serve")
        }
        var credentials: (user: String, password: String)?
        if let user, let passwordFile {
            let text: String
            do {
                text = try String(contentsOfFile: passwordFile, encoding: .utf8)
            } catch {
                throw KVDocsError(.invalidArgument, "the password file \(passwordFile) cannot be read: \(error)")
            }
            let password = String(text.prefix { $0 != "\n" && $0 != "\r" })
            guard !password.isEmpty else {
                throw KVDocsError(.invalidArgument, "the password file \(passwordFile) starts with an empty line")
            }
            credentials = (user, password)
        }
        let names = try store.schema.collections.filter(\.value.replicated).keys.sorted()
        guard !names.isEmpty else {
            throw KVDocsError(
                .schema, "this store has no replicated collection to serve (declare one with \"replicated\": true)")
        }
        let server = try SyncServer(store: store, host: bind, port: port, credentials: credentials)
        let listening = ReportQueue<Int>()
        let host = bind.contains(":") ? "[\(bind)]" : bind
        let outcome = Self.runBlocking(interruptible: true) { () async throws -> Bool in
            try await server.run { listening.append($0) }
            return true
        } whileWaiting: {
            for port in listening.drain() {
                report(
                    [
                        "serving": .string("http://\(host):\(port)"), "port": .int(Int64(port)),
                        "databases": .array(names.map { .string($0) })
                    ],
                    "serving \(names.map { "http://\(host):\(port)/\($0)" }.joined(separator: ", ")) (Ctrl-C to stop)")
            }
        }
        switch outcome {
        case .success, .failure(is CancellationError):
            return (["ok": true, "stopped": true], "stopped serving")
        case .failure(let error):
            throw error
        }
    }

    // MARK: - Endpoints

    private struct Endpoint {
        let peer: any ReplicationPeer
        let isSessionStore: Bool
        /// The database and collection, to refuse replicating a collection onto itself.
        let identityHint: String
    }

    private func endpoint(_ text: String, store: DocumentStore?, opened: inout [LevelDB]) throws -> Endpoint {
        if let store, let schema = try? store.schema, schema.collections[text] != nil {
            return Endpoint(
                peer: try LocalPeer(try store.collection(text)), isSessionStore: true,
                identityHint: "this store\u{0}\(text)")
        }
        if text.hasPrefix("http://") || text.hasPrefix("https://") {
            // Credentials come from the URL, or from KVDOCS_USER and KVDOCS_PASSWORD, never
            // from the command line.
            let environment = ProcessInfo.processInfo.environment
            let peer = try HTTPPeer(
                url: text, user: environment["KVDOCS_USER"], password: environment["KVDOCS_PASSWORD"])
            return Endpoint(peer: peer, isSessionStore: false, identityHint: peer.url)
        }
        guard let colon = text.lastIndex(of: ":"), colon != text.startIndex,
            text.index(after: colon) != text.endIndex
        else {
            let known = (try? store?.schema.collections.filter(\.value.replicated).keys.sorted()) ?? []
            throw KVDocsError(
                .invalidArgument,
                "\(text) is not a collection of this store\(known.isEmpty ? "" : " (its replicated collections: \(known.joined(separator: ", ")))"), a URL or PATH:COLLECTION"
            )
        }
        let path = String(text[..<colon])
        let collection = String(text[text.index(after: colon)...])
        guard FileManager.default.fileExists(atPath: path + "/CURRENT") else {
            throw KVDocsError(
                .invalidArgument,
                "\(path) is not a LevelDB database (create it with: kvrepl --create --schema FILE \(path))", path: path)
        }
        let database = try LevelDB(path: path)
        opened.append(database)
        guard try DocumentStore.exists(in: database) else {
            throw KVDocsError(.schema, "\(path) has no document store (no schema)", path: path)
        }
        let other = try DocumentStore(database: database)
        return Endpoint(
            peer: try LocalPeer(try other.collection(collection)), isSessionStore: false,
            identityHint: "\(path)\u{0}\(collection)")
    }

    // MARK: - Reports

    static func json(_ progress: ReplicationProgress) -> JSONValue {
        var fields: [(String, JSONValue)] = [
            ("replication_id", .string(progress.replicationID)),
            ("state", .string(stateName(progress.state))),
            ("source_seq", progress.sourceSequence),
            ("missing_checked", .int(Int64(progress.missingChecked))),
            ("missing_found", .int(Int64(progress.missingFound))),
            ("docs_read", .int(Int64(progress.documentsRead))),
            ("docs_written", .int(Int64(progress.documentsWritten))),
            ("doc_write_failures", .int(Int64(progress.documentWriteFailures)))
        ]
        if let update = progress.sourceUpdateSequence { fields.append(("source_update_seq", update)) }
        if let checkpointed = progress.checkpointedSequence { fields.append(("checkpointed_seq", checkpointed)) }
        if case .retrying(let message) = progress.state { fields.append(("retrying", .string(message))) }
        return .object(JSONObject(fields))
    }

    static func stateName(_ state: ReplicationProgress.State) -> String {
        switch state {
        case .running: "running"
        case .idle: "idle"
        case .retrying: "retrying"
        case .completed: "completed"
        }
    }

    static func text(_ progress: ReplicationProgress, _ source: String, _ target: String) -> String {
        var line =
            "\(source) -> \(target): \(stateName(progress.state)), seq \(progress.sourceSequence.compactDescription)"
        if let update = progress.sourceUpdateSequence { line += " of \(update.compactDescription)" }
        line +=
            ", \(progress.documentsWritten) revision\(progress.documentsWritten == 1 ? "" : "s") written"
        if progress.documentWriteFailures > 0 { line += ", \(progress.documentWriteFailures) refused" }
        if case .retrying(let message) = progress.state { line += " (retrying after: \(message))" }
        return line
    }

    // MARK: - Running async work from the shell's thread

    /// Runs `work` to its end on the concurrency pool while this (non-pool) thread waits,
    /// calling `whileWaiting` about every 100 ms. With `interruptible`, Ctrl-C (SIGINT)
    /// cancels it.
    static func runBlocking<T: Sendable>(
        interruptible: Bool, _ work: @escaping @Sendable () async throws -> T, whileWaiting: () -> Void
    ) -> Result<T, any Error> {
        let box = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        let task = Task {
            do {
                box.set(.success(try await work()))
            } catch {
                box.set(.failure(error))
            }
            done.signal()
        }
        var signalSource: DispatchSourceSignal?
        var previous: sig_t?
        if interruptible {
            previous = signal(SIGINT, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
            source.setEventHandler { task.cancel() }
            source.resume()
            signalSource = source
        }
        defer {
            if let signalSource {
                signalSource.cancel()
                signal(SIGINT, previous)
            }
        }
        while done.wait(timeout: .now() + .milliseconds(100)) == .timedOut { whileWaiting() }
        return box.get() ?? .failure(CancellationError())
    }
}

/// Reports of a running command (a replication's progress, a server's port), handed from
/// the pool to the shell's thread.
private final class ReportQueue<Report>: @unchecked Sendable {
    private let lock = NSLock()
    private var reports: [Report] = []
    private var latest: Report?

    func append(_ progress: Report) {
        lock.withLock {
            reports.append(progress)
            latest = progress
        }
    }

    /// The reports since the last drain.
    func drain() -> [Report] {
        lock.withLock {
            defer { reports = [] }
            return reports
        }
    }

    /// The latest report.
    var last: Report? { lock.withLock { latest } }
}

/// The outcome of a task, set on the pool and read by the waiting thread after the
/// semaphore (which orders the two).
private final class ResultBox<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<T, any Error>?

    func set(_ result: Result<T, any Error>) { lock.withLock { self.result = result } }
    func get() -> Result<T, any Error>? { lock.withLock { result } }
}
