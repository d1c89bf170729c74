import KVDocs

/// How kvrepl shows what a repair did (`repair`, `--repair`).
extension RepairReport {
    /// The report in `--json` mode.
    public var json: JSONValue {
        [
            "ok": true, "tables_before": .int(Int64(tablesBefore)), "logs_before": .int(Int64(logsBefore)),
            "tables_after": .int(Int64(tablesAfter)),
            "damaged_tables": .array(damagedTables.map { .string($0) }),
            "moved_to_lost": .array(movedToLost.map { .string($0) }),
            "truncated_logs": .array(truncatedLogs.map { .string($0) })
        ]
    }

    /// The report as text, naming the database at `path`.
    public func text(_ path: String) -> String {
        func files(_ n: Int, _ what: String) -> String { "\(n) \(what) file\(n == 1 ? "" : "s")" }
        var lines = [
            "repaired \(path): rebuilt its manifest from \(files(tablesBefore, "table")) and \(files(logsBefore, "log")); it now has \(files(tablesAfter, "table"))"
        ]
        for log in truncatedLogs {
            lines.append("  damaged log cut at its first bad record (original in lost/): " + log)
        }
        if !convertedLogs.isEmpty {
            lines.append("  log files converted to tables, moved to lost/: " + convertedLogs.joined(separator: ", "))
        }
        if !replacedManifests.isEmpty {
            lines.append("  old manifests, moved to lost/: " + replacedManifests.joined(separator: ", "))
        }
        if !damagedTables.isEmpty {
            lines.append(
                "  damaged table files, moved to lost/ (whatever LevelDB could read of them was kept): "
                    + damagedTables.joined(separator: ", "))
        }
        if !otherLost.isEmpty { lines.append("  other files moved to lost/: " + otherLost.joined(separator: ", ")) }
        return lines.joined(separator: "\n")
    }
}
