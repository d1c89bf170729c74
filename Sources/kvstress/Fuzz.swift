import ArgumentParser
import Foundation
import KVDocs
import KVReplCore

#if canImport(Glibc)
import Glibc
#endif

/// `kvstress fuzz-grammar`: seeded random and mutated inputs, in process, for every parser that reads
/// what a user or a file gives: the tuple decoder, kvrepl's command parser, the FTS5 query
/// parser, the schema and keyspace loaders, the JSON-lines importer and the JSON parser.
///
/// Every input must be accepted (and then pass the target's own checks: round trips, the
/// importer's all-or-nothing first pass) or rejected with a one-line `KVDocsError` of a kind
/// the parser documents (kvrepl's parser: its `ShellCommandError`). A crash ends the process; a
/// watchdog thread ends it with status 2 when one input runs longer than `--timeout` seconds.
/// Input `i` of a target depends only on the seed, the target and `i`, so `--only i`
/// runs one input again (the importer's database then starts empty).
///
/// Beside `kvstress fuzz` (Fuzzing.swift, which also drives libFuzzer): inputs generated
/// from each grammar as well as mutated, nesting around every limit, and checks of what an
/// accepted input gives (round trips, the importer's all-or-nothing first pass).
struct Fuzz: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fuzz-grammar",
        abstract:
            "Feed seeded random, generated and mutated inputs to the tuple decoder, the kvrepl command parser, the FTS5 query parser, the schema and keyspace loaders, the JSON-lines importer and the JSON parser."
    )

    /// The subcommand's name, for the reproduction hints.
    static var name: String { configuration.commandName ?? "fuzz-grammar" }

    @Option(help: "The target: \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")), or all.") var target =
        "all"
    @Option(help: "Inputs per target.") var inputs = 20_000
    @Option(help: "The seed: the same seed gives the same inputs.") var seed: UInt64 = 1
    @Option(help: "Run only the input with this index (to reproduce a failure).") var only: Int?
    @Option(help: "Seconds one input may take before the run counts as hung (exit status 2).") var timeout = 10.0
    @Flag(help: "Print each target's figures as it finishes, and every failure.") var verbose = false

    func validate() throws {
        guard target == "all" || FuzzTarget(rawValue: target) != nil else {
            throw ValidationError(
                "unknown target \"\(target)\"; expected \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")) or all"
            )
        }
        guard inputs >= 0 else { throw ValidationError("--inputs must be at least 0") }
        if let only, only < 0 { throw ValidationError("--only must be at least 0") }
        guard timeout > 0 else { throw ValidationError("--timeout must be positive") }
    }

    func run() throws {
        let targets = target == "all" ? FuzzTarget.allCases : FuzzTarget.allCases.filter { $0.rawValue == target }
        let watch = FuzzWatch(seed: seed, limit: timeout)
        watch.start()
        var figures = Figures(scenario: "\(Fuzz.name) \(target)")
        for t in targets {
            var session = FuzzSession(target: t, seed: seed, watch: watch, verbose: verbose)
            let indexes = only.map { $0..<($0 + 1) } ?? 0..<inputs
            let started = FuzzClock.now()
            try session.run(indexes)
            let seconds = Double(FuzzClock.now() - started) / 1e9
            session.tally.report(into: &figures, prefix: targets.count > 1 ? "\(t.rawValue): " : "", seconds: seconds)
            if verbose || targets.count > 1 {
                note(
                    "\(Fuzz.name) \(t.rawValue): \(session.tally.tried) inputs in \(String(format: "%.2f", seconds)) s, \(session.tally.accepted) accepted, \(session.tally.rejected) rejected, \(session.tally.failureCount) failures"
                )
            }
        }
        try finish(figures)
    }
}

/// The parsers fuzzed, with the error kinds each documents.
enum FuzzTarget: String, CaseIterable {
    case tuple, command, fts5, schema
    case importer = "import"
    case json

    /// The `KVDocsError` kinds the parser documents; `nil`: any kind.
    var documentedKinds: Set<String>? {
        switch self {
        case .tuple, .json: [KVDocsError.Kind.decoding.rawValue]
        case .fts5: [KVDocsError.Kind.invalidArgument.rawValue]
        case .schema: [KVDocsError.Kind.schema.rawValue]
        case .command, .importer: nil
        }
    }

    var salt: UInt64 { UInt64((FuzzTarget.allCases.firstIndex(of: self) ?? 0) + 1) }
}

// MARK: - Running inputs

/// Nanoseconds of a monotonic clock.
enum FuzzClock {
    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }
}

/// The input running now, watched by a background thread that ends the process when one
/// input runs longer than `limit` seconds.
final class FuzzWatch: @unchecked Sendable {
    let seed: UInt64
    let limit: Double
    private let lock = NSLock()
    private var target = ""
    private var index = 0
    private var input: [UInt8] = []
    private var started: UInt64 = 0  // 0: no input running

    init(seed: UInt64, limit: Double) {
        self.seed = seed
        self.limit = limit
    }

    func begin(_ target: FuzzTarget, _ index: Int, _ input: [UInt8]) -> UInt64 {
        let now = FuzzClock.now()
        lock.lock()
        self.target = target.rawValue
        self.index = index
        self.input = input
        started = now
        lock.unlock()
        return now
    }

    func end() {
        lock.lock()
        started = 0
        input = []
        lock.unlock()
    }

    func start() {
        let thread = Thread { [self] in
            while true {
                usleep(100_000)
                lock.lock()
                let (started, target, index, input) = (self.started, self.target, self.index, self.input)
                lock.unlock()
                guard started != 0, Double(FuzzClock.now() &- started) / 1e9 > limit else { continue }
                let text =
                    "HANG: \(Fuzz.name) \(target) seed \(seed) input \(index) ran more than \(limit) s; input (\(input.count) bytes): \(FuzzShow.escaped(input, limit: 4000)); hex: \(FuzzShow.hex(input, limit: 1000)); reproduce: kvstress \(Fuzz.name) --target \(target) --seed \(seed) --only \(index)"
                print(text)
                fflush(nil)
                note(text)
                _exit(2)
            }
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
}

/// What became of one input.
enum FuzzResult {
    case accepted
    /// Rejected with a well-formed error, labelled by its kind.
    case rejected(String)
    /// A broken promise, described.
    case failed(String)
}

/// A target's counts.
struct FuzzTally {
    var tried = 0
    var accepted = 0
    var rejected = 0
    var failureCount = 0
    var failures: [String] = []
    var slowest: UInt64 = 0
    var slowestIndex = 0
    var outcomes: [String: Int] = [:]

    mutating func count(_ outcome: String, _ n: Int = 1) { outcomes[outcome, default: 0] += n }

    func report(into figures: inout Figures, prefix: String, seconds: Double) {
        figures.rounds += tried
        figures.add(prefix + "inputs", tried)
        figures.add(prefix + "accepted", accepted)
        figures.add(prefix + "rejected", rejected)
        figures.add(prefix + "failures", failureCount)
        figures.add(prefix + "slowest input us", Int(slowest / 1000))
        figures.add(prefix + "slowest input index", slowestIndex)
        figures.add(prefix + "inputs per second", seconds > 0 ? Int(Double(tried) / seconds) : tried)
        for (outcome, n) in outcomes { figures.add(prefix + outcome, n) }
        // Every failure counts; the details of the first ones are kept.
        figures.failures += failures
        figures.failures += Array(
            repeating: "\(prefix)(details of later failures not kept)", count: failureCount - failures.count)
    }
}

/// Escaped and hex renderings of inputs, for failure reports.
enum FuzzShow {
    /// `"…"` with printable ASCII as is and every other byte escaped (`\n`, `\xHH`), as
    /// bash's `$'…'` reads it.
    static func escaped(_ bytes: [UInt8], limit: Int = 200) -> String {
        var s = "\""
        for b in bytes.prefix(limit) {
            switch b {
            case 0x5C: s += "\\\\"
            case 0x22: s += "\\\""
            case 0x27: s += "\\'"
            case 0x0A: s += "\\n"
            case 0x0D: s += "\\r"
            case 0x09: s += "\\t"
            case 0x20..<0x7F: s.unicodeScalars.append(Unicode.Scalar(b))
            default: s += "\\x" + hexByte(b)
            }
        }
        s += "\""
        if bytes.count > limit { s += "… (\(bytes.count) bytes)" }
        return s
    }

    static func hex(_ bytes: [UInt8], limit: Int = 64) -> String {
        bytes.prefix(limit).map(hexByte).joined() + (bytes.count > limit ? "…" : "")
    }

    static func hexByte(_ b: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(b >> 4)], digits[Int(b & 15)]])
    }

    /// A string with its line breaks and other control characters escaped.
    static func escaped(_ text: String, limit: Int = 300) -> String { escaped(Array(text.utf8), limit: limit) }
}

/// One target's run: its inputs, the body that tries each, the counts.
struct FuzzSession {
    let target: FuzzTarget
    let seed: UInt64
    let watch: FuzzWatch
    let verbose: Bool
    var tally = FuzzTally()
    /// The details kept of the first failures of a target (all are counted).
    static let keptFailures = 50
    /// Failures printed to standard error as they happen (kept small: a test reading only
    /// standard output must not block on a full standard error pipe).
    static let printedFailures = 3

    init(target: FuzzTarget, seed: UInt64, watch: FuzzWatch, verbose: Bool) {
        self.target = target
        self.seed = seed
        self.watch = watch
        self.verbose = verbose
    }

    /// The generator of input `index` (`-1`: the target's corpus): a function of the
    /// seed, the target and the index only.
    static func random(seed: UInt64, target: FuzzTarget, index: Int) -> FuzzRandom {
        var g = SplitMix64(seed: seed ^ (target.salt &* 0x9E37_79B9_7F4A_7C15))
        let a = g.next()
        var h = SplitMix64(seed: a ^ (UInt64(bitPattern: Int64(index)) &* 0xD1B5_4A32_D192_ED03))
        return FuzzRandom(h.next())
    }

