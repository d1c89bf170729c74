import Foundation
import KVDocs

/// A replication from one peer to another, following CouchDB's replication protocol
/// (version 3): it reads the source's changes since its last checkpoint, asks the target
/// which revisions it lacks, copies those with their histories, and records how far it got
/// in a checkpoint on both sides.
///
/// Replication moves revisions, never edits them, so it is idempotent: running it again
/// copies nothing, and one interrupted anywhere (a killed process, a lost connection, a
/// cancelled task) resumes from its last checkpoint and copies again at most what came
/// after it. Two stores that replicate both ways (two replications) converge to the same
/// winners and the same conflicts.
///
/// ```swift
/// let replication = Replication(source: try LocalPeer(phone.collection("notes")),
///                               target: try LocalPeer(laptop.collection("notes")))
/// let done = try await replication.run { progress in print(progress.documentsWritten) }
/// ```
///
/// A continuous replication (``ReplicationOptions/continuous``) keeps copying the source's
/// new changes until its task is cancelled; `run` then throws `CancellationError`.
/// Cancellation stops between requests; a batch cut short is not checkpointed, and is
/// copied again by the next run.
public final class Replication: Sendable {
    /// Where revisions are read.
    public let source: any ReplicationPeer
    /// Where revisions are written.
    public let target: any ReplicationPeer
    /// How the replication runs.
    public let options: ReplicationOptions

    /// A replication from `source` to `target`.
    public init(source: any ReplicationPeer, target: any ReplicationPeer, options: ReplicationOptions = .init()) {
        self.source = source
        self.target = target
        self.options = options
    }

    /// The replication's id, the name of its checkpoints: the MD5 of the two peers'
    /// identities and the document filter, in hex. The same two peers, in the same
    /// direction, with the same filter, always have the same id; continuous and one-shot
    /// runs share it.
    public func replicationID() async throws -> String {
        var text = "kvdocs-replication-1\u{0}\(try await source.identity())\u{0}\(try await target.identity())"
        if let ids = options.documentIDs {
            text += "\u{0}doc_ids"
            for id in ids.sorted(by: { $0.unicodeScalars.lexicographicallyPrecedes($1.unicodeScalars) }) {
                text += "\u{0}\(id)"
            }
        }
        return MD5.hexDigest(Array(text.utf8))
    }

    /// Runs the replication in a task of its own and delivers its progress as a sequence:
    /// what ``run(_:)`` reports, in order, ending when the replication ends (after the
    /// final progress of a one-shot run) or with its error. Ending the iteration early
    /// (a `break`, or cancelling the task iterating) cancels the replication; what it
    /// copied stays checkpointed.
    ///
    /// ```swift
    /// for try await progress in replication.progress() {
    ///     print("\(progress.documentsWritten) documents written")
    /// }
    /// ```
    public func progress() -> AsyncThrowingStream<ReplicationProgress, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    try await run { continuation.yield($0) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Runs the replication: until the target has every revision the source had when the
    /// run caught up (one-shot), or until the task is cancelled (continuous).
    /// - Parameter report: called after every batch and at each change of state.
    /// - Returns: the final progress of a one-shot replication.
    /// - Throws: `CancellationError` when the task is cancelled; a peer's error that is not
    ///   a ``TransientPeerError``; the last ``TransientPeerError`` when a one-shot
    ///   replication failed ``ReplicationOptions/maximumRetries`` times in a row.
    @discardableResult
    public func run(_ report: @escaping @Sendable (ReplicationProgress) -> Void = { _ in }) async throws
        -> ReplicationProgress
    {
        guard options.batchSize > 0 else {
            throw KVDocsError(
                .invalidArgument, "the replication batch size must be positive (got \(options.batchSize))")
        }
        var failures = 0
        var delay = options.initialRetryDelay
        var progress: ReplicationProgress?
        while true {
            do {
                let id = try await replicationID()
                let session = ReplicationSession(
                    replication: self, id: id,
                    progress: progress ?? ReplicationProgress(replicationID: id, sourceSequence: .int(0)),
                    report: report)
                defer { progress = session.progress }
                do {
                    try await session.run {
                        failures = 0
                        delay = self.options.initialRetryDelay
                    }
                } catch {
                    progress = session.progress
                    throw error
                }
                return session.progress
            } catch let error as TransientPeerError {
                failures += 1
                if !options.continuous, failures > options.maximumRetries { throw error }
                if var current = progress {
                    current.state = .retrying(error.message)
                    progress = current
                    report(current)
                }
                try await Task.sleep(for: delay)
                delay = min(delay * 2, options.maximumRetryDelay)
            }
        }
    }
}

/// One session of a replication: from reading the checkpoints to caught up (or cancelled,
/// or failed). A session that fails is replaced by a new one, which reads the checkpoints
/// again.
private final class ReplicationSession {
    let replication: Replication
    let id: String
    var progress: ReplicationProgress
    let report: @Sendable (ReplicationProgress) -> Void

    let sessionID = DocumentStore.randomHex(bytes: 16)
    let startTime = Date()
    var startSequence: JSONValue = .int(0)
    var sequence: JSONValue = .int(0)
    var olderHistory: [ReplicationLog.Entry] = []
    var sourceRev: String?
    var targetRev: String?
    var sourceTakesCheckpoints = true
    var uncheckpointed = false
    var lastCheckpoint = ContinuousClock.now
    // This session's counts, for its history entry.
    var missingChecked = 0
    var missingFound = 0
    var documentsRead = 0
    var documentsWritten = 0
    var documentWriteFailures = 0

