import KVSupport

/// A kvrepl command that an ``IndexKind`` offers for its queries: what it is called, how it
/// is written, and the read it makes.
///
/// The shell parses the command line as `NAME COLLECTION VALUE… [using INDEX] [where COND
/// [and COND]…] [limit N] [offset N]` (one JSON literal per name in ``values``, then the
/// clauses in any order, each once), runs ``run`` on the session's snapshot, and prints the
/// rows it returns as it prints documents: one compact JSON object per line, with `--json`
/// too, or in the session's `--format`. The command reads; it cannot write.
///
/// ARCHITECTURE.md ("Adding an index kind") shows a whole kind with its command.
public struct IndexKindCommand: Sendable {
    /// What the shell parsed from a command line.
    public struct Invocation: Sendable {
        /// The collection named after the command.
        public let collection: String
        /// The JSON literals after the collection, one per name of ``IndexKindCommand/values``.
        public let values: [JSONValue]
        /// The index named with `using INDEX`, if any.
        public let index: String?
        /// The `where` conditions, `limit` and `offset` given (no order).
        public let query: DocumentQuery

        /// An invocation of a command on `collection`.
        /// - Parameters:
        ///   - collection: the collection named after the command.
        ///   - values: the JSON literals after it.
        ///   - index: the index named with `using`.
        ///   - query: the conditions, limit and offset given.
        public init(
            collection: String, values: [JSONValue], index: String? = nil, query: DocumentQuery = DocumentQuery()
        ) {
            self.collection = collection
            self.values = values
            self.index = index
            self.query = query
        }
    }

    /// The command's name: one word, lower case, not a built-in command's.
    public let name: String
    /// One line saying what the command returns, for `help`.
    public let summary: String
    /// The names of the JSON literals that follow the collection, in order (`["MIN", "MAX"]`),
    /// for the usage line and messages.
    public let values: [String]
    /// Reads the rows the command prints through `transaction` (the session's snapshot).
    public let run: @Sendable (_ invocation: Invocation, _ transaction: ReadTransaction) throws -> [JSONValue]

    /// A command named `name`.
    /// - Parameters:
    ///   - name: one word, lower case.
    ///   - summary: what the command returns.
    ///   - values: the names of the JSON literals after the collection.
    ///   - run: the read, returning the rows to print.
    public init(
        name: String, summary: String, values: [String] = [],
        run: @escaping @Sendable (_ invocation: Invocation, _ transaction: ReadTransaction) throws -> [JSONValue]
    ) {
        self.name = name
        self.summary = summary
        self.values = values
        self.run = run
    }

    /// How the command is written: `NAME COLLECTION VALUE… [using INDEX] [where …] [limit N] [offset N]`.
    public var usage: String {
        ([name, "COLLECTION"] + values + ["[using INDEX]", "[where …]", "[limit N]", "[offset N]"])
            .joined(separator: " ")
    }
}
