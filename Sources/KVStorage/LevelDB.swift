import CLevelDB
import Foundation
import KVSupport
import Synchronization

/// An open LevelDB database.
///
/// <!-- doc-code: preamble=examples -->
/// ```swift
/// let db = try LevelDB(path: "/tmp/example.db")
/// try db.put("greeting", "hello")
/// let value = try db.get("greeting", as: String.self)   // "hello"
/// try db.entries(.prefix("user:"), order: .reverse, limit: 10).forEach { entry in … }
/// db.close()
/// ```
///
/// A `LevelDB` is safe to use from many threads at once without external
/// synchronization: LevelDB's `DB` is ("A DB is safe for concurrent access from multiple
/// threads without any external synchronization", `include/leveldb/db.h`), and KVDocs
/// guards its own state with a readers-writer lock so that ``close()`` waits for
/// operations in flight.
///
/// Cursors, entry cursors and snapshots hold a strong reference to their database, so
/// they keep it open while they live. After ``close()`` every use of the database or of
/// anything made from it throws a `.closed` error; none of them crashes.
///
/// Only one `LevelDB` (in any process) can have a given directory open at a time;
/// a second open fails with a `.locked` error naming the path.
///
/// ## Durability
///
/// Every write (``put(_:_:sync:)``, ``delete(_:sync:)``, ``write(_:sync:)``) is appended to
/// LevelDB's log file, and handed to the operating system, before it returns. So:
///
/// - **A crash of the process** (a trap, `kill -9`, an abort) loses nothing that was
///   acknowledged: every write that returned, synced or not, is there when the database is
///   opened again.
/// - **A power loss or an operating-system crash** keeps only the writes made with
///   `sync: true`, and every write acknowledged before them (the log is written in order,
///   and a synced write forces the log to the disk with `fsync` before it returns). Later
///   writes made without `sync` may be lost, as a suffix: the writes that survive are a
///   prefix of the writes in the order they were made, each one whole (a write batch is
///   never torn). The end of the log that such a loss leaves zeroed, garbled or cut short
///   (a torn tail) is cut on the next open and reported in ``recoveredTornTail``.
///
/// One limit comes from LevelDB: when the log fills (about ``LevelDBOptions/writeBufferSize``
/// bytes) LevelDB starts a new one without syncing the old, which it turns into a table in
/// the background. A power loss before that table is written can damage the end of the
/// older log under a newer one; the open then refuses with a `.corruption` error naming
/// the older log, and ``repair(path:options:)`` keeps the writes up to the damage.
///
/// A synced write waits for the disk (about 450 µs against under 3 µs without `sync` on
/// the benchmark machine of Benchmarks/README.md); to make many writes durable
/// at once, put them in one batch written with `sync: true`, or write them without `sync`
/// and end with one synced write.
///
/// ## Topics
///
/// ### Opening and closing
/// - ``init(path:options:)``
/// - ``path``
/// - ``options``
/// - ``close()``
/// - ``isClosed``
/// - ``recoveredTornTail``
/// - ``TornLogTail``
///
/// ### Reading
/// - ``get(_:options:)``
/// - ``get(_:as:options:)``
/// - ``contains(_:options:)``
/// - ``withValue(forKey:options:_:)``
///
/// ### Writing
/// - ``put(_:_:sync:)``
/// - ``delete(_:sync:)``
/// - ``write(_:sync:)``
/// - ``write(sync:_:)``
/// - ``deleteRange(_:order:limit:batchSize:sync:)``
/// - ``withWriterLock(_:)``
///
/// ### Iterating
/// - ``entries(_:order:limit:options:)``
/// - ``forEach(in:order:limit:options:_:)``
/// - ``makeCursor(options:)``
///
/// ### Consistent reads
/// - ``snapshot()``
///
/// ### Maintenance
/// - ``property(_:)``
/// - ``numberOfFiles(atLevel:)``
/// - ``approximateMemoryUsage()``
/// - ``approximateSize(of:)``
/// - ``approximateSizes(of:)``
/// - ``compact(_:)``
/// - ``destroy(path:options:)``
/// - ``repair(path:options:)``
/// - ``levelDBVersion``
/// - ``dump(to:range:options:)``
/// - ``load(from:batchSize:maximumLineLength:sync:)``
/// - ``openPrivateCopy(of:options:under:)``
public final class LevelDB: @unchecked Sendable {
    // @unchecked Sendable: LevelDB's DB handle is thread-safe; `handle` is read under
    // `lock` for reading and set to nil only under `lock` for writing; `resources` is a Locked.

