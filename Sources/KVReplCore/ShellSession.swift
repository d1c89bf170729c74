import Foundation
import KVDocs

/// An open kvrepl session: a database, its document layer when it has a schema, the
/// declared keyspaces, an optional snapshot, and the output mode. `run(_:)` executes one
/// command line and reports success; output goes through the `out` and `err` closures.
public final class ShellSession {
    public let path: String
    /// The open LevelDB database (a new handle after `repair`); `nil` in a session on another
    /// store (``open(store:readOnly:json:schemaFile:progress:)``, kvrepl `--etcd`).
    public private(set) var leveldb: LevelDB?
    /// The store of a session that is not on a LevelDB database.
    public private(set) var otherStore: (any KeyValueStore)?
    /// The open LevelDB database, for the commands that work on its files and raw keys.
    /// - Throws: `.notSupported` in a session on another store.
    public var database: LevelDB {
        get throws {
            guard let leveldb else {
                throw KVDocsError(
                    .notSupported,
                    "this session is on \(path), not on a LevelDB database: raw keys, dump, load, compact, snapshot, keyspaces, repair and backup work on LevelDB's files; use the document commands"
                )
            }
            return leveldb
        }
    }
    public internal(set) var store: DocumentStore?
    /// Why the document layer could not be opened, when it exists but is damaged; `salvage` opens it.
    public internal(set) var storeDamage: KVDocsError?
    public internal(set) var keyspaces: KeySchema
    public let readOnly: Bool
    public var json: Bool
    /// How results print (`--format`, the `format` command); `nil` prints them as kvrepl
    /// always has. Ignored with ``json``, whose output is a contract.
    public var format: OutputFormat?
    /// Whether each command's wall time is printed after it (`timer on|off`).
    public var timer = false
    /// The results of the running command, printed together when it ends (with a format).
    private var rows: [JSONValue] = []
    /// The columns that lead the running command's rows (its collection's primary key).
    var leadingColumns: [String] = []
    /// Set by `quit` while it runs: the session ends after the command.
    var quitting = false
    public var interactive: Bool
    /// Whether every write the shell makes (documents and raw) uses LevelDB's `sync` option,
    /// surviving a power loss or an OS crash (`--sync`, `sync on|off`).
    public var sync = false
    public internal(set) var snapshot: LevelDBSnapshot?
    /// The layers of a session opened with a base (`--base`): the documents are the merged
    /// view, ``database`` is the user database, and raw commands are refused.
    public internal(set) var layers: LayeredDocumentStore?
    /// Writes one block of output to standard output.
    public var out: (String) -> Void = { print($0) }
    /// Writes one error line to standard error.
    public var err: (String) -> Void = { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }
    /// Asks the user to confirm (interactive only); `nil` means yes.
    public var confirm: ((String) -> Bool)?
    /// Shows progress (interactive only).
    public var progress: ((String) -> Void)?
    /// Runs the sync commands (`replicate`); without one they are refused.
    public var syncCommands: (any SyncCommandHandler)?

    public enum Outcome: Equatable { case ok, failed, quit }

    init(path: String, database: LevelDB?, store: DocumentStore?, keyspaces: KeySchema, readOnly: Bool, json: Bool) {
        self.path = path
        self.leveldb = database
        self.store = store
        self.keyspaces = keyspaces
        self.readOnly = readOnly
        self.json = json
        self.interactive = false
    }

    /// Opens a session on `store`, any store behind the storage seam (an etcd cluster, say):
    /// its document layer when it has one or `schemaFile` is given. The document commands
    /// work as on a LevelDB database; the raw and file commands (get, put, scan, dump, load,
    /// compact, snapshot, keyspaces, repair, backup, layers) are refused.
    /// - Parameters:
    ///   - store: the store.
    ///   - readOnly: refuse every write command (the store itself is opened as it is).
    ///   - json: print results as JSON lines.
    ///   - schemaFile: a schema (JSON) to apply and store; else the stored one, if any.
    ///   - progress: called while indexes are built.
    public static func open(
        store: any KeyValueStore, readOnly: Bool = false, json: Bool = false, schemaFile: String? = nil,
        progress: ((String) -> Void)? = nil
    ) throws -> ShellSession {
        let schema = try schemaFile.map { try DocumentSchema(contentsOfFile: $0) }
        var documents: DocumentStore?
        let holdsStore = try DocumentCatalog().holdsDocumentStore(in: store)
        if schema != nil || holdsStore {
            if readOnly && schema != nil {
                throw KVDocsError(.invalidArgument, "--schema stores the schema; it cannot be used with --read-only")
            }
            documents = try DocumentStore(store: store, schema: schema) { p in
                progress?("building \(p.collection).\(p.index): \(p.done)/\(p.total)")
            }
        }
        let session = ShellSession(
            path: store.name, database: nil, store: documents, keyspaces: try KeySchema(), readOnly: readOnly,
            json: json)
        session.otherStore = store
        return session
    }