    mutating func run(_ indexes: Range<Int>) throws {
        var corpusRandom = Self.random(seed: seed, target: target, index: -1)
        switch target {
        case .tuple:
            let plan = FuzzTuples.plan(&corpusRandom)
            let prefix = Tuple([.string("dep")])
            let subspace = Subspace(prefix)
            for i in indexes {
                var r = Self.random(seed: seed, target: target, index: i)
                let bytes = plan.input(&r)
                one(i, bytes) { FuzzTuples.check(bytes, subspace: subspace) }
            }
        case .command:
            let plan = FuzzCommands.plan(&corpusRandom)
            let covered = Set(
                plan.mutator.corpus.compactMap { line in
                    String(decoding: line, as: UTF8.self).split(separator: " ").first.map { $0.lowercased() }
                })
            tally.count(
                "command names without a corpus line", ShellCommand.names.filter { !covered.contains($0) }.count)
            for i in indexes {
                var r = Self.random(seed: seed, target: target, index: i)
                let bytes = plan.input(&r)
                one(i, bytes) { FuzzCommands.check(bytes) }
            }
        case .fts5:
            let plan = FuzzQueries.plan(&corpusRandom)
            let tokenizers = [
                TextTokenizer(.unicode61), TextTokenizer(.porter), TextTokenizer(.trigram),
                TextTokenizer(.trigram, caseSensitive: true)
            ]
            for i in indexes {
                var r = Self.random(seed: seed, target: target, index: i)
                let bytes = plan.input(&r)
                let tokenizer = tokenizers[r.below(tokenizers.count)]
                one(i, bytes) { FuzzQueries.check(bytes, tokenizer: tokenizer) }
            }
        case .schema:
            let plan = FuzzSchemas.plan(&corpusRandom)
            for i in indexes {
                var r = Self.random(seed: seed, target: target, index: i)
                let bytes = plan.input(&r)
                // Keyspace declarations to the keyspace loader, mostly; the rest to the schema loader.
                let keyspaces =
                    bytes.count > 14 && bytes.starts(with: Array("{\"keyspaces\"".utf8))
                    ? r.below(10) != 0 : r.below(10) == 0
                one(i, bytes) { keyspaces ? FuzzSchemas.checkKeySchema(bytes) : FuzzSchemas.checkSchema(bytes) }
            }
        case .importer:
            let plan = FuzzImports.plan(&corpusRandom)
            let work = try makeWorkDirectory("fuzz-import")
            defer { try? FileManager.default.removeItem(atPath: work) }
            let db = try LevelDB(path: work + "/db")
            defer { db.close() }
            let store = try DocumentStore(
                database: db,
                schema: try DocumentSchema(json: Data(FuzzImports.schemaJSON.utf8), file: "fuzz import schema"))
            // The input file is rewritten for every input: in memory (/dev/shm) where there is one.
            let shm = FileManager.default.isWritableFile(atPath: "/dev/shm")
            let file = shm ? "/dev/shm/kvstress-fuzz-\(getpid())-\(UUID().uuidString).jsonl" : work + "/input.jsonl"
            defer { if shm { unlink(file) } }
            var importer = FuzzImports(store: store, file: file)
            for i in indexes {
                var r = Self.random(seed: seed, target: target, index: i)
                let bytes = plan.input(&r)
                let mode: DocumentStore.ImportMode = r.below(5) == 0 ? .insert : .upsert
                let batchSize = [1, 2, 3, 7, 1000][r.below(5)]
                let collection = r.below(100) == 0 ? "nobody" : "people"
                one(i, bytes) { importer.check(bytes, collection: collection, mode: mode, batchSize: batchSize) }
                if (i + 1) % 5000 == 0 { verify(store, after: i) }
            }
            verify(store, after: indexes.upperBound - 1)
            for (outcome, n) in importer.outcomes { tally.count(outcome, n) }
        case .json:
            let plan = FuzzJSON.plan(&corpusRandom)
            for i in indexes {
                var r = Self.random(seed: seed, target: target, index: i)
                let bytes = plan.input(&r)
                one(i, bytes) { FuzzJSON.check(bytes, thorough: i % 4 == 0) }
            }
        }
    }

    /// `store.verify()` must be clean: no failed import left part of a write behind.
    mutating func verify(_ store: DocumentStore, after index: Int) {
        do {
            let report = try store.verify()
            tally.count("verify runs")
            if !report.isClean {
                fail(
                    index, [],
                    "verify after input \(index) is not clean: \(report.missingEntries) missing and \(report.danglingEntries) dangling index entries, \(report.badDocuments) bad documents; \(report.problems.prefix(3).joined(separator: "; "))"
                )
            }
        } catch {
            fail(index, [], "verify after input \(index) threw: \(FuzzShow.escaped(String(describing: error)))")
        }
    }

    /// Runs one input under the watchdog and counts what became of it.
    mutating func one(_ index: Int, _ bytes: [UInt8], _ body: () -> FuzzResult) {
        let start = watch.begin(target, index, bytes)
        let result = body()
        let elapsed = FuzzClock.now() &- start
        watch.end()
        tally.tried += 1
        if elapsed > tally.slowest {
            tally.slowest = elapsed
            tally.slowestIndex = index
        }
        switch result {
        case .accepted: tally.accepted += 1
        case .rejected(let label):
            tally.rejected += 1
            tally.count("rejected: \(label)")
        case .failed(let problem): fail(index, bytes, problem)
        }
    }

    mutating func fail(_ index: Int, _ bytes: [UInt8], _ problem: String) {
        tally.failureCount += 1
        guard verbose || tally.failures.count < Self.keptFailures else { return }
        let text =
            "\(target.rawValue) seed \(seed) input \(index): \(problem.count > 600 ? String(problem.prefix(600)) + "…" : problem); input (\(bytes.count) bytes): \(FuzzShow.escaped(bytes)); reproduce: kvstress \(Fuzz.name) --target \(target.rawValue) --seed \(seed) --only \(index)"
        if tally.failures.count < Self.keptFailures { tally.failures.append(text) }
        if verbose || tally.failureCount <= Self.printedFailures {
            note("FAILURE: " + (text.count > 1500 && !verbose ? String(text.prefix(1500)) + "…" : text))
        }
    }

    /// What a thrown error says about the parser: a one-line, non-empty error of a
    /// documented type and kind is a rejection; anything else is a failure.
    static func judge(_ error: Error, kinds: Set<String>?, commandErrors: Bool = false) -> FuzzResult {
        let text: String
        let label: String
        if let e = error as? KVDocsError {
            text = e.description
            label = e.kind.rawValue
            if e.message.allSatisfy({ $0 == " " }) {
                return .failed("a KVDocsError with an empty message: \(FuzzShow.escaped(text))")
            }
            if let kinds, !kinds.contains(label) {
                return .failed(
                    "an error of kind \"\(label)\", but the parser documents only \(kinds.sorted().joined(separator: ", ")): \(FuzzShow.escaped(text))"
                )
            }
        } else if commandErrors, let e = error as? ShellCommandError {
            text = e.description
            label = "CommandError"
            if e.message.isEmpty { return .failed("a CommandError with an empty message: \(FuzzShow.escaped(text))") }
        } else {
            return .failed(
                "an error of type \(type(of: error)), not KVDocsError\(commandErrors ? " or CommandError" : ""): \(FuzzShow.escaped(String(describing: error)))"
            )
        }
        if text.isEmpty { return .failed("an error with an empty description") }
        // By bytes: "\r\n" is one Character, which `contains("\n")` would not find.
        if text.utf8.contains(0x0A) || text.utf8.contains(0x0D) {
            return .failed("an error of more than one line: \(FuzzShow.escaped(text))")
        }
        return .rejected(label)
    }

    /// Runs a check made after an input was accepted: its errors are failures.
    static func after(_ what: String, _ check: () throws -> String?) -> String? {
        do {
            return try check()
        } catch {
            return "\(what) threw \(FuzzShow.escaped(String(describing: error)))"
        }
    }
}

// MARK: - Generating inputs

/// A seeded generator with the helpers the input makers draw from.
struct FuzzRandom {
    var generator: SplitMix64

    init(_ seed: UInt64) { generator = SplitMix64(seed: seed) }

    mutating func next() -> UInt64 { generator.next() }
    /// A number in `0..<n` (0 when `n` is not positive).
    mutating func below(_ n: Int) -> Int { n <= 0 ? 0 : Int(next() % UInt64(n)) }
    /// True `percent` times in a hundred.
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
    mutating func bool() -> Bool { next() & 1 == 0 }
    mutating func byte() -> UInt8 { UInt8(truncatingIfNeeded: next()) }
    mutating func bytes(_ n: Int) -> [UInt8] { (0..<max(0, n)).map { _ in byte() } }
    /// An element of `items`, which must not be empty.
    mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }
    /// A size below `limit`, small ones likelier.
    mutating func size(_ limit: Int) -> Int { below(below(limit) + 1) }
}

/// Byte-level mutations: flips, inserts, deletes, truncation, splices of the corpus,
/// dictionary tokens, limit numbers, Unicode and invalid UTF-8, repeated chunks (nesting).
struct FuzzMutator {
    var corpus: [[UInt8]]
    var dictionary: [[UInt8]]

    static let interestingBytes: [UInt8] = [
        0x00, 0x01, 0x05, 0x09, 0x0A, 0x0D, 0x14, 0x1D, 0x20, 0x21, 0x22, 0x27, 0x28, 0x29, 0x2A,
        0x2B, 0x2C, 0x2D, 0x2E, 0x30, 0x39, 0x3A, 0x5B, 0x5C, 0x5D, 0x5E, 0x7B, 0x7D, 0x7F, 0x80,
        0xBF, 0xC0, 0xC2, 0xE0, 0xED, 0xF0, 0xF4, 0xFE, 0xFF
    ]

