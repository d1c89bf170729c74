import Foundation

/// Tables, JSON and charts of a run.
struct Report {
    let bench: Bench
    let seconds: Double

    func find(_ section: String, _ name: String, _ variant: String) -> Measurement? {
        bench.results.first { $0.section == section && $0.name == name && $0.variant == variant }
    }

    static func us(_ v: Double) -> String { v >= 100 ? String(format: "%.0f", v) : (v >= 1 ? String(format: "%.2f", v) : String(format: "%.3f", v)) }
    static func ops(_ v: Double) -> String { v >= 1e6 ? String(format: "%.2fM", v / 1e6) : (v >= 1e3 ? String(format: "%.1fk", v / 1e3) : String(format: "%.0f", v)) }

    /// A table comparing two variants per workload, with the ratio first/second.
    func comparison(_ section: String, _ a: String, _ b: String, title: String, ratioLabel: String) -> String {
        var lines = ["### \(title)", "", "| workload | \(a) µs/op | \(b) µs/op | \(ratioLabel) | \(a) ops/s | \(b) ops/s |", "|---|---:|---:|---:|---:|---:|"]
        var names: [String] = []
        for m in bench.results where m.section == section && !names.contains(m.name) { names.append(m.name) }
        for name in names {
            let x = find(section, name, a), y = find(section, name, b)
            let ratio = (x != nil && y != nil) ? String(format: "%.2f×", x!.microsecondsPerOperation / y!.microsecondsPerOperation) : "—"
            lines.append("| \(name) | \(x.map { Self.us($0.microsecondsPerOperation) } ?? "—") | \(y.map { Self.us($0.microsecondsPerOperation) } ?? "—") | \(ratio) | \(x.map { Self.ops($0.operationsPerSecond) } ?? "—") | \(y.map { Self.ops($0.operationsPerSecond) } ?? "—") |")
        }
        return lines.joined(separator: "\n")
    }

    func tuningTable() -> String {
        var lines = ["### Tuning matrix (Swift wrapper)", "", "| workload | setting | µs/op | ops/s | relative | notes |", "|---|---|---:|---:|---:|---|"]
        var names: [String] = []
        for m in bench.results where m.section == "tuning" && !names.contains(m.name) { names.append(m.name) }
        for name in names {
            let rows = bench.results.filter { $0.section == "tuning" && $0.name == name }
            let base = rows.first?.microsecondsPerOperation ?? 1
            for m in rows {
                let notes = m.extra.map { "\($0.key): \(Self.ops($0.value))" }.sorted().joined(separator: ", ")
                lines.append("| \(name) | \(m.variant) | \(Self.us(m.microsecondsPerOperation)) | \(Self.ops(m.operationsPerSecond)) | \(String(format: "%.2f×", m.microsecondsPerOperation / base)) | \(notes) |")
            }
        }
        return lines.joined(separator: "\n")
    }

    func markdown() -> String {
        var parts = ["## kvbench results", "",
                     "N = \(bench.n) keys (16-byte keys, 100-byte values, half compressible), median of \(bench.repeats) repeats; \(String(format: "%.0f", seconds)) s in all; \(Self.machine()).", ""]
        if bench.results.contains(where: { $0.section == "raw" }) {
            parts.append(comparison("raw", "swift", "c", title: "Swift wrapper against LevelDB's C API (same run)", ratioLabel: "Swift / C"))
            parts.append("")
        }
        if bench.results.contains(where: { $0.section == "tuning" }) { parts.append(tuningTable()); parts.append("") }
        if bench.results.contains(where: { $0.section == "documents" }) {
            parts.append(comparison("documents", "kvdocs", "sqlite", title: "Documents: KVDocs against SQLite (GRDB, WAL)", ratioLabel: "KVDocs / SQLite"))
            parts.append("")
        }
        if bench.results.contains(where: { $0.section == "text" }) {
            parts.append(comparison("text", "kvdocs", "sqlite fts5", title: "Full-text: KVDocs against SQLite FTS5", ratioLabel: "KVDocs / FTS5"))
            parts.append("")
        }
        if bench.results.contains(where: { $0.section == "import" }) {
            var lines = ["### Import", "", "| workload | variant | total seconds | documents/s |", "|---|---|---:|---:|"]
            for m in bench.results where m.section == "import" {
                lines.append("| \(m.name) | \(m.variant) | \(String(format: "%.3f", m.seconds)) | \(Self.ops(m.operationsPerSecond)) |")
            }
            parts.append(lines.joined(separator: "\n"))
            parts.append("")
        }
        parts.append("### Peak resident memory per section")
        parts.append("")
        parts.append("| section | peak RSS (MB) |")
        parts.append("|---|---:|")
        for (s, mb) in bench.peakMemory.sorted(by: { $0.key < $1.key }) { parts.append("| \(s) | \(String(format: "%.0f", mb)) |") }
        return parts.joined(separator: "\n")
    }

    func json() throws -> Data {
        struct Output: Encodable {
            let n: Int, repeats: Int, quick: Bool, seconds: Double, machine: String
            let results: [Measurement]
            let peakMemoryMB: [String: Double]
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(Output(n: bench.n, repeats: bench.repeats, quick: bench.quick, seconds: seconds, machine: Self.machine(),
                                         results: bench.results, peakMemoryMB: bench.peakMemory))
    }

    static func machine() -> String {
        let cpu = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?.split(separator: "\n")
            .first { $0.hasPrefix("model name") }.map { $0.split(separator: ":").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "" } ?? "unknown CPU"
        return "\(ProcessInfo.processInfo.activeProcessorCount) cores, \(cpu), \(ProcessInfo.processInfo.physicalMemory >> 30) GiB"
    }

    /// Draws charts with matplotlib (Benchmarks/plot.py) when a Python with it is available.
    static func drawCharts(json: String, output: String) {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("plot.py").path
        let pythons = [URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(".venv/bin/python3").path, "/usr/bin/python3"]
        for python in pythons where FileManager.default.isExecutableFile(atPath: python) {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: python)
            p.arguments = [script, json, output]
            do {
                try p.run()
                p.waitUntilExit()
                if p.terminationStatus == 0 { return }
            } catch { continue }
        }
        FileHandle.standardError.write(Data("charts skipped: no Python with matplotlib (scripts/install-deps installs it)\n".utf8))
    }
}
