import KVDocs

extension ShellSession {
    /// Runs a parsed command, after the checks its definition calls for: a write in a
    /// read-only session, a command on raw keys in a layered session or on another store, a
    /// command on LevelDB's files on another store. Returns true for `quit`.
    func execute(_ command: ShellCommand) throws -> Bool {
        if readOnly && command.isWrite {
            throw KVDocsError(.invalidArgument, "read-only session: \(command.displayName) would modify the database")
        }
        if layers != nil, command.isRaw {
            throw KVDocsError(
                .invalidArgument,
                "\(command.displayName) works on one LevelDB database; this session is layered (--base): use the document commands, layers, replace-base and backup"
            )
        }
        if otherStore != nil, command.needsLevelDB {
            throw KVDocsError(
                .notSupported,
                "\(command.displayName) works on a LevelDB database's keys and files; this session is on \(path): use the document commands"
            )
        }
        quitting = false
        try command.definition.run(command, in: self)
        return quitting
    }
}
