import Foundation
import KVKeys
import KVStorage
import KVSupport

/// A document store over a read-only **base** database shipped with an app and the user's
/// own **user** database, opened by path.
///
/// <!-- doc-code: preamble=examples -->
/// ```swift
/// let layers = try LayeredDocumentStore(user: documentsPath + "/user.db", base: Bundle.main.path(forResource: "stations", ofType: "db")!,
///                                  create: true)
/// defer { layers.close() }
/// let stations = try layers.store.collection("stations")     // base and user documents, merged
/// try layers.store.collection("groups").upsert(["id": 1, "members": ["s1"]])   // written to the user database
/// try layers.replaceBase(with: downloadedPath)              // the user's data stays
/// ```
///
/// **Invariants.**
/// - The base directory is never modified. It is opened through a byte copy kept beside the
///   user database, in `USER.layers/` (never a hard link: a vendor overwriting the base's
///   files in place cannot change the copy under a running app). Each of the base's files is
///   identified by its content (CRC-32C) when it is copied; the copy is reused while the
///   base's files keep that content. Files whose `stat` facts (size, inode, modification and
///   status-change times) are unchanged are not read again, so an unchanged base opens
///   without reading it.
/// - Every read sees the merged database (``LayeredKeyValueStore``); writes go to the user database.
/// - `USER.layers/LAYERS.json` records the base in force. A replacement (``replaceBase(with:allowingUnrelatedBase:progress:)``,
///   or an open whose base changed) copies the new base, reads all of it with checksums
///   verified, checks it against the store's schema, and builds the user layer's derived data
///   over it in a staging database, all before anything is recorded: a unique conflict, a
///   damaged base, a schema mismatch or a crash there leaves the old base in force and the
///   attempt removed. Only then is the replacement recorded as pending, the staged entries
///   copied over the user's derived data, and the new base recorded with one rename. A
///   crash after the pending record is finished by the next open, which cannot fail on the
///   data (it was checked). Old copies are removed when no handle uses them (at the next
///   open or close).
/// - An open whose base changed and cannot replace the old one keeps the old base in force
///   and says why in ``baseChangeFailure``; the open itself succeeds. The refusal is
///   recorded with the base's files: later opens given the same files do not try again
///   (``replaceBase(with:allowingUnrelatedBase:progress:)`` does, whenever called).
/// - The base given to an open is the one wanted: after a replacement, open with the new
///   base's path (``basePath``); an open given another base replaces the one in force by it.
/// - A live replacement that fails after it was recorded goes back to the old base (the
///   user layer's derived data made exact over it again) before writers resume; if even
///   that fails, the handle is closed and the next open finishes the recorded replacement.
/// - Refused before anything is written: a base that is the user database or lies inside it
///   or its layers directory, a user database inside the base, and (unless
///   `allowingUnrelatedBase`) a base with no document store, one that shares none of the
///   store's collections, or one whose schema would hide collections holding the user's
///   documents.
public final class LayeredDocumentStore: Sendable {
    // Checked Sendable: the mutable record is behind a lock; the handles are Sendable.

    /// The user database's directory.
    public let userPath: String
    /// The layered storage: the current base copy under the user database.
    public let storage: LayeredKeyValueStore
    /// The document store over the merged layers.
    public let store: DocumentStore
    /// Where the base copies and the record live: `USER.layers`.
    public let layersPath: String
    /// Why the base given to ``init(user:base:schema:create:dates:allowingUnrelatedBase:progress:)``
    /// is not the base in force: its files changed since the last open (or it is another
    /// base) and replacing the old one failed (a unique conflict, damage, a schema mismatch,
    /// a refusal). `nil` when the base given is in force.
    public let baseChangeFailure: KVDocsError?
    private let record: Locked<LayersRecord>

    /// Progress of opening or replacing.
    public struct Progress: Sendable {
        /// What is being done: `"copying base"`, `"checking base"`, `"deriving"` (building the
        /// user layer's derived data over the new base) or `"applying"`.
        public let phase: String
        /// Files copied, entries checked, documents derived or entries applied so far.
        public let done: Int
        /// In all (0 when unknown).
        public let total: Int
    }

