/// The one error type thrown by KVDocs.
///
/// Every error carries a ``Kind`` that callers can match on, a human-readable
/// message (for storage errors, LevelDB's own status message), and the context
/// in which it happened: the database path, and the key where one applies.
///
/// Match a kind directly in a `catch` clause, or bind the error to read its context:
///
/// ```swift
/// do {
///     let db = try LevelDB(path: path)
/// } catch KVDocsError.locked {
///     print("another process has \(path) open")
/// } catch let error as KVDocsError where error.kind == .corruption {
///     print("damaged: \(error.message)")
/// }
/// ```
public struct KVDocsError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, in a form that can be matched with `==` or `switch`.
    ///
    /// Kinds are open-ended static values (like GRDB's result codes), so later
    /// versions can add kinds without breaking exhaustive `switch` statements.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        /// The kind's name as it appears in messages: `"locked"`, `"I/O error"`, ….
        /// Two kinds are equal when their raw values are.
        public let rawValue: String
        /// A kind named `rawValue`. KVDocs's own kinds are the static members below; a
        /// kind made here with the same name is equal to the static one.
        public init(_ rawValue: String) { self.rawValue = rawValue }
        /// The kind's name, ``rawValue``.
        public var description: String { rawValue }

        /// LevelDB's `NotFound` status.
        public static let notFound = Kind("not found")
        /// Stored data failed a checksum or is otherwise damaged (LevelDB's `Corruption`).
        public static let corruption = Kind("corruption")
        /// The operation is not supported (LevelDB's `Not implemented`).
        public static let notSupported = Kind("not supported")
        /// An argument or option was rejected (LevelDB's `Invalid argument`, or
        /// KVDocs's own validation of options).
        public static let invalidArgument = Kind("invalid argument")
        /// The file system failed (LevelDB's `IO error`).
        public static let ioError = Kind("I/O error")
        /// The database is held by another process or another handle in this process.
        public static let locked = Kind("locked")
        /// The database was closed, or the snapshot released, before this use.
        public static let closed = Kind("closed")
        /// Bytes could not be decoded as the requested type (a value, a tuple, a key).
        public static let decoding = Kind("decoding")
        /// A value has a different type than the one asked for or declared.
        public static let typeMismatch = Kind("type mismatch")
        /// A schema or keyspace declaration is malformed, or a key does not fit it.
        public static let schema = Kind("schema")
        /// A write would give two documents the same value in a unique index.
        public static let uniqueViolation = Kind("unique violation")
        /// A document with that id already exists (insert), or none exists (update); or a
        /// write transaction gave way to another writer (``KVDocsError/isRetryable``).
        public static let conflict = Kind("conflict")
        /// A read asked for a state that the store has discarded: a snapshot of an etcd store
        /// older than the cluster's compaction. Read again from a new snapshot.
        public static let compacted = Kind("compacted")
        /// A request exceeds a limit of the store (etcd: operations in one transaction,
        /// request bytes, the space quota); the message names the limit. Nothing was written.
        public static let limitExceeded = Kind("limit exceeded")
        /// The store cannot be reached, or has no quorum (etcd: every endpoint failed or timed
        /// out); the message says whether a write's outcome is unknown.
        public static let unavailable = Kind("unavailable")
        /// A table of the database is compressed with an algorithm this build's LevelDB
        /// lacks (Snappy, in a build whose LevelDB has none: the one for Apple platforms), or
        /// an option asks for one. The data is not damaged: open it with a build that has
        /// Snappy, or rewrite it without compression there (kvrepl's `write-base`, a backup with
        /// compression `.none`).
        /// Never a reason to repair or salvage; both refuse such a database.
        public static let unsupportedCompression = Kind("unsupported compression")
    }

    /// What went wrong.
    public var kind: Kind
    /// The message: LevelDB's status text for storage errors, else KVDocs's own.
    public var message: String
    /// The path of the database involved, when there is one.
    public var path: String?
    /// The key involved, for errors of single-key reads and writes (`get`, `put`,
    /// `delete`, `withValue`), and of documents (the document's key); `nil` otherwise.
    public var key: [UInt8]?
    /// Whether the same operation may succeed if run again: a write transaction that gave
    /// way to another writer (``Kind/conflict``) of a store that checks its transactions
    /// optimistically. `false` for every other error, and for the `.conflict` of an insert
    /// whose id exists (running it again fails the same way).
    public var isRetryable: Bool = false

    /// An error of `kind` with `message`, and the database path and key it concerns, if any.
    /// Line breaks and other control characters in `message` (quoted input, say) are
    /// written as escapes, so that every error is one line.
    public init(_ kind: Kind, _ message: String, path: String? = nil, key: [UInt8]? = nil) {
        self.kind = kind
        self.message = message.escapingControlCharacters
        self.path = path
        self.key = key
    }

    /// A ``Kind/conflict`` that ``isRetryable``: a write transaction that found the data it
    /// read changed by another writer when it committed, and wrote nothing.
    public static func writeConflict(_ message: String, path: String? = nil, key: [UInt8]? = nil) -> KVDocsError {
        var error = KVDocsError(.conflict, message, path: path, key: key)
        error.isRetryable = true
        return error
    }

    /// `kind: message`, followed by ` (database: path)` when the message does not name the path.
    public var description: String {
        var text = "\(kind): \(message)"
        if let path, !message.contains(path) { text += " (database: \(path))" }
        return text
    }
}