    var source: any ReplicationPeer { replication.source }
    var target: any ReplicationPeer { replication.target }
    var options: ReplicationOptions { replication.options }

    init(
        replication: Replication, id: String, progress: ReplicationProgress,
        report: @escaping @Sendable (ReplicationProgress) -> Void
    ) {
        self.replication = replication
        self.id = id
        self.progress = progress
        self.report = report
    }

    /// Finds the common ancestry, then copies batches until caught up (or, continuous,
    /// forever). `batchDone` is called after each batch copied.
    func run(batchDone: () -> Void) async throws {
        let sourceLog = try await source.localDocument(id)
        let targetLog = try await target.localDocument(id)
        sourceRev = sourceLog?.rev
        targetRev = targetLog?.rev
        (startSequence, olderHistory) = ReplicationLog.startingPoint(
            source: ReplicationLog(sourceLog?.body), target: ReplicationLog(targetLog?.body))
        sequence = startSequence
        progress.sourceSequence = startSequence
        progress.checkpointedSequence = startSequence
        progress.sourceUpdateSequence = try await source.updateSequence()
        progress.state = .running
        report(progress)

        while true {
            try Task.checkCancellation()
            var page = try await source.changes(
                since: sequence, limit: options.batchSize, documentIDs: options.documentIDs, wait: nil)
            if page.results.isEmpty {
                if uncheckpointed { try await checkpoint() }
                guard options.continuous else {
                    progress.state = .completed
                    report(progress)
                    return
                }
                if progress.state != .idle {
                    progress.state = .idle
                    report(progress)
                }
                page = try await source.changes(
                    since: sequence, limit: options.batchSize, documentIDs: options.documentIDs,
                    wait: options.pollTimeout)
                if page.results.isEmpty { continue }
            }
            progress.state = .running
            try await copy(page.results)
            sequence = page.lastSequence
            progress.sourceSequence = sequence
            uncheckpointed = true
            batchDone()
            if ContinuousClock.now - lastCheckpoint >= options.checkpointInterval { try await checkpoint() }
            report(progress)
        }
    }

    /// Copies what the target lacks of `changes`.
    private func copy(_ changes: [PeerChange]) async throws {
        var offered: [String: [DocumentRevision]] = [:]
        for change in changes { offered[change.id, default: []].append(contentsOf: change.leaves) }
        let offeredCount = changes.reduce(0) { $0 + $1.leaves.count }
        missingChecked += offeredCount
        progress.missingChecked += offeredCount
        let lacking = try await target.revsDiff(offered)
        var requests: [PeerRevisionRequest] = []
        var asked = Set<String>()
        for change in changes where asked.insert(change.id).inserted {
            for revision in lacking[change.id]?.missing ?? [] {
                requests.append(PeerRevisionRequest(id: change.id, revision: revision))
            }
        }
        missingFound += requests.count
        progress.missingFound += requests.count
        var start = 0
        while start < requests.count {
            try Task.checkCancellation()
            let chunk = Array(requests[start..<min(start + options.batchSize, requests.count)])
            start += chunk.count
            let documents = try await source.fetch(chunk)
            documentsRead += documents.count
            progress.documentsRead += documents.count
            if documents.isEmpty { continue }
            for result in try await target.store(documents) {
                switch result {
                case .stored:
                    documentsWritten += 1
                    progress.documentsWritten += 1
                case .rejected:
                    documentWriteFailures += 1
                    progress.documentWriteFailures += 1
                }
            }
        }
        try await target.ensureFullCommit()
    }

    /// Records `sequence` in the checkpoints, on the source (when it takes them) and then
    /// on the target.
    private func checkpoint() async throws {
        let entry: JSONObject = [
            "session_id": .string(sessionID),
            "start_time": .string(ReplicationLog.timestamp(startTime)),
            "end_time": .string(ReplicationLog.timestamp(Date())),
            "start_last_seq": startSequence,
            "end_last_seq": sequence,
            "recorded_seq": sequence,
            "missing_checked": .int(Int64(missingChecked)),
            "missing_found": .int(Int64(missingFound)),
            "docs_read": .int(Int64(documentsRead)),
            "docs_written": .int(Int64(documentsWritten)),
            "doc_write_failures": .int(Int64(documentWriteFailures))
        ]
        let log = ReplicationLog(
            sessionID: sessionID, sourceLastSequence: sequence,
            history: [ReplicationLog.Entry(sessionID: sessionID, recordedSequence: sequence, fields: entry)]
                + olderHistory)
        if sourceTakesCheckpoints {
            do {
                sourceRev = try await source.putLocalDocument(id, body: log.body, rev: sourceRev)
            } catch let error as KVDocsError where error.kind == .conflict {
                throw TransientPeerError("the checkpoint on the source changed during the replication: \(error)")
            } catch let error as TransientPeerError {
                throw error
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                // A source that cannot take checkpoints (read-only) replicates on; the next
                // run finds no common checkpoint and asks the target from the start, which
                // copies nothing twice.
                sourceTakesCheckpoints = false
            }
        }
        do {
            targetRev = try await target.putLocalDocument(id, body: log.body, rev: targetRev)
        } catch let error as KVDocsError where error.kind == .conflict {
            throw TransientPeerError("the checkpoint on the target changed during the replication: \(error)")
        }
        uncheckpointed = false
        lastCheckpoint = ContinuousClock.now
        progress.checkpointedSequence = sequence
    }
}