    /// Numbers at and past the 64-bit limits, and malformed ones.
    static let numbers = [
        "0", "-0", "1", "-1", "00", "007", "1.0", "-0.0", "0.5", ".5", "5.", "1e", "1e+", "+1", "0x1F",
        "127", "128", "255", "256", "-129", "65535", "4294967295", "4294967296",
        "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
        "18446744073709551615", "18446744073709551616", "-18446744073709551616",
        "1e308", "1e309", "-1e309", "1e-400", "4.9e-324", "2.2250738585072014e-308", "1.7976931348623157e308",
        "1.7976931348623159e308", "0.30000000000000004", "1E400", "1e-2147483649", "1e9999999999999999999",
        "123456789012345678901234567890", String(repeating: "9", count: 400),
        "0." + String(repeating: "0", count: 400) + "1",
        "NaN", "Infinity", "-Infinity", "inf", "nan"
    ]

    static let scalars: [Unicode.Scalar] = [
        "é", "\u{301}", "ß", "İ", "ı", "\u{FB01}", "ς", "Σ", "Ω", "中", "文", "😀", "\u{1F469}", "\u{200D}", "\u{FE0F}",
        "\u{2028}", "\u{2029}", "\u{85}", "\u{0B}", "\u{0C}", "\u{1B}", "\u{7F}",
        "\u{FEFF}", "\u{FFFD}", "\u{FFFF}", "\u{10FFFF}", "\u{202E}", "\u{E000}", "\u{0}", "\u{A0}", "\u{3000}", "ﾟ",
        "Ａ", "①", "½", "Ⅷ"
    ]

    /// Malformed UTF-8: overlong forms, surrogates, past U+10FFFF, truncated sequences, stray bytes.
    static let badUTF8: [[UInt8]] = [
        [0xC0, 0x80], [0xC1, 0xBF], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF],
        [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80], [0xFF], [0xFE],
        [0x80], [0xBF], [0xC3], [0xE2, 0x82], [0xF0, 0x9F, 0x98], [0xEF, 0xBB, 0xBF]
    ]

    /// Repetition counts around the nesting limits (128 tuples, 256 JSON and FTS5 levels).
    static let repeats = [2, 3, 8, 100, 126, 127, 128, 129, 130, 254, 255, 256, 257, 258, 1000, 5000]

    func mutate(_ input: [UInt8], _ r: inout FuzzRandom) -> [UInt8] {
        var b = input
        // One step half the time (most inputs stay close to valid), up to ten now and then.
        let steps = r.chance(50) ? 1 : 1 + r.below(r.chance(20) ? 10 : 3)
        for _ in 0..<steps { step(&b, &r) }
        if b.count > 300_000 { b.removeSubrange(300_000...) }
        return b
    }

    func step(_ b: inout [UInt8], _ r: inout FuzzRandom) {
        let at = r.below(b.count + 1)
        let i = r.below(b.count)
        switch r.below(17) {
        case 0 where !b.isEmpty: b[i] ^= UInt8(1) << UInt8(r.below(8))
        case 1 where !b.isEmpty: b[i] = r.byte()
        case 2 where !b.isEmpty: b[i] = r.pick(Self.interestingBytes)
        case 3: b.insert(contentsOf: r.bytes(1 + r.below(4)), at: at)
        case 4 where !b.isEmpty: b.remove(at: i)
        case 5 where !b.isEmpty: b.removeSubrange(i..<min(b.count, i + 1 + r.below(16)))
        case 6 where !b.isEmpty:
            let chunk = Array(b[i..<min(b.count, i + 1 + r.below(32))])
            b.insert(contentsOf: chunk, at: r.below(b.count + 1))
        case 7: b.removeSubrange(at...)
        case 8...9 where !dictionary.isEmpty: b.insert(contentsOf: r.pick(dictionary), at: at)
        case 10 where !b.isEmpty && !dictionary.isEmpty:
            b.replaceSubrange(i..<min(b.count, i + 1 + r.below(8)), with: r.pick(dictionary))
        case 11 where !corpus.isEmpty:
            let other = r.pick(corpus)
            let from = r.below(other.count)
            b.insert(contentsOf: other[from..<min(other.count, from + 1 + r.below(64))], at: at)
        case 12:
            if r.chance(40) {
                b.insert(contentsOf: r.pick(Self.badUTF8), at: at)
            } else {
                b.insert(contentsOf: Array(String(Character(r.pick(Self.scalars))).utf8), at: at)
            }
        case 13:
            // A chunk repeated: nesting near the limits, long runs.
            let unit: [UInt8]
            if !dictionary.isEmpty && r.bool() {
                unit = r.pick(dictionary)
            } else if b.isEmpty {
                unit = [r.pick(Self.interestingBytes)]
            } else {
                unit = Array(b[i..<min(b.count, i + 1 + r.below(4))])
            }
            let n = r.pick(Self.repeats)
            b.insert(contentsOf: (0..<n).flatMap { _ in unit }, at: at)
        case 14:
            // A number at or past a limit, in place of the digits at `i` (or inserted).
            let number = Array(r.pick(Self.numbers).utf8)
            var start = i, end = i
            while start > 0, Self.isNumberByte(b[start - 1]) { start -= 1 }
            while end < b.count, Self.isNumberByte(b[end]) { end += 1 }
            if end > start {
                b.replaceSubrange(start..<end, with: number)
            } else {
                b.insert(contentsOf: number, at: at)
            }
        case 15 where b.count > 1:
            b.swapAt(i, r.below(b.count))
        default:
            b.insert(r.pick(Self.interestingBytes), at: at)
        }
    }

    static func isNumberByte(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || c == UInt8(ascii: "-") || c == UInt8(ascii: ".") || c == UInt8(ascii: "e")
            || c == UInt8(ascii: "+")
    }
}

/// How a target makes its inputs: mutations of a corpus of valid inputs and of freshly
/// generated ones, deep nesting near the limits, random bytes.
struct FuzzPlan {
    var mutator: FuzzMutator
    /// A new valid (or nearly valid) input, made from the grammar.
    var fresh: (inout FuzzRandom) -> [UInt8]
    /// An input nested near or past the target's limits.
    var deep: (inout FuzzRandom) -> [UInt8]
    /// Bytes random inputs are drawn from half the time (the other half: any byte).
    var alphabet: [UInt8]
    /// The percentage of inputs that are fresh ones left as made.
    var valid = 0

    init(
        mutator: FuzzMutator, fresh: @escaping (inout FuzzRandom) -> [UInt8], valid: Int = 0,
        deep: @escaping (inout FuzzRandom) -> [UInt8], alphabet: [UInt8]
    ) {
        self.mutator = mutator
        self.fresh = fresh
        self.valid = valid
        self.deep = deep
        self.alphabet = alphabet
    }

    func input(_ r: inout FuzzRandom) -> [UInt8] {
        let roll = r.below(100)
        if roll < 7 {
            let n = r.size(r.chance(10) ? 1000 : 80)
            if r.bool() || alphabet.isEmpty { return r.bytes(n) }
            return (0..<n).map { _ in r.pick(alphabet) }
        }
        if roll < 10 {
            let d = deep(&r)
            return r.chance(30) ? mutator.mutate(d, &r) : d
        }
        if r.chance(valid) { return fresh(&r) }
        let base = roll < 50 ? r.pick(mutator.corpus) : fresh(&r)
        if r.chance(12) { return base }
        if r.chance(8) {
            let other = r.pick(mutator.corpus)
            return Array(base.prefix(r.below(base.count + 1))) + other.suffix(r.below(other.count + 1))
        }
        return mutator.mutate(base, &r)
    }

    static let textAlphabet: [UInt8] =
        Array(" \t\"'()[]{},:;*^+-=<>!.#0123456789aAzZ_\\/eEnNxX".utf8) + [0x00, 0x0A, 0x0D, 0xC3, 0xA9, 0xFF]
}

/// `[`, `{"k":` and the like `n` times, a core, then the closers (unless `unclosed`).
func fuzzNest(_ open: String, _ core: String, _ close: String, _ n: Int, unclosed: Bool = false) -> [UInt8] {
    var s = String(repeating: open, count: n) + core
    if !unclosed { s += String(repeating: close, count: n) }
    return Array(s.utf8)
}

/// A depth near `limit`: just below, at, just past, far past.
func fuzzDepth(_ r: inout FuzzRandom, limit: Int) -> Int {
    switch r.below(10) {
    case 0: return r.below(limit)
    case 1: return limit * 2 + r.below(limit)
    case 2: return r.chance(20) ? 100_000 : 5000
    default: return limit - 2 + r.below(5)
    }
}

// MARK: - tuple

