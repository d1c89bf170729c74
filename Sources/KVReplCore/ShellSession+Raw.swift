import Foundation
import KVDocs

extension ShellSession {
    /// Runs a command; returns true for `quit`.
    func execute(_ command: ShellCommand) throws -> Bool {
        if readOnly && command.isWrite {
            throw KVDocsError(
                .invalidArgument, "read-only session: \(ShellCommand.name(of: command)) would modify the database")
        }
        if layers != nil, command.isRaw {
            throw KVDocsError(
                .invalidArgument,
                "\(ShellCommand.name(of: command)) works on one LevelDB database; this session is layered (--base): use the document commands, layers, replace-base and backup"
            )
        }
        if otherStore != nil, command.isRaw || Self.needsLevelDB(command) {
            throw KVDocsError(
                .notSupported,
                "\(ShellCommand.name(of: command)) works on a LevelDB database's keys and files; this session is on \(path): use the document commands"
            )
        }
        switch command {
        case .quit: return true
        case .get(let key):
            guard let value = try database.get(key, options: readOptions) else {
                throw KVDocsError(.notFound, "key not found: \(ShellDisplay.key(key, keyspaces: keyspaces))")
            }
            emitRow(
                ShellDisplay.entryJSON(key: key, value: value, keyspaces: keyspaces),
                ShellDisplay.value(value, pretty: interactive))
        case .put(let key, let value):
            try database.put(key, value, sync: sync)
            emit(["ok": true], "OK")
        case .del(let key):
            try database.delete(key, sync: sync)
            emit(["ok": true], "OK")
        case .scan(let o): try scan(o)
        case .delrange(let o): try deleteRange(o)
        case .stats:
            let files = try (0...6).map { try database.numberOfFiles(atLevel: $0) ?? 0 }
            let memory = try database.approximateMemoryUsage() ?? 0
            let size = try database.approximateSize()
            let stats = try database.property("leveldb.stats") ?? ""
            emit(
                [
                    "path": .string(path), "files_per_level": .array(files.map { .int(Int64($0)) }),
                    "approximate_memory_usage": .int(Int64(memory)), "approximate_size": .uint(size),
                    "stats": .string(stats)
                ],
                "path: \(path)\nfiles per level: \(files.map(String.init).joined(separator: " "))\napproximate size: \(size) bytes\nmemory: \(memory) bytes\n\(stats)"
            )
        case .property(let name):
            guard let value = try database.property(name) else {
                throw KVDocsError(
                    .notFound,
                    "unknown property \"\(name)\" (try leveldb.stats, leveldb.sstables, leveldb.num-files-at-level0, leveldb.approximate-memory-usage)"
                )
            }
            emit(["name": .string(name), "value": .string(value)], value)
        case .size(let from, let to):
            let size = try database.approximateSize(
                of: KeyRange(lower: from.map { .included($0) }, upper: to.map { .excluded($0) }))
            emit(["size": .uint(size)], "\(size) bytes")
        case .compact(let from, let to):
            try database.compact(KeyRange(lower: from.map { .included($0) }, upper: to.map { .excluded($0) }))
            emit(["ok": true], "compacted")
        case .snapshot:
            snapshot?.release()
            snapshot = try database.snapshot()
            emit(
                ["ok": true, "snapshot": true],
                "snapshot taken: reads now see the database as it is now (release to end)")
        case .release:
            guard let current = snapshot else { throw KVDocsError(.invalidArgument, "there is no snapshot to release") }
            current.release()
            snapshot = nil
            emit(["ok": true, "snapshot": false], "snapshot released")
        case .dump(let file): try dump(file)
        case .load(let file): try load(file)
        case .keyspaces:
            for (name, k) in keyspaces.keyspaces.sorted(by: { $0.key < $1.key }) {
                emitRow(
                    [
                        "name": .string(name), "prefix": .string(k.prefix.description),
                        "components": .array(
                            k.components.map { ["name": .string($0.name), "type": .string($0.type.rawValue)] })
                    ],
                    k.description)
            }
            if keyspaces.keyspaces.isEmpty && !json { out("no keyspaces declared (keyspaces load FILE declares them)") }
        case .keyspacesLoad(let file):
            let loaded = try KeySchema(contentsOfFile: file)
            try loaded.store(in: database)
            keyspaces = loaded
            emit(
                ["ok": true, "keyspaces": .int(Int64(loaded.keyspaces.count))],
                "stored \(loaded.keyspaces.count) keyspaces")
        case .sync(let on):
            if let on { sync = on }
            emit(
                ["sync": .bool(sync)],
                sync
                    ? "sync on: every write waits for the disk"
                    : "sync off: writes survive a crash of kvrepl, not of the machine")
        case .repair: try repair()
        case .format(let chosen):
            if let chosen { format = chosen }
            let name = format?.rawValue ?? "text"
            if json {
                emit(["format": .string(name), "json": true], "")
            } else {
                out(chosen == nil ? "format \(name)" : "results print as \(name)")
            }
        case .timer(let on):
            if let on { timer = on }
            emit(["timer": .bool(timer)], timer ? "timer on: each command's wall time prints after it" : "timer off")
        case .help(let topic):
            let text = try Help.text(topic)
            emit(["help": .string(text)], text)
        default:
            try executeDocument(command)
        }
        return false
    }

