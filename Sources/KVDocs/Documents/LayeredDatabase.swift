import Foundation

/// A document store over a read-only **base** database shipped with an app and the user's
/// own **user** database, opened by path.
///
/// ```swift
/// let layers = try LayeredDatabase(user: documentsPath + "/user.db", base: Bundle.main.path(forResource: "stations", ofType: "db")!,
///                                  create: true)
/// defer { layers.close() }
/// let stations = try layers.store.collection("stations")     // base and user documents, merged
/// try layers.store.collection("groups").upsert(["id": 1, "members": ["s1"]])   // written to the user database
/// try layers.replaceBase(with: downloadedPath)              // the user's data stays
/// ```
///
/// **Invariants.**
/// - The base directory is never modified. It is opened through a copy kept beside the user
///   database, in `USER.layers/`: its table files are hard-linked (so opening costs the same
///   whatever the base's size) or, across file systems, copied once, with progress; the copy
///   is reused while the base's files stay the same.
/// - Every read sees the merged database (``LayeredStore``); writes go to the user database.
/// - `USER.layers/LAYERS.json` records the base in use. Replacing the base prepares the new
///   copy beside the old, records the replacement as pending, makes the user layer's derived
///   data exact over the new base, then records the new base with one rename. A crash at
///   any moment leaves either the old or the new base in force: the next open finishes a
///   pending replacement. Old copies are removed when no handle uses them (at the next open
///   or close).
/// - Opening with a base whose files changed since the last open (an app update that ships
///   a new base) replaces the base the same way. Opening a user database that has no
///   record (a backup, a copy) makes its derived data exact over the base given.
public final class LayeredDatabase: @unchecked Sendable {
    // @unchecked Sendable: the mutable record is behind a lock; the handles are Sendable.

    /// The user database's directory.
    public let userPath: String
    /// The layered storage: the current base copy under the user database.
    public let storage: LayeredStore
    /// The document store over the merged layers.
    public let store: DocumentStore
    /// Where the base copies and the record live: `USER.layers`.
    public let layersPath: String
    private let record: Locked<LayersRecord>

    /// Progress of opening or replacing: copying the base's files, or making derived data exact.
    public struct Progress: Sendable {
        /// What is being done: `"copying base"` or `"rederiving"`.
        public let phase: String
        /// Files copied, or documents replayed, so far.
        public let done: Int
        /// In all.
        public let total: Int
    }

    /// The base directory in use (as given when it was opened or replaced).
    public var basePath: String { record.withLock { $0.base } }

    /// Opens the layered store of the user database at `user` over the base at `base`.
    /// - Parameters:
    ///   - user: the user database's directory.
    ///   - base: the base database's directory; never modified.
    ///   - schema: as for ``DocumentStore/init(layered:schema:root:progress:)``; it must agree
    ///     with the base's stored schema on shared collections.
    ///   - create: create the user database when it does not exist.
    ///   - progress: called while the base is copied (only when it cannot be linked) and
    ///     while derived data is made exact after a base change.
    /// - Throws: `.invalidArgument` for a base that is not a database, or a missing user
    ///   database without `create`; `.schema` for schemas that disagree; storage errors.
    public init(user: String, base: String, schema: Schema? = nil, create: Bool = false, progress: ((Progress) -> Void)? = nil) throws {
        let fm = FileManager.default
        userPath = user
        layersPath = user + ".layers"
        let base = URL(fileURLWithPath: base).standardizedFileURL.path
        guard fm.fileExists(atPath: base + "/CURRENT") else {
            throw KVDocsError(.invalidArgument, "the base \(base) is not a LevelDB database (it has no CURRENT file)", path: base)
        }
        if !create, !fm.fileExists(atPath: user + "/CURRENT") {
            throw KVDocsError(.invalidArgument, "the user database \(user) does not exist (create it with create: true, kvrepl --create)", path: user)
        }
        try fm.createDirectory(atPath: layersPath, withIntermediateDirectories: true)
        var current = try LayersRecord.read(layersPath)
        var options = Options()
        options.createIfMissing = create
        let userDB = try Database(path: user, options: options)
        do {
            // A user layer without a record (a backup, a copy) may have been derived over
            // another base: make it exact over this one once open.
            let hasData = try userDB.entries(limit: 1).next() != nil
            let adopting = current == nil && hasData
            // A replacement interrupted after it was recorded: finish it.
            if let pending = current?.pending {
                current = try Self.finish(pending, record: current!, layersPath: layersPath, user: userDB, progress: progress)
            }
            let fingerprint = try Self.fingerprint(base)
            if current == nil || current!.base != base || current!.fingerprint != fingerprint || !fm.fileExists(atPath: layersPath + "/" + current!.copy + "/CURRENT") {
                let copy = try Self.copyBase(base, into: layersPath, progress: progress)
                if var known = current, fm.fileExists(atPath: layersPath + "/" + known.copy + "/CURRENT") {
                    // The base changed since the last open: replace it.
                    known.pending = LayersRecord.Pending(base: base, copy: copy, fingerprint: fingerprint)
                    try known.write(layersPath)
                    current = try Self.finish(known.pending!, record: known, layersPath: layersPath, user: userDB, progress: progress)
                } else {
                    current = LayersRecord(base: base, copy: copy, fingerprint: fingerprint)
                    try current!.write(layersPath)
                }
            }
            guard let opened = current else { throw KVDocsError(.ioError, "no layers record in \(layersPath)", path: layersPath) }
            let baseDB = try Database(path: layersPath + "/" + opened.copy)
            storage = try LayeredStore(base: baseDB, user: userDB, userOnly: [Layout(root: Subspace()).changes.range])
            store = try DocumentStore(layered: storage, schema: schema)
            record = Locked(opened)
            if adopting {
                try store.rederive(storage) { p in progress?(Progress(phase: "rederiving", done: p.done, total: p.total)) }
            }
        } catch {
            userDB.close()
            throw error
        }
        removeUnusedCopies()
    }

