import Foundation

/// A JSON value, with integers kept exact (`Int64`/`UInt64`) and apart from decimals and
/// booleans, and object keys compared by code points (see ``JSONObject``).
///
/// **Numbers.** ``init(parsing:)-(Data)`` keeps every number exactly as written wherever a
/// 64-bit value can hold it: integers in `Int64`/`UInt64` range exactly, decimals as the
/// correctly rounded `Double` (which the canonical form writes back with its shortest
/// round-trip spelling, so `0.30000000000000004` stays `0.30000000000000004`). Integers
/// beyond 64 bits become the nearest `Double`, and `-0` is read as the decimal `-0.0` so its
/// sign survives (as in JavaScript), in the document and in its index entries
/// alike (as in JavaScript and SQLite). Decimals beyond the range of a `Double` (`1e400`)
/// are rejected with an error naming the value and where it is, since JSON cannot hold
/// infinity.
///
/// **Equality** compares strings and keys by code points, like ``JSONObject``: two
/// values that differ only by Unicode normalisation are different values. Numbers compare
/// by case: `.int(1)` and `.double(1)` are different values (``ValueOrder`` compares
/// them as numbers).
public enum JSONValue: Sendable {
    /// JSON's `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// An integer in `Int64`'s range, exactly; what parsing gives for every such integer.
    case int(Int64)
    /// An integer above `Int64.max` and at most `UInt64.max`, exactly.
    case uint(UInt64)
    /// A number written with a fraction or an exponent, an integer beyond 64 bits (the
    /// nearest double), or `-0`; always finite (writing NaN or an infinity throws).
    case double(Double)
    /// A string, compared by code points.
    case string(String)
    /// An array; nesting is limited to ``maximumDepth`` levels.
    case array([JSONValue])
    /// An object, members in code-point order of their keys.
    case object(JSONObject)

    /// The deepest nesting of arrays and objects that parsing, canonical writing and
    /// indexing accept: 256 levels, which a debug build handles on a 512 KiB thread stack (the
    /// depth SQLite's FTS5 allows too). Deeper input is rejected with an error, never a crash.
    public static let maximumDepth = 256

    /// Parses UTF-8 JSON text (RFC 8259; any value at the top level; a leading byte order
    /// mark is skipped; of duplicate keys the last one wins).
    /// - Throws: `.decoding` naming the byte offset, line and column of the first problem:
    ///   a syntax error, invalid UTF-8, an unpaired surrogate escape, nesting deeper than
    ///   ``maximumDepth``, or a number beyond the range of a `Double`.
    public init(parsing data: Data) throws {
        self = try data.withUnsafeBytes { raw in
            try JSONParser.parse(
                UnsafeBufferPointer(start: raw.baseAddress?.assumingMemoryBound(to: UInt8.self), count: raw.count))
        }
    }

    /// Parses UTF-8 JSON text given as bytes.
    /// - Throws: `.decoding`, as ``init(parsing:)-(Data)``.
    public init<Bytes: Collection<UInt8>>(parsing bytes: Bytes) throws {
        if let value = try bytes.withContiguousStorageIfAvailable({ try JSONParser.parse($0) }) {
            self = value
        } else {
            self = try Array(bytes).withUnsafeBufferPointer { try JSONParser.parse($0) }
        }
    }

    /// Parses JSON text given as a string.
    /// - Throws: `.decoding`, as ``init(parsing:)-(Data)``.
    public init(parsing text: String) throws {
        var text = text
        self = try text.withUTF8 { try JSONParser.parse($0) }
    }

    /// The JSON type's name, for messages.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .int, .uint, .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// The member `key` of an object (compared by code points), or `nil`.
    public subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }
}

// MARK: - Equality by code points

extension JSONValue: Hashable {
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.int(let a), .int(let b)): return a == b
        case (.uint(let a), .uint(let b)): return a == b
        case (.double(let a), .double(let b)): return a.bitPattern == b.bitPattern || a == b && a != 0
        case (.string(let a), .string(let b)): return a.hasSameCodePoints(as: b)
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)): return a == b
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let b):
            hasher.combine(1)
            hasher.combine(b)
        case .int(let i):
            hasher.combine(2)
            hasher.combine(i)
        case .uint(let u):
            hasher.combine(3)
            hasher.combine(u)
        case .double(let d):
            hasher.combine(4)
            hasher.combine(d.isNaN ? Double.nan.bitPattern : d.bitPattern)
        case .string(let s):
            hasher.combine(5)
            Self.hashCodePoints(s, into: &hasher)
        case .array(let a):
            hasher.combine(6)
            hasher.combine(a)
        case .object(let o):
            hasher.combine(7)
            hasher.combine(o)
        }
    }

    /// Hashes a string's UTF-8 bytes (Swift's own `String` hash is by canonical equivalence).
    package static func hashCodePoints(_ s: String, into hasher: inout Hasher) {
        var s = s
        s.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        hasher.combine(s.utf8.count)
    }
}

// MARK: - Codable

extension JSONValue: Codable {
    /// Decodes any JSON value. Through a `Decoder`, object keys are Swift strings that the
    /// decoder may already have merged by canonical equivalence; ``init(parsing:)-(Data)``
    /// keeps every key.
    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let b = try? container.decode(Bool.self) {
            self = .bool(b)
        } else if let i = try? container.decode(Int64.self) {
            self = .int(i)
        } else if let u = try? container.decode(UInt64.self) {
            self = .uint(u)
        } else if let d = try? container.decode(Double.self) {
            self = .double(d)
        } else if let s = try? container.decode(String.self) {
            self = .string(s)
        } else if let a = try? container.decode([JSONValue].self) {
            self = .array(a)
        } else {
            self = .object(JSONObject(try container.decode([String: JSONValue].self)))
        }
    }

    public func encode(to encoder: Encoder) throws {
        switch self {
        case .null:
            var c = encoder.singleValueContainer()
            try c.encodeNil()
        case .bool(let b):
            var c = encoder.singleValueContainer()
            try c.encode(b)
        case .int(let i):
            var c = encoder.singleValueContainer()
            try c.encode(i)
        case .uint(let u):
            var c = encoder.singleValueContainer()
            try c.encode(u)
        case .double(let d):
            var c = encoder.singleValueContainer()
            try c.encode(d)
        case .string(let s):
            var c = encoder.singleValueContainer()
            try c.encode(s)
        case .array(let a):
            var c = encoder.singleValueContainer()
            try c.encode(a)
        case .object(let o):
            var c = encoder.container(keyedBy: MemberKey.self)
            for (key, value) in o { try c.encode(value, forKey: MemberKey(stringValue: key)) }
        }
    }

    private struct MemberKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

// MARK: - Literals

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(nilLiteral: ()) { self = .null }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(elements))
    }
}

extension JSONValue: CustomStringConvertible {
    /// Compact JSON text.
    public var description: String { compactDescription }
}
