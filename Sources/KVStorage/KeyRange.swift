/// A range of keys: an optional lower and an optional upper bound, each inclusive or exclusive.
///
/// ```swift
/// KeyRange.all
/// KeyRange.prefix("user:")                       // every key starting with "user:"
/// KeyRange(from: "a", to: "m")                   // a <= key < m
/// KeyRange(from: "a", through: "m")              // a <= key <= m
/// KeyRange.prefix("user:").starting(at: "user:42")   // user:42 <= key, still inside the prefix
/// ```
///
/// Bounds are raw bytes. ``prefix(_:)``, ``intersection(_:)`` and ``contains(_:)`` use
/// bytewise order, LevelDB's default; scans compare with the database's own comparator.
public struct KeyRange: Sendable, Hashable, CustomStringConvertible {
    /// One end of a range.
    public enum Bound: Sendable, Hashable {
        /// The key itself is in the range (`<=` or `>=`).
        case included([UInt8])
        /// The key itself is not in the range (`<` or `>`).
        case excluded([UInt8])

        /// The bound's key, whether included or not.
        public var key: [UInt8] {
            switch self {
            case .included(let k), .excluded(let k): return k
            }
        }
        /// Whether the bound's key is in the range.
        public var isIncluded: Bool {
            if case .included = self { return true }
            return false
        }
    }

    /// The lowest key, or `nil` for no lower bound.
    public var lower: Bound?
    /// The highest key, or `nil` for no upper bound.
    public var upper: Bound?

    /// The keys between `lower` and `upper`; a `nil` bound leaves that end open.
    ///
    /// A lower bound above the upper one makes an empty range (``isEmpty``), not an error:
    /// a scan of it yields nothing.
    public init(lower: Bound?, upper: Bound?) {
        self.lower = lower
        self.upper = upper
    }

    /// Every key.
    public static let all = KeyRange(lower: nil, upper: nil)

    /// The half-open range `from <= key < to`; a `nil` end is unbounded.
    public init<K: ByteRepresentable>(from: K?, to: K?) {
        self.init(lower: from.map { .included($0.byteArray) }, upper: to.map { .excluded($0.byteArray) })
    }

    /// The closed range `from <= key <= through`; a `nil` end is unbounded.
    public init<K: ByteRepresentable>(from: K?, through: K?) {
        self.init(lower: from.map { .included($0.byteArray) }, upper: through.map { .included($0.byteArray) })
    }

    /// Every key that starts with `prefix` (bytewise). The empty prefix is every key.
    public static func prefix<K: ByteRepresentable>(_ prefix: K) -> KeyRange {
        let bytes = prefix.byteArray
        return KeyRange(
            lower: bytes.isEmpty ? nil : .included(bytes),
            upper: prefixSuccessor(bytes).map { .excluded($0) })
    }

    /// The smallest key greater than every key starting with `prefix`, or `nil` when there
    /// is none (the prefix is empty or all 0xFF bytes).
    public static func prefixSuccessor(_ prefix: [UInt8]) -> [UInt8]? {
        var bytes = prefix
        while let last = bytes.last {
            if last == 0xFF {
                bytes.removeLast()
            } else {
                bytes[bytes.count - 1] = last + 1
                return bytes
            }
        }
        return nil
    }

    /// This range limited to keys `>= key`.
    public func starting<K: ByteRepresentable>(at key: K) -> KeyRange {
        intersection(KeyRange(lower: .included(key.byteArray), upper: nil))
    }

    /// This range limited to keys `> key`.
    public func starting<K: ByteRepresentable>(after key: K) -> KeyRange {
        intersection(KeyRange(lower: .excluded(key.byteArray), upper: nil))
    }

    /// This range limited to keys `< key`.
    public func ending<K: ByteRepresentable>(before key: K) -> KeyRange {
        intersection(KeyRange(lower: nil, upper: .excluded(key.byteArray)))
    }

    /// This range limited to keys `<= key`.
    public func ending<K: ByteRepresentable>(at key: K) -> KeyRange {
        intersection(KeyRange(lower: nil, upper: .included(key.byteArray)))
    }

    /// The keys in both ranges (bytewise): the higher lower bound and the lower upper bound.
    public func intersection(_ other: KeyRange) -> KeyRange {
        func tighter(_ a: Bound?, _ b: Bound?, lower: Bool) -> Bound? {
            guard let a else { return b }
            guard let b else { return a }
            let c = a.key.lexicographicallyPrecedes(b.key) ? -1 : (a.key == b.key ? 0 : 1)
            if c == 0 { return a.isIncluded ? b : a }  // the exclusive one is tighter
            return (c > 0) == lower ? a : b
        }
        return KeyRange(
            lower: tighter(lower, other.lower, lower: true),
            upper: tighter(upper, other.upper, lower: false))
    }

    /// Whether `key` lies in the range (bytewise).
    public func contains<K: ByteRepresentable>(_ key: K) -> Bool {
        key.withBytes { k in
            isAbove(lower: k, compare: LevelDBComparator.bytewise)
                && isBelow(upper: k, compare: LevelDBComparator.bytewise)
        }
    }

    /// Whether the range holds no key at all (bytewise).
    public var isEmpty: Bool { isEmpty(compare: LevelDBComparator.bytewise) }

    /// Whether the range holds no key at all under `compare`.
    func isEmpty(compare: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Int) -> Bool {
        guard let lower, let upper else { return false }
        let c = lower.key.withUnsafeBytes { l in upper.key.withUnsafeBytes { u in compare(l, u) } }
        if c == 0 { return !(lower.isIncluded && upper.isIncluded) }
        return c > 0
    }

    /// Whether `key` satisfies the lower bound under `compare`.
    @inline(__always)
    func isAbove(lower key: UnsafeRawBufferPointer, compare: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Int)
        -> Bool
    {
        guard let lower else { return true }
        let c = lower.key.withUnsafeBytes { compare(key, $0) }
        return lower.isIncluded ? c >= 0 : c > 0
    }

    /// Whether `key` satisfies the upper bound under `compare`.
    @inline(__always)
    func isBelow(upper key: UnsafeRawBufferPointer, compare: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Int)
        -> Bool
    {
        guard let upper else { return true }
        let c = upper.key.withUnsafeBytes { compare(key, $0) }
        return upper.isIncluded ? c <= 0 : c < 0
    }

    /// The bounds in interval notation with hex keys: `[0x61, 0x6d)`, `(-inf, +inf)`.
    public var description: String {
        let l = lower.map { ($0.isIncluded ? "[" : "(") + hex($0.key) } ?? "(-inf"
        let u = upper.map { hex($0.key) + ($0.isIncluded ? "]" : ")") } ?? "+inf)"
        return "\(l), \(u)"
    }

    private func hex(_ bytes: [UInt8]) -> String {
        "0x" + bytes.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    }
}

/// The direction of a scan.
public enum ScanOrder: Sendable, Hashable {
    /// Ascending key order.
    case forward
    /// Descending key order.
    case reverse
}

extension ByteRepresentable {
    /// The bytes as a new array.
    public var byteArray: [UInt8] { withBytes { Array($0) } }
}

extension String {
    package func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
