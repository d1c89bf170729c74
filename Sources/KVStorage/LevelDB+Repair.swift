import CLevelDB
import Foundation
import KVSupport

/// What ``LevelDB/repair(path:options:)`` did, read from the database directory before
/// and after.
///
/// KVDocs first cuts each log file at its first damaged record (keeping the original in
/// `lost/`). LevelDB's repair then turns every log file into a table, scans every table with
/// checksums verified (copying the blocks that pass into a new table), writes a new
/// manifest, and moves the files it replaced into the `lost/` subdirectory.
public struct RepairReport: Sendable, Hashable {
    /// Table files (`.ldb`, `.sst`) before the repair.
    public var tablesBefore = 0
    /// Log files before the repair.
    public var logsBefore = 0
    /// Table files after the repair.
    public var tablesAfter = 0
    /// Old manifests moved to `lost/`.
    public var replacedManifests: [String] = []
    /// Log files converted to tables, moved to `lost/`.
    public var convertedLogs: [String] = []
    /// Damaged table files moved to `lost/`, after what could be read of them was copied
    /// into a new table.
    public var damagedTables: [String] = []
    /// Other files moved to `lost/`.
    public var otherLost: [String] = []
    /// Log files cut at their first damaged record before LevelDB replayed them, each with
    /// what was wrong; the original is kept as `lost/NAME.damaged`. A log newer than a
    /// damaged one is set aside whole, so the repaired database holds the writes up to
    /// one moment, never a later write without an earlier one.
    public var truncatedLogs: [String] = []

    /// An empty report: every count 0, every list empty. ``LevelDB/repair(path:options:)`` fills it in.
    public init() {}

    /// Every file moved to `lost/` by this repair, sorted by kind as above (the originals of
    /// ``truncatedLogs`` are among ``otherLost``).
    public var movedToLost: [String] { replacedManifests + convertedLogs + damagedTables + otherLost }
}

extension LevelDB {
    /// Rebuilds the metadata of a damaged database from its table and log files, keeping
    /// as much data as can be read, and says what it did. Some data may be lost. Use the
    /// same comparator as when the database was created.
    ///
    /// ```swift
    /// let report = try LevelDB.repair(path: path)
    /// if !report.damagedTables.isEmpty { print("damaged:", report.damagedTables) }
    /// ```
    ///
    /// It is for a database that is closed: one that cannot be opened (a missing `CURRENT`
    /// file, a damaged manifest or log), or whose reads meet corruption. The repair always
    /// verifies checksums (``LevelDBOptions/paranoidChecks`` is forced on for it): a damaged block
    /// is left out, never copied, so the repaired tables hold only data that was written. A directory with no
    /// LevelDB file in it is refused and left untouched (LevelDB alone would make an empty
    /// database there).
    /// - Throws: `.invalidArgument` when `path` holds no `CURRENT`, manifest, log or table
    ///   file; `.locked` naming the holder when another process, or a handle of this
    ///   process, has it open; `.unsupportedCompression`, touching nothing, when this build
    ///   has no Snappy and a table holds Snappy-compressed blocks (they are not damaged);
    ///   `.ioError` or `.corruption` when it cannot be repaired.
    @discardableResult
    public static func repair(path: String, options: LevelDBOptions = LevelDBOptions()) throws -> RepairReport {
        let fm = FileManager.default
        let before = (try? fm.contentsOfDirectory(atPath: path)) ?? []
        guard
            before.contains(where: {
                $0 == "CURRENT" || $0.hasPrefix("MANIFEST-") || $0.hasSuffix(".log") || isTable($0)
            })
        else {
            throw KVDocsError(
                .invalidArgument,
                "\(path) is not a LevelDB database (it holds no CURRENT, MANIFEST, log or table file): nothing to repair",
                path: path)
        }
        if let holder = holder(of: path) {
            throw KVDocsError(
                .locked, "the database at \(path) is in use by \(holder): it cannot be repaired while open", path: path)
        }
        // A build without Snappy reads every compressed block as corrupt, and the repair would
        // drop them: such a database is refused, untouched, after every table is read.
        try SnappyTables.refuse("repair", at: path, thorough: true)
        var options = options
        options.paranoidChecks = true
        let c = try COptions(options)
        var report = RepairReport()
        report.truncatedLogs = try cutDamagedLogs(in: path, names: before)
        let lostBefore = Set((try? fm.contentsOfDirectory(atPath: path + "/lost")) ?? [])
        try withLevelDBError(path: path) { leveldb_repair_db(c.options, path, $0) }

        for name in before {
            if isTable(name) { report.tablesBefore += 1 } else if name.hasSuffix(".log") { report.logsBefore += 1 }
        }
        report.tablesAfter = ((try? fm.contentsOfDirectory(atPath: path)) ?? []).filter(isTable).count
        let lostNow = Set((try? fm.contentsOfDirectory(atPath: path + "/lost")) ?? [])
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

    /// Cuts every log file of `path` at its first damaged record (see ``LogFileCheck``),
    /// keeping each original as `lost/NAME.damaged`, and sets aside whole the logs newer
    /// than a damaged one. Returns a line per log changed.
    private static func cutDamagedLogs(in path: String, names: [String]) throws -> [String] {
        let fm = FileManager.default
        let logs = names.compactMap { name -> (number: UInt64, name: String)? in
            guard name.hasSuffix(".log"), let number = UInt64(name.dropLast(4)) else { return nil }
            return (number, name)
        }.sorted { $0.number < $1.number }
        var changed: [String] = []
        var cutEarlier = false
        for log in logs {
            let file = path + "/" + log.name
            guard let bytes = readFileBytes(file) else {
                throw KVDocsError(.ioError, "cannot read \(file): \(String(cString: strerror(errno)))", path: path)
            }
            let check = bytes.withUnsafeBytes { LogFileCheck($0) }
            let keep: Int
            if cutEarlier {
                keep = 0
                changed.append("\(log.name): set aside whole, after a damaged log (\(check.records) records)")
            } else if let damage = check.damage {
                keep = check.intactLength
                changed.append(
                    "\(log.name): \(damage); kept \(check.records) records (\(keep) of \(bytes.count) bytes)")
                cutEarlier = true
            } else {
                continue
            }
            do {
                try fm.createDirectory(atPath: path + "/lost", withIntermediateDirectories: true)
                let saved = path + "/lost/" + log.name + ".damaged"
                if fm.fileExists(atPath: saved) { try fm.removeItem(atPath: saved) }
                try fm.copyItem(atPath: file, toPath: saved)
                let temporary = file + ".cut"
                try Data(bytes[0..<keep]).write(to: URL(fileURLWithPath: temporary))
                guard rename(temporary, file) == 0 else {
                    throw KVDocsError(
                        .ioError, "cannot rename \(temporary) to \(file): \(String(cString: strerror(errno)))",
                        path: path)
                }
            } catch let error as KVDocsError {
                throw error
            } catch {
                throw KVDocsError(
                    .ioError, "cannot cut the damaged log \(file): \(error.localizedDescription)", path: path)
            }
        }
        return changed
    }

    private static func isTable(_ name: String) -> Bool { name.hasSuffix(".ldb") || name.hasSuffix(".sst") }
}
