/// The members of a JSON object: keys and values, with keys compared by their Unicode
/// code points (their UTF-8 bytes), never by Swift's canonical equivalence.
///
/// JSON object keys are sequences of code points: `"café"` spelled with `é` (U+00E9) and
/// `"café"` spelled with `e` and a combining accent (U+0065 U+0301) are two different keys,
/// although Swift's `String` considers them equal. A `[String: JSONValue]` dictionary
/// would merge them and lose a field; `JSONObject` keeps both.
///
/// **Invariants.** Members are kept sorted by the UTF-8 bytes of their keys (which is
/// code-point order), and no two members have byte-identical keys. Adding a member whose
/// key is byte-identical to an existing one replaces its value: when parsing, the last of
/// duplicate keys wins, as in JavaScript and Python.
public struct JSONObject: Sendable, RandomAccessCollection, ExpressibleByDictionaryLiteral {
    /// A member: its key and its value.
    public typealias Element = (key: String, value: JSONValue)
    /// A member's position, from 0, in code-point order of the keys.
    public typealias Index = Int

    /// Sorted by key bytes, keys unique.
    private(set) var members: [Element]

    /// An empty object.
    public init() { members = [] }

    /// An object from key-value pairs; of byte-identical keys, the last one wins.
    public init<S: Sequence>(_ pairs: S) where S.Element == (String, JSONValue) {
        var members: [Element] = pairs.map { (key: $0.0, value: $0.1) }
        Self.normalize(&members)
        self.members = members
    }