    /// The directory of the database: for a private copy, the copy's directory.
    public let path: String
    /// The options the database was opened with.
    public let options: LevelDBOptions
    /// For a private copy (see ``openPrivateCopy(of:options:under:)``), the directory it
    /// was copied from; `nil` for a database opened in place. ``close()`` removes the copy.
    public let copiedFrom: String?
    /// The torn end of the newest log that this open cut, or `nil` when the logs were
    /// sound (see ``TornLogTail``).
    ///
    /// A power loss or an operating-system crash can leave the bytes of the writes made
    /// after the last synced one zeroed, garbled or cut short at the end of the log. When
    /// everything before the damage is intact and no intact record follows it, the open
    /// drops that end (keeping its bytes in `lost/`) instead of refusing: the writes lost
    /// are the latest ones, unsynced, each one whole, and the writes kept are all those
    /// before them. Damage followed by an intact record is still refused with a
    /// `.corruption` error naming the log. For a private copy
    /// (``openPrivateCopy(of:options:under:)``) the copy is cut, never the original.
    public let recoveredTornTail: TornLogTail?

    private var handle: OpaquePointer?
    private let lock = ReadWriteLock()
    /// Serializes the read-modify-write sequences of higher layers (see `withWriterLock`).
    private let writerLock = WriterLock()
    private var cOptions: COptions?
    /// Iterators and snapshots not yet freed, so `close()` can free them first:
    /// LevelDB requires both to be gone before `leveldb_close`.
    /// The registry owns the C handles (not the Swift objects), so a cursor that is being
    /// deinitialized on one thread while another thread closes can never be skipped.
    private let resources = Locked<[ObjectIdentifier: OwnedHandle]>([:])

    // Read and write options shared by the common calls; immutable after init.
    let defaultReadOptions: OpaquePointer
    let asyncWriteOptions: OpaquePointer
    let syncWriteOptions: OpaquePointer
    let comparator: LevelDBComparator?
    /// The number of writes made with the `sync` option since the database was opened.
    private let syncedWriteCount = Atomic<Int>(0)
    /// The first write that failed with an I/O error or corruption (a full disk, a failed
    /// background compaction); once set, every write of this handle is refused.
    private let writeFailure = Locked<KVDocsError?>(nil)
    /// Every write through this handle, started and finished: what lets a reader know the
    /// data has not changed since a state it knows (``WriteCounter``).
    package let writeCounter = WriteCounter()
    /// The directory's identity, in ``openDirectories`` while the database is open.
    private let openIdentity: DirectoryIdentity?
    /// What runs once the database closes (``whenClosed(_:)``), and whether it has.
    private let closeActions = Locked<(closed: Bool, actions: [@Sendable () -> Void])>((false, []))

    /// Runs `action` once, after the database closes, on the thread that closes it (or
    /// at once, on this thread, when it is closed already). Higher layers end what waits on
    /// the database then: the document layer's change streams and observers.
    package func whenClosed(_ action: @escaping @Sendable () -> Void) {
        let runNow = closeActions.withLock { state in
            if state.closed { return true }
            state.actions.append(action)
            return false
        }
        if runNow { action() }
    }

    /// Opens (and by default creates) the database at `path`.
    ///
    /// - Throws: ``KVDocsError``: `.invalidArgument` for an out-of-range option, a missing
    ///   database without `createIfMissing`, or a comparator that differs from the stored one;
    ///   `.locked` when another process or handle has the database open; `.corruption` when the
    ///   files are damaged, including a directory of LevelDB files whose `CURRENT` file is
    ///   missing (LevelDB would otherwise start an empty database over it: use ``repair(path:options:)``).
    ///   A torn tail of the newest log is not an error: it is cut, and reported in
    ///   ``recoveredTornTail``.
    public convenience init(path: String, options: LevelDBOptions = LevelDBOptions()) throws {
        try self.init(path: path, options: options, copiedFrom: nil)
    }

