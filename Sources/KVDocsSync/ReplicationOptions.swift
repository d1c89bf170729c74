import KVDocs

/// How a ``Replication`` runs.
public struct ReplicationOptions: Sendable, Hashable {
    /// Whether the replication keeps running after it caught up, waiting for the source's
    /// next changes (CouchDB's `continuous`), until its task is cancelled.
    public var continuous: Bool
    /// The most changes read from the source, and revisions written to the target, per
    /// batch.
    public var batchSize: Int
    /// How often a running replication records a checkpoint at most; it always records one
    /// when it has caught up.
    public var checkpointInterval: Duration
    /// How long one wait for the source's next change lasts in continuous mode, before the
    /// replication asks again.
    public var pollTimeout: Duration
    /// The wait before the first retry after a ``TransientPeerError``; each further retry
    /// waits twice as long, up to ``maximumRetryDelay``.
    public var initialRetryDelay: Duration
    /// The longest wait between retries.
    public var maximumRetryDelay: Duration
    /// How many transient failures in a row a one-shot replication retries before it
    /// fails; a continuous replication retries without end.
    public var maximumRetries: Int
    /// Only these documents; `nil` for all (CouchDB's `doc_ids`).
    public var documentIDs: Set<String>?

    /// Options with CouchDB's defaults: a one-shot replication in batches of 500, a
    /// checkpoint at most every 5 seconds.
    public init(
        continuous: Bool = false, batchSize: Int = 500, checkpointInterval: Duration = .seconds(5),
        pollTimeout: Duration = .seconds(10), initialRetryDelay: Duration = .milliseconds(200),
        maximumRetryDelay: Duration = .seconds(60), maximumRetries: Int = 10, documentIDs: Set<String>? = nil
    ) {
        self.continuous = continuous
        self.batchSize = batchSize
        self.checkpointInterval = checkpointInterval
        self.pollTimeout = pollTimeout
        self.initialRetryDelay = initialRetryDelay
        self.maximumRetryDelay = maximumRetryDelay
        self.maximumRetries = maximumRetries
        self.documentIDs = documentIDs
    }
}

/// Where a ``Replication`` stands, reported after every batch and at each change of state.
public struct ReplicationProgress: Sendable, Hashable {
    /// What the replication is doing.
    public enum State: Sendable, Hashable {
        /// Reading changes and copying revisions.
        case running
        /// Caught up; waiting for the source's next change (continuous replications).
        case idle
        /// Waiting to retry after a transient failure, described by the message.
        case retrying(String)
        /// Caught up and stopped (one-shot replications).
        case completed
    }

    /// The replication's id: the name of its checkpoint documents (`_local/<id>`).
    public var replicationID: String
    /// What the replication is doing.
    public var state: State
    /// The source sequence the replication has copied everything up to.
    public var sourceSequence: JSONValue
    /// The sequence last recorded in the checkpoints.
    public var checkpointedSequence: JSONValue?
    /// The source's latest sequence when the replication started (CouchDB's `update_seq`).
    public var sourceUpdateSequence: JSONValue?
    /// Revisions offered to the target (CouchDB's `missing_checked`).
    public var missingChecked: Int
    /// Revisions the target lacked (`missing_found`).
    public var missingFound: Int
    /// Revisions read from the source (`docs_read`).
    public var documentsRead: Int
    /// Revisions the target stored (`docs_written`).
    public var documentsWritten: Int
    /// Revisions the target refused (`doc_write_failures`).
    public var documentWriteFailures: Int

    init(replicationID: String, sourceSequence: JSONValue) {
        self.replicationID = replicationID
        self.state = .running
        self.sourceSequence = sourceSequence
        self.missingChecked = 0
        self.missingFound = 0
        self.documentsRead = 0
        self.documentsWritten = 0
        self.documentWriteFailures = 0
    }
}
