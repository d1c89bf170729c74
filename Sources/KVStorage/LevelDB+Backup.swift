import Foundation
import KVSupport

#if canImport(Glibc)
import Glibc
#endif

/// What ``LevelDB/backup(to:options:progress:)`` wrote.
public struct BackupReport: Sendable {
    /// The backup's directory.
    public let path: String
    /// The entries copied: every entry of the snapshot.
    public let entries: Int
    /// Their keys' and values' bytes.
    public let bytes: Int
}

extension LevelDB {
    /// Writes a consistent copy of the database, as one snapshot holds it, into the new
    /// directory `path`, while other threads go on reading and writing.
    ///
    /// ```swift
    /// let report = try db.backup(to: "nightly/2026-11-25.db")
    /// print("\(report.entries) entries in \(report.path)")
    /// ```
    ///
    /// The copy is made beside `path` under a temporary name, synced, and renamed to `path`
    /// only when complete, so `path` either does not exist or holds the whole backup: a
    /// crash part-way leaves at most the temporary directory (`path` followed by
    /// `.partial-` and a UUID, holding a marker file, `KVDOCS-BACKUP-IN-PROGRESS`, that says it
    /// is a backup in progress), which a later backup to the same `path` removes. Nothing
    /// else is ever removed: a file or directory that only shares the name (`DIR.partial-notes`)
    /// stays, and so does a partial directory whose backup is still running. The copy is a
    /// database of its own with this database's entries (written afresh, so compacted).
    ///
    /// Trailing slashes are ignored (`DIR/` is `DIR`); missing parent directories are made.
    /// A backup that fails removes what it made: its temporary directory and the parent
    /// directories it created.
    ///
    /// A target inside a layered database's layers directory (`USER.layers`, where
    /// ``LayeredDocumentStore`` keeps its base copies and removes directories it does not use)
    /// is refused before anything is written.
    ///
    /// - Parameters:
    ///   - path: the backup's directory; it must not exist.
    ///   - options: the options of the copy (compression, block size, …); its comparator
    ///     must be this database's.
    ///   - progress: called after every batch with the entries copied so far.
    /// - Returns: what was written; its path is `path` without trailing slashes.
    /// - Throws: `.invalidArgument` when `path` exists, names no new directory (`.`, `..`,
    ///   `/`), lies under a file or inside a layers directory, and for invalid `options`; `.ioError` when
    ///   the copy cannot be written or renamed (nothing is left at `path` then); storage
    ///   errors of the reads.
    @discardableResult
    public func backup(to path: String, options: LevelDBOptions = LevelDBOptions(), progress: ((Int) -> Void)? = nil)
        throws
        -> BackupReport
    {
        let fm = FileManager.default
        let target = try BackupTarget(path)
        let path = target.path
        try target.refuseLayersDirectory()
        let created = try target.makeParents()
        var partial: String?
        var marker: BackupMarker?
        var copyOptions = options
        copyOptions.createIfMissing = true
        copyOptions.errorIfExists = true
        copyOptions.comparator = comparator
        var entries = 0, bytes = 0
        do {
            target.removeLeftovers()
            let directory = target.resolved + ".partial-" + UUID().uuidString
            do {
                try BackupTarget.makeDirectory(directory)
            } catch let error as KVDocsError {
                throw KVDocsError(.ioError, "cannot back up \(self.path) to \(path): \(error.message)", path: path)
            }
            partial = directory
            marker = try BackupMarker(creatingIn: directory)
            let snapshot = try self.snapshot()
            defer { snapshot.release() }
            let copy = try LevelDB(path: directory, options: copyOptions)
            do {
                let cursor = try snapshot.entries()
                let batch = WriteBatch()
                var batchBytes = 0
                while try cursor.next({ key, value -> Bool in
                    batch.put(key, value)
                    batchBytes += key.count + value.count
                    bytes += key.count + value.count
                    return true
                }) != nil {
                    entries += 1
                    if batch.count >= 10_000 || batchBytes >= 4 << 20 {
                        try copy.write(batch, sync: false)
                        batch.clear()
                        batchBytes = 0
                        progress?(entries)
                    }
                }
                // The last batch synced: every earlier one is in the log before it.
                try copy.write(batch, sync: true)
                progress?(entries)
                copy.close()
            } catch {
                copy.close()
                throw error
            }
            // The finished copy carries no marker. A crash from here to the rename leaves
            // an unmarked directory, which no backup removes: never the user's data.
            try marker?.remove()
            marker = nil
            try Self.syncDirectory(directory)
            try fm.moveItem(atPath: directory, toPath: target.resolved)
            // Until the rename is durable the backup is not made: a failure removes it too.
            partial = target.resolved
            try Self.syncDirectory(target.parent)
            partial = nil
        } catch {
            marker?.release()
            if let partial { try? fm.removeItem(atPath: partial) }
            // Only the directories this backup made, deepest first, and only while empty.
            for directory in created.reversed() { _ = rmdir(directory) }
            if let error = error as? KVDocsError { throw error }
            throw KVDocsError(
                .ioError, "cannot back up \(self.path) to \(path): \(error.localizedDescription)", path: path)
        }
        return BackupReport(path: path, entries: entries, bytes: bytes)
    }

    /// Makes a directory's entries (a rename, new files) durable.
    package static func syncDirectory(_ path: String) throws {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else {
            throw KVDocsError(
                .ioError, "cannot open \(path) to sync it: \(String(cString: strerror(errno)))", path: path)
        }
        defer { _ = Foundation.close(fd) }
        guard fullSync(fd) == 0 else {
            throw KVDocsError(.ioError, "cannot sync \(path): \(String(cString: strerror(errno)))", path: path)
        }
    }
}
