import KVSupport

/// Distinct terms, as UTF-8 bytes, numbered from 0 in the order they were first added.
///
/// The bytes of every term live in one arena and an open-addressing table maps them to
/// their numbers, so adding a token's term costs no allocation: what a row's terms and a
/// batch's terms are counted in. Terms are equal when their bytes are (the same code
/// points, as ``TextTerm`` compares them).
package struct TermTable {
    /// Every term's bytes, one after the other; term `i` ends at `ends[i]`.
    private(set) var arena: [UInt8] = []
    private(set) var ends: [Int] = []
    private var hashes: [UInt64] = []
    /// By slot: a term's number, or -1.
    private var slots: [Int32]
    private var mask: Int

    /// A table with room for about `capacity` terms before it grows.
    package init(capacity: Int = 16) {
        var size = 16
        while size < capacity * 2 { size <<= 1 }
        slots = Array(repeating: -1, count: size)
        mask = size - 1
        ends.reserveCapacity(capacity)
        hashes.reserveCapacity(capacity)
        arena.reserveCapacity(capacity * 8)
    }

    package var count: Int { ends.count }

    /// Where term `i`'s bytes start in ``arena``.
    func start(_ i: Int) -> Int { i == 0 ? 0 : ends[i - 1] }

    /// Calls `body` with term `i`'s bytes (valid only during the call).
    func withTerm<R>(_ i: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        let from = start(i), to = ends[i]
        return try arena.withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0[from..<to])) }
    }

    /// Term `i`'s bytes.
    package func bytes(_ i: Int) -> ArraySlice<UInt8> { arena[start(i)..<ends[i]] }

    /// The number of `term`, added if new.
    package mutating func number(of term: UnsafeBufferPointer<UInt8>) -> Int {
        let hash = Self.hash(term)
        var slot = Int(truncatingIfNeeded: hash) & mask
        while true {
            let found = Int(slots[slot])
            if found < 0 { break }
            if hashes[found] == hash && equals(found, term) { return found }
            slot = (slot + 1) & mask
        }
        let number = ends.count
        arena.append(contentsOf: term)
        ends.append(arena.count)
        hashes.append(hash)
        slots[slot] = Int32(truncatingIfNeeded: number)
        if ends.count * 2 > slots.count { grow() }
        return number
    }

    /// Empties the table, keeping its storage.
    package mutating func removeAll() {
        arena.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
        hashes.removeAll(keepingCapacity: true)
        for i in slots.indices { slots[i] = -1 }
    }

    private func equals(_ i: Int, _ term: UnsafeBufferPointer<UInt8>) -> Bool {
        withTerm(i) { compareBytes($0, term) == 0 }
    }

    private mutating func grow() {
        let size = slots.count * 2
        slots = Array(repeating: -1, count: size)
        mask = size - 1
        for (number, hash) in hashes.enumerated() {
            var slot = Int(truncatingIfNeeded: hash) & mask
            while slots[slot] >= 0 { slot = (slot + 1) & mask }
            slots[slot] = Int32(truncatingIfNeeded: number)
        }
    }

    /// A 64-bit hash of `bytes` (``ByteHash/hash(_:)``).
    static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 { ByteHash.hash(UnsafeRawBufferPointer(bytes)) }
}