    /// Replaces the base with the database at `newBase`, keeping every document and delete
    /// of the user layer and making its derived data exact over the new base. Readers
    /// holding a snapshot keep reading the old base until they finish.
    /// - Throws: `.invalidArgument` for a path that is not a database; `.schema` when the new
    ///   base's schema disagrees with the store's; `.uniqueViolation` when a user document
    ///   and a new base document share a unique value (the old base stays in force).
    public func replaceBase(with newBase: String, progress: ((Progress) -> Void)? = nil) throws {
        let newBase = URL(fileURLWithPath: newBase).standardizedFileURL.path
        guard FileManager.default.fileExists(atPath: newBase + "/CURRENT") else {
            throw KVDocsError(.invalidArgument, "the new base \(newBase) is not a LevelDB database (it has no CURRENT file)", path: newBase)
        }
        let fingerprint = try Self.fingerprint(newBase)
        let copy = try Self.copyBase(newBase, into: layersPath, progress: progress)
        let newDB = try Database(path: layersPath + "/" + copy)
        do {
            try DocumentStore.checkAgreement(base: newDB, schema: store.schema, root: store.root)
        } catch {
            newDB.close()
            try? FileManager.default.removeItem(atPath: layersPath + "/" + copy)
            throw error
        }
        var pending = record.withLock { $0 }
        pending.pending = LayersRecord.Pending(base: newBase, copy: copy, fingerprint: fingerprint)
        try pending.write(layersPath)
        let old = try storage.replaceBase(with: newDB)
        do {
            try store.rederive(storage) { p in progress?(Progress(phase: "rederiving", done: p.done, total: p.total)) }
        } catch {
            // Observers may have read the abandoned base: they look again.
            defer { store.hub.publishToAll() }
            // Undo: the old base again, derived data exact over it, nothing pending.
            try storage.replaceBase(with: old)
            try store.rederive(storage)
            let kept = record.withLock { $0 }
            try kept.write(layersPath)
            throw error
        }
        let replaced = LayersRecord(base: newBase, copy: copy, fingerprint: fingerprint)
        try replaced.write(layersPath)
        record.withLock { $0 = replaced }
        // Every collection of the base may have changed.
        store.hub.publishToAll()
        // The old copy stays until no handle can use it (snapshots may still read it): the
        // next open or close removes it.
    }

    /// A consistent copy of the user database, from one snapshot, in the new directory
    /// `path` (see ``Database/backup(to:options:progress:)``), while writes go on.
    @discardableResult
    public func backup(to path: String, progress: ((Int) -> Void)? = nil) throws -> BackupReport {
        try storage.user.backup(to: path, progress: progress)
    }

    /// Closes both databases and removes base copies no longer in use.
    public func close() {
        storage.base.close()
        storage.user.close()
        removeUnusedCopies()
    }

    /// Bytes on disk of the base (its own directory) and of the user database.
    public func sizes() -> (base: Int, user: Int) {
        (Self.directorySize(basePath), Self.directorySize(userPath))
    }

    // MARK: - Copies and the record

    /// Finishes a recorded replacement: opens the pending base's copy, makes the user
    /// layer's derived data exact over it, and records it.
    private static func finish(_ pending: LayersRecord.Pending, record: LayersRecord, layersPath: String, user: Database,
                               progress: ((Progress) -> Void)?) throws -> LayersRecord {
        let newDB = try Database(path: layersPath + "/" + pending.copy)
        defer { newDB.close() }
        let layered = try LayeredStore(base: newDB, user: user, userOnly: [Layout(root: Subspace()).changes.range])
        let store = try DocumentStore(layered: layered)
        try DocumentStore.checkAgreement(base: newDB, schema: store.schema, root: store.root)
        try store.rederive(layered) { p in progress?(Progress(phase: "rederiving", done: p.done, total: p.total)) }
        let done = LayersRecord(base: pending.base, copy: pending.copy, fingerprint: pending.fingerprint)
        try done.write(layersPath)
        return done
    }