    /// Opens the database at `path`.
    ///
    /// - `create`: create it if missing (otherwise a missing or non-LevelDB directory is an
    ///   error and is left untouched).
    /// - `readOnly`: the directory is never modified: the session works on a private copy
    ///   (``LevelDB/openPrivateCopy(of:options:under:)``), and every write command is refused.
    /// - `schemaFile`: a schema (JSON) to apply and store; else the stored one, if any.
    public static func open(
        path: String, create: Bool = false, readOnly: Bool = false, json: Bool = false,
        schemaFile: String? = nil, base: String? = nil, progress: ((String) -> Void)? = nil
    ) throws -> ShellSession {
        if let base {
            guard !readOnly else {
                throw KVDocsError(
                    .invalidArgument, "--base opens the user database for writing; it cannot be used with --read-only")
            }
            let schema = try schemaFile.map { try DocumentSchema(contentsOfFile: $0) }
            // A user database whose CURRENT file is gone is damaged, not missing: repair
            // rebuilds it (see Advice.opening); --create would start it anew.
            let fm = FileManager.default
            if !create, !fm.fileExists(atPath: path + "/CURRENT"),
                let files = try? fm.contentsOfDirectory(atPath: path),
                files.contains(where: { $0.hasPrefix("MANIFEST-") || $0.hasSuffix(".log") || $0.hasSuffix(".ldb") })
            {
                throw KVDocsError(.corruption, "the user database \(path) has no CURRENT file", path: path)
            }
            let layers = try LayeredDocumentStore(user: path, base: base, schema: schema, create: create) { p in
                progress?("\(p.phase): \(p.done)/\(p.total)")
            }
            let session = ShellSession(
                path: path, database: layers.storage.user, store: layers.store, keyspaces: try KeySchema(),
                readOnly: false, json: json)
            session.layers = layers
            return session
        }
        if let record = try? JSONValue(parsing: Data(contentsOf: URL(fileURLWithPath: path + ".layers/LAYERS.json"))),
            case .string(let base)? = record["base"]
        {
            throw KVDocsError(
                .invalidArgument,
                "\(path) is the user layer of a layered database over \(base): open it with --base \(base)", path: path)
        }
        var options = LevelDBOptions()
        options.createIfMissing = create && !readOnly
        let database: LevelDB
        if readOnly {
            database = try LevelDB.openPrivateCopy(of: path, options: options)
        } else {
            do {
                database = try LevelDB(path: path, options: options)
            } catch let e as KVDocsError {
                if e.kind == .locked { throw e }  // it names the holder (a handle of this process, or a pid)
                if e.kind == .invalidArgument && e.message.contains("does not exist") {
                    throw KVDocsError(
                        .invalidArgument, "\(path) is not a LevelDB database (use --create to create one)", path: path)
                }
                throw e
            }
        }
        do {
            // A layered backup (or a copy of a user layer) reads only over its base. (A read
            // that fails here is left to the commands, which report it with their advice.)
            if (try? DocumentStore.isUserLayer(database)) == true {
                throw KVDocsError(.invalidArgument, ShellAdvice.userLayerWithoutBase(path), path: path)
            }
            var store: DocumentStore?
            var damage: KVDocsError?
            let report: (DocumentStore.IndexBuildProgress) -> Void = { p in
                progress?("building \(p.collection).\(p.index): \(p.done)/\(p.total)")
            }
            if let schemaFile {
                store = try DocumentStore(
                    database: database, schema: try DocumentSchema(contentsOfFile: schemaFile), progress: report)
            } else if try DocumentStore.exists(in: database) {
                do {
                    store = try DocumentStore(database: database, progress: report)
                } catch let e as KVDocsError where e.kind == .corruption {
                    // Damage in the document layer (a document an index build met, a catalog
                    // record): open the raw database, so that what Advice.storeDamage names
                    // (salvage, repair, schema load) can be run.
                    damage = e
                }
            }
            let keyspaces = try KeySchema.stored(in: database)
            let session = ShellSession(
                path: path, database: database, store: store, keyspaces: keyspaces, readOnly: readOnly, json: json)
            session.storeDamage = damage
            return session
        } catch {
            database.close()  // removes a private copy
            throw error
        }
    }

