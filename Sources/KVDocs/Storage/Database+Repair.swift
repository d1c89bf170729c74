import CLevelDB
import Foundation

/// What ``Database/repair(path:options:)`` did, read from the database directory before
/// and after.
///
/// LevelDB's repair turns every log file into a table, scans every table (copying what it
/// can read of a damaged one into a new table), writes a new manifest, and moves the files
/// it replaced into the `lost/` subdirectory.
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

    /// An empty report: every count 0, every list empty. ``Database/repair(path:options:)`` fills it in.
    public init() {}

    /// Every file moved to `lost/` by this repair, sorted by kind as above.
    public var movedToLost: [String] { replacedManifests + convertedLogs + damagedTables + otherLost }
}

extension Database {
    /// Rebuilds the metadata of a damaged database from its table and log files, keeping
    /// as much data as can be read, and says what it did. Some data may be lost. Use the
    /// same comparator as when the database was created.
    ///
    /// ```swift
    /// let report = try Database.repair(path: path)
    /// if !report.damagedTables.isEmpty { print("damaged:", report.damagedTables) }
    /// ```
    ///
    /// It is for a database that is closed: one that cannot be opened (a missing `CURRENT`
    /// file, a damaged manifest), or whose reads meet corruption. A directory with no
    /// LevelDB file in it is refused and left untouched (LevelDB alone would make an empty
    /// database there).
    /// - Throws: `.invalidArgument` when `path` holds no `CURRENT`, manifest, log or table
    ///   file; `.locked` naming the holder when another process, or a handle of this
    ///   process, has it open; `.ioError` or `.corruption` when it cannot be repaired.
    @discardableResult
    public static func repair(path: String, options: Options = Options()) throws -> RepairReport {
        let fm = FileManager.default
        let before = (try? fm.contentsOfDirectory(atPath: path)) ?? []
        guard before.contains(where: { $0 == "CURRENT" || $0.hasPrefix("MANIFEST-") || $0.hasSuffix(".log") || isTable($0) }) else {
            throw KVDocsError(.invalidArgument, "\(path) is not a LevelDB database (it holds no CURRENT, MANIFEST, log or table file): nothing to repair", path: path)
        }
        if let holder = holder(of: path) {
            throw KVDocsError(.locked, "the database at \(path) is in use by \(holder): it cannot be repaired while open", path: path)
        }
        let lostBefore = Set((try? fm.contentsOfDirectory(atPath: path + "/lost")) ?? [])
        let c = try COptions(options)
        try withLevelDBError(path: path) { leveldb_repair_db(c.options, path, $0) }

        var report = RepairReport()
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

    private static func isTable(_ name: String) -> Bool { name.hasSuffix(".ldb") || name.hasSuffix(".sst") }
}