    /// The base directory in force (as given when it was opened or replaced).
    public var basePath: String { record.withLock { $0.base } }

    /// Opens the layered store of the user database at `user` over the base at `base`.
    /// - Parameters:
    ///   - user: the user database's directory.
    ///   - base: the base database's directory; never modified.
    ///   - schema: as for ``DocumentStore/init(layered:schema:root:dates:progress:)``; it must agree
    ///     with the base's stored schema on shared collections.
    ///   - create: create the user database when it does not exist.
    ///   - dates: the date strategy the app expects the store to read typed documents with
    ///     (``DocumentStore/dateStrategy``); `nil` takes the one the layers record (the base's
    ///     when the user layer has none). Given, a base storing dates another way is refused
    ///     (when it changed), and a store recording another strategy fails to open, naming both.
    ///   - allowingUnrelatedBase: accept a changed base that has no document store, shares
    ///     none of the store's collections or hides collections holding the user's documents.
    ///   - progress: called while the base is copied and checked and derived data is made
    ///     exact after a base change.
    /// - Throws: `.invalidArgument` for a base that is not a database, is the user database or
    ///   lies inside it, or a missing user database without `create`; `.schema` for schemas
    ///   that disagree; `.uniqueViolation` when a user database with no layers record (a
    ///   backup, a copy) conflicts with the base; storage errors. A base change that fails
    ///   over an old base in force does not throw: see ``baseChangeFailure``.
    public init(
        user: String, base: String, schema: DocumentSchema? = nil, create: Bool = false, dates: DateStrategy? = nil,
        allowingUnrelatedBase: Bool = false, progress: ((Progress) -> Void)? = nil
    ) throws {
        let fm = FileManager.default
        userPath = user
        layersPath = user + ".layers"
        let base = URL(fileURLWithPath: base).standardizedFileURL.path
        // Refusals first: nothing is written before them.
        try Self.checkPaths(base: base, user: user)
        guard fm.fileExists(atPath: base + "/CURRENT") else {
            throw KVDocsError(
                .invalidArgument, "the base \(base) is not a LevelDB database (it has no CURRENT file)", path: base)
        }
        if !create, !fm.fileExists(atPath: user + "/CURRENT") {
            throw KVDocsError(
                .invalidArgument,
                "the user database \(user) does not exist (create it with create: true, kvrepl --create)", path: user)
        }
        var current = try LayersRecord.read(layersPath)
        let madeLayers = !fm.fileExists(atPath: layersPath)
        let madeUser = !fm.fileExists(atPath: user)
        var options = LevelDBOptions()
        options.createIfMissing = create
        let userDB = try LevelDB(path: user, options: options)
        var failure: KVDocsError?
        do {
            try fm.createDirectory(atPath: layersPath, withIntermediateDirectories: true)
            let root = Subspace()
            // A replacement recorded as pending was checked: apply it.
            if let known = current, let pending = known.pending {
                (current, failure) = try Self.finish(
                    pending, record: known, layersPath: layersPath, user: userDB, root: root, progress: progress)
            }
            if let known = current, !known.legacy, fm.fileExists(atPath: layersPath + "/" + known.copy + "/CURRENT"),
                let files = try? DatabaseFiles.fingerprint(base, known: known.base == base ? known.files : []),
                DatabaseFiles.sameContent(files, known.files)
            {
                // The base in force, unchanged (at its path, or moved: an app's bundle path
                // changes between installs). New stat facts or a new path are recorded so
                // that the next open need not read the files.
                if files != known.files || known.base != base {
                    var updated = known
                    updated.base = base
                    updated.files = files
                    try updated.write(layersPath)
                    current = updated
                }
            } else if let known = current, fm.fileExists(atPath: layersPath + "/" + known.copy + "/CURRENT") {
                // The base changed (or another is given, or the record predates content
                // fingerprints): a checked replacement; on failure the old base stays.
                // A base refused before, with the same files: not tried again until they change
                // (replaceBase tries it whenever asked).
                let refusedAgain = known.refused.flatMap { refused -> KVDocsError? in
                    guard refused.base == base, let files = try? DatabaseFiles.fingerprint(base, known: refused.files),
                        DatabaseFiles.sameContent(files, refused.files)
                    else { return nil }
                    return KVDocsError(
                        KVDocsError.Kind(refused.kind),
                        refused.reason + " (refused when the base was last opened; its files have not changed since)",
                        path: base)
                }
                if let refusedAgain {
                    failure = refusedAgain
                } else {
                    var prepared: LayersRecord.Pending?
                    do {
                        let expected =
                            try schema
                            ?? Self.effectiveSchema(copy: layersPath + "/" + known.copy, user: userDB, root: root)
                        let expectedDates =
                            try dates
                            ?? Self.effectiveDates(copy: layersPath + "/" + known.copy, user: userDB, root: root)
                        prepared = try Self.prepare(
                            base, layersPath: layersPath, user: userDB, root: root, expected: expected,
                            dates: expectedDates,
                            allowingUnrelated: allowingUnrelatedBase, progress: progress)
                    } catch let e as KVDocsError {
                        // Refused: the old base stays; the refusal is remembered with the files.
                        failure = e
                        var kept = known
                        kept.refused = LayersRecord.Refused(
                            base: base, files: (try? DatabaseFiles.fingerprint(base)) ?? [], kind: e.kind.rawValue,
                            reason: e.message)
                        try kept.write(layersPath)
                        current = kept
                    }
                    if let prepared {
                        // Any failure from here is not a refusal, and is thrown.
                        (current, failure) = try Self.record(
                            prepared, over: known, layersPath: layersPath, user: userDB, root: root, progress: progress)
                    }
                }
            } else if try userDB.entries(limit: 1).next() != nil {
                // A user layer with no record (a backup, a copy) or no copy of its base: its
                // derived data may be over another base; make it exact over this one.
                let prepared = try Self.prepare(
                    base, layersPath: layersPath, user: userDB, root: root, expected: schema,
                    dates: try dates ?? Self.ownDates(userDB, root: root),
                    allowingUnrelated: allowingUnrelatedBase, progress: progress)
                (current, failure) = try Self.record(
                    prepared, over: LayersRecord(base: prepared.base, copy: prepared.copy, files: prepared.files),
                    layersPath: layersPath, user: userDB, root: root, progress: progress)
            } else {
                // A new user database: its layer is empty, nothing to derive.
                let name = "base-" + UUID().uuidString
                let files = try DatabaseFiles.copy(from: base, to: layersPath + "/" + name) { done, total in
                    progress?(Progress(phase: "copying base", done: done, total: total))
                }
                let made = LayersRecord(base: base, copy: name, files: files)
                try made.write(layersPath)
                current = made
            }
            guard let opened = current else {
                throw KVDocsError(.ioError, "no layers record in \(layersPath)", path: layersPath)
            }
            let baseDB = try LevelDB(path: layersPath + "/" + opened.copy, options: Self.existing)
            // Named by the base's own path, not its copy's.
            if let schema {
                do {
                    try DocumentStore.checkAgreement(base: baseDB, schema: schema, root: root, named: opened.base)
                } catch var e as KVDocsError {
                    if let failure { e.message += " (the base \(base) given is not in force: \(failure.message))" }
                    throw e
                }
            }
            storage = try LayeredKeyValueStore(base: baseDB, user: userDB, userOnly: [Layout(root: root).changes.range])
            store = try DocumentStore(layered: storage, schema: schema, dates: dates)
            record = Locked(opened)
        } catch {
            userDB.close()
            // A failed open leaves the directories as they were: what it created goes.
            if madeUser {
                try? fm.removeItem(atPath: user)
                if madeLayers { try? fm.removeItem(atPath: layersPath) }
            } else if madeLayers, (try? LayersRecord.read(layersPath)) == nil {
                try? fm.removeItem(atPath: layersPath)
            }
            throw error
        }
        baseChangeFailure = failure
        removeUnusedCopies()
    }

