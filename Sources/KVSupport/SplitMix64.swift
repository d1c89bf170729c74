/// A small, fast, deterministic pseudo-random generator (SplitMix64, Steele, Lea and Flood,
/// "Fast splittable pseudorandom number generators", 2014): the same seed gives the same
/// sequence on every platform and in every run.
///
/// Not part of the library's API (`package` access): it makes the sample database of
/// `kvrepl --demo` and the tests' random inputs reproducible. Not for cryptography.
/// kvbench, a separate package, cannot see `package` declarations and keeps its own copy
/// (`Benchmarks/Sources/kvbench/Support.swift`).
package struct SplitMix64: RandomNumberGenerator, Sendable {
    /// The generator's whole state; each call to ``next()`` advances it by a fixed odd constant.
    package var state: UInt64

    /// A generator whose sequence is determined by `seed`.
    package init(seed: UInt64) { state = seed }

    /// The next value of the sequence.
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
