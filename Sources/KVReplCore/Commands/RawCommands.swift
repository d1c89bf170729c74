import Foundation
import KVDocs

// The commands on one LevelDB database's keys and files.
extension CommandTable {
    static let get = CommandDefinition<[UInt8]>(
        "get", usage: "get KEY", summary: "the value stored under KEY", access: .read, target: .rawKeys,
        completion: [.key], parse: { s in try s.keyLiteral() }
    ) { session, key in
        let database = try session.database
        guard let value = try database.get(key, options: session.readOptions) else {
            throw KVDocsError(.notFound, "key not found: \(ShellDisplay.key(key, keyspaces: session.keyspaces))")
        }
        session.emitRow(
            ShellDisplay.entryJSON(key: key, value: value, keyspaces: session.keyspaces),
            ShellDisplay.value(value, pretty: session.interactive))
    }

    static let put = CommandDefinition<ShellCommand.KeyValue>(
        "put", usage: "put KEY VALUE", summary: "store VALUE (a literal, or the rest of the line as text) under KEY",
        access: .write, target: .rawKeys, completion: [.key],
        parse: { s in
            let key = try s.keyLiteral()
            s.skipSpaces()
            guard !s.atEnd else { throw s.fail("expected a value after the key") }
            if let c = s.current,
                c == UInt8(ascii: "\"") || c == UInt8(ascii: "(") || s.peekWord()?.lowercased().hasPrefix("0x") == true
            {
                return .init(key: key, value: try s.keyLiteral("a value"))
            }
            return .init(key: key, value: Array(s.rest().utf8))  // the rest of the line, as text
        }
    ) { session, put in
        try session.database.put(put.key, put.value, sync: session.sync)
        session.emit(["ok": true], "OK")
    }

    static let del = CommandDefinition<[UInt8]>(
        "del", usage: "del KEY", summary: "remove KEY", access: .write, target: .rawKeys, completion: [.key],
        parse: { s in try s.keyLiteral() }
    ) { session, key in
        try session.database.delete(key, sync: session.sync)
        session.emit(["ok": true], "OK")
    }

    static let scanKeywords = ["--from", "--to", "--reverse", "--limit", "--keys-only", "--count"]

    static let scan = CommandDefinition<ShellCommand.ScanOptions>(
        "scan", usage: "scan [PREFIX] [--from KEY] [--to KEY] [--reverse] [--limit N] [--keys-only] [--count]",
        summary: "list entries (--to is exclusive)", access: .read, target: .rawKeys, completion: [.key],
        keywords: scanKeywords, parse: { s in try scanOptions(&s, allowPrefix: true) }
    ) { session, options in try session.scan(options) }

    static let delrange = CommandDefinition<ShellCommand.ScanOptions>(
        "delrange", usage: "delrange [PREFIX] [--from KEY] [--to KEY] [--reverse] [--limit N]",
        summary: "remove the entries a scan would list (asks first, interactively)", access: .write,
        target: .rawKeys, completion: [.key], keywords: scanKeywords,
        parse: { s in try scanOptions(&s, allowPrefix: true) }
    ) { session, options in try session.deleteRange(options) }

    static let stats = CommandDefinition<NoArguments>(
        "stats", usage: "stats", summary: "files per level, size, memory and LevelDB's compaction statistics",
        access: .read, target: .rawKeys, parse: { _ in NoArguments() }
    ) { session, _ in
        let database = try session.database
        let files = try (0...6).map { try database.numberOfFiles(atLevel: $0) ?? 0 }
        let memory = try database.approximateMemoryUsage() ?? 0
        let size = try database.approximateSize()
        let stats = try database.property("leveldb.stats") ?? ""
        session.emit(
            [
                "path": .string(session.path), "files_per_level": .array(files.map { .int(Int64($0)) }),
                "approximate_memory_usage": .int(Int64(memory)), "approximate_size": .uint(size),
                "stats": .string(stats)
            ],
            "path: \(session.path)\nfiles per level: \(files.map(String.init).joined(separator: " "))\napproximate size: \(size) bytes\nmemory: \(memory) bytes\n\(stats)"
        )
    }

    static let property = CommandDefinition<String>(
        "property", usage: "property NAME",
        summary:
            "a LevelDB property (leveldb.stats, leveldb.sstables, leveldb.num-files-at-levelN, leveldb.approximate-memory-usage)",
        access: .read, target: .rawKeys,
        completion: [
            .words([
                "leveldb.stats", "leveldb.sstables", "leveldb.num-files-at-level0", "leveldb.approximate-memory-usage"
            ])
        ],
        parse: { s in try s.expectWord("a property name, such as leveldb.stats") }
    ) { session, name in
        guard let value = try session.database.property(name) else {
            throw KVDocsError(
                .notFound,
                "unknown property \"\(name)\" (try leveldb.stats, leveldb.sstables, leveldb.num-files-at-level0, leveldb.approximate-memory-usage)"
            )
        }
        session.emit(["name": .string(name), "value": .string(value)], value)
    }