    func scan(_ o: ShellCommand.ScanOptions) throws {
        leadingColumns = ["key", "value"]
        let entries = try database.entries(
            o.range, order: o.reverse ? .reverse : .forward, limit: o.limit, options: readOptions)
        if o.count {
            var n = 0
            while try entries.next({ _, _ in }) != nil { n += 1 }
            emitRow(["count": .int(Int64(n))], "\(n)")
            return
        }
        while let entry = try entries.next({ k, v in (Array(k), o.keysOnly ? [] : Array(v)) }) {
            let (key, value) = entry
            if o.keysOnly {
                emitRow(
                    ShellDisplay.entryJSON(key: key, value: nil, keyspaces: keyspaces),
                    ShellDisplay.key(key, keyspaces: keyspaces))
            } else {
                emitRow(
                    ShellDisplay.entryJSON(key: key, value: value, keyspaces: keyspaces),
                    ShellDisplay.key(key, keyspaces: keyspaces) + " = " + ShellDisplay.value(value, pretty: interactive)
                )
            }
        }
    }

    func deleteRange(_ o: ShellCommand.ScanOptions) throws {
        let order: ScanOrder = o.reverse ? .reverse : .forward
        if interactive, let confirm {
            let count = try database.forEach(in: o.range, order: order, limit: o.limit) { _, _ in }
            if count > 0, !confirm("delete \(count) key\(count == 1 ? "" : "s")? [y/N] ") {
                emit(["ok": false, "deleted": 0], "nothing deleted")
                return
            }
        }
        let deleted = try database.deleteRange(o.range, order: order, limit: o.limit, sync: sync)
        emit(["ok": true, "deleted": .int(Int64(deleted))], "deleted \(deleted) key\(deleted == 1 ? "" : "s")")
    }

    /// Every entry as JSON lines {"key_hex", "value_hex"}: restores exactly with `load`.
    func dump(_ file: String) throws {
        let count = try database.dump(to: file, options: readOptions)
        emit(["ok": true, "entries": .int(Int64(count)), "file": .string(file)], "dumped \(count) entries to \(file)")
    }

    /// Puts the entries of a dump file; checks every line first, so a bad file changes nothing.
    func load(_ file: String) throws {
        let count = try database.load(from: file, sync: sync)
        emit(["ok": true, "entries": .int(Int64(count))], "loaded \(count) entries from \(file)")
    }
}

extension ShellCommand {
    /// The command's name, for messages.
    static func name(of command: ShellCommand) -> String {
        let text = "\(command)"
        let base = text.prefix { $0.isLetter }
        switch base {
        case "keyspacesLoad": return "keyspaces load"
        case "schemaLoad": return "schema load"
        case "importFile": return "import"
        case "exportFile": return "export"
        default: return String(base)
        }
    }
}

extension ShellSession {
    /// Whether `command` works on a LevelDB database's files (besides the raw commands).
    static func needsLevelDB(_ command: ShellCommand) -> Bool {
        switch command {
        case .backup, .layers, .replaceBase, .salvage: true
        default: false
        }
    }
}