    /// Closes the database, runs LevelDB's repair on it (which rebuilds the metadata from
    /// the table and log files, keeping what it can read), and reopens it with its document
    /// layer and keyspaces. Interactively, asks first. A snapshot in use is released.
    func repair() throws {
        if interactive, let confirm,
            !confirm("repair \(path)? (data LevelDB cannot read is dropped) [y/N] ")
        {
            emit(["ok": false], "nothing repaired")
            return
        }
        let database = try self.database
        let directory = database.path
        var options = database.options
        options.createIfMissing = false
        snapshot?.release()
        snapshot = nil
        database.close()
        var report: RepairReport?
        var repairError: KVDocsError?
        do {
            report = try LevelDB.repair(path: directory, options: options)
        } catch let e as KVDocsError {
            repairError = e
        }
        // Reopen whether or not the repair succeeded.
        let what = repairError.map { "repair failed (\($0.message))" } ?? "repair finished"
        let reopened: LevelDB
        do {
            reopened = try LevelDB(path: directory, options: options)
        } catch let e as KVDocsError {
            store = nil
            throw KVDocsError(
                e.kind,
                "\(what), but the database could not be opened again: \(e.message); quit, then run kvrepl --repair \(path)",
                path: directory)
        }
        leveldb = reopened
        store = nil
        do {
            keyspaces = try KeySchema.stored(in: reopened)
            if try DocumentStore.exists(in: reopened) {
                store = try DocumentStore(database: reopened) { [progress] p in
                    progress?("building \(p.collection).\(p.index): \(p.done)/\(p.total)")
                }
            }
            storeDamage = nil
        } catch let e as KVDocsError {
            if e.kind == .corruption {
                storeDamage = e
                throw KVDocsError(
                    e.kind,
                    "\(what) and the database is open again, but its document layer could not be loaded: \(e.message); \(ShellAdvice.storeDamage(e))",
                    path: directory)
            }
            throw KVDocsError(
                e.kind,
                "\(what) and the database is open again, but its keyspaces or document layer could not be loaded: \(e.message)",
                path: directory)
        }
        guard let report else {
            throw KVDocsError(repairError?.kind ?? .ioError, "\(what); the database was reopened", path: directory)
        }
        var text = report.text(path)
        if store != nil { text += "\nrun verify to check the indexes against the documents" }
        emit(report.json, text)
    }

    /// Closes the database (which removes a read-only session's private copy).
    public func close() {
        snapshot?.release()
        snapshot = nil
        if let layers { layers.close() } else { leveldb?.close() }
    }

    /// The prompt: `kvrepl>`, with `[snapshot]` while a snapshot is in use.
    public var prompt: String { snapshot == nil ? "kvrepl> " : "kvrepl[snapshot]> " }

    /// Parses and runs one line.
    @discardableResult
    public func run(_ line: String) -> Outcome {
        // Timed: every command but the shell's own settings (timer, format), as sqlite3 times
        // statements and not dot-commands. A line that does not parse is not timed.
        let started = DispatchTime.now()
        let outcome = runTimed(line)
        if timer, outcome != .quit, let command = (try? ShellCommand.parse(line)) ?? nil, !command.isShellSetting {
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
            if json {
                err(
                    String(
                        decoding: (try? JSONValue.object(["real_seconds": .double(seconds)]).canonicalData()) ?? Data(),
                        as: UTF8.self))
            } else {
                out(String(format: "Run Time: real %.6f s", seconds))
            }
        }
        return outcome
    }