/// The tuple decoder: random tuples (nested, integers at the 64-bit limits and beyond,
/// NaNs and infinities, strings with NULs, bytes, UUIDs, versionstamps) encoded and mutated.
enum FuzzTuples {
    static func plan(_ r: inout FuzzRandom) -> FuzzPlan {
        let corpus = (0..<300).map { _ in randomTuple(&r, depth: 0).encoded }
        // Type codes, escapes, lengths.
        let dictionary: [[UInt8]] = [
            [0x00], [0x00, 0xFF], [0x01], [0x02], [0x05], [0x05, 0x00], [0x0B], [0x0B, 0xF6], [0x0C], [0x13], [0x14],
            [0x15], [0x1C], [0x1D], [0x1D, 0x09], [0x1D, 0xFF], [0x20], [0x21], [0x26], [0x27], [0x30], [0x33],
            [0x1C, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], [0x0C, 0, 0, 0, 0, 0, 0, 0, 0],
            [0x1C, 0x80, 0, 0, 0, 0, 0, 0, 0], [0x0C, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
            [0x21, 0x7F, 0xF8, 0, 0, 0, 0, 0, 0], [0x21, 0xFF, 0xF8, 0, 0, 0, 0, 0, 1], [0x02, 0xED, 0xA0, 0x80, 0x00]
        ]
        return FuzzPlan(
            mutator: FuzzMutator(corpus: corpus, dictionary: dictionary),
            fresh: { r in
                var t = randomTuple(&r, depth: 0)
                if r.chance(20) { t = Tuple(t.elements + randomTuple(&r, depth: 0).elements) }
                return t.encoded
            },
            valid: 10,
            deep: { r in
                let n = fuzzDepth(&r, limit: Tuple.maximumNestingDepth)
                var bytes = [UInt8](repeating: 0x05, count: n)
                if r.bool() { bytes += randomTuple(&r, depth: 3).encoded }
                if r.chance(20) { bytes += [0x00, 0xFF] }
                return bytes + [UInt8](repeating: 0x00, count: r.chance(90) ? n : r.below(n + 1))
            },
            alphabet: [
                0x00, 0xFF, 0x01, 0x02, 0x05, 0x0B, 0x0C, 0x14, 0x1C, 0x1D, 0x20, 0x21, 0x26, 0x27, 0x30, 0x33, 0x80,
                0x7F
            ])
    }

    static func randomTuple(_ r: inout FuzzRandom, depth: Int) -> Tuple {
        Tuple((0..<r.size(depth == 0 ? 8 : 5)).map { _ in randomElement(&r, depth: depth) })
    }

    static func randomElement(_ r: inout FuzzRandom, depth: Int) -> TupleElement {
        switch r.below(depth < 4 ? 15 : 14) {
        case 0: return .null
        case 1: return .bytes((0..<r.size(10)).map { _ in r.pick([0x00, 0xFF, 0x00, r.byte()]) })
        case 2:
            return .string(
                r.pick([
                    "", "a", "a\u{0}b", "\u{0}", "\u{0}\u{0}", "é", "e\u{301}", "😀", "\u{10FFFF}", "\u{FFFD}", "x y",
                    "\u{7F}\u{80}"
                ]))
        case 3:
            return .string(String(String.UnicodeScalarView((0..<r.size(8)).map { _ in r.pick(FuzzMutator.scalars) })))
        case 4:
            return .int(
                r.pick([
                    Int64.min, Int64.min + 1, -1, 0, 1, 255, 256, -255, -256, 65535, -65536, Int64.max, Int64.max - 1,
                    Int64(bitPattern: r.next()) >> UInt64(r.below(64))
                ]))
        case 5: return .uint(r.pick([UInt64.max, UInt64.max - 1, UInt64(Int64.max) + 1, r.next() | (1 << 63)]))
        case 6:
            let count = r.pick([9, 9, 10, 16, 32, 254, 255, 8])
            let magnitude = [UInt8(1 + r.below(255))] + r.bytes(count - 1)
            return (try? LargeInteger(isNegative: r.bool(), magnitude: magnitude)).map { .largeInteger($0) } ?? .null
        case 7:
            return .float(
                r.pick([
                    Float.nan, -Float.nan, .signalingNaN, .infinity, -.infinity, 0, -0.0, .leastNonzeroMagnitude,
                    .greatestFiniteMagnitude, 1.25, Float(bitPattern: UInt32(truncatingIfNeeded: r.next()))
                ]))
        case 8:
            return .double(
                r.pick([
                    Double.nan, -Double.nan, .signalingNaN, .infinity, -.infinity, 0, -0.0, .leastNonzeroMagnitude,
                    .leastNormalMagnitude, .greatestFiniteMagnitude, 1.5, -2.5e-300, Double(bitPattern: r.next())
                ]))
        case 9: return .bool(r.bool())
        case 10:
            let b = r.bytes(16)
            return .uuid(
                UUID(
                    uuid: (
                        b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                        b[15]
                    )))
        case 11: return (try? Versionstamp(bytes: r.bytes(Versionstamp.length))).map { .versionstamp($0) } ?? .null
        case 12: return .int(Int64(r.below(2000)) - 1000)
        case 13:
            return .string(String(decoding: (0..<r.size(12)).map { _ in UInt8(0x20 + r.below(95)) }, as: UTF8.self))
        default: return .tuple(randomTuple(&r, depth: depth + 1))
        }
    }

    /// Decodes; a decoded tuple must encode to bytes that decode to an equal tuple, print,
    /// and unpack alike from a subspace.
    static func check(_ bytes: [UInt8], subspace: Subspace) -> FuzzResult {
        let tuple: Tuple
        do {
            tuple = try Tuple(decoding: bytes)
        } catch {
            if let unpacked = try? subspace.unpack(subspace.prefix + bytes) {
                return .failed("decoding failed but Subspace.unpack decoded \(unpacked)")
            }
            return FuzzSession.judge(error, kinds: FuzzTarget.tuple.documentedKinds)
        }
        let problem = FuzzSession.after("decoding the re-encoded tuple") { () -> String? in
            let encoded = tuple.encoded
            let again = try Tuple(decoding: encoded)
            guard again == tuple, again.count == tuple.count, again.encoded == encoded else {
                return "decode, encode, decode changed the tuple: \(tuple) became \(again)"
            }
            _ = tuple.description
            let unpacked = try subspace.unpack(subspace.pack(tuple))
            guard unpacked == tuple else { return "Subspace.unpack(pack(t)) is \(unpacked), not \(tuple)" }
            let fromInput = try subspace.unpack(subspace.prefix + bytes)
            guard fromInput == tuple else { return "Subspace.unpack gives \(fromInput), decoding \(tuple)" }
            return nil
        }
        return problem.map { .failed($0) } ?? .accepted
    }
}

// MARK: - command

/// kvrepl's command parser: every command with its options, key literals (tuples nested
/// near the limit), JSON values, numbers at the 64-bit limits, open quotes.
enum FuzzCommands {
    static let lines = [
        "get k", "get \"a\\x00b\\n\\t\\\"\"", "get 0x00ff", "get (\"dep\", \"Perth\", 1700000000)",
        "get (1, -2.5, true, false, null, nil, 0xff, (\"nested\", (1,)), 9223372036854775807, 18446744073709551615, 1e300)",
        "put k v", "put k some words here", "put \"k\" \"v\\n\"", "put (1) 0x00", "put k (\"t\", 1)", "PUT K V",
        "del k", "del (\"a\",)", "del 0x",
        "scan", "scan p", "scan \"p\" --from a --to z --reverse --limit 10 --keys-only --count",
        "scan --from (1) --to (2)",
        "scan --limit 9223372036854775807", "scan ( \"dep\" ) --reverse --keys-only",
        "delrange p", "delrange --from a --to b --limit 5 --reverse", "delrange (\"x\", 1)",
        "stats", "property leveldb.stats", "property leveldb.num-files-at-level0",
        "size", "size --from a --to b", "compact", "compact --from (\"a\") --to (\"b\")",
        "snapshot", "release", "dump out.jsonl", "dump \"a file.jsonl\"", "load in.jsonl", "load \"x\\\\y.jsonl\"",
        "keyspaces", "keyspaces load k.json", "sync", "sync on", "sync off", "repair",
        "help", "help find", "help bogus", "quit", "exit",
        "schema", "schema load s.json", "collections", "indexes people",
        "insert people {\"id\": 1, \"name\": \"x\", \"tags\": [\"a\", \"b\"], \"n\": {\"x\": [1, 2.5, -0, 1e10, null, true]}}",
        "upsert people {\"id\": \"x\\u00e9\\ud83d\\ude00\", \"age\": 18446744073709551615, \"s\": \"a\\\"b\"}",
        "doc people 1", "doc people \"a\"", "doc people -9223372036854775808", "remove people 1",
        "remove people \"x y\"",
        "import people p.jsonl", "import people \"x y.jsonl\"", "export people out.jsonl",
        "find people", "find people where age >= 30 and name prefix \"a\" order by age desc limit 10 offset 5",
        "find people where age>30", "find people where tags[] in (1, \"x\", null, [1], {\"a\": 1})",
        "find people where a.b = {\"c\": [1]} order by a.b asc", "find people where x != -9223372036854775808 limit 0",
        "find people where age<=1 and age<2 and age==3 and a.b.c > \"z\"",
        "count people", "count people where age < 3", "count people where name prefix \"\"",
        "explain find people where age = 1 order by name", "explain find people",
        "search people \"river OR station\" limit 5 highlight", "search people 'it''s'", "search people river",
        "search people \"NEAR(a b, 3)\" limit 9223372036854775807", "search people '{name bio}: (a OR b*) NOT ^c'",
        "terms people", "terms people bio_text", "terms people bio_text ri limit 3", "terms people \"pre fix\" limit 0",
        "verify", "verify people", "reindex people", "reindex people by_age", "salvage", "salvage q",
        "changes", "changes since 5 limit 10", "changes since 9223372036854775807 limit 1",
        "# a comment", "", "   "
    ]

    static let dictionary: [String] =
        ShellCommand.names + [
            " ", "  ", "\t", "--from", "--to", "--reverse", "--limit", "--keys-only", "--count", "--bogus", "-", "--",
            " where ", " and ", " order by ", " asc", " desc", " limit ", " offset ", " in ", " prefix ", " since ",
            " highlight",
            " load ", " on", " off", "explain find ", "=", "==", "!=", "<", "<=", ">", ">=", "=>",
            "true", "false", "null", "nil", "0x", "0xZZ", "0x0", "0x00ff", "\"", "'", "''", "\\", "\\x", "\\xZ", "\\x4",
            "\\n", "\\0", "\\u",
            "(", ")", "()", "(,)", "(1,)", ",", "[", "]", "{", "}", "{}", "[]", ":", "\"a\": ", "\"\\ud800\"",
            "\"\\u00", "a.b", "tags[]",
            "a..b", "[]x", ".", "#", "people", "nobody", "by_age", "bio_text", "é", "\u{0}", "\u{2028}", "\r\n", "\n"
        ] + FuzzMutator.numbers

