import KVDocs

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
