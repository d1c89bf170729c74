import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What ``Database/backup(to:options:progress:)`` wrote.
public struct BackupReport: Sendable {
    /// The backup's directory.
    public let path: String
    /// The entries copied: every entry of the snapshot.
    public let entries: Int
    /// Their keys' and values' bytes.
    public let bytes: Int
}

extension Database {
    /// Writes a consistent copy of the database, as one snapshot holds it, into the new
    /// directory `path`, while other threads go on reading and writing.
    ///
    /// The copy is made beside `path` under a temporary name, synced, and renamed to `path`
    /// only when complete, so `path` either does not exist or holds the whole backup: a
    /// crash part-way leaves at most the temporary directory (`path` followed by
    /// `.partial-` and a UUID), which a later backup to the same `path` removes. The copy is
    /// a database of its own with this database's entries (written afresh, so compacted).
    ///
    /// - Parameters:
    ///   - path: the backup's directory; it must not exist.
    ///   - options: the options of the copy (compression, block size, …); its comparator
    ///     must be this database's.
    ///   - progress: called after every batch with the entries copied so far.
    /// - Returns: what was written.
    /// - Throws: `.invalidArgument` when `path` exists; `.ioError` when the copy cannot be
    ///   written or renamed (nothing is left at `path` then); storage errors of the reads.
    @discardableResult
    public func backup(to path: String, options: Options = Options(), progress: ((Int) -> Void)? = nil) throws -> BackupReport {
        let fm = FileManager.default
        guard !fm.fileExists(atPath: path) else {
            throw KVDocsError(.invalidArgument, "cannot back up to \(path): it exists (a backup goes to a new directory)", path: path)
        }
        let parent = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        // Leftovers of interrupted backups to the same path.
        if let leftovers = try? fm.contentsOfDirectory(atPath: parent.isEmpty ? "." : parent) {
            for leftover in leftovers where leftover.hasPrefix(name + ".partial-") {
                try? fm.removeItem(atPath: (parent.isEmpty ? "" : parent + "/") + leftover)
            }
        }
        let partial = path + ".partial-" + UUID().uuidString
        var copyOptions = options
        copyOptions.createIfMissing = true
        copyOptions.errorIfExists = true
        copyOptions.comparator = comparator
        var entries = 0, bytes = 0
        do {
            let snapshot = try self.snapshot()
            defer { snapshot.release() }
            let copy = try Database(path: partial, options: copyOptions)
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
            try Self.syncDirectory(partial)
            try fm.moveItem(atPath: partial, toPath: path)
            try Self.syncDirectory(parent.isEmpty ? "." : parent)
        } catch let error as KVDocsError {
            try? fm.removeItem(atPath: partial)
            throw error
        } catch {
            try? fm.removeItem(atPath: partial)
            throw KVDocsError(.ioError, "cannot back up \(self.path) to \(path): \(error.localizedDescription)", path: path)
        }
        return BackupReport(path: path, entries: entries, bytes: bytes)
    }

    /// Makes a directory's entries (a rename, new files) durable.
    static func syncDirectory(_ path: String) throws {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw KVDocsError(.ioError, "cannot open \(path) to sync it: \(String(cString: strerror(errno)))", path: path) }
        defer { _ = Glibc.close(fd) }
        guard fsync(fd) == 0 else { throw KVDocsError(.ioError, "cannot sync \(path): \(String(cString: strerror(errno)))", path: path) }
    }
}
