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

    /// An input as `mode`'s command makes them.
    func input(_ r: inout FuzzRandom, _ mode: FuzzMode) -> [UInt8] {
        switch mode {
        case .mutation: mutated(&r)
        case .grammar: generated(&r)
        }
    }

    /// One in ten random bytes; the others seed inputs, four in five of them mutated.
    func mutated(_ r: inout FuzzRandom) -> [UInt8] {
        if r.chance(10) { return r.bytes(r.below(64)) }
        let base = r.pick(mutator.corpus)
        return r.chance(20) ? base : mutator.mutate(base, &r)
    }

    /// Random bytes, deep nesting, fresh inputs from the grammar and seed inputs, most of
    /// them mutated, some spliced.
    func generated(_ r: inout FuzzRandom) -> [UInt8] {
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
