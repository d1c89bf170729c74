import Foundation
import KVDocs

/// An open kvrepl session: a database, its document layer when it has a schema, the
/// declared keyspaces, an optional snapshot, and the output mode. `run(_:)` executes one
/// command line and reports success; output goes through the `out` and `err` closures.
public final class Session {
    public let path: String
    /// The open database (a new handle after `repair`).
    public private(set) var database: Database
    public internal(set) var store: DocumentStore?
    public internal(set) var keyspaces: KeySchema
    public let readOnly: Bool
    public var json: Bool
    public var interactive: Bool
    /// Whether every write the shell makes (documents and raw) uses LevelDB's `sync` option,
    /// surviving a power loss or an OS crash (`--sync`, `sync on|off`).
    public var sync = false
    public internal(set) var snapshot: Snapshot?
    /// Writes one block of output to standard output.
    public var out: (String) -> Void = { print($0) }
    /// Writes one error line to standard error.
    public var err: (String) -> Void = { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }
    /// Asks the user to confirm (interactive only); `nil` means yes.
    public var confirm: ((String) -> Bool)?
    /// Shows progress (interactive only).
    public var progress: ((String) -> Void)?
    private let copyDirectory: String?

    public enum Outcome: Equatable { case ok, failed, quit }

    init(path: String, database: Database, store: DocumentStore?, keyspaces: KeySchema, readOnly: Bool, json: Bool, copyDirectory: String?) {
        self.path = path
        self.database = database
        self.store = store
        self.keyspaces = keyspaces
        self.readOnly = readOnly
        self.json = json
        self.interactive = false
        self.copyDirectory = copyDirectory
    }

    /// Opens the database at `path`.
    ///
    /// - `create`: create it if missing (otherwise a missing or non-LevelDB directory is an
    ///   error and is left untouched).
    /// - `readOnly`: the directory is never modified: the session works on a private copy
    ///   (immutable table files hard-linked), and every write command is refused.
    /// - `schemaFile`: a schema (JSON) to apply and store; else the stored one, if any.
    public static func open(path: String, create: Bool = false, readOnly: Bool = false, json: Bool = false,
                            schemaFile: String? = nil, progress: ((String) -> Void)? = nil) throws -> Session {
        var openPath = path
        var copy: String?
        var options = Options()
        options.createIfMissing = create && !readOnly
        if readOnly {
            guard FileManager.default.fileExists(atPath: path + "/CURRENT") else {
                throw KVDocsError(.invalidArgument, "\(path) is not a LevelDB database (it has no CURRENT file)", path: path)
            }
            if let pid = lockHolder(path + "/LOCK") {
                throw KVDocsError(.locked, "the database at \(path) is in use by another process (pid \(pid))", path: path)
            }
            copy = try privateCopy(of: path)
            openPath = copy ?? path
            options.createIfMissing = false
        }
        let database: Database
        do {
            database = try Database(path: openPath, options: options)
        } catch let e as KVDocsError {
            if let copy { try? FileManager.default.removeItem(atPath: copy) }
            if e.kind == .locked { throw KVDocsError(.locked, "the database at \(path) is in use by another process or handle (\(e.message))", path: path) }
            if e.kind == .invalidArgument && e.message.contains("does not exist") {
                throw KVDocsError(.invalidArgument, "\(path) is not a LevelDB database (use --create to create one)", path: path)
            }
            throw e
        }
        do {
            var store: DocumentStore?
            let report: (DocumentStore.IndexBuildProgress) -> Void = { p in progress?("building \(p.collection).\(p.index): \(p.done)/\(p.total)") }
            if let schemaFile {
                store = try DocumentStore(database: database, schema: try Schema(contentsOfFile: schemaFile), progress: report)
            } else if try Catalog().holdsDocumentStore(in: database) {
                store = try DocumentStore(database: database, progress: report)
            }
            let keyspaces = try KeySchema.stored(in: database)
            return Session(path: path, database: database, store: store, keyspaces: keyspaces, readOnly: readOnly, json: json, copyDirectory: copy)
        } catch {
            database.close()
            if let copy { try? FileManager.default.removeItem(atPath: copy) }
            throw error
        }
    }

    /// What a repair did, from the database directory before and after.
    public struct RepairReport: Sendable {
        /// Table and log files before, table files after.
        public var tables = 0, logs = 0, tablesAfter = 0
        /// Files LevelDB moved to the `lost/` subdirectory, by kind. A damaged table is moved
        /// there after what can be read of it is copied to a new table.
        public var replacedManifests: [String] = [], convertedLogs: [String] = [], damagedTables: [String] = [], otherLost: [String] = []

