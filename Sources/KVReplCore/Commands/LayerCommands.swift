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

    static let backup = CommandDefinition<ShellCommand.Backup>(
        "backup", usage: "backup DIR [--compression none|snappy]",
        summary:
            "write a consistent copy of the database (of the user database, in a layered session) into the new directory DIR, from one snapshot; its tables compressed as --compression says (by default Snappy where this build has it)",
        access: .read, target: .levelDBFiles, keywords: ["--compression"],
        parse: { s in
            let directory = try path(&s)
            s.skipSpaces()
            var compression: LevelDBOptions.Compression?
            if s.accept("--compression") {
                switch try s.expectWord("none or snappy") {
                case "none": compression = LevelDBOptions.Compression.none
                case "snappy": compression = .snappy
                case let other: throw s.fail("unknown compression \"\(other)\": expected none or snappy")
                }
            }
            return .init(path: directory, compression: compression)
        }
    ) { session, arguments in
        var options = LevelDBOptions()
        if let compression = arguments.compression { options.compression = compression }
        let report =
            try session.layers.map { try $0.storage.user.backup(to: arguments.path, options: options) }
            ?? session.database.backup(to: arguments.path, options: options)
        session.emit(
            [
                "ok": true, "path": .string(report.path), "entries": .int(Int64(report.entries)),
                "bytes": .int(Int64(report.bytes))
            ],
            "backed up \(report.entries) entries (\(report.bytes) bytes) to \(report.path)")
    }

    static let writeBase = CommandDefinition<String>(
        "write-base", usage: "write-base DIR",
        summary:
            "write the database as a base for an app to ship (kvrepl USER --base DIR, LayeredDocumentStore): a consistent copy in the new directory DIR, without compression (the LevelDB of Apple platforms has no Snappy) and compacted",
        access: .read, target: .levelDBFiles, parse: path
    ) { session, directory in
        guard session.layers == nil else {
            throw KVDocsError(
                .invalidArgument,
                "write-base writes a base from a plain database; this session is layered (open the database the base is built in without --base)"
            )
        }
        let report = try LayeredDocumentStore.writeBase(of: session.database, to: directory) {
            [progress = session.progress] n in progress?("copied \(n) entries")
        }
        session.emit(
            [
                "ok": true, "path": .string(report.path), "entries": .int(Int64(report.entries)),
                "bytes": .int(Int64(report.bytes)), "compression": "none"
            ],
            "wrote a base of \(report.entries) entries (\(report.bytes) bytes, uncompressed, compacted) to \(report.path)"
        )
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