    static func plan(_ r: inout FuzzRandom) -> FuzzPlan {
        FuzzPlan(
            mutator: FuzzMutator(corpus: lines.map { Array($0.utf8) }, dictionary: dictionary.map { Array($0.utf8) }),
            fresh: { r in Array(freshLine(&r).utf8) },
            valid: 10,
            deep: { r in
                switch r.below(5) {
                case 0:
                    return Array("get ".utf8)
                        + fuzzNest("(", "1", ")", fuzzDepth(&r, limit: Tuple.maximumNestingDepth + 1))
                case 1:
                    return Array("put (\"k\", ".utf8)
                        + fuzzNest("(", "\"v\"", ")", fuzzDepth(&r, limit: Tuple.maximumNestingDepth)) + [0x29]
                case 2:
                    return Array("insert people {\"id\": 1, \"a\": ".utf8)
                        + fuzzNest("[", "1", "]", fuzzDepth(&r, limit: JSONValue.maximumDepth - 1)) + [0x7D]
                case 3:
                    return Array("find people where a = ".utf8)
                        + fuzzNest(
                            "{\"a\":", "1", "}", fuzzDepth(&r, limit: JSONValue.maximumDepth), unclosed: r.chance(20))
                default:
                    return Array("search people \"".utf8)
                        + fuzzNest("(", "a", ")", fuzzDepth(&r, limit: TextQuery.maximumNesting)) + [0x22]
                }
            },
            alphabet: FuzzPlan.textAlphabet)
    }

    /// A command line from templates: `K` a key literal, `J` a JSON value, `N` a number,
    /// `W` a word, `F` a field path, `O` an operator, `Q` a quoted query.
    static func freshLine(_ r: inout FuzzRandom) -> String {
        let template = r.pick([
            "get K", "put K K", "put K W W", "del K", "scan K --from K --to K --limit N",
            "scan --reverse --keys-only --count --limit N",
            "delrange K --limit N", "size --from K --to K", "compact --to K", "property W", "dump W", "load W",
            "keyspaces load W",
            "sync W", "help W", "schema load W", "indexes W", "insert W J", "upsert W J", "doc W J", "remove W J",
            "import W W",
            "export W W", "find W where F O J and F O J order by F desc limit N offset N",
            "find W where F in (J, J, J)",
            "find W where F prefix J", "count W where F O J", "explain find W where F O J order by F asc",
            "search W Q limit N highlight",
            "terms W W W limit N", "verify W", "reindex W W", "salvage W", "changes since N limit N"
        ])
        var out = ""
        for c in template {
            switch c {
            case "K": out += key(&r, depth: 0)
            case "J": out += json(&r)
            case "N": out += r.chance(70) ? String(r.below(100)) : r.pick(FuzzMutator.numbers)
            case "W":
                out += r.pick(["people", "by_age", "bio_text", "x.jsonl", "\"a b\"", "on", "off", "find", "é", "W"])
            case "F": out += r.pick(["age", "name", "a.b", "tags[]", "a.b[].c", "x", "", "a..b", "[]"])
            case "O": out += r.pick(["=", "!=", "<", "<=", ">", ">=", "prefix", "in", "==", "~"])
            case "Q":
                out += r.pick(["\"river OR station\"", "'a b'", "river", "\"NEAR(a b, 3)\"", "\"col: x\"", "'\"'"])
            default: out.append(c)
            }
        }
        return out
    }

    static func key(_ r: inout FuzzRandom, depth: Int) -> String {
        switch r.below(depth < 3 ? 6 : 5) {
        case 0: return r.pick(["k", "a", "dep", "é", "x-y"])
        case 1: return r.pick(["\"k\"", "\"a\\x00\\xff\"", "\"\\n\\t\\r\\0\\\"\\\\\\'\"", "\"é\""])
        case 2: return r.pick(["0x", "0x00", "0xff00", "0XAB", "0x0"])
        case 3, 4:
            let elements = (0..<r.size(5)).map { _ -> String in
                r.chance(20)
                    ? key(&r, depth: depth + 1)
                    : r.pick(
                        ["\"s\"", "1", "-2.5", "true", "false", "null", "nil", "0xff", "1e10"] + FuzzMutator.numbers)
            }
            return "(" + elements.joined(separator: r.pick([", ", ",", " , "]))
                + (elements.count == 1 && r.bool() ? ",)" : ")")
        default: return "(" + key(&r, depth: depth + 1) + ")"
        }
    }

    static func json(_ r: inout FuzzRandom) -> String { String(decoding: FuzzJSON.value(&r, depth: 2), as: UTF8.self) }

    /// Parses the line. A `scan` or `delrange` gives its key range; the key of a `get`,
    /// `put` or `del` written as a tuple literal decodes as a tuple (the parser limits
    /// nesting to what the decoder reads back).
    static func check(_ bytes: [UInt8]) -> FuzzResult {
        let line = String(decoding: bytes, as: UTF8.self)
        let command: ShellCommand?
        do {
            command = try ShellCommand.parse(line)
        } catch {
            return FuzzSession.judge(error, kinds: nil, commandErrors: true)
        }
        if let options = command?.scanOptions { _ = options.range }
        if let key = command?.key {
            // The first argument, after the command's name and blanks.
            let text = Array(line.utf8)
            func blank(_ p: Int) -> Bool { text[p] == 0x20 || text[p] == 0x09 }
            var p = 0
            while p < text.count, blank(p) { p += 1 }
            while p < text.count, !blank(p) { p += 1 }
            while p < text.count, blank(p) { p += 1 }
            guard p < text.count, text[p] == UInt8(ascii: "(") else { return .accepted }
            do {
                let tuple = try Tuple(decoding: key)
                guard tuple.encoded == key else { return .failed("the tuple key \(tuple) re-encodes differently") }
            } catch {
                return .failed(
                    "the tuple key literal gives bytes the tuple decoder rejects: \(FuzzShow.escaped(String(describing: error)))"
                )
            }
        }
        return .accepted
    }
}

// MARK: - fts5

/// The FTS5 query parser: operators, NEAR groups, phrases, prefixes, `^`, column filters,
/// parentheses nested near the limits, with each tokenizer.
enum FuzzQueries {
    static let columns = ["name", "bio", "title"]

    static let queries = [
        "river", "river station", "river OR station", "river AND station", "river NOT station", "\"river station\"",
        "riv*",
        "\"riv\"*", "^river", "^\"river station\"", "name: river", "bio:river", "{name bio}: river", "{name}: (a OR b)",
        "-name: river",
        "- {name title}: river", "NEAR(river station)", "NEAR(river station, 3)", "NEAR(a b c, 0)",
        "NEAR(\"a b\" c*, 10)",
        "name: NEAR(a b)", "(a OR b) AND (c NOT d)", "a OR b OR c", "a AND b AND c", "a NOT b NOT c", "a + b", "a + b*",
        "\"a\" + \"b c\"",
        "(a)", "((a))", "a (b OR c)", "(a OR b) c", "title: (x y) z", "\"\"", "\"a \"\"quoted\"\" b\"", "café",
        "Straße", "İstanbul",
        "ﬁnd", "中文文本", "😀", "a_b 123 x9", "NEAR", "NEAR(", "OR", "AND b", "a NOT", "(", ")", "a:", ":", "{", "}", "*",
        "^", "+", "-",
        "running runner runs", "NEAR(a, 9223372036854775807)", "NEAR(a b, 99999999999999999999999)"
    ]

    static let dictionary =
        [
            " ", "  ", "\t", "\n", " AND ", " OR ", " NOT ", "AND", "OR", "NOT", "and", "or", "not", "NEAR", "NEAR(",
            "near(",
            "(", ")", "{", "}", ":", ",", "*", "^", "+", "-", "\"", "\"\"", "name", "bio", "title", "nope", "name:",
            "bio:",
            "{name bio}:", "-name:", "-{title}:", "a", "river", "é", "e\u{301}", "ß", "ﬁ", "İ", "中文", "😀", "x*", "^x",
            "NEAR(a b, 3)", "(a OR b)", ", 3)", ", 0)", ", -1)", ", x)"
        ] + FuzzMutator.numbers

    static func plan(_ r: inout FuzzRandom) -> FuzzPlan {
        FuzzPlan(
            mutator: FuzzMutator(corpus: queries.map { Array($0.utf8) }, dictionary: dictionary.map { Array($0.utf8) }),
            fresh: { r in Array(expression(&r, depth: 0).utf8) },
            valid: 10,
            deep: { r in
                let n = fuzzDepth(&r, limit: TextQuery.maximumNesting)
                switch r.below(4) {
                case 0: return fuzzNest("(", "a", ")", n, unclosed: r.chance(10))
                case 1:
                    // Alternating operators: each level adds one to the expression's depth.
                    let ops = [" OR (", " AND (", " NOT ("]
                    return Array(
                        ((0..<n).map { "t\($0 % 7)\(ops[$0 % 3])" }.joined() + "z" + String(repeating: ")", count: n))
                            .utf8)
                case 2: return fuzzNest("name: (", "a", ")", n)
                default: return fuzzNest("(a OR ", "b", ")", n)
                }
            },
            alphabet: FuzzPlan.textAlphabet)
    }

    static func phrase(_ r: inout FuzzRandom) -> String {
        var p: String
        switch r.below(4) {
        case 0:
            p =
                "\""
                + (0..<r.size(4)).map { _ in r.pick(["a", "river", "b c", "\"\"", "é", "x-y", "OR"]) }.joined(
                    separator: " ") + "\""
        case 1:
            p =
                r.pick(["a", "b", "river", "station", "running", "café", "x_1", "中文", "AND", "and"]) + " + "
                + r.pick(["c", "d*", "\"e f\""])
        default: p = r.pick(["a", "b", "c", "river", "station", "running", "café", "x_1", "中文", "ﬁ", "İ", "123"])
        }
        if r.chance(20) { p += "*" }
        if r.chance(10) { p = "^" + p }
        return p
    }

