// kvbench: LevelDB tuning benchmarks, the Swift wrapper against the raw C API, and the
// document and text layers against SQLite, in one run. Prints Markdown tables, writes every
// figure as JSON and draws charts under Benchmarks/results/.
import ArgumentParser
import Foundation

struct KVBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "kvbench", abstract: "Benchmarks of KVDocs, LevelDB's C API and SQLite, measured in the same run.")

    @Flag(help: "Small sizes (N = 20,000, 3 repeats): a smoke run that finishes in about a minute.")
    var quick = false

    @Option(help: "Keys for the raw and tuning workloads (db_bench's default: 1,000,000).")
    var n: Int?

    @Option(help: "Repeats of each measurement; the median is reported.")
    var repeats = 3

    @Option(help: "Sections to run: raw, tuning, documents, text, import (comma-separated).")
    var sections = "raw,tuning,documents,text,import"

    @Option(help: "Where to write results.json and the charts.")
    var output = "results"

    @Flag(help: "Do not draw charts.")
    var noCharts = false

    func run() throws {
        let bench = try Bench(n: n ?? (quick ? 20_000 : 1_000_000), repeats: max(1, repeats), quick: quick)
        let wanted = Set(sections.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        let started = Date()
        if wanted.contains("raw") { try bench.section("raw") { try bench.runRaw() } }
        if wanted.contains("tuning") { try bench.section("tuning") { try bench.runTuning() } }
        if wanted.contains("documents") { try bench.section("documents") { try bench.runDocuments() } }
        if wanted.contains("text") { try bench.section("text") { try bench.runText() } }
        if wanted.contains("import") { try bench.section("import") { try bench.runImport() } }
        let report = Report(bench: bench, seconds: Date().timeIntervalSince(started))
        print(report.markdown())
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
        let json = output + "/results.json"
        try report.json().write(to: URL(fileURLWithPath: json))
        FileHandle.standardError.write(Data("wrote \(json)\n".utf8))
        if !noCharts { Report.drawCharts(json: json, output: output) }
    }
}

KVBench.main()