    /// An object from a Swift dictionary (whose keys Swift has already compared by
    /// canonical equivalence).
    public init(_ dictionary: [String: JSONValue]) {
        self.init(dictionary.lazy.map { ($0.key, $0.value) })
    }

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements)
    }

    /// Members parsed in document order: sorted (stably) and deduplicated, the last wins.
    init(parsedMembers: consuming [Element]) {
        Self.normalize(&parsedMembers)
        self.members = parsedMembers
    }

    /// Members already in strictly increasing code-point order of their keys (the binary
    /// form checks that as it reads them).
    init(sortedMembers: [Element]) {
        self.members = sortedMembers
    }

    private static func normalize(_ members: inout [Element]) {
        let count = members.count
        guard count > 1 else { return }
        if count <= 32 {
            // Small objects (most): each key's first eight bytes as a number order most pairs
            // without comparing the strings; a stable insertion sort orders positions (not
            // members) on the stack, and the sorted members are copied once, the last of
            // byte-identical keys (adjacent, in document order) kept.
            var result: [Element]?
            withUnsafeTemporaryAllocation(of: UInt64.self, capacity: count) { prefixes in
                withUnsafeTemporaryAllocation(of: Int.self, capacity: count) { order in
                    members.withUnsafeBufferPointer { m in
                        for i in 0..<count { prefixes[i] = keyPrefix(m[i].key) }
                        func compare(_ a: Int, _ b: Int) -> Int {
                            if prefixes[a] != prefixes[b] { return prefixes[a] < prefixes[b] ? -1 : 1 }
                            return JSONObject.compareKeys(m[a].key, m[b].key)
                        }
                        // Stored documents are canonical, so their members arrive already sorted.
                        var i = 1
                        while i < count, compare(i - 1, i) < 0 { i += 1 }
                        if i == count { return }
                        for i in 0..<count { order[i] = i }
                        for i in 1..<count {
                            var j = i
                            while j > 0, compare(order[j - 1], order[j]) > 0 {
                                order.swapAt(j - 1, j)
                                j -= 1
                            }
                        }
                        var sorted: [Element] = []
                        sorted.reserveCapacity(count)
                        for k in 0..<count where k + 1 == count || compare(order[k], order[k + 1]) != 0 {
                            sorted.append(m[order[k]])
                        }
                        result = sorted
                    }
                }
            }
            if let result { members = result }
            return
        }
        var sorted = true
        var i = 1
        while i < members.count {
            if JSONObject.compareKeys(members[i - 1].key, members[i].key) >= 0 {
                sorted = false
                break
            }
            i += 1
        }
        if sorted { return }
        // Stable sort keeps document order among equal keys, so the last one is the last.
        let order = members.indices.sorted { a, b in
            let c = JSONObject.compareKeys(members[a].key, members[b].key)
            return c != 0 ? c < 0 : a < b
        }
        var result: [Element] = []
        result.reserveCapacity(members.count)
        for position in order {
            let member = members[position]
            if let last = result.last, compareKeys(last.key, member.key) == 0 {
                result[result.count - 1] = member
            } else {
                result.append(member)
            }
        }
        members = result
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { members.count }
    public subscript(position: Int) -> Element { members[position] }

    /// The keys, in code-point order.
    public var keys: [String] { members.map(\.key) }
    /// The values, in the order of their keys.
    public var values: [JSONValue] { members.map(\.value) }

    /// The position of the member whose key has the same code points as `key`.
    public func index(forKey key: String) -> Int? {
        let (position, found) = search(key)
        return found ? position : nil
    }

    /// The value of the member whose key has exactly the code points of `key`; setting
    /// `nil` removes the member.
    public subscript(key: String) -> JSONValue? {
        get {
            let (position, found) = search(key)
            guard found else { return nil }
            return members[position].value
        }
        set {
            let (position, found) = search(key)
            switch (found, newValue) {
            case (true, let value?): members[position].value = value
            case (true, nil): members.remove(at: position)
            case (false, let value?): members.insert((key: key, value: value), at: position)
            case (false, nil): break
            }
        }
    }

    /// An object with the same keys and transformed values.
    public func mapValues(_ transform: (JSONValue) throws -> JSONValue) rethrows -> JSONObject {
        var copy = self
        for i in copy.members.indices { copy.members[i].value = try transform(copy.members[i].value) }
        return copy
    }

    /// Binary search by key bytes: the position of `key`, or where it would be inserted.
    private func search(_ key: String) -> (Int, Bool) {
        var low = 0, high = members.count
        while low < high {
            let mid = (low + high) / 2
            let c = Self.compareKeys(members[mid].key, key)
            if c == 0 { return (mid, true) }
            if c < 0 { low = mid + 1 } else { high = mid }
        }
        return (low, false)
    }

    /// The first eight UTF-8 bytes of `key`, big-endian, zero-padded: keys whose prefixes
    /// differ are in the prefixes' order (bytewise, a shorter key sorts first, as padding
    /// does); equal prefixes say nothing.
    @inline(__always)
    static func keyPrefix(_ key: String) -> UInt64 {
        func prefix(_ bytes: some Sequence<UInt8>) -> UInt64 {
            var prefix: UInt64 = 0
            var shift: UInt64 = 56
            for byte in bytes {
                prefix |= UInt64(byte) << shift
                if shift == 0 { break }
                shift &-= 8
            }
            return prefix
        }
        return key.utf8.withContiguousStorageIfAvailable { prefix($0) } ?? prefix(key.utf8)
    }

    /// Compares two strings by their UTF-8 bytes, which is code-point order:
    /// negative, zero (the same code points) or positive.
    public static func compareKeys(_ a: String, _ b: String) -> Int {
        // Contiguous UTF-8 (native strings; a small one is copied to the stack, two words)
        // compares as bytes; callgrind: a third of the byte-by-byte iterators' cost.
        if let c = a.utf8.withContiguousStorageIfAvailable({ x in
            b.utf8.withContiguousStorageIfAvailable { y in compareBytes(x, y) }
        }), let c {
            return c
        }
        var x = a.utf8.makeIterator(), y = b.utf8.makeIterator()
        while true {
            switch (x.next(), y.next()) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case let (p?, q?): if p != q { return p < q ? -1 : 1 }
            }
        }
    }
}

/// `memcmp` without importing Foundation here.
@inline(__always)
func memcmpBytes(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ count: Int) -> Int {
    for i in 0..<count where a[i] != b[i] {
        return a[i] < b[i] ? -1 : 1
    }
    return 0
}

extension JSONObject: Hashable {
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.members.count == rhs.members.count else { return false }
        for (l, r) in zip(lhs.members, rhs.members) {
            guard l.key.hasSameCodePoints(as: r.key), l.value == r.value else { return false }
        }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(members.count)
        for member in members {
            JSONValue.hashCodePoints(member.key, into: &hasher)
            hasher.combine(member.value)
        }
    }
}

extension JSONObject: CustomStringConvertible {
    /// Compact JSON text.
    public var description: String { JSONValue.object(self).compactDescription }
}
