/// The one error type thrown by KVDocs.
///
/// Every error carries a ``Kind`` that callers can match on, a human-readable
/// message (for storage errors, LevelDB's own status message), and the context
/// in which it happened: the database path, and the key where one applies.
///
/// ```swift
/// do {
///     let db = try Database(path: path)
/// } catch let error as KVDocsError where error.kind == .locked {
///     print("another process has \(error.path ?? path) open")
/// }
/// ```
public struct KVDocsError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, in a form that can be matched with `==` or `switch`.
    ///
    /// Kinds are open-ended static values (like GRDB's result codes), so later
    /// versions can add kinds without breaking exhaustive `switch` statements.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
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
    }

    /// What went wrong.
    public var kind: Kind
    /// The message: LevelDB's status text for storage errors, else KVDocs's own.
    public var message: String
    /// The path of the database involved, when there is one.
    public var path: String?

    public init(_ kind: Kind, _ message: String, path: String? = nil) {
        self.kind = kind
        self.message = message
        self.path = path
    }

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
    init(status: String, path: String?) {
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
            kind = status.contains("/LOCK") ? .locked : .ioError
        } else {
            kind = .ioError
        }
        self.init(kind, status, path: path)
    }

    static func closed(_ path: String) -> KVDocsError {
        KVDocsError(.closed, "the database at \(path) is closed", path: path)
    }
}