        public var json: JSONValue {
            ["ok": true, "tables_before": .int(Int64(tables)), "logs_before": .int(Int64(logs)), "tables_after": .int(Int64(tablesAfter)),
             "damaged_tables": .array(damagedTables.map { .string($0) }),
             "moved_to_lost": .array((replacedManifests + convertedLogs + damagedTables + otherLost).map { .string($0) })]
        }

        public func text(_ path: String) -> String {
            func files(_ n: Int, _ what: String) -> String { "\(n) \(what) file\(n == 1 ? "" : "s")" }
            var lines = ["repaired \(path): rebuilt its manifest from \(files(tables, "table")) and \(files(logs, "log")); it now has \(files(tablesAfter, "table"))"]
            if !convertedLogs.isEmpty { lines.append("  log files converted to tables, moved to lost/: " + convertedLogs.joined(separator: ", ")) }
            if !replacedManifests.isEmpty { lines.append("  old manifests, moved to lost/: " + replacedManifests.joined(separator: ", ")) }
            if !damagedTables.isEmpty { lines.append("  damaged table files, moved to lost/ (whatever LevelDB could read of them was kept): " + damagedTables.joined(separator: ", ")) }
            if !otherLost.isEmpty { lines.append("  other files moved to lost/: " + otherLost.joined(separator: ", ")) }
            return lines.joined(separator: "\n")
        }
    }

    /// Runs LevelDB's repair on the database in `directory`, which must not be open, and
    /// describes what it did from the directory's files before and after.
    static func repairFiles(at directory: String, options: Options) throws -> RepairReport {
        let fm = FileManager.default
        let before = (try? fm.contentsOfDirectory(atPath: directory)) ?? []
        let lostBefore = Set((try? fm.contentsOfDirectory(atPath: directory + "/lost")) ?? [])
        try Database.repair(path: directory, options: options)
        var report = RepairReport()
        for name in before {
            if isTable(name) { report.tables += 1 } else if name.hasSuffix(".log") { report.logs += 1 }
        }
        report.tablesAfter = ((try? fm.contentsOfDirectory(atPath: directory)) ?? []).filter(isTable).count
        let lostNow = Set((try? fm.contentsOfDirectory(atPath: directory + "/lost")) ?? [])
        for name in lostNow.subtracting(lostBefore).sorted() {
            if name.hasPrefix("MANIFEST-") {
                report.replacedManifests.append(name)
            } else if name.hasSuffix(".log") {
                report.convertedLogs.append(name)
            } else if isTable(name) {
                report.damagedTables.append(name)
            } else {
                report.otherLost.append(name)
            }
        }
        return report
    }

    static func isTable(_ name: String) -> Bool { name.hasSuffix(".ldb") || name.hasSuffix(".sst") }

    /// Repairs the database at `path` before it is opened (`kvrepl --repair`): for a
    /// database too damaged to open. LevelDB rebuilds its metadata from the table and log
    /// files, keeping what it can read and moving what it cannot to `lost/`.
    /// - Throws: `.invalidArgument` when `path` holds no LevelDB files (nothing is created),
    ///   `.locked` when another process has it open, the repair's own errors.
    public static func repair(path: String) throws -> RepairReport {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        guard names.contains(where: { $0 == "CURRENT" || $0.hasPrefix("MANIFEST-") || $0.hasSuffix(".log") || isTable($0) }) else {
            throw KVDocsError(.invalidArgument, "\(path) is not a LevelDB database (it holds no CURRENT, MANIFEST, log or table file): nothing to repair", path: path)
        }
        if let pid = lockHolder(path + "/LOCK") {
            throw KVDocsError(.locked, "the database at \(path) is in use by another process (pid \(pid)): it cannot be repaired while open", path: path)
        }
        return try repairFiles(at: path, options: Options())
    }