    /// Opens the database at `path`; `copiedFrom` marks `path` as a private copy, removed on close.
    init(path: String, options: LevelDBOptions, copiedFrom: String?) throws {
        self.path = path
        self.options = options
        self.copiedFrom = copiedFrom
        self.comparator = options.comparator
        let cOptions = try COptions(options)
        try Self.refuseOrphanedTables(at: path)
        // A build without Snappy: Snappy-compressed tables are refused before LevelDB reads
        // (or compacts) them; a database another holder has open is left to LevelDB's
        // `.locked` (its files may be changing). Nothing to do in a build with Snappy.
        if !LevelDBOptions.Compression.snappyIsAvailable, Self.holder(of: path) == nil {
            try SnappyTables.refuse("open", at: path, thorough: false)
        }
        if let lost = ManifestCheck.lostEdits(in: path) { throw KVDocsError(.corruption, lost, path: path) }
        // LevelDB creates the directory and its LOCK file before it notices that the database
        // is missing; refuse first so that a failed open leaves the file system untouched.
        if !options.createIfMissing && !FileManager.default.fileExists(atPath: path + "/CURRENT") {
            throw KVDocsError(.invalidArgument, "\(path): does not exist (create_if_missing is false)", path: path)
        }
        if options.createIfMissing {
            // LevelDB makes only the last directory of the path; make the missing parents too.
            do {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            } catch {
                throw KVDocsError(
                    .ioError, "cannot create the directory \(path): \(error.localizedDescription)", path: path)
            }
        }
        try Self.applyProtection(options.fileProtection, at: path)
        // A torn tail of the newest log (a power loss after unsynced writes) is cut first;
        // any other damage is left for LevelDB to refuse. Only one thread of the process
        // opens a directory at a time this way: the cut holds a POSIX lock on LOCK, and
        // releasing it would release LevelDB's own lock, taken by another thread's open.
        let identity = DirectoryIdentity(path: path)
        let claimed = identity.map { id in Self.openingDirectories.withLock { $0.insert(id).inserted } } ?? false
        defer { if claimed, let identity { Self.openingDirectories.withLock { _ = $0.remove(identity) } } }
        let tail = claimed ? try TornTailRecovery.recover(in: path, paranoidChecks: options.paranoidChecks) : nil
        do {
            handle = try Self.openHandle(cOptions, path: path)
        } catch var error as KVDocsError where tail != nil {
            error.message += " (after the open \(tail.map(String.init(describing:)) ?? ""))"
            throw error
        }
        recoveredTornTail = tail
        self.cOptions = cOptions
        defaultReadOptions = leveldb_readoptions_create()
        leveldb_readoptions_set_verify_checksums(defaultReadOptions, 1)
        asyncWriteOptions = leveldb_writeoptions_create()
        syncWriteOptions = leveldb_writeoptions_create()
        leveldb_writeoptions_set_sync(syncWriteOptions, 1)
        openIdentity = DirectoryIdentity(path: path)
        if let openIdentity { Self.openDirectories.withLock { _ = $0.insert(openIdentity) } }
    }

    deinit {
        close()
        leveldb_readoptions_destroy(defaultReadOptions)
        leveldb_writeoptions_destroy(asyncWriteOptions)
        leveldb_writeoptions_destroy(syncWriteOptions)
    }

    /// Whether ``close()`` has been called.
    public var isClosed: Bool { lock.withReadLock { handle == nil } }

