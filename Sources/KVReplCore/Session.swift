import Foundation
import KVDocs

/// An open kvrepl session: a database, its document layer when it has a schema, the
/// declared keyspaces, an optional snapshot, and the output mode. `run(_:)` executes one
/// command line and reports success; output goes through the `out` and `err` closures.
public final class Session {
    public let path: String
    public let database: Database
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
            } else if try database.contains(Subspace().pack(["m", "schema"])) {
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
            report(e.message)
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