    static func expression(_ r: inout FuzzRandom, depth: Int) -> String {
        var e: String
        switch r.below(depth < 4 ? 8 : 4) {
        case 0, 1: e = phrase(&r)
        case 2:
            e =
                "NEAR(" + (0..<(1 + r.size(4))).map { _ in phrase(&r) }.joined(separator: " ")
                + (r.bool() ? ", \(r.pick(["0", "3", "10", "9223372036854775808"]))" : "") + ")"
        case 3: e = (0..<(2 + r.size(3))).map { _ in phrase(&r) }.joined(separator: " ")
        case 4: e = "(" + expression(&r, depth: depth + 1) + ")"
        default:
            e =
                expression(&r, depth: depth + 1) + r.pick([" AND ", " OR ", " NOT ", " "])
                + expression(&r, depth: depth + 1)
        }
        if r.chance(15) {
            e =
                r.pick(["name: ", "bio:", "{name bio}: ", "-title: ", "{title}:", "nope: "])
                + (e.contains(" ") ? "(\(e))" : e)
        }
        return e
    }

    static func check(_ bytes: [UInt8], tokenizer: TextTokenizer) -> FuzzResult {
        do {
            let query = try TextQuery.parse(
                String(decoding: bytes, as: UTF8.self), tokenizer: tokenizer, columns: columns)
            var hasher = Hasher()
            query.hash(into: &hasher)
            _ = hasher.finalize()
            guard query == query else { return .failed("a parsed query is not equal to itself") }
            _ = query.phrases
            return .accepted
        } catch {
            return FuzzSession.judge(error, kinds: FuzzTarget.fts5.documentedKinds)
        }
    }
}

// MARK: - schema

/// The schema and keyspace loaders: mutations of valid declarations; a loaded one must
/// write itself back as JSON that loads to an equal declaration.
enum FuzzSchemas {
    static let keyspacesMore =
        #"{"keyspaces": {"k": {"prefix": ["a", 1, -2.5, true, null, ["nested", [18446744073709551615]], -9223372036854775808], "components": [{"name": "x", "type": "string"}, {"name": "y", "type": "int"}, {"name": "z", "type": "double"}, {"name": "b", "type": "bool"}, {"name": "raw", "type": "bytes"}, {"name": "u", "type": "uuid"}, {"name": "d", "type": "date"}]}, "e": {"prefix": [], "components": []}}}"#

    static let documents = [
        DemoDatabase.schemaJSON, Workload.schemaJSON, FuzzImports.schemaJSON, DemoDatabase.keyspacesJSON, keyspacesMore,
        #"{"collections": {"c": {"primaryKey": "id", "indexes": [{"name": "i", "fields": ["a.b", "t[]"], "unique": true, "include": ["x", "y.z"]}, {"name": "all", "fields": ["q"], "include": "*"}], "text": [{"name": "t", "fields": ["d", "e.f"], "tokenizer": "trigram case_sensitive 1", "detail": "none"}, {"name": "t2", "fields": ["g"], "tokenizer": "porter unicode61", "detail": "column"}]}, "d": {}}}"#,
        #"{"collections": {}}"#, #"{"keyspaces": {}}"#,
        #"{"collections": {"é": {"primaryKey": "k"}, "e\u0301": {"primaryKey": "k"}}}"#,
        #"{"keyspaces": {"a": {"prefix": ["x"], "components": []}, "b": {"prefix": ["x"], "components": []}}}"#
    ]

    static let dictionary =
        [
            "\"collections\"", "\"keyspaces\"", "\"primaryKey\"", "\"indexes\"", "\"text\"", "\"name\"", "\"fields\"",
            "\"unique\"", "\"include\"", "\"tokenizer\"", "\"detail\"", "\"prefix\"", "\"components\"", "\"type\"",
            "\"string\"", "\"int\"", "\"double\"", "\"bool\"", "\"bytes\"", "\"uuid\"", "\"date\"", "\"float\"",
            "\"unicode61\"", "\"porter\"", "\"trigram\"", "\"trigram case_sensitive 1\"", "\"full\"", "\"column\"",
            "\"none\"",
            "\"*\"", "\"a.b\"", "\"tags[]\"", "\"a[].b[]\"", "\"\"", "\".\"", "\"[]\"", "\"a..b\"", "\"a[0]\"",
            "\"a b\"",
            "\"\\u0000\"", "\"\\ud800\"", "true", "false", "null", "[]", "{}", "[", "]", "{", "}", ",", ":", "\"", "\\",
            "{\"name\": \"i\", \"fields\": [\"x\"]}", "[[[[", "]]]]"
        ] + FuzzMutator.numbers

