import ArgumentParser
import Foundation
import KVDocs

/// kvstress: the reliability scenarios of RELIABILITY.md. Each prints what it ran and found,
/// ends with one JSON line of figures, and exits 1 when any round failed.
struct KVStress: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kvstress",
        abstract: "Reliability scenarios: corruption, crashes, power losses, fuzzing (see RELIABILITY.md).",
        subcommands: [
            Corrupt.self, CorruptRound.self, Crash.self, CrashChild.self, PowerLoss.self, Layers.self, LayersChild.self,
            Migrate.self, MigrateChild.self, TextMergeCommand.self, TextMergeChild.self, FuzzCommand.self,
            FuzzGrammarCommand.self
        ])
}

func finish(_ figures: Figures) throws {
    print(figures.text)
    print(figures.json)
    if !figures.failures.isEmpty { throw ExitCode(1) }
}

struct Corrupt: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Damage copies of a document store (flipped bytes, truncated and deleted files, a bad CURRENT) and check that nothing crashes, hangs or answers wrongly, and that repair and salvage give a clean store."
    )
    @Option(help: "Rounds to run.") var rounds = 30
    @Option(help: "The first round's seed; round i uses seed + i.") var seed: UInt64 = 1
    @Option(help: "Seconds before a round counts as hung.") var timeout = 120.0
    @Flag(help: "Print each round's outcome.") var verbose = false
    @Flag(help: "Keep the template and the damaged copies (their directory is printed).") var keep = false

    func run() throws {
        try finish(
            try CorruptionScenario.run(rounds: rounds, seed: seed, timeout: timeout, verbose: verbose, keep: keep))
    }
}

struct CorruptRound: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "corrupt-round", abstract: "One corruption round (run by corrupt).", shouldDisplay: false)
    @Option var template: String
    @Option var directory: String
    @Option var seed: UInt64

    func run() throws {
        do {
            let result = try CorruptionScenario.round(template: template, directory: directory, seed: seed)
            print(String(decoding: try result.canonicalData(), as: UTF8.self))
        } catch let failure as Failure {
            note("round failed: \(failure)")
            throw ExitCode(1)
        }
    }
}

struct Crash: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Kill a child process that writes, changes the schema, reindexes and imports, at random moments, and check every acknowledged write, whole batches, the change feed and verify after each kill."
    )
    @Option(help: "Kills to make.") var rounds = 20
    @Option(help: "The seed of the kill times and the children's work.") var seed: UInt64 = 1
    @Option(help: "The longest time a child runs before it is killed, in seconds.") var maximumDelay = 1.0
    @Flag(help: "Print each round's outcome.") var verbose = false

    func run() throws {
        try finish(try CrashScenario.run(rounds: rounds, seed: seed, maximumDelay: maximumDelay, verbose: verbose))
    }
}

struct CrashChild: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crash-child", abstract: "The writer killed by crash.", shouldDisplay: false)
    @Option var path: String
    @Option var seed: UInt64
    @Option var round: Int

    func run() throws {
        try CrashScenario.child(path: path, seed: seed, round: round)
    }
}

struct PowerLoss: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "power-loss",
        abstract:
            "Write document batches, some synced, then leave the log as a power loss could (cut off, zeroed or garbled at a random offset past the last synced batch), and check that the open keeps every synced batch, holds exactly the batches whose records were whole, reports the torn tail, and that verify is clean."
    )
    @Option(help: "Power losses to emulate.") var rounds = 30
    @Option(help: "The seed of the writes and the damage.") var seed: UInt64 = 1
    @Flag(help: "Print each round's outcome.") var verbose = false

    func run() throws {
        try finish(try PowerLossScenario.run(rounds: rounds, seed: seed, verbose: verbose))
    }
}

struct Layers: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Kill a child process that replaces the base of a layered store and writes backups, at random moments, and check that the store opens over one base with exactly the merged documents, every finished backup opens and verifies, and the bases never change."
    )
    @Option(help: "Kills to make.") var rounds = 12
    @Option(help: "The seed of the kill times and the user's writes.") var seed: UInt64 = 1
    @Option(help: "The longest time a child runs before it is killed, in seconds.") var maximumDelay = 1.0
    @Flag(help: "Print each round's outcome.") var verbose = false

    func run() throws {
        try finish(try LayersScenario.run(rounds: rounds, seed: seed, maximumDelay: maximumDelay, verbose: verbose))
    }
}

struct LayersChild: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "layers-child", abstract: "The process killed by layers.", shouldDisplay: false)
    @Option var work: String
    @Option var seed: UInt64

    func run() throws {
        try LayersScenario.child(work: work, seed: seed)
    }
}