extension KVDocsError {
    /// Builds an error from a LevelDB status string, choosing the kind from its prefix
    /// (`util/status.cc`: `NotFound: `, `Corruption: `, `Not implemented: `,
    /// `Invalid argument: `, `IO error: `).
    package init(status: String, path: String?) {
        let kind: Kind
        if status.hasPrefix("NotFound: ") {
            kind = .notFound
        } else if status.hasPrefix("Corruption: ") {
            kind = .corruption
        } else if status.hasPrefix("Not implemented: ") {
            kind = .notSupported
        } else if status.hasPrefix("Invalid argument: ") {
            kind = .invalidArgument
        } else if status.hasPrefix("IO error: ") {
            // env_posix.cc reports a held lock as an IO error on the LOCK file:
            // "lock <db>/LOCK: Resource temporarily unavailable" (another process) or
            // "lock <db>/LOCK: already held by process" (this process).
            let held =
                status.contains("/LOCK")
                && (status.contains("temporarily unavailable") || status.contains("already held"))
            kind = held ? .locked : .ioError
        } else {
            kind = .ioError
        }
        self.init(kind, status, path: path)
    }

    package static func closed(_ path: String) -> KVDocsError {
        KVDocsError(.closed, "the database at \(path) is closed", path: path)
    }
}

// MARK: - Matching kinds in `catch` clauses

extension KVDocsError {
    // Every kind, also as a member of the error type, so `catch KVDocsError.locked` reads
    // like the kind it matches. These are the same values as `Kind`'s.

    /// ``Kind/notFound``, for `catch KVDocsError.notFound`.
    public static let notFound = Kind.notFound
    /// ``Kind/corruption``, for `catch KVDocsError.corruption`.
    public static let corruption = Kind.corruption
    /// ``Kind/notSupported``, for `catch KVDocsError.notSupported`.
    public static let notSupported = Kind.notSupported
    /// ``Kind/invalidArgument``, for `catch KVDocsError.invalidArgument`.
    public static let invalidArgument = Kind.invalidArgument
    /// ``Kind/ioError``, for `catch KVDocsError.ioError`.
    public static let ioError = Kind.ioError
    /// ``Kind/locked``, for `catch KVDocsError.locked`.
    public static let locked = Kind.locked
    /// ``Kind/closed``, for `catch KVDocsError.closed`.
    public static let closed = Kind.closed
    /// ``Kind/decoding``, for `catch KVDocsError.decoding`.
    public static let decoding = Kind.decoding
    /// ``Kind/typeMismatch``, for `catch KVDocsError.typeMismatch`.
    public static let typeMismatch = Kind.typeMismatch
    /// ``Kind/schema``, for `catch KVDocsError.schema`.
    public static let schema = Kind.schema
    /// ``Kind/uniqueViolation``, for `catch KVDocsError.uniqueViolation`.
    public static let uniqueViolation = Kind.uniqueViolation
    /// ``Kind/conflict``, for `catch KVDocsError.conflict`.
    public static let conflict = Kind.conflict
    /// ``Kind/compacted``, for `catch KVDocsError.compacted`.
    public static let compacted = Kind.compacted
    /// ``Kind/limitExceeded``, for `catch KVDocsError.limitExceeded`.
    public static let limitExceeded = Kind.limitExceeded
    /// ``Kind/unavailable``, for `catch KVDocsError.unavailable`.
    public static let unavailable = Kind.unavailable
    /// ``Kind/unsupportedCompression``, for `catch KVDocsError.unsupportedCompression`.
    public static let unsupportedCompression = Kind.unsupportedCompression
}

extension KVDocsError.Kind {
    /// Matches an error of this kind: `catch KVDocsError.locked { … }`, or
    /// `case KVDocsError.corruption:` when switching over an `Error`.
    public static func ~= (kind: KVDocsError.Kind, error: any Error) -> Bool {
        (error as? KVDocsError)?.kind == kind
    }
}