    /// Closes the database: frees every live iterator and snapshot made from it, then
    /// LevelDB's handle and the options' cache, filter policy and comparator. A private
    /// copy (``copiedFrom`` is set) is then removed from the disk.
    ///
    /// Waits for operations running on other threads. Calling it again does nothing.
    /// - Important: REQUIRES: not called from inside a closure that KVDocs is running for this
    ///   database (``withValue(forKey:options:_:)``, ``forEach(in:order:limit:options:_:)``), which would wait for itself.
    public func close() {
        let closed = lock.withWriteLock { () -> Bool in
            guard let handle else { return false }
            let live = resources.withLock { table in
                defer { table.removeAll() }
                return Array(table.values)
            }
            // Iterators first: they may pin a snapshot's state.
            for case .iterator(let it) in live { leveldb_iter_destroy(it) }
            for case .snapshot(let snapshot) in live { leveldb_release_snapshot(handle, snapshot) }
            leveldb_close(handle)
            self.handle = nil
            cOptions = nil
            if let openIdentity { Self.openDirectories.withLock { _ = $0.remove(openIdentity) } }
            // Best effort: a copy that cannot be removed stays where it was made.
            if copiedFrom != nil { try? FileManager.default.removeItem(atPath: path) }
            return true
        }
        guard closed else { return }
        // Outside the lock: an action's waiters may read (and get `.closed`) at once.
        let actions = closeActions.withLock { state in
            state.closed = true
            defer { state.actions = [] }
            return state.actions
        }
        for action in actions { action() }
    }

    /// Runs `body` with the open handle, holding the lock for reading.
    /// - Throws: `.closed` after ``close()``.
    @inline(__always)
    func withHandle<R>(_ body: (OpaquePointer) throws -> R) throws -> R {
        try lock.withReadLock {
            guard let handle else { throw KVDocsError.closed(path) }
            return try body(handle)
        }
    }

    /// Records a C iterator or snapshot owned by `owner`, to be freed by ``close()`` if
    /// `owner` has not freed it first. REQUIRES: called inside ``withHandle(_:)``.
    func register(_ handle: OwnedHandle, owner: AnyObject) {
        resources.withLock { $0[ObjectIdentifier(owner)] = handle }
    }

    /// Frees the C object registered for `owner`, if ``close()`` has not already freed it.
    /// Safe to call from `deinit` and more than once.
    func free(ownedBy owner: AnyObject) {
        lock.withReadLock {
            guard let handle,
                let owned = resources.withLock({ $0.removeValue(forKey: ObjectIdentifier(owner)) })
            else { return }
            switch owned {
            case .iterator(let it): leveldb_iter_destroy(it)
            case .snapshot(let snapshot): leveldb_release_snapshot(handle, snapshot)
            }
        }
    }

    /// The C write options for a write with or without `sync`, counting synced writes.
    func writeOptions(sync: Bool) -> OpaquePointer {
        guard sync else { return asyncWriteOptions }
        syncedWriteCount.add(1, ordering: .relaxed)
        return syncWriteOptions
    }

    /// The number of writes made with the `sync` option since the database was opened, so
    /// tests can check that `sync` reaches LevelDB's write options.
    package var syncedWrites: Int { syncedWriteCount.load(ordering: .relaxed) }

    /// Runs `body` holding this database's writer lock: no other holder of it runs meanwhile.
    ///
    /// Layers that read before they write (split records, documents and their indexes)
    /// use it so that two writers cannot interleave between the read and the batch. Plain
    /// ``put(_:_:sync:)``, ``delete(_:sync:)`` and reads are never blocked by it. The lock is
    /// reentrant; but a write transaction (``withWriteTransaction(_:)``) started inside it is
    /// refused.
    public func withWriterLock<R>(_ body: () throws -> R) rethrows -> R {
        try writerLock.withLock(body)
    }

    /// Runs `body` as a write transaction: holding the writer lock (``withWriterLock(_:)``),
    /// and refusing to start inside another holder of it on the same thread, because a
    /// read-modify-write sequence that starts inside another one would read state the outer
    /// one is about to overwrite. Every document write runs as one.
    /// - Throws: `.invalidArgument` when the calling thread already holds the writer lock,
    ///   or what `body` throws.
    public func withWriteTransaction<R>(_ body: () throws -> R) throws -> R {
        try writerLock.withTransaction(
            path: path,
            nested:
                "a write cannot start inside another write of the same database (a write batch's body, apply, reindex, an import or a progress callback)",
            body)
    }