    /// Links (or copies) the base's files into a new directory under `layersPath`; returns its name.
    static func copyBase(_ base: String, into layersPath: String, progress: ((Progress) -> Void)?) throws -> String {
        let fm = FileManager.default
        let name = "base-" + UUID().uuidString
        let copy = layersPath + "/" + name
        do {
            try fm.createDirectory(atPath: copy, withIntermediateDirectories: true)
            let files = try fm.contentsOfDirectory(atPath: base).filter { $0 != "LOCK" }.sorted()
            var copied = 0
            for file in files {
                let from = base + "/" + file, to = copy + "/" + file
                if file.hasSuffix(".ldb") || file.hasSuffix(".sst") {
                    do { try fm.linkItem(atPath: from, toPath: to) } catch {
                        try fm.copyItem(atPath: from, toPath: to)
                        copied += 1
                        progress?(Progress(phase: "copying base", done: copied, total: files.count))
                    }
                } else {
                    try fm.copyItem(atPath: from, toPath: to)
                }
            }
            try Database.syncDirectory(copy)
        } catch {
            try? fm.removeItem(atPath: copy)
            throw KVDocsError(.ioError, "cannot copy the base \(base) into \(layersPath): \(error.localizedDescription)", path: base)
        }
        return name
    }

    /// What identifies a base's contents: each file's name and size (LevelDB never
    /// rewrites a file in place; a changed database has new names or sizes).
    static func fingerprint(_ base: String) throws -> [String] {
        let fm = FileManager.default
        do {
            return try fm.contentsOfDirectory(atPath: base).filter { $0 != "LOCK" && !$0.hasPrefix("LOG") }.sorted().map { name in
                let size = (try fm.attributesOfItem(atPath: base + "/" + name)[.size] as? NSNumber)?.intValue ?? -1
                return "\(name):\(size)"
            }
        } catch {
            throw KVDocsError(.ioError, "cannot list the base \(base): \(error.localizedDescription)", path: base)
        }
    }

    /// Removes base copies that neither the record nor an open handle uses.
    private func removeUnusedCopies() {
        let fm = FileManager.default
        let (inUse, pending) = record.withLock { ($0.copy, $0.pending?.copy) }
        guard let names = try? fm.contentsOfDirectory(atPath: layersPath) else { return }
        for name in names where name.hasPrefix("base-") && name != inUse && name != pending {
            try? fm.removeItem(atPath: layersPath + "/" + name)
        }
    }

    static func directorySize(_ path: String) -> Int {
        let fm = FileManager.default
        return ((try? fm.contentsOfDirectory(atPath: path)) ?? []).reduce(0) { total, name in
            total + ((try? fm.attributesOfItem(atPath: path + "/" + name)[.size] as? NSNumber)?.intValue ?? 0)
        }
    }
}

/// `USER.layers/LAYERS.json`: the base in use, and a replacement under way.
struct LayersRecord: Codable, Equatable {
    var format = 1
    /// The base's directory, as given.
    var base: String
    /// The directory of its copy, under the layers directory.
    var copy: String
    /// ``LayeredDatabase/fingerprint(_:)`` of the base when it was copied.
    var fingerprint: [String]
    var pending: Pending?

    struct Pending: Codable, Equatable {
        var base: String
        var copy: String
        var fingerprint: [String]
    }

    init(base: String, copy: String, fingerprint: [String]) {
        self.base = base
        self.copy = copy
        self.fingerprint = fingerprint
    }

    static func read(_ layersPath: String) throws -> LayersRecord? {
        let path = layersPath + "/LAYERS.json"
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        do {
            let record = try JSONDecoder().decode(LayersRecord.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
            guard record.format == 1 else {
                throw KVDocsError(.notSupported, "\(path) has layers format \(record.format), written by a newer version of KVDocs; this version reads format 1", path: path)
            }
            return record
        } catch let e as KVDocsError {
            throw e
        } catch {
            throw KVDocsError(.corruption, "\(path) cannot be read: \(error.localizedDescription)", path: path)
        }
    }

    /// Writes the record with one rename (a crash leaves the old record or the new one).
    func write(_ layersPath: String) throws {
        let path = layersPath + "/LAYERS.json", temporary = path + ".new"
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            let data = try encoder.encode(self)
            let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            guard fd >= 0 else { throw KVDocsError(.ioError, "cannot write \(temporary): \(String(cString: strerror(errno)))", path: temporary) }
            let written = data.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            let synced = fsync(fd)
            _ = Glibc.close(fd)
            guard written == data.count, synced == 0 else { throw KVDocsError(.ioError, "cannot write \(temporary): \(String(cString: strerror(errno)))", path: temporary) }
            guard rename(temporary, path) == 0 else { throw KVDocsError(.ioError, "cannot rename \(temporary): \(String(cString: strerror(errno)))", path: path) }
            try Database.syncDirectory(layersPath)
        } catch let e as KVDocsError {
            throw e
        } catch {
            throw KVDocsError(.ioError, "cannot write \(path): \(error.localizedDescription)", path: path)
        }
    }
}
