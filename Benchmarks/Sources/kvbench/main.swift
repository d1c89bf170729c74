// kvbench: LevelDB tuning benchmarks, the Swift wrapper against the raw C API, and the
// document and text layers against SQLite, in one run. Prints Markdown tables, writes every
// figure as JSON and draws charts (into .build/kvbench-results unless --output says where).
import ArgumentParser
import Foundation

struct KVBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kvbench", abstract: "Benchmarks of KVDocs, LevelDB's C API and SQLite, measured in the same run.")

    @Flag(help: "Small sizes (N = 20,000, 3 repeats): a smoke run that finishes in about a minute.")
    var quick = false

    @Option(
        help:
            "Keys for the raw and tuning workloads (db_bench's default: 1,000,000); also the apps section's athletes (at most 100,000; default 18,000, --quick 2,000)."
    )
    var n: Int?

    @Option(help: "Repeats of each measurement; the median is reported.")
    var repeats = 3

    @Option(
        help:
            "Sections to run: raw, tuning, documents, text, import, scaling, geo, vector, layers, apps, sync, etcd (comma-separated; etcd uses the cluster at KVDOCS_ETCD_ENDPOINTS, else starts one with scripts/etcd-cluster; vector runs numpy, sqlite-vec and hnswlib from .venv, which scripts/install-deps makes)."
    )
    var sections = "raw,tuning,documents,text,import,scaling,geo,vector,layers,apps,sync,etcd"

    @Option(help: "Vectors of the vector section, 384 dimensions each (default 100,000; --quick 5,000).")
    var vectorCount: Int?

    @Option(help: "Points of the geo section (default 1,000,000; --quick 20,000).")
    var geoPoints: Int?

    @Option(help: "Corpus sizes of the text section (comma-separated; default 20000,200000,1000000, --quick 2000).")
    var textSizes: String?

    @Option(
        help:
            "Where to write results.json and the charts (never a tracked folder unless asked: Benchmarks/results holds the committed figures)."
    )
    var output = ".build/kvbench-results"

    @Flag(help: "Do not draw charts.")
    var noCharts = false

    @Option(
        help:
            "Run only the measurements whose \"NAME VARIANT\" contains this text (their sections' setup still runs): for profiling one workload, as in --only \"get by primary key kvdocs-untyped\"."
    )
    var only: String?

    func run() throws {
        let bench = try Bench(n: n ?? (quick ? 20_000 : 1_000_000), repeats: max(1, repeats), quick: quick)
        if let textSizes {
            let sizes = textSizes.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
                .filter { $0 >= 1000 }
            guard !sizes.isEmpty else {
                throw ValidationError("--text-sizes takes sizes of at least 1000, comma-separated")
            }
            bench.textSizeOverride = sizes
        }
        bench.geoPoints = geoPoints ?? (quick ? 20_000 : 1_000_000)
        bench.vectorCount = max(100, vectorCount ?? (quick ? 5_000 : 100_000))
        // The apps section's athletes: --n when given (at most 100,000, as the documents
        // section), else the size of a real import.
        bench.appAthletes = max(100, min(n ?? (quick ? 2_000 : 18_000), 100_000))
        bench.only = only
        let wanted = Set(sections.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        let started = Date()
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
        let json = output + "/results.json"
        var runs: [(String, () throws -> Void)] = [
            ("raw", bench.runRaw), ("tuning", bench.runTuning), ("documents", bench.runDocuments),
            ("text", bench.runText), ("import", bench.runImport), ("scaling", bench.runScaling), ("geo", bench.runGeo),
            ("vector", bench.runVector),
            ("layers", bench.runLayers),
            ("apps", bench.runApps)
        ]
        #if KVBENCH_SYNC
        runs.append(("sync", bench.runSync))
        runs.append(("etcd", bench.runEtcd))
        #else
        for name in ["sync", "etcd"] where wanted.contains(name) {
            FileHandle.standardError.write(Data("\(name): skipped (built with KVBENCH_WITHOUT_SYNC)\n".utf8))
        }
        #endif
        for (name, body) in runs where wanted.contains(name) {
            try bench.section(name, body)
            // Written after each section, so a long run keeps what it measured.
            try Report(bench: bench, seconds: Date().timeIntervalSince(started)).json().write(
                to: URL(fileURLWithPath: json))
        }
        let report = Report(bench: bench, seconds: Date().timeIntervalSince(started))
        print(report.markdown())
        try report.json().write(to: URL(fileURLWithPath: json))
        FileHandle.standardError.write(Data("wrote \(json)\n".utf8))
        if !noCharts { Report.drawCharts(json: json, output: output) }
    }
}

KVBench.main()
