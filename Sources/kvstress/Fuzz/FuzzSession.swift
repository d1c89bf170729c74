import KVDocs

/// One target's run: its inputs, the body that tries each, the counts.
struct FuzzSession {
    let mode: FuzzMode
    let target: FuzzTarget
    let seed: UInt64
    let watch: FuzzWatch
    let verbose: Bool
    var tally = FuzzTally()
    /// Failures printed to standard error as they happen (kept small: a test reading only
    /// standard output must not block on a full standard error pipe).
    static let printedFailures = 3

    init(mode: FuzzMode, target: FuzzTarget, seed: UInt64, watch: FuzzWatch, verbose: Bool) {
        self.mode = mode
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

    /// Runs inputs `indexes` of the target, made by its plan as the mode's command makes
    /// them and each checked by its checks, with the checks between inputs after every
    /// ``checkpointInterval`` inputs and after the last.
    mutating func run(_ indexes: Range<Int>) throws {
        try run(target.checks, indexes)
    }

    /// Checks between inputs run after every this many inputs, and after the last.
    static let checkpointInterval = 500

    private mutating func run<Checks: FuzzChecks>(_: Checks.Type, _ indexes: Range<Int>) throws {
        var corpusRandom = Self.random(seed: seed, target: target, index: -1)
        let plan = Checks.plan(&corpusRandom)
        var checks = try Checks()
        defer { checks.close() }
        for i in indexes {
            var r = Self.random(seed: seed, target: target, index: i)
            let bytes = plan.input(&r, mode)
            one(i, bytes) { checks.check(bytes, &r) }
            if (i + 1) % Self.checkpointInterval == 0 || i == indexes.upperBound - 1,
                let problem = checks.checkpoint(after: i)
            {
                fail(i, nil, problem)
            }
        }
        for (outcome, n) in checks.outcomes { tally.count(outcome, n) }
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

    /// Counts a failure of input `index` (`bytes` nil: found between inputs) and keeps and
    /// prints its details as the front door does (``FuzzMode``).
    mutating func fail(_ index: Int, _ bytes: [UInt8]?, _ problem: String) {
        tally.failureCount += 1
        guard verbose || tally.failures.count < mode.keptFailures else { return }
        let text = mode.describe(target, seed: seed, index: index, bytes: bytes, problem: problem)
        if tally.failures.count < mode.keptFailures { tally.failures.append(text) }
        if mode.printsFailures && (verbose || tally.failureCount <= Self.printedFailures) {
            note("FAILURE: " + (text.count > 1500 && !verbose ? String(text.prefix(1500)) + "…" : text))
        }
    }
}
