import Foundation

/// The harness's two front doors: the same targets and checks, with inputs made two ways
/// and reported as each command always has.
enum FuzzMode {
    /// `kvstress fuzz`: random bytes and mutations of each target's seed inputs (bytes
    /// flipped, inserted, deleted, duplicated, spliced from other inputs, and tokens such as
    /// numbers at and past the 64-bit limits, 300 open brackets, lone surrogates, NULs). Its
    /// checks are also what libFuzzer runs (``FuzzHarness/single(_:)``).
    case mutation
    /// `kvstress fuzz-grammar`: inputs generated from each target's grammar as well as
    /// mutated, nesting around every limit.
    case grammar

    /// The subcommand, for messages and reproduction hints.
    var command: String {
        switch self {
        case .mutation: "fuzz"
        case .grammar: "fuzz-grammar"
        }
    }

    /// The details kept of a target's failures (all are counted).
    var keptFailures: Int {
        switch self {
        case .mutation: Int.max
        case .grammar: 50
        }
    }

    /// Whether failures are printed as they happen (`fuzz` prints them with its figures).
    var printsFailures: Bool { self == .grammar }

    /// A failure of input `index` of `target` (`bytes` nil: found between inputs), as the
    /// command reports it.
    func describe(_ target: FuzzTarget, seed: UInt64, index: Int, bytes: [UInt8]?, problem: String) -> String {
        switch self {
        case .mutation:
            guard let bytes else { return "\(target.rawValue): \(problem)" }
            return "\(target.rawValue) input \(index) \(FuzzShow.escaped(bytes, limit: 120)): \(problem)"
        case .grammar:
            let bytes = bytes ?? []
            return
                "\(target.rawValue) seed \(seed) input \(index): \(problem.count > 600 ? String(problem.prefix(600)) + "…" : problem); input (\(bytes.count) bytes): \(FuzzShow.escaped(bytes)); reproduce: kvstress \(command) --target \(target.rawValue) --seed \(seed) --only \(index)"
        }
    }

    /// What the watchdog prints before it ends the process: input `index` of `target` ran
    /// longer than `limit` seconds.
    func hang(_ target: String, seed: UInt64, index: Int, input: [UInt8], limit: Double) -> String {
        switch self {
        case .mutation:
            "HANG: one input ran more than \(Int(limit)) s: \(target) input \(index): \(FuzzShow.escaped(input, limit: 120))"
        case .grammar:
            "HANG: \(command) \(target) seed \(seed) input \(index) ran more than \(limit) s; input (\(input.count) bytes): \(FuzzShow.escaped(input, limit: 4000)); hex: \(FuzzShow.hex(input, limit: 1000)); reproduce: kvstress \(command) --target \(target) --seed \(seed) --only \(index)"
        }
    }

    /// Adds a target's tally to the figures (`of` targets run; `seconds` they took), and
    /// prints its time as the command does.
    func report(
        _ tally: FuzzTally, of target: FuzzTarget, into figures: inout Figures, targets: Int, seconds: Double,
        verbose: Bool
    ) {
        let name = target.rawValue
        switch self {
        case .mutation:
            figures.rounds += tally.tried
            figures.add("\(name): inputs", tally.tried)
            figures.add("\(name): accepted", tally.accepted)
            figures.add("\(name): rejected with a one-line error", tally.rejected)
            figures.add("\(name): slowest input (ms)", Int(tally.slowest / 1_000_000))
            figures.add("\(name): inputs per second", Int(Double(tally.tried) / max(seconds, 0.001)))
            for f in tally.failures { figures.fail(f) }
            if verbose { note("\(name): \(tally.tried) inputs in \(String(format: "%.1f", seconds)) s") }
        case .grammar:
            tally.report(into: &figures, prefix: targets > 1 ? "\(name): " : "", seconds: seconds)
            if verbose || targets > 1 {
                note(
                    "\(command) \(name): \(tally.tried) inputs in \(String(format: "%.2f", seconds)) s, \(tally.accepted) accepted, \(tally.rejected) rejected, \(tally.failureCount) failures"
                )
            }
        }
    }
}