    /// Replaces the base with the database at `newBase`, keeping every document and delete
    /// of the user layer and making its derived data exact over the new base. Readers
    /// holding a snapshot keep reading the old base until they finish; writers wait.
    /// - Parameters:
    ///   - newBase: the new base's directory; never modified.
    ///   - allowingUnrelatedBase: accept a base with no document store, one that shares none
    ///     of the store's collections, or one whose schema hides collections holding the
    ///     user's documents.
    ///   - progress: called while the base is copied and checked and derived data is built.
    /// - Throws: `.invalidArgument` for a path that is not a database, is the user database
    ///   or lies inside it, or an unrelated base; `.schema` when the new base's schema
    ///   disagrees with the store's; `.uniqueViolation` when a user document and a new base
    ///   document share a unique value; `.corruption` for a damaged new base. In every case
    ///   the old base stays in force and the attempt is removed.
    public func replaceBase(
        with newBase: String, allowingUnrelatedBase: Bool = false, progress: ((Progress) -> Void)? = nil
    ) throws {
        let newBase = URL(fileURLWithPath: newBase).standardizedFileURL.path
        try Self.checkPaths(base: newBase, user: userPath)
        guard FileManager.default.fileExists(atPath: newBase + "/CURRENT") else {
            throw KVDocsError(
                .invalidArgument, "the new base \(newBase) is not a LevelDB database (it has no CURRENT file)",
                path: newBase)
        }
        try storage.withWriteTransaction {
            let prepared = try Self.prepare(
                newBase, layersPath: layersPath, user: storage.user, root: store.root, expected: store.schema,
                dates: store.dateStrategy,
                allowingUnrelated: allowingUnrelatedBase, progress: progress)
            var committed = record.withLock { $0 }
            committed.pending = prepared
            committed.refused = nil
            do {
                try committed.write(layersPath)
            } catch {
                Self.remove(prepared, layersPath: layersPath)
                throw error
            }
            // Recorded: from here a crash is finished by the next open. The record in memory
            // says so too, so that nothing removes the new copy or the staging database.
            let previous = record.withLock { old -> LayersRecord in
                defer { old = committed }
                return old
            }
            let oldBase = storage.base
            var applied = 0
            do {
                if let fault = Self.faultAfterRecording.withLock({ $0[userPath] }) { try fault() }
                let newDB = try LevelDB(path: layersPath + "/" + prepared.copy, options: Self.existing)
                let staging = try LevelDB(path: layersPath + "/" + (prepared.staging ?? ""), options: Self.existing)
                defer { staging.close() }
                try storage.withReadsHeld {
                    try storage.replaceBase(with: newDB)
                    applied = try LayerDerivation.apply(staging: staging, to: storage.user, root: store.root)
                }
                let replaced = LayersRecord(base: prepared.base, copy: prepared.copy, files: prepared.files)
                try replaced.write(layersPath)
                record.withLock { $0 = replaced }
                try? FileManager.default.removeItem(atPath: layersPath + "/" + (prepared.staging ?? ""))
            } catch {
                // Back to the old base, durably, before the writer lock is released.
                do {
                    try rollBack(to: previous, from: oldBase, abandoning: prepared)
                } catch let rollback {
                    // Neither way could be finished here: the handle stops, and the next open
                    // finishes the recorded replacement.
                    storage.user.close()
                    throw KVDocsError(
                        .ioError,
                        "replacing the base with \(newBase) failed after it was recorded (\(error)), and going back failed too (\(rollback)); the database is closed: open it again, which finishes the replacement",
                        path: userPath)
                }
                store.hub.publishToAll()
                throw error
            }
            progress?(Progress(phase: "applying", done: applied, total: applied))
        }
        // Every collection of the base may have changed.
        store.hub.publishToAll()
        // The old copy stays until no handle can use it (snapshots may still read it): the
        // next open or close removes it.
    }

