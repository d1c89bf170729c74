import KVDocs

// The commands of a layered session (`--base`) and backups.
extension CommandTable {
    static let layers = CommandDefinition<NoArguments>(
        "layers", usage: "layers", summary: "a layered session (--base): the base and user databases and their sizes",
        access: .read, target: .levelDBFiles, parse: { _ in NoArguments() }
    ) { session, _ in
        let layers = try session.layered()
        let (baseBytes, userBytes) = layers.sizes()
        session.emit(
            [
                "base": .string(layers.basePath), "base_bytes": .int(Int64(baseBytes)),
                "user": .string(layers.userPath), "user_bytes": .int(Int64(userBytes))
            ],
            "base: \(layers.basePath) (\(baseBytes) bytes, read-only)\nuser: \(layers.userPath) (\(userBytes) bytes)")
    }

    static let replaceBase = CommandDefinition<ShellCommand.ReplaceBase>(
        "replace-base", usage: "replace-base NEWBASE [--allow-unrelated]",
        summary:
            "a layered session: swap the base for the database at NEWBASE atomically, keeping the user's documents and deletes; the new base is copied, read whole and checked (schema, unique values) first, and on any failure the old base stays; a base with no document store or none of the store's collections is refused unless --allow-unrelated",
        access: .write, target: .levelDBFiles, keywords: ["--allow-unrelated"],
        parse: { s in
            let newBase = try path(&s)
            s.skipSpaces()
            return .init(path: newBase, allowingUnrelated: s.accept("--allow-unrelated"))
        }
    ) { session, arguments in
        let layers = try session.layered()
        try layers.replaceBase(with: arguments.path, allowingUnrelatedBase: arguments.allowingUnrelated) {
            [progress = session.progress] p in
            progress?("\(p.phase): \(p.done)/\(p.total)")
        }
        session.emit(["ok": true, "base": .string(layers.basePath)], "the base is now \(layers.basePath)")
    }

    static let backup = CommandDefinition<String>(
        "backup", usage: "backup DIR",
        summary:
            "write a consistent copy of the database (of the user database, in a layered session) into the new directory DIR, from one snapshot",
        access: .read, target: .levelDBFiles, parse: path
    ) { session, directory in
        let report = try session.layers.map { try $0.backup(to: directory) } ?? session.database.backup(to: directory)
        session.emit(
            [
                "ok": true, "path": .string(report.path), "entries": .int(Int64(report.entries)),
                "bytes": .int(Int64(report.bytes))
            ],
            "backed up \(report.entries) entries (\(report.bytes) bytes) to \(report.path)")
    }
}

extension ShellSession {
    /// The layers of a layered session.
    /// - Throws: `.invalidArgument` in a session without `--base`.
    func layered() throws -> LayeredDocumentStore {
        guard let layers else {
            throw KVDocsError(.invalidArgument, "this session has no layers: open it with --base BASEDB")
        }
        return layers
    }
}