    static func plan(_ r: inout FuzzRandom) -> FuzzPlan {
        FuzzPlan(
            mutator: FuzzMutator(
                corpus: documents.map { Array($0.utf8) }, dictionary: dictionary.map { Array($0.utf8) }),
            fresh: { r in Array((r.bool() ? freshSchema(&r) : freshKeyspaces(&r)).utf8) },
            valid: 20,
            deep: { r in
                let limit = r.bool() ? JSONValue.maximumDepth : Tuple.maximumNestingDepth
                let n = fuzzDepth(&r, limit: limit)
                switch r.below(3) {
                case 0:
                    return Array(#"{"keyspaces": {"k": {"prefix": "#.utf8) + fuzzNest("[", "1", "]", n)
                        + Array(#", "components": []}}}"#.utf8)
                case 1:
                    return Array(#"{"collections": {"c": {"primaryKey": "id", "indexes": "#.utf8)
                        + fuzzNest("[", "", "]", n) + Array("}}}".utf8)
                default: return fuzzNest("{\"collections\": ", "{}", "}", n)
                }
            },
            alphabet: Array("{}[]\",:0123456789 truefalsn\\".utf8))
    }

    static func quoted(_ s: String) -> String {
        String(decoding: (try? JSONValue.string(s).canonicalBytes()) ?? Array("\"\"".utf8), as: UTF8.self)
    }

    static func field(_ r: inout FuzzRandom) -> String {
        r.chance(90)
            ? quoted(r.pick(["a", "b", "age", "a.b", "tags[]", "a.b[].c", "x[]", "id", "é", "a b", "c.d.e"]))
            : quoted(r.pick(["", "a.", ".a", "a[]b", "a[][]", "a..b", "[]"]))
    }

    static func freshSchema(_ r: inout FuzzRandom) -> String {
        let collections = (0..<r.size(4)).map { c -> String in
            var members: [String] = []
            if r.chance(80) {
                members.append(
                    "\"primaryKey\": \(quoted(r.chance(95) ? r.pick(["id", "key", "x"]) : r.pick(["a.b", "", "a[]"])))")
            }
            let indexes = (0..<r.size(4)).map { i -> String in
                var m = [
                    "\"name\": \(quoted(r.chance(95) ? "i\(i)" : r.pick(["by_a", "", "t0"])))",
                    "\"fields\": [" + (0..<(1 + r.size(3))).map { _ in field(&r) }.joined(separator: ", ") + "]"
                ]
                if r.chance(30) { m.append("\"unique\": \(r.bool())") }
                if r.chance(20) { m.append(r.bool() ? "\"include\": \"*\"" : "\"include\": [\(field(&r))]") }
                return "{" + m.joined(separator: ", ") + "}"
            }
            if !indexes.isEmpty || r.chance(20) {
                members.append("\"indexes\": [" + indexes.joined(separator: ", ") + "]")
            }
            let texts = (0..<r.size(3)).map { i -> String in
                var m = [
                    "\"name\": \(quoted("t\(i)"))",
                    "\"fields\": [" + (0..<(1 + r.size(3))).map { _ in field(&r) }.joined(separator: ", ") + "]"
                ]
                if r.chance(50) {
                    m.append(
                        "\"tokenizer\": \(quoted(r.chance(95) ? r.pick(["unicode61", "porter", "porter unicode61", "trigram", "trigram case_sensitive 0", "trigram case_sensitive 1"]) : r.pick(["bogus", "Porter", ""])))"
                    )
                }
                if r.chance(30) {
                    m.append("\"detail\": \(quoted(r.chance(95) ? r.pick(["full", "column", "none"]) : "some"))")
                }
                return "{" + m.joined(separator: ", ") + "}"
            }
            if !texts.isEmpty || r.chance(20) { members.append("\"text\": [" + texts.joined(separator: ", ") + "]") }
            return "\(quoted(r.chance(90) ? "c\(c)" : r.pick(["people", "é", "e\u{301}", "", "a b"]))): {"
                + members.joined(separator: ", ") + "}"
        }
        return "{\"collections\": {" + collections.joined(separator: ", ") + "}}"
    }

    static func freshKeyspaces(_ r: inout FuzzRandom) -> String {
        let keyspaces = (0..<r.size(4)).map { k -> String in
            let prefix = (0..<r.size(4)).map { _ in String(decoding: FuzzJSON.value(&r, depth: 3), as: UTF8.self) }
                .joined(separator: ", ")
            let components = (0..<r.size(5)).map { c in
                "{\"name\": \(quoted(r.chance(95) ? "c\(c)" : r.pick(["x", "", "é"]))), \"type\": \(quoted(r.chance(95) ? r.pick(["string", "int", "double", "bool", "bytes", "uuid", "date"]) : "float"))}"
            }.joined(separator: ", ")
            return
                "\(quoted(r.chance(90) ? "k\(k)" : r.pick(["dep", "", "é"]))): {\"prefix\": [\(prefix)], \"components\": [\(components)]}"
        }
        return "{\"keyspaces\": {" + keyspaces.joined(separator: ", ") + "}}"
    }

    static func checkSchema(_ bytes: [UInt8]) -> FuzzResult {
        let schema: DocumentSchema
        do {
            schema = try DocumentSchema(json: Data(bytes), file: "fuzz.json")
        } catch {
            return FuzzSession.judge(error, kinds: FuzzTarget.schema.documentedKinds)
        }
        let problem = FuzzSession.after("loading DocumentSchema.jsonData() again") { () -> String? in
            let again = try DocumentSchema(json: schema.jsonData(), file: "written")
            return again == schema
                ? nil
                : "the schema written as JSON loads as a different schema: \(String(decoding: schema.jsonData(), as: UTF8.self).prefix(300))"
        }
        return problem.map { .failed($0) } ?? .accepted
    }

    static func checkKeySchema(_ bytes: [UInt8]) -> FuzzResult {
        let keys: KeySchema
        do {
            keys = try KeySchema(json: Data(bytes), file: "fuzz.json")
        } catch {
            return FuzzSession.judge(error, kinds: FuzzTarget.schema.documentedKinds)
        }
        let problem = FuzzSession.after("loading KeySchema.jsonData() again") { () -> String? in
            let data = try keys.jsonData()
            let again = try KeySchema(json: data, file: "written")
            return again == keys
                ? nil
                : "the keyspaces written as JSON load as different keyspaces: \(String(decoding: data, as: UTF8.self).prefix(300))"
        }
        return problem.map { .failed($0) } ?? .accepted
    }
}

// MARK: - import

/// The JSON-lines importer, into one store with a secondary, a unique, a multi-valued and a
/// text index. A file with a malformed line (not JSON, not an object, no usable id) must be
/// refused before anything is written; a file the importer accepts must be stored exactly.
struct FuzzImports {
    static let schemaJSON = #"""
        {"collections": {"people": {
          "primaryKey": "id",
          "indexes": [
            {"name": "by_age", "fields": ["age"]},
            {"name": "by_email", "fields": ["email"], "unique": true},
            {"name": "by_tag", "fields": ["tags[]"]},
            {"name": "by_city_age", "fields": ["address.city", "age"]}
          ],
          "text": [{"name": "bio_text", "fields": ["name", "bio"], "tokenizer": "porter"},
                   {"name": "title_trigram", "fields": ["title"], "tokenizer": "trigram"}]
        }}}
        """#

    let store: DocumentStore
    let file: String
    /// The fields of the schema's secondary indexes.
    static let indexedFields: [FieldPath] = ["age", "email", "tags[]", "address.city"]
    static let uniqueField: FieldPath = "email"
    var outcomes: [String: Int] = [:]

    init(store: DocumentStore, file: String) {
        self.store = store
        self.file = file
    }

    static func document(_ r: inout FuzzRandom) -> String {
        var members: [String] = []
        let id =
            r.chance(93)
            ? String(r.below(40))
            : r.pick([
                "\"p\(r.below(10))\"", "\"é\"", "\"e\\u0301\"", "-1", "1.0", "1.5", "9223372036854775807",
                "18446744073709551615", "-9223372036854775808", "1e3", "\"\"", "null", "[1]", "{}"
            ])
        if r.chance(99) { members.append("\"id\": \(id)") }
        if r.chance(80) {
            members.append(
                "\"age\": \(r.chance(80) ? String(18 + r.below(60)) : r.pick(FuzzMutator.numbers + ["\"x\"", "null", "[]"]))"
            )
        }
        // Mostly the id's own address (upserts keep it); now and then another's (a unique conflict).
        if r.chance(70) { members.append("\"email\": \"p\(r.chance(85) ? id : String(r.below(40)))@example.org\"") }
        if r.chance(50) {
            members.append(
                "\"tags\": ["
                    + (0..<r.size(4)).map { _ in r.pick(["\"a\"", "\"b\"", "1", "null", "[1]", "{\"x\": 1}", "\"é\""]) }
                    .joined(separator: ", ") + "]")
        }
        if r.chance(50) {
            members.append(
                "\"address\": {\"city\": \(r.pick(["\"Perth\"", "\"Fremantle\"", "1", "null", "{\"a\": []}"])), \"zip\": \(r.below(9999))}"
            )
        }
        if r.chance(60) {
            members.append(
                "\"name\": \"person \(r.below(100))\", \"bio\": \(FuzzSchemas.quoted((0..<r.size(10)).map { _ in r.pick(Workload.words + ["é", "ﬁ", "\u{0}", "中文"]) }.joined(separator: " ")))"
            )
        }
        if r.chance(30) {
            members.append("\"title\": \(r.pick(["\"ab\"", "\"abc def\"", "\"\"", "\"ÀÉÎ\"", "\"\\ud83d\\ude00x\""]))")
        }
        if r.chance(20) { members.append("\"n\": " + String(decoding: FuzzJSON.value(&r, depth: 2), as: UTF8.self)) }
        if r.chance(5) { members.append("\"id\": \(id)") }
        return "{" + members.joined(separator: r.pick([", ", ","])) + "}"
    }

    static func freshFile(_ r: inout FuzzRandom) -> [UInt8] {
        var lines = (0..<(1 + r.size(10))).map { _ in document(&r) }
        if r.chance(20) { lines.insert(r.pick(["", " ", "\t", "  \t "]), at: r.below(lines.count + 1)) }
        if r.chance(10), let first = lines.first { lines.append(first) }
        let separator = r.pick(["\n", "\n", "\r\n", "\n\n"])
        return Array((lines.joined(separator: separator) + (r.chance(60) ? separator : "")).utf8)
    }

    /// Line-level mutations: a line repeated, dropped, moved, blank lines, stray `\r`.
    static func mutateLines(_ bytes: [UInt8], _ r: inout FuzzRandom) -> [UInt8] {
        var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
        for _ in 0..<(1 + r.below(3)) {
            let i = r.below(lines.count)
            switch r.below(5) {
            case 0 where !lines.isEmpty: lines.insert(lines[i], at: r.below(lines.count + 1))
            case 1 where !lines.isEmpty: lines.remove(at: i)
            case 2 where lines.count > 1: lines.swapAt(i, r.below(lines.count))
            case 3: lines.insert(r.pick([[], [0x20], [0x09], [0x0D], [0x20, 0x0D]]), at: r.below(lines.count + 1))
            default: if !lines.isEmpty { lines[i] += [0x0D] }
            }
        }
        return Array(lines.joined(separator: [0x0A]))
    }

    static func plan(_ r: inout FuzzRandom) -> FuzzPlan {
        let corpus =
            (0..<100).map { _ in freshFile(&r) }
            + (0..<8).map { k in
                Array(
                    (0..<(1 + 3 * k)).map { i in
                        String(
                            decoding: (try? Workload.person(id: i, version: k).canonicalBytes()) ?? [], as: UTF8.self)
                    }.joined(separator: "\n").utf8)
            }
        let dictionary =
            [
                "\n", "\r\n", "\r", "\n\n", " ", "{", "}", "[", "]", ",", ":", "\"", "\"id\": ", "\"id\": 1",
                "\"email\": \"p1@example.org\"",
                "\"tags\": [", "{\"id\": 3}", "null", "true", "\\u0000", "\\ud800", "\u{FEFF}"
            ] + FuzzMutator.numbers
        let lineMutator = FuzzMutator(corpus: corpus, dictionary: dictionary.map { Array($0.utf8) })
        return FuzzPlan(
            mutator: lineMutator,
            fresh: { r in
                let file = freshFile(&r)
                return r.chance(30) ? mutateLines(file, &r) : file
            },
            valid: 50,
            deep: { r in
                // Arrays nested around the tuple decoder's limit (an indexed array is a
                // nested tuple in its index key) and the JSON parser's, in indexed
                // fields and not.
                let limit = r.bool() ? Tuple.maximumNestingDepth : JSONValue.maximumDepth - 2
                let n = fuzzDepth(&r, limit: limit)
                let (open, close) = r.pick([
                    ("\"n\": ", ""), ("\"age\": ", ""), ("\"email\": ", ""), ("\"tags\": ", ""),
                    ("\"address\": {\"city\": ", "}"), ("\"bio\": ", "")
                ])
                let core = r.pick(["1", "\"x\"", "{}", "[]", "null"])
                // An age too, now and then: the composite index by_city_age holds only documents with both.
                let age = r.bool() ? "\"age\": \(r.below(90)), " : ""
                let line =
                    Array("{\"id\": \(r.below(60)), \(age)\(open)".utf8) + fuzzNest("[", core, "]", n)
                    + Array("\(close)}".utf8)
                return r.bool() ? line + Array("\n{\"id\": 2}\n".utf8) : line
            },
            alphabet: Array("{}[]\",:\n\r 0123456789id".utf8))
    }

    /// The lines the importer reads: split at `\n`, a `\r` before it dropped; the last
    /// line (if not empty) needs no newline and keeps a final `\r`.
    static func lines(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var pieces = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
        let last = pieces.popLast() ?? []
        var lines = pieces.map { $0.last == 0x0D ? $0.dropLast() : $0 }
        if !last.isEmpty { lines.append(last) }
        return lines
    }

    /// Whether the first pass must refuse the file, and the documents it holds otherwise.
    static func model(_ bytes: [UInt8]) -> (refused: Bool, documents: [JSONValue]) {
        var documents: [JSONValue] = []
        for line in lines(bytes) where !line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) {
            guard let document = try? JSONValue(parsing: line), case .object = document, let id = document["id"] else {
                return (true, [])
            }
            switch id {
            case .string, .int, .uint: break
            case .double(let d) where d.rounded() == d && Int64(exactly: d) != nil: break
            default: return (true, [])
            }
            documents.append(document)
        }
        return (false, documents)
    }

    /// The id as the store keys it (an integral double is the integer).
    static func idKey(_ id: JSONValue?) -> [UInt8] {
        switch id {
        case .string(let s)?: return [0x73] + Array(s.utf8)
        case .int(let i)?: return Array("i\(i)".utf8)
        case .uint(let u)?: return Array("i\(u)".utf8)
        case .double(let d)?: return Array("i\(Int64(exactly: d).map(String.init) ?? "?")".utf8)
        default: return []
        }
    }

    mutating func check(_ bytes: [UInt8], collection: String, mode: DocumentStore.ImportMode, batchSize: Int)
        -> FuzzResult
    {
        do {
            try Self.write(bytes, to: file)
        } catch {
            return .failed("cannot write the input file: \(error)")
        }
        let (refused, documents) = Self.model(bytes)
        let before: Int64
        do { before = try store.lastSequence } catch { return .failed("cannot read the last sequence: \(error)") }
        let written: Int
        do {
            written = try store.importJSONLines(into: collection, path: file, mode: mode, batchSize: batchSize)
        } catch {
            let judged = FuzzSession.judge(error, kinds: nil)
            guard case .rejected = judged else { return judged }
            if refused || collection != "people" {
                outcomes["rejected before writing", default: 0] += 1
                let after: Int64
                do { after = try store.lastSequence } catch {
                    return .failed("cannot read the last sequence: \(error)")
                }
                if after != before {
                    return .failed(
                        "a refused file (a malformed line, or no such collection) changed the store: sequence \(before) became \(after)"
                    )
                }
            } else {
                outcomes["rejected while writing", default: 0] += 1
            }
            return judged
        }
        if refused { return .failed("imported \(written) documents from a file with a malformed line") }
        if collection != "people" { return .failed("imported into a collection the schema does not declare") }
        guard written == documents.count else {
            return .failed("imported \(written) documents from a file of \(documents.count)")
        }
        outcomes["documents imported", default: 0] += written
        // Each id holds the last document given for it.
        var last: [[UInt8]: JSONValue] = [:]
        for d in documents { last[Self.idKey(d["id"])] = d }
        let people: DocumentCollection
        do { people = try store.collection("people") } catch { return .failed("store.collection threw \(error)") }
        for d in documents {
            let key = Self.idKey(d["id"])
            guard let expected = last.removeValue(forKey: key), let id = expected["id"] else { continue }
            do {
                guard let stored = try people.get(id: id) else {
                    return .failed("document \(id.compactDescription) imported but not found")
                }
                if stored != expected {
                    return .failed(
                        "document \(id.compactDescription) is stored as \(stored.compactDescription.prefix(200)), imported as \(expected.compactDescription.prefix(200))"
                    )
                }
            } catch {
                return .failed(
                    "reading document \(id.compactDescription) back threw \(FuzzShow.escaped(String(describing: error)))"
                )
            }
            // Each value of an indexed field finds the document through its index.
            for field in Self.indexedFields {
                for value in field.values(in: expected) {
                    let condition = QueryCondition(field: field, op: .equal(value))
                    do {
                        let found = try people.find(DocumentQuery(conditions: [condition]))
                        guard found.contains(where: { Self.idKey($0["id"]) == key }) else {
                            return .failed(
                                "document \(id.compactDescription) is not found by \(FuzzShow.escaped(condition.description))"
                            )
                        }
                        // by_email is unique: no other document has an equal email.
                        if field == Self.uniqueField && found.count != 1 {
                            return .failed(
                                "\(found.count) documents match \(FuzzShow.escaped(condition.description)) of the unique index by_email"
                            )
                        }
                        outcomes["index lookups", default: 0] += 1
                    } catch {
                        return .failed(
                            "finding document \(id.compactDescription) by \(FuzzShow.escaped(String(condition.description.prefix(120)))) threw \(FuzzShow.escaped(String(describing: error)))"
                        )
                    }
                }
            }
        }
        return .accepted
    }

    /// Writes `bytes` to `path`, replacing it (with plain system calls: this runs per input).
    /// The old file is removed rather than truncated: ext4 flushes a file truncated and
    /// rewritten when it is closed.
    static func write(_ bytes: [UInt8], to path: String) throws {
        unlink(path)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Failure("cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                Foundation.write(fd, raw.baseAddress.map { $0 + offset }, raw.count - offset)
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw Failure("cannot write \(path): \(String(cString: strerror(errno)))") }
            offset += n
        }
    }
}

// MARK: - json

/// The JSON parser: nesting near and past the limit, numbers at the limits, escapes,
/// surrogates, invalid UTF-8. A parsed value's canonical form must parse back to an equal
/// value and be stable.
enum FuzzJSON {
    static let documents = [
        #"{"a": 1, "b": [true, false, null, -0.5e10, "x\u00e9\ud83d\ude00"], "c": {"d": 18446744073709551615, "e": -9223372036854775808}}"#,
        "[]", "{}", "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u0000\\u001f\"", "-0", "0", "1.7976931348623157e308", "4.9e-324",
        "[1, 2.5, -3e-7, 1E+2]",
        "{\"é\": 1, \"e\\u0301\": 2, \"a\": 3, \"a\": 4}", " \t\r\n[ 1 , { \"k\" : [ ] } ] \n",
        "\u{FEFF}{\"bom\": true}",
        "\"\\uD834\\uDD1E\"", "\"\u{10FFFF}\u{0080}\"", "123456789012345678901234567890", "0.1", "1e-400", "true",
        "null",
        "[[[[[[[[[[\"deep\"]]]]]]]]]]", "{\"a\": {\"b\": {\"c\": {\"d\": [1, {\"e\": null}]}}}}"
    ]

    static let dictionary =
        [
            "{", "}", "[", "]", ",", ":", "\"", "\\", "\\u", "\\u0000", "\\ud800", "\\udc00", "\\ud83d\\ude00",
            "\\uDBFF\\uDFFF",
            "\\x", "\\'", "true", "false", "null", "nul", "tru", " ", "\t", "\n", "\r", "\u{FEFF}", "\"k\": ", "[1,",
            "{\"a\":",
            "e", "E", "e+", "e-", ".", "-", "+", "0"
        ] + FuzzMutator.numbers

    static func plan(_ r: inout FuzzRandom) -> FuzzPlan {
        FuzzPlan(
            mutator: FuzzMutator(
                corpus: documents.map { Array($0.utf8) }, dictionary: dictionary.map { Array($0.utf8) }),
            fresh: { r in value(&r, depth: 0) },
            valid: 10,
            deep: { r in
                let n = fuzzDepth(&r, limit: JSONValue.maximumDepth)
                switch r.below(4) {
                case 0: return fuzzNest("[", r.bool() ? "" : "1", "]", n, unclosed: r.chance(10))
                case 1: return fuzzNest("{\"a\":", "1", "}", n, unclosed: r.chance(10))
                case 2: return fuzzNest("[{\"k\":", "[]", "}]", n / 2)
                default: return fuzzNest("[1,", "2", "]", n)
                }
            },
            alphabet: Array("{}[]\",:0123456789.eE+- truefalsn\\u".utf8))
    }

    /// Valid JSON numbers at and past the limits.
    static let numbers = [
        "0", "-0", "-0.0", "1.0", "0.5", "1e5", "1E+2", "1e-7", "9223372036854775807", "9223372036854775808",
        "-9223372036854775808", "-9223372036854775809", "18446744073709551615", "18446744073709551616",
        "1e308", "1e309", "-1e309", "1e-400", "4.9e-324", "2.2250738585072014e-308", "1.7976931348623157e308",
        "1.7976931348623159e308", "0.30000000000000004", "123456789012345678901234567890",
        String(repeating: "9", count: 400), "0." + String(repeating: "0", count: 400) + "1", "1e-2147483649"
    ]

    static let stringPieces = [
        "a", "é", "\\u00e9", "\\ud83d\\ude00", "\\ud800", "\\udc00x", "\\n", "\\\"", "\\\\", "\\/", "\\b\\f\\r\\t",
        "\\u0000", "😀", "\u{10FFFF}", "e\u{301}", " ", "\\u2028", "\u{2028}", "\\uFFFF", "\\uFEFF"
    ]

    /// JSON text (not necessarily canonical: spacing, escapes, number spellings vary).
    static func value(_ r: inout FuzzRandom, depth: Int) -> [UInt8] {
        func space(_ r: inout FuzzRandom) -> String { r.chance(70) ? "" : r.pick([" ", "\n", "\t", "\r\n ", "  "]) }
        switch r.below(depth < 4 ? 9 : 6) {
        case 0: return Array(r.pick(["true", "false", "null"]).utf8)
        case 1, 2: return Array((r.chance(60) ? String(Int64(r.below(2000)) - 1000) : r.pick(numbers)).utf8)
        case 3, 4: return Array(("\"" + (0..<r.size(6)).map { _ in r.pick(stringPieces) }.joined() + "\"").utf8)
        case 5: return Array(r.pick(["[]", "{}", "\"\"", "0", "-0.0"]).utf8)
        case 6:
            let elements = (0..<r.size(5)).map { _ in String(decoding: value(&r, depth: depth + 1), as: UTF8.self) }
            return Array(("[" + space(&r) + elements.joined(separator: "," + space(&r)) + space(&r) + "]").utf8)
        default:
            let members = (0..<r.size(5)).map { _ -> String in
                let key = "\"" + (0..<r.size(3)).map { _ in r.pick(stringPieces + ["id", "k", "a.b"]) }.joined() + "\""
                return key + space(&r) + ":" + space(&r) + String(decoding: value(&r, depth: depth + 1), as: UTF8.self)
            }
            return Array(("{" + space(&r) + members.joined(separator: "," + space(&r)) + "}").utf8)
        }
    }

    /// Parses; a parsed value's canonical form parses back to an equal value and is
    /// stable. `thorough` also parses the text as a `String` and the pretty form.
    static func check(_ bytes: [UInt8], thorough: Bool) -> FuzzResult {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: bytes)
        } catch {
            if thorough, let text = String(validating: bytes, as: UTF8.self), let parsed = try? JSONValue(parsing: text)
            {
                return .failed(
                    "the bytes are rejected but the same text as a String parses, to \(parsed.compactDescription.prefix(200))"
                )
            }
            return FuzzSession.judge(error, kinds: FuzzTarget.json.documentedKinds)
        }
        let problem = FuzzSession.after("writing or re-parsing the canonical form") { () -> String? in
            let canonical = try value.canonicalData()
            let again = try JSONValue(parsing: canonical)
            guard again == value else {
                return "the canonical form \(FuzzShow.escaped(Array(canonical))) parses to a different value"
            }
            guard try again.canonicalData() == canonical else {
                return "the canonical form is not stable: \(FuzzShow.escaped(Array(canonical)))"
            }
            if thorough {
                if let text = String(validating: bytes, as: UTF8.self), try JSONValue(parsing: text) != value {
                    return "the text parsed as a String gives a different value"
                }
                let pretty = try value.prettyText()
                guard try JSONValue(parsing: pretty) == value else {
                    return "the pretty form parses to a different value"
                }
            }
            return nil
        }
        return problem.map { .failed($0) } ?? .accepted
    }
}