    static let size = CommandDefinition<ShellCommand.KeyBounds>(
        "size", usage: "size [--from KEY] [--to KEY]", summary: "approximate bytes on disk of a key range",
        access: .read, target: .rawKeys, keywords: ["--from", "--to"], parse: keyBounds
    ) { session, bounds in
        let size = try session.database.approximateSize(of: bounds.range)
        session.emit(["size": .uint(size)], "\(size) bytes")
    }

    static let compact = CommandDefinition<ShellCommand.KeyBounds>(
        "compact", usage: "compact [--from KEY] [--to KEY]", summary: "compact a key range (everything by default)",
        access: .write, target: .rawKeys, keywords: ["--from", "--to"], parse: keyBounds
    ) { session, bounds in
        try session.database.compact(bounds.range)
        session.emit(["ok": true], "compacted")
    }

    @Sendable static func keyBounds(_ s: inout LineScanner) throws -> ShellCommand.KeyBounds {
        let o = try scanOptions(&s, allowPrefix: false, only: ["--from", "--to"])
        return .init(from: o.from, to: o.to)
    }

    static let snapshot = CommandDefinition<NoArguments>(
        "snapshot", usage: "snapshot", summary: "make later reads see the database as it is now", access: .read,
        target: .rawKeys, parse: { _ in NoArguments() }
    ) { session, _ in
        session.snapshot?.release()
        session.snapshot = try session.database.snapshot()
        session.emit(
            ["ok": true, "snapshot": true], "snapshot taken: reads now see the database as it is now (release to end)")
    }

    static let release = CommandDefinition<NoArguments>(
        "release", usage: "release", summary: "release the snapshot", access: .read, target: .rawKeys,
        parse: { _ in NoArguments() }
    ) { session, _ in
        guard let current = session.snapshot else {
            throw KVDocsError(.invalidArgument, "there is no snapshot to release")
        }
        current.release()
        session.snapshot = nil
        session.emit(["ok": true, "snapshot": false], "snapshot released")
    }

    static let dump = CommandDefinition<String>(
        "dump", usage: "dump FILE", summary: "write every entry as JSON lines {\"key_hex\", \"value_hex\"}",
        access: .read, target: .rawKeys, parse: path
    ) { session, file in
        let count = try session.database.dump(to: file, options: session.readOptions)
        session.emit(
            ["ok": true, "entries": .int(Int64(count)), "file": .string(file)], "dumped \(count) entries to \(file)")
    }

    static let load = CommandDefinition<String>(
        "load", usage: "load FILE", summary: "put the entries of a dump file", access: .write, target: .rawKeys,
        parse: path
    ) { session, file in
        // Every line is checked first, so a bad file changes nothing.
        let count = try session.database.load(from: file, sync: session.sync)
        session.emit(["ok": true, "entries": .int(Int64(count))], "loaded \(count) entries from \(file)")
    }

    static let keyspaces = CommandDefinition<ShellCommand.ShowOrLoad>(
        "keyspaces", usage: "keyspaces | keyspaces load FILE",
        summary: "list the declared keyspaces, or store them from a JSON file", access: .read, target: .rawKeys,
        completion: [.words(["load"])], writes: { $0 != .show },
        displayName: { $0 == .show ? "keyspaces" : "keyspaces load" },
        parse: { s in s.accept("load") ? .load(try path(&s)) : .show }
    ) { session, action in
        switch action {
        case .show:
            let keyspaces = session.keyspaces
            for (name, k) in keyspaces.keyspaces.sorted(by: { $0.key < $1.key }) {
                session.emitRow(
                    [
                        "name": .string(name), "prefix": .string(k.prefix.description),
                        "components": .array(
                            k.components.map { ["name": .string($0.name), "type": .string($0.type.rawValue)] })
                    ],
                    k.description)
            }
            if keyspaces.keyspaces.isEmpty && !session.json {
                session.out("no keyspaces declared (keyspaces load FILE declares them)")
            }
        case .load(let file):
            let loaded = try KeySchema(contentsOfFile: file)
            try loaded.store(in: session.database)
            session.keyspaces = loaded
            session.emit(
                ["ok": true, "keyspaces": .int(Int64(loaded.keyspaces.count))],
                "stored \(loaded.keyspaces.count) keyspaces")
        }
    }

    static let repair = CommandDefinition<NoArguments>(
        "repair", usage: "repair",
        summary:
            "close the database, rebuild its metadata from its files (LevelDB's repair) and reopen it (asks first, interactively)",
        access: .write, target: .rawKeys, parse: { _ in NoArguments() }
    ) { session, _ in try session.repair() }
}

extension ShellSession {
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
}
