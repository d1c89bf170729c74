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
