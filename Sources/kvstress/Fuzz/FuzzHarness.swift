/// Seeded, in-process fuzzing of every parser that reads what a user or a file gives: the
/// tuple decoder, kvrepl's command parser, the FTS5 query parser, the schema and keyspace
/// loaders, the JSON-lines importer and the JSON parser (``FuzzTarget``).
///
/// Every input must be accepted (and then pass the target's own checks) or rejected with a
/// one-line error of a kind the parser documents. A crash ends the process; a watchdog
/// thread ends it with status 2 when one input runs longer than the time allowed. Input `i`
/// of a target depends only on the seed, the target and `i` (the importer's database then
/// starts empty).
enum FuzzHarness {
    /// Runs inputs `0..<inputs` (or only input `only`) of each of `targets`, made and
    /// reported as `mode`'s command does, under a watchdog of `timeout` seconds an input.
    static func run(
        _ mode: FuzzMode, targets: [FuzzTarget], scenario: String, inputs: Int, only: Int? = nil, seed: UInt64,
        timeout: Double, verbose: Bool
    ) throws -> Figures {
        let watch = FuzzWatch(mode: mode, seed: seed, limit: timeout)
        watch.start()
        var figures = Figures(scenario: scenario)
        for target in targets {
            var session = FuzzSession(mode: mode, target: target, seed: seed, watch: watch, verbose: verbose)
            let indexes = only.map { $0..<($0 + 1) } ?? 0..<max(0, inputs)
            let started = FuzzClock.now()
            try session.run(indexes)
            let seconds = Double(FuzzClock.now() - started) / 1e9
            mode.report(
                session.tally, of: target, into: &figures, targets: targets.count, seconds: seconds, verbose: verbose)
        }
        return figures
    }

    /// One input of `target` as libFuzzer runs it, with the checks of the seeded runs:
    /// `nil`, or what was wrong (as `kvstress fuzz` reports a failure).
    static func single(_ name: String) throws -> ([UInt8]) -> String? {
        guard let target = FuzzTarget(rawValue: name), target != .importer else {
            throw Failure("libFuzzer runs one of tuple, command, fts5, schema, json (import uses the seeded loop)")
        }
        return try single(target.checks, target)
    }

    private static func single<Checks: FuzzChecks>(_: Checks.Type, _ target: FuzzTarget) throws -> (
        [UInt8]
    ) -> String? {
        var checks = try Checks()
        // No watchdog thread: libFuzzer has its own -timeout.
        let watch = FuzzWatch(mode: .mutation, seed: 0, limit: .infinity)
        var session = FuzzSession(mode: .mutation, target: target, seed: 0, watch: watch, verbose: false)
        return { bytes in
            // The choices an input's check makes follow from the input.
            var r = FuzzRandom(UInt64(bytes.count))
            session.tally = FuzzTally()
            session.one(0, bytes) { checks.check(bytes, &r) }
            return session.tally.failures.first
        }
    }
}