    /// A consistent copy of the user database, from one snapshot, in the new directory
    /// `path` (see ``LevelDB/backup(to:options:progress:)``), while writes go on.
    @discardableResult
    public func backup(to path: String, progress: ((Int) -> Void)? = nil) throws -> BackupReport {
        try storage.user.backup(to: path, progress: progress)
    }

    /// Writes `database` as a base for apps to ship, in the new directory `path`: a consistent
    /// copy from one snapshot (``LevelDB/backup(to:options:progress:)``) whose tables are not
    /// compressed, compacted so that its entries sit in tables rather than a log.
    ///
    /// <!-- doc-code: preamble=examples -->
    /// ```swift
    /// try LayeredDocumentStore.writeBase(of: db, to: "Resources/stations.db")   // then ship it in the app
    /// ```
    ///
    /// A base for Apple platforms must be written this way (or with
    /// ``LevelDBOptions/compression`` `.none` from the start): their LevelDB has no Snappy, and
    /// refuses a Snappy-compressed table with `.unsupportedCompression`.
    /// - Parameters:
    ///   - database: the database the base is built in (an app's data pipeline writes it).
    ///   - path: the base's directory; it must not exist.
    ///   - progress: called after every batch with the entries copied so far.
    /// - Throws: what ``LevelDB/backup(to:options:progress:)`` throws; storage errors of the compaction.
    @discardableResult
    public static func writeBase(of database: LevelDB, to path: String, progress: ((Int) -> Void)? = nil) throws
        -> BackupReport
    {
        var options = LevelDBOptions()
        options.compression = .none
        let report = try database.backup(to: path, options: options, progress: progress)
        options.createIfMissing = false
        options.comparator = database.options.comparator
        let base = try LevelDB(path: report.path, options: options)
        defer { base.close() }
        try base.compact()
        return report
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

    /// Fault injection for tests: a failure thrown in ``replaceBase(with:allowingUnrelatedBase:progress:)``
    /// right after the replacement is recorded, by user database path.
    package static let faultAfterRecording = Locked<[String: @Sendable () throws -> Void]>([:])

    /// Options that open an existing directory only (a missing one is an error, never a
    /// new empty database).
    static var existing: LevelDBOptions {
        var options = LevelDBOptions()
        options.createIfMissing = false
        return options
    }

    /// Undoes a live replacement that failed after it was recorded: the old base again, the
    /// user layer's derived data made exact over it, the record without the replacement,
    /// and the replacement's directories removed. REQUIRES: the writer lock.
    private func rollBack(to previous: LayersRecord, from oldBase: LevelDB, abandoning prepared: LayersRecord.Pending)
        throws
    {
        try LayerDerivation.rederive(
            root: store.root, base: oldBase, user: storage.user,
            stagingPath: layersPath + "/derive-" + UUID().uuidString,
            around: { apply in
                try storage.withReadsHeld {
                    try storage.replaceBase(with: oldBase)
                    try apply()
                }
            })
        try previous.write(layersPath)
        record.withLock { $0 = previous }
        Self.remove(prepared, layersPath: layersPath)
    }

    // MARK: - Replacements

    /// Refuses a base that is the user database or lies inside it or its layers directory,
    /// and a user database inside the base.
    static func checkPaths(base: String, user: String) throws {
        func resolved(_ path: String) -> String {
            URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
        }
        let b = resolved(base), u = resolved(user), l = resolved(user + ".layers")
        if b == u || b.hasPrefix(u + "/") {
            throw KVDocsError(
                .invalidArgument,
                "the base \(base) is the user database \(user) or lies inside it: a base must be another database",
                path: base)
        }
        if b == l || b.hasPrefix(l + "/") {
            throw KVDocsError(
                .invalidArgument,
                "the base \(base) lies inside the user database's layers directory \(user).layers: give the base's own directory",
                path: base)
        }
        if u.hasPrefix(b + "/") {
            throw KVDocsError(
                .invalidArgument,
                "the user database \(user) lies inside the base \(base): keep the user database outside the base's directory",
                path: user)
        }
    }

    /// The schema the store has over the base copy at `copy`: the user layer's over it.
    static func effectiveSchema(copy: String, user: LevelDB, root: Subspace) throws -> DocumentSchema? {
        let base = try LevelDB(path: copy)
        defer { base.close() }
        let layered = try LayeredKeyValueStore(base: base, user: user)
        guard let data = try DocumentCatalog(root: root).schemaData(in: layered) else { return nil }
        return try DocumentSchema(json: Data(data), file: "the stored schema")
    }

    /// The date strategy the store over the base copy at `copy` reads typed documents with:
    /// the user layer's record, else the base's, else seconds since 2001 when the layers
    /// hold documents written before strategies were recorded; `nil` otherwise.
    static func effectiveDates(copy: String, user: LevelDB, root: Subspace) throws -> DateStrategy? {
        let base = try LevelDB(path: copy)
        defer { base.close() }
        let catalog = DocumentCatalog(root: root)
        let layered = try LayeredKeyValueStore(base: base, user: user)
        if let recorded = try catalog.dateStrategy(in: layered) { return recorded }
        return try DocumentStore.holdsDocuments(layered, layout: Layout(root: root)) ? .secondsSince2001 : nil
    }

    /// The date strategy the user layer `user` records itself (its values are tagged), or
    /// `nil`.
    package static func ownDates(_ user: LevelDB, root: Subspace) throws -> DateStrategy? {
        let catalog = DocumentCatalog(root: root)
        guard let stored = try user.get(catalog.datesKey),
            let value = try LayeredKeyValueStore.untag(stored, key: catalog.datesKey, name: user.path)
        else { return nil }
        guard let name = try? Tuple(decoding: value).string(at: 0), let strategy = DateStrategy(rawValue: name) else {
            throw KVDocsError(
                .corruption, "the user layer's date strategy record is not a strategy this version knows",
                path: user.path, key: catalog.datesKey)
        }
        return strategy
    }

    /// Refuses a new base whose typed dates are stored another way than `dates`, the way
    /// the store reads them: over it, either the base's documents or the user's would be
    /// misread. A base with no record but a document store was written as seconds since 2001.
    static func checkDates(_ newDB: LevelDB, base: String, dates: DateStrategy?, root: Subspace) throws {
        let catalog = DocumentCatalog(root: root)
        guard let dates, try catalog.formatVersion(in: newDB) != nil else { return }
        // A store with no record and no document has no dates to misread.
        guard
            let theirs = try catalog.dateStrategy(in: newDB)
                ?? (DocumentStore.holdsDocuments(newDB, layout: Layout(root: root)) ? .secondsSince2001 : nil)
        else { return }
        guard theirs == dates else {
            throw KVDocsError(
                .invalidArgument,
                "the base \(base) stores typed dates as \(theirs.rawValue), but the user's store reads them as \(dates.rawValue): over it, one side's dates would be misread; write the new base with DocumentStore(…, dates: .\(dates.rawValue))",
                path: base)
        }
    }

    /// Copies `newBase`, reads it all with checksums verified, checks it against `expected`
    /// (and, unless `allowingUnrelated`, that it is related) and its dates against `dates`,
    /// and stages the user layer's derived data over it. Nothing is recorded; on failure the
    /// copy and the staging database are removed.
    package static func prepare(
        _ newBase: String, layersPath: String, user: LevelDB, root: Subspace, expected: DocumentSchema?,
        dates: DateStrategy?,
        allowingUnrelated: Bool, progress: ((Progress) -> Void)?
    ) throws -> LayersRecord.Pending {
        let copy = "base-" + UUID().uuidString, staging = "derive-" + UUID().uuidString
        var pending = LayersRecord.Pending(base: newBase, copy: copy, files: [], staging: staging)
        do {
            pending.files = try DatabaseFiles.copy(from: newBase, to: layersPath + "/" + copy) { done, total in
                progress?(Progress(phase: "copying base", done: done, total: total))
            }
            var baseOptions = LevelDBOptions()
            baseOptions.createIfMissing = false
            let newDB = try LevelDB(path: layersPath + "/" + copy, options: baseOptions)
            defer { newDB.close() }
            // Without a schema given, the one the user layer keeps (its own, else the base's).
            let expected =
                try expected
                ?? DocumentCatalog(root: root).schemaData(in: try LayeredKeyValueStore(base: newDB, user: user))
                .map { try DocumentSchema(json: Data($0), file: "the stored schema") }
            // Damage anywhere in the new base fails here, not later in a read.
            var checked = 0
            let all = try newDB.entries()
            while try all.next({ _, _ in () }) != nil {
                checked += 1
                if checked % 10_000 == 0 { progress?(Progress(phase: "checking base", done: checked, total: 0)) }
            }
            if !allowingUnrelated { try checkRelated(newDB, base: newBase, user: user, root: root, expected: expected) }
            if let expected {
                try DocumentStore.checkAgreement(base: newDB, schema: expected, root: root, named: newBase)
            }
            try checkDates(newDB, base: newBase, dates: dates, root: root)
            let stagingDB = try LevelDB(path: layersPath + "/" + staging)
            defer { stagingDB.close() }
            try LayerDerivation.stage(root: root, base: newDB, user: user, staging: stagingDB) { done, total in
                progress?(Progress(phase: "deriving", done: done, total: total))
            }
            return pending
        } catch var e as KVDocsError {
            remove(pending, layersPath: layersPath)
            // The copy is gone: errors name the base given instead.
            let copyPath = layersPath + "/" + copy
            e.message = e.message.replacingOccurrences(of: copyPath, with: newBase)
            if let path = e.path, path.hasPrefix(copyPath) { e.path = newBase + path.dropFirst(copyPath.count) }
            throw e
        } catch {
            remove(pending, layersPath: layersPath)
            throw error
        }
    }

    /// Refuses a base that would hide the user's data: one with no document store, one
    /// that shares none of `expected`'s collections, or one over which a collection holding
    /// user documents would leave the schema.
    private static func checkRelated(
        _ newDB: LevelDB, base: String, user: LevelDB, root: Subspace, expected: DocumentSchema?
    )
        throws
    {
        let catalog = DocumentCatalog(root: root)
        let advice = "(kvrepl: replace-base PATH --allow-unrelated; the library: allowingUnrelatedBase: true)"
        guard try catalog.formatVersion(in: newDB) != nil, let data = try catalog.schemaData(in: newDB) else {
            throw KVDocsError(
                .invalidArgument,
                "the base \(base) has no document store: it would hide the user's documents; pass it on purpose to use it anyway \(advice)",
                path: base)
        }
        let theirs = try DocumentSchema(json: Data(data), file: "the base's stored schema")
        guard let expected else { return }
        let mine = Set(expected.collections.keys)
        if !mine.isEmpty, mine.isDisjoint(with: theirs.collections.keys) {
            throw KVDocsError(
                .invalidArgument,
                "the base \(base) has none of the store's collections (\(mine.sorted().joined(separator: ", "))): it would hide the user's documents; pass it on purpose to use it anyway \(advice)",
                path: base)
        }
        let layered = try LayeredKeyValueStore(base: newDB, user: user)
        let after = try catalog.schemaData(in: layered).map {
            try DocumentSchema(json: Data($0), file: "the stored schema")
        }
        let layout = Layout(root: root)
        for name in mine.sorted() where after?[collection: name] == nil {
            if try user.entries(layout.documents(name).range, limit: 1).next() != nil {
                throw KVDocsError(
                    .invalidArgument,
                    "over the base \(base) the collection \"\(name)\" would leave the schema and hide the user's documents in it; pass it on purpose to use it anyway \(advice)",
                    path: base)
            }
        }
    }

    /// Records `prepared` as pending over `record`, then finishes it (see ``finish``).
    private static func record(
        _ prepared: LayersRecord.Pending, over record: LayersRecord, layersPath: String, user: LevelDB, root: Subspace,
        progress: ((Progress) -> Void)?
    ) throws -> (LayersRecord, KVDocsError?) {
        var committed = record
        committed.pending = prepared
        committed.refused = nil
        try committed.write(layersPath)
        return try finish(
            prepared, record: committed, layersPath: layersPath, user: user, root: root, progress: progress)
    }

    /// Applies a pending replacement: copies its staged derived data into the user layer and
    /// records its base. A pending replacement that cannot be applied (its staging database
    /// is missing or unreadable, or the record predates staging) is rolled back instead: the
    /// user layer's derived data is made exact over the old base again, which held before;
    /// the reason is returned with the record.
    private static func finish(
        _ pending: LayersRecord.Pending, record: LayersRecord, layersPath: String, user: LevelDB, root: Subspace,
        progress: ((Progress) -> Void)?
    ) throws -> (LayersRecord, KVDocsError?) {
        let fm = FileManager.default
        var reason: KVDocsError
        if let staging = pending.staging, fm.fileExists(atPath: layersPath + "/" + pending.copy + "/CURRENT") {
            do {
                let stagingDB = try LevelDB(path: layersPath + "/" + staging, options: existing)
                defer { stagingDB.close() }
                _ = try LayerDerivation.apply(staging: stagingDB, to: user, root: root) { done in
                    progress?(Progress(phase: "applying", done: done, total: 0))
                }
                let done = LayersRecord(base: pending.base, copy: pending.copy, files: pending.files)
                try done.write(layersPath)
                try? fm.removeItem(atPath: layersPath + "/" + staging)
                return (done, nil)
            } catch let e as KVDocsError {
                reason = e
            } catch {
                reason = KVDocsError(.ioError, "\(error)", path: layersPath)
            }
        } else {
            reason = KVDocsError(
                .notSupported,
                "the replacement by \(pending.base) recorded in \(layersPath) \(pending.staging == nil ? "was recorded by an older KVDocs before it was checked" : "has lost its copy of the base")",
                path: layersPath)
        }
        // Back to the old base: the user layer held exact data over it before.
        let base = try LevelDB(path: layersPath + "/" + record.copy, options: existing)
        defer { base.close() }
        try LayerDerivation.rederive(
            root: root, base: base, user: user, stagingPath: layersPath + "/derive-" + UUID().uuidString
        ) { done, total in
            progress?(Progress(phase: "deriving", done: done, total: total))
        }
        var kept = record
        kept.pending = nil
        try kept.write(layersPath)
        // The copy in force stays (an adopted user layer's pending copy is its own).
        if pending.copy != record.copy { try? fm.removeItem(atPath: layersPath + "/" + pending.copy) }
        if let staging = pending.staging { try? fm.removeItem(atPath: layersPath + "/" + staging) }
        return (
            kept,
            KVDocsError(
                reason.kind,
                "the replacement by \(pending.base) could not be finished and was undone: \(reason.message)",
                path: reason.path)
        )
    }

    /// Removes the directories of a replacement that was not made.
    private static func remove(_ pending: LayersRecord.Pending, layersPath: String) {
        try? FileManager.default.removeItem(atPath: layersPath + "/" + pending.copy)
        if let staging = pending.staging { try? FileManager.default.removeItem(atPath: layersPath + "/" + staging) }
    }

    /// Removes base copies and staging databases that neither the record nor an open handle uses.
    private func removeUnusedCopies() {
        let fm = FileManager.default
        let (inUse, pending) = record.withLock { ($0.copy, $0.pending) }
        guard let names = try? fm.contentsOfDirectory(atPath: layersPath) else { return }
        for name in names
        where (name.hasPrefix("base-") || name.hasPrefix("derive-")) && name != inUse && name != pending?.copy
            && name != pending?.staging
        {
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