struct Migrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Kill a child process that opens a store with two long data migrations, at random moments, and check that every open undoes or finishes them exactly: the documents are those before, between or after the migrations, never a mix, each migration runs once, and verify is clean."
    )
    @Option(help: "Kills to make.") var rounds = 12
    @Option(help: "The seed of the kill times.") var seed: UInt64 = 1
    @Option(help: "The longest time a child runs before it is killed, in seconds.") var maximumDelay = 2.5
    @Flag(help: "Print each round's outcome.") var verbose = false

    func run() throws {
        try finish(try MigrationScenario.run(rounds: rounds, seed: seed, maximumDelay: maximumDelay, verbose: verbose))
    }
}

struct MigrateChild: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate-child", abstract: "The process killed by migrate.", shouldDisplay: false)
    @Option var path: String

    func run() throws {
        try MigrationScenario.child(path: path)
    }
}

struct TextMergeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "text-merge",
        abstract:
            "Kill a child process that writes small batches to a text-indexed collection (its segments merging in tiers) and runs optimize, many kills aimed inside merges, and check that verify is clean, the documents are the acknowledged writes, search answers and term statistics equal a brute-force count, and a later optimize finishes an interrupted merge."
    )
    @Option(help: "Kills to make.") var rounds = 12
    @Option(help: "The seed of the kill times and the children's work.") var seed: UInt64 = 1
    @Option(
        help: "The longest time a child runs before it is killed, in seconds (rounds that kill after a random delay).")
    var maximumDelay = 1.0
    @Flag(help: "Print each round's outcome.") var verbose = false

    func run() throws {
        try finish(try TextMergeScenario.run(rounds: rounds, seed: seed, maximumDelay: maximumDelay, verbose: verbose))
    }
}

struct TextMergeChild: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "text-merge-child", abstract: "The writer killed by text-merge.", shouldDisplay: false)
    @Option var path: String
    @Option var seed: UInt64
    @Option var aim: Int

    func run() throws {
        guard let aim = TextMergeScenario.Aim(rawValue: aim) else { throw ValidationError("unknown aim \(aim)") }
        try TextMergeScenario.child(path: path, seed: seed, aim: aim)
    }
}

/// `kvstress fuzz`: seeded fuzzing of every parser that reads input from a user or a file,
/// with random bytes and mutations of valid inputs (``FuzzMode/mutation``). Each input must
/// be accepted or rejected with a one-line error; a crash ends the process, and a watchdog
/// ends it (status 2) when one input runs longer than 10 seconds. With `--libfuzzer`,
/// libFuzzer's coverage-guided driver runs one target's checks instead.
struct FuzzCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fuzz",
        abstract:
            "Feed random and mutated inputs to the tuple decoder, the kvrepl command parser, the FTS5 query parser, the schema and keyspace loaders, the JSON-lines importer and the JSON parser."
    )
    @Option(help: "tuple, command, fts5, schema, import, json, or all.") var target = "all"
    @Option(help: "Inputs per target.") var inputs = 20_000
    @Option(help: "The seed of the inputs.") var seed: UInt64 = 1
    @Flag(help: "Print each target's time.") var verbose = false

    @Option(
        help:
            "Run libFuzzer (coverage-guided) on the target instead, with these libFuzzer arguments, space-separated (\"-runs=100000 -max_len=512\"; \"\" for none). Needs the build scripts/libfuzzer makes."
    )
    var libfuzzer: String?

    func run() throws {
        if let libfuzzer {
            throw ExitCode(
                try LibFuzzer.run(target: target, arguments: libfuzzer.split(separator: " ").map(String.init)))
        }
        let known = FuzzTarget.allCases.map(\.rawValue)
        guard target == "all" || known.contains(target) else {
            throw Failure("unknown fuzz target \(target); known: \(known.joined(separator: ", "))")
        }
        let targets = FuzzTarget.allCases.filter { target == "all" || $0.rawValue == target }
        try finish(
            try FuzzHarness.run(
                .mutation, targets: targets, scenario: "fuzz", inputs: inputs, seed: seed, timeout: 10, verbose: verbose
            ))
    }
}

/// `kvstress fuzz-grammar`: the same targets and checks with inputs generated from each
/// grammar as well as mutated, nesting around every limit (``FuzzMode/grammar``). A
/// rejection must have a kind the parser documents, and what an accepted input gives is
/// checked further (round trips, the importer's all-or-nothing first pass). A watchdog
/// thread ends the run with status 2 when one input runs longer than `--timeout` seconds.
/// Input `i` of a target depends only on the seed, the target and `i`, so `--only i` runs
/// one input again (the importer's database then starts empty).
struct FuzzGrammarCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fuzz-grammar",
        abstract:
            "Feed seeded random, generated and mutated inputs to the tuple decoder, the kvrepl command parser, the FTS5 query parser, the schema and keyspace loaders, the JSON-lines importer and the JSON parser."
    )

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
        try finish(
            try FuzzHarness.run(
                .grammar, targets: targets, scenario: "\(FuzzMode.grammar.command) \(target)", inputs: inputs,
                only: only, seed: seed, timeout: timeout, verbose: verbose))
    }
}

KVStress.main()
