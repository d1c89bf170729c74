import Foundation
import KVSupport

extension LevelDB {
    /// Opens a private copy of the database at `path`, for reading it without modifying it.
    ///
    /// Opening a LevelDB database writes to its directory even if nothing else does (a new
    /// log file and manifest, a recovered log turned into a table, a lock file). This opens
    /// a copy instead, made in a new directory under `parent`:
    ///
    /// ```swift
    /// let db = try LevelDB.openPrivateCopy(of: "/var/lib/app/db")
    /// defer { db.close() }                      // removes the copy
    /// let value = try db.get("key")
    /// ```
    ///
    /// Invariants:
    /// - **The original directory is never modified**: no file in it is written, created,
    ///   renamed or removed. Its table files (`.ldb`, `.sst`, which LevelDB never changes
    ///   once written) are hard-linked into the copy (copied when linking fails, as across
    ///   file systems); every other file is copied, except `LOCK`.
    /// - The copy is a database of its own: writes through the returned handle (an index
    ///   build or a format migration that a ``DocumentStore`` makes to open, say) go to the
    ///   copy only, and are lost with it.
    /// - ``close()`` (or the handle's deinit) removes the copy. A process killed before
    ///   that leaves it in `parent`.
    /// - ``path`` is the copy's directory (errors of later reads name its files);
    ///   ``copiedFrom`` is `path`.
    ///
    /// - Parameters:
    ///   - path: the directory of the database to copy; it must exist and must not be open
    ///     (in this process or another).
    ///   - options: as for ``init(path:options:)``; `createIfMissing` and `errorIfExists`
    ///     are ignored (the original must exist, the copy does).
    ///   - parent: where to make the copy; the system's temporary directory by default. Hard
    ///     links need it on the same file system as `path`, or the table files are copied.
    /// - Throws: `.invalidArgument` when `path` is not a LevelDB database (it has no
    ///   `CURRENT` file); `.locked` naming the holder when another process, or a handle of
    ///   this process, has it open (a copy of a database being written could be
    ///   inconsistent); `.ioError` when the copy cannot be made; what ``init(path:options:)``
    ///   throws for the copy, with the copy's directory replaced by `path` in the message.
    public static func openPrivateCopy(
        of path: String, options: LevelDBOptions = LevelDBOptions(), under parent: String? = nil
    )
        throws -> LevelDB
    {
        guard FileManager.default.fileExists(atPath: path + "/CURRENT") else {
            throw KVDocsError(
                .invalidArgument, "\(path) is not a LevelDB database (it has no CURRENT file)", path: path)
        }
        if let holder = holder(of: path) {
            throw KVDocsError(.locked, "the database at \(path) is in use by \(holder)", path: path)
        }
        let copy = try makeCopy(of: path, under: parent ?? FileManager.default.temporaryDirectory.path)
        var copyOptions = options
        copyOptions.createIfMissing = false
        copyOptions.errorIfExists = false
        do {
            return try LevelDB(path: copy, options: copyOptions, copiedFrom: path)
        } catch let e as KVDocsError {
            try? FileManager.default.removeItem(atPath: copy)
            throw KVDocsError(e.kind, e.message.replacingOccurrences(of: copy, with: path), path: path, key: e.key)
        } catch {
            try? FileManager.default.removeItem(atPath: copy)
            throw error
        }
    }

    /// Copies the database directory `path` into a new directory under `parent`,
    /// hard-linking its table files, and returns the copy's path.
    private static func makeCopy(of path: String, under parent: String) throws -> String {
        let fm = FileManager.default
        let copy = parent + "/kvdocs-copy-\(UUID().uuidString)"
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
            throw KVDocsError(
                .ioError, "cannot make a private copy of \(path) in \(parent): \(error.localizedDescription)",
                path: path)
        }
        return copy
    }
}