    private func runTimed(_ line: String) -> Outcome {
        rows = []
        leadingColumns = []
        defer { flushRows() }
        do {
            guard let command = try ShellCommand.parse(line) else { return .ok }
            return try execute(command) ? .quit : .ok
        } catch let e as ShellCommandError {
            report(e.description)
        } catch let e as KVDocsError {
            // LevelDB's own damage reports (not, say, verify's findings, which reindex fixes).
            report(e.message + (ShellAdvice.command(e, in: self).map { " (\($0))" } ?? ""))
        } catch {
            report("\(error)")
        }
        return .failed
    }

    func report(_ message: String) {
        if json {
            err(
                ShellDisplay.jsonSafe(
                    String(
                        decoding: (try? JSONValue.object(["error": .string(message)]).canonicalData()) ?? Data(),
                        as: UTF8.self)))
        } else {
            err("error: " + ShellDisplay.terminalSafe(message))
        }
    }

    /// Emits one result that is not a row of a result set (a message, a report, a plan):
    /// `value` in JSON mode, `text` otherwise, whatever the format.
    func emit(_ value: @autoclosure () -> JSONValue, _ text: @autoclosure () -> String) {
        if json {
            out(
                ShellDisplay.jsonSafe(
                    String(decoding: (try? value().canonicalData()) ?? Data("null".utf8), as: UTF8.self)))
        } else {
            flushRows()
            out(ShellDisplay.terminalSafe(text()))
        }
    }

    /// Emits one row of the command's results: `value` in JSON mode (the `--json`
    /// contract), `row` (or `value`) gathered for the session's format, `text` otherwise.
    func emitRow(
        _ value: @autoclosure () -> JSONValue, _ text: @autoclosure () -> String,
        row: @autoclosure () -> JSONValue? = nil
    ) {
        if json {
            out(
                ShellDisplay.jsonSafe(
                    String(decoding: (try? value().canonicalData()) ?? Data("null".utf8), as: UTF8.self)))
        } else if format != nil {
            rows.append(row() ?? value())
        } else {
            out(ShellDisplay.terminalSafe(text()))
        }
    }

    /// Prints the rows that `produce` hands to its argument, each as it comes, never
    /// gathering them: `--json` and the default output (`text` of each row) a line at a
    /// time, a format a row at a time. `table` and `csv` begin with a header that needs every
    /// row's columns, so `produce` runs twice, first for the ``OutputFormat/Layout``; it must
    /// hand over the same rows both times (read them from one snapshot).
    func streamRows(text: @escaping (JSONValue) -> String, _ produce: ((JSONValue) throws -> Void) throws -> Void)
        throws
    {
        guard let format, !json else {
            try produce { row in emitRow(row, text(row)) }
            return
        }
        flushRows()
        var layout = OutputFormat.Layout(leading: leadingColumns, widths: format == .table)
        if format.needsLayout {
            try produce { layout.add($0) }
            layout = layout.frozen()
            guard !layout.columns.isEmpty else { return }
        }
        // CSV ends its records with CRLF: `out` adds the LF.
        let end = format == .csv ? "\r" : ""
        if let header = format.header(layout) { out(header + end) }
        var first = true
        try produce { row in
            out(format.record(row, first: first, layout) + end)
            first = false
        }
        if let footer = format.footer(layout) { out(footer + end) }
    }

    /// Prints the rows gathered so far in the session's format.
    private func flushRows() {
        guard let format, !rows.isEmpty else { return }
        let text = format.render(rows, leading: leadingColumns)
        rows = []
        // CSV ends its records with CRLF; `out` adds the LF of the last one. ("\r\n" is one
        // Character in Swift: drop it by scalars, or the last cell would go with it.)
        if !text.isEmpty {
            out(text.hasSuffix("\r\n") ? String(String.UnicodeScalarView(text.unicodeScalars.dropLast(1))) : text)
        }
    }

    var readOptions: LevelDBReadOptions { LevelDBReadOptions(snapshot: snapshot) }

    func documents() throws -> DocumentStore {
        guard let store else {
            if let storeDamage {
                throw KVDocsError(
                    .corruption,
                    "the document layer could not be opened (\(storeDamage.message)): \(ShellAdvice.storeDamage(storeDamage))"
                )
            }
            throw KVDocsError(.schema, "this database has no schema: start with --schema FILE or run: schema load FILE")
        }
        return store
    }

    func reading<R>(_ body: (ReadTransaction) throws -> R) throws -> R {
        let store = try documents()
        if let snapshot { return try store.read(using: snapshot, body) }
        return try store.read(body)
    }
}