    /// Runs a LevelDB write, refusing it when an earlier one failed.
    ///
    /// A write that fails part-way (the disk filled while the log record was written) can
    /// leave part of a record in LevelDB's log. At the end of the log, recovery ignores it
    /// (as it does after a crash); followed by later records, it would make the log look
    /// damaged on the next open. So after the first failed write this handle takes no more
    /// writes: closing and reopening (once space is freed) recovers every acknowledged
    /// write and starts a new log.
    func latchingWriteFailure(_ body: () throws -> Void) throws {
        if let failure = writeFailure.withLock({ $0 }) {
            throw KVDocsError(
                failure.kind,
                "an earlier write to \(path) failed (\(failure.message)); this handle takes no more writes: close and reopen the database (after freeing space) to write again",
                path: path)
        }
        writeCounter.begin()
        defer { writeCounter.end() }
        do {
            try body()
        } catch let error as KVDocsError where error.kind == .ioError || error.kind == .corruption {
            writeFailure.withLock { if $0 == nil { $0 = error } }
            throw error
        }
    }

    /// Compares keys in the database's order.
    @inline(__always)
    func compareKeys(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        if let comparator { return comparator.compare(a, b) }
        return LevelDBComparator.bytewise(a, b)
    }

    /// Opens LevelDB's handle, naming a read-only directory, or the holder of the lock (a
    /// handle of this process, or another process with its pid), in the error.
    private static func openHandle(_ cOptions: COptions, path: String) throws -> OpaquePointer? {
        do {
            return try withLevelDBError(path: path) { leveldb_open(cOptions.options, path, $0) }
        } catch let error as KVDocsError where error.kind == .locked {
            let holder = holder(of: path) ?? "another process or handle"
            throw KVDocsError(.locked, "the database at \(path) is in use by \(holder) (\(error.message))", path: path)
        } catch let error as KVDocsError
            where error.kind == .ioError
            && (error.message.contains("Read-only file system") || error.message.contains("Permission denied"))
        {
            throw KVDocsError(
                .ioError,
                "cannot open \(path) for writing: the directory or its file system is read-only (\(error.message)); open a private copy with LevelDB.openPrivateCopy(of:) (kvrepl --read-only)",
                path: path)
        }
    }

    /// Gives the directory at `path` and its files the protection class `protection`
    /// (``LevelDBOptions/fileProtection``), where the platform has classes.
    /// - Throws: `.ioError` naming the file whose class cannot be set.
    private static func applyProtection(_ protection: LevelDBOptions.FileProtection?, at path: String) throws {
        #if os(iOS) || os(watchOS) || os(tvOS) || os(visionOS)
        guard let protection, FileManager.default.fileExists(atPath: path) else { return }
        let type: FileProtectionType
        switch protection {
        case .complete: type = .complete
        case .completeUnlessOpen: type = .completeUnlessOpen
        case .completeUntilFirstUserAuthentication: type = .completeUntilFirstUserAuthentication
        case .unprotected: type = .none
        }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        for item in [path] + names.map({ path + "/" + $0 }) {
            do {
                try FileManager.default.setAttributes([.protectionKey: type], ofItemAtPath: item)
            } catch {
                throw KVDocsError(
                    .ioError, "cannot set the file protection \(protection) of \(item): \(error.localizedDescription)",
                    path: path)
            }
        }
        #endif
    }

    /// LevelDB starts a new, empty database over a directory whose CURRENT file is gone when
    /// create-if-missing is set, and then deletes the old tables as obsolete. Refuse instead.
    private static func refuseOrphanedTables(at path: String) throws {
        let fm = FileManager.default
        guard let names = try? fm.contentsOfDirectory(atPath: path),
            !names.contains("CURRENT")
        else { return }
        let levelDBFile = names.contains {
            $0.hasPrefix("MANIFEST-") || $0.hasSuffix(".ldb") || $0.hasSuffix(".sst") || $0.hasSuffix(".log")
        }
        if levelDBFile {
            throw KVDocsError(
                .corruption,
                "\(path) holds LevelDB files but no CURRENT file; opening would discard them. Run LevelDB.repair(path:) to recover the data",
                path: path)
        }
    }
}

/// A LevelDB object that must be freed before its database closes.
///
/// @unchecked Sendable: the pointers move between threads only inside the registry's lock,
/// and are freed only under the database's lock (see `close()` and `free(ownedBy:)`).
enum OwnedHandle: @unchecked Sendable {
    case iterator(OpaquePointer)
    case snapshot(OpaquePointer)
}