    /// Closes the database, runs LevelDB's repair on it (which rebuilds the metadata from
    /// the table and log files, keeping what it can read), and reopens it with its document
    /// layer and keyspaces. Interactively, asks first. A snapshot in use is released.
    func repair() throws {
        if interactive, let confirm,
           !confirm("repair \(path)? (data LevelDB cannot read is dropped) [y/N] ") {
            emit(["ok": false], "nothing repaired")
            return
        }
        let directory = database.path
        var options = database.options
        options.createIfMissing = false
        snapshot?.release()
        snapshot = nil
        database.close()
        var report: RepairReport?
        var repairError: KVDocsError?
        do {
            report = try Self.repairFiles(at: directory, options: options)
        } catch let e as KVDocsError {
            repairError = e
        }
        // Reopen whether or not the repair succeeded.
        let what = repairError.map { "repair failed (\($0.message))" } ?? "repair finished"
        let reopened: Database
        do {
            reopened = try Database(path: directory, options: options)
        } catch let e as KVDocsError {
            store = nil
            throw KVDocsError(e.kind, "\(what), but the database could not be opened again: \(e.message); quit, then run kvrepl --repair \(path)", path: directory)
        }
        database = reopened
        store = nil
        do {
            keyspaces = try KeySchema.stored(in: reopened)
            if try Catalog().holdsDocumentStore(in: reopened) {
                store = try DocumentStore(database: reopened) { [progress] p in progress?("building \(p.collection).\(p.index): \(p.done)/\(p.total)") }
            }
        } catch let e as KVDocsError {
            throw KVDocsError(e.kind, "\(what) and the database is open again, but its keyspaces or document layer could not be loaded: \(e.message)", path: directory)
        }
        guard let report else {
            throw KVDocsError(repairError?.kind ?? .ioError, "\(what); the database was reopened", path: directory)
        }
        var text = report.text(path)
        if store != nil { text += "\nrun verify to check the indexes against the documents" }
        emit(report.json, text)
    }

    /// Closes the database (and removes a read-only session's private copy).
    public func close() {
        snapshot?.release()
        snapshot = nil
        database.close()
        if let copyDirectory { try? FileManager.default.removeItem(atPath: copyDirectory) }
    }

    /// The process holding a POSIX lock on `file`, if another process holds one.
    static func lockHolder(_ file: String) -> Int32? {
        let fd = Foundation.open(file, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { Foundation.close(fd) }
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        guard fcntl(fd, F_GETLK, &lock) == 0, lock.l_type != Int16(F_UNLCK) else { return nil }
        return lock.l_pid
    }

    /// Copies a database directory (hard-linking the immutable table files) to a new temporary directory.
    static func privateCopy(of path: String) throws -> String {
        let fm = FileManager.default
        let copy = fm.temporaryDirectory.appendingPathComponent("kvrepl-readonly-\(UUID().uuidString)").path
        do {
            try fm.createDirectory(atPath: copy, withIntermediateDirectories: true)
            for name in try fm.contentsOfDirectory(atPath: path) where name != "LOCK" {
                let from = path + "/" + name, to = copy + "/" + name
                if name.hasSuffix(".ldb") || name.hasSuffix(".sst") {
                    do { try fm.linkItem(atPath: from, toPath: to) } catch { try fm.copyItem(atPath: from, toPath: to) }
                } else {
                    try fm.copyItem(atPath: from, toPath: to)
                }
            }
        } catch {
            try? fm.removeItem(atPath: copy)
            throw KVDocsError(.ioError, "cannot make a read-only copy of \(path): \(error.localizedDescription)", path: path)
        }
        return copy
    }

    /// The prompt: `kvrepl>`, with `[snapshot]` while a snapshot is in use.
    public var prompt: String { snapshot == nil ? "kvrepl> " : "kvrepl[snapshot]> " }

    /// Parses and runs one line.
    @discardableResult
    public func run(_ line: String) -> Outcome {
        do {
            guard let command = try Command.parse(line) else { return .ok }
            return try execute(command) ? .quit : .ok
        } catch let e as CommandError {
            report(e.description)
        } catch let e as KVDocsError {
            // LevelDB's own damage reports (not, say, verify's findings, which reindex fixes).
            let damaged = e.message.hasPrefix("Corruption: ") || (e.message.hasPrefix("IO error: ") && e.message.contains(database.path + "/"))
            report(e.message + (damaged && !readOnly ? " (if the database is damaged, the repair command rebuilds it from what it can read)" : ""))
        } catch {
            report("\(error)")
        }
        return .failed
    }

    func report(_ message: String) {
        if json {
            err(String(decoding: (try? JSONValue.object(["error": .string(message)]).canonicalData()) ?? Data(), as: UTF8.self))
        } else {
            err("error: " + message)
        }
    }

    /// Emits one result: `value` in JSON mode, `text` otherwise.
    func emit(_ value: @autoclosure () -> JSONValue, _ text: @autoclosure () -> String) {
        if json {
            out(String(decoding: (try? value().canonicalData()) ?? Data("null".utf8), as: UTF8.self))
        } else {
            out(text())
        }
    }

    var readOptions: ReadOptions { ReadOptions(snapshot: snapshot) }

    func documents() throws -> DocumentStore {
        guard let store else {
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
