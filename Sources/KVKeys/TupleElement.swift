import Foundation
import KVSupport

/// One element of a ``Tuple``: the types of the FoundationDB tuple layer.
///
/// Integers are one type whatever their Swift spelling: `.int(5)` and `.uint(5)` encode,
/// compare and hash alike. Decoding produces the canonical case: `.int` for every value
/// in `Int64`'s range, `.uint` above it, ``LargeInteger`` beyond `UInt64`.
///
/// Equality, hashing and order follow the encoded bytes, so `-0.0 != 0.0`, NaN equals a
/// NaN with the same bits, and `a < b` exactly when `a`'s encoding sorts first.
public enum TupleElement: Sendable {
    /// The null element (type code 0x00); sorts before every other type.
    case null
    /// A byte string (type code 0x01), sorted bytewise.
    case bytes([UInt8])
    /// A Unicode string (type code 0x02), encoded as UTF-8 and sorted by those bytes.
    case string(String)
    /// A nested tuple (type code 0x05), sorted element by element.
    case tuple(Tuple)
    /// An integer in `Int64`'s range (type codes 0x0c–0x1c); the canonical case for such values.
    case int(Int64)
    /// An integer above `Int64.max` (also accepted for smaller values, which then encode,
    /// compare and hash as the equal ``int(_:)``).
    case uint(UInt64)
    /// An integer outside `Int64.min...UInt64.max` (type codes 0x0b and 0x1d).
    case largeInteger(LargeInteger)
    /// A 32-bit float (type code 0x20).
    case float(Float)
    /// A 64-bit double (type code 0x21).
    case double(Double)
    /// A boolean (type codes 0x26 and 0x27); `false` sorts first.
    case bool(Bool)
    /// A 16-byte UUID (type code 0x30), sorted by its bytes.
    case uuid(UUID)
    /// A 12-byte versionstamp (type code 0x33), decodable and re-encodable.
    case versionstamp(Versionstamp)

    /// The name of the element's type, for messages.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bytes: "bytes"
        case .string: "string"
        case .tuple: "tuple"
        case .int, .uint, .largeInteger: "integer"
        case .float: "float"
        case .double: "double"
        case .bool: "bool"
        case .uuid: "uuid"
        case .versionstamp: "versionstamp"
        }
    }
}

/// An integer beyond 64 bits, as sign and big-endian magnitude without leading zeros.
public struct LargeInteger: Sendable, Hashable, CustomStringConvertible {
    /// Whether the integer is below zero; never true for a zero magnitude.
    public let isNegative: Bool
    /// The absolute value, big-endian, without leading zero bytes (at most 255 bytes).
    public let magnitude: [UInt8]

    /// An integer of sign `isNegative` and big-endian `magnitude`; leading zero bytes are
    /// dropped, and a zero magnitude is never negative.
    /// - Throws: `.invalidArgument` when the magnitude needs more than 255 bytes, the most
    ///   the encoding can hold.
    public init(isNegative: Bool, magnitude: [UInt8]) throws {
        let trimmed = Array(magnitude.drop { $0 == 0 })
        guard trimmed.count <= 255 else {
            throw KVDocsError(
                .invalidArgument, "an integer of \(trimmed.count) bytes is too large for a tuple (at most 255 bytes)")
        }
        self.init(trimmed: trimmed, isNegative: isNegative)
    }

    /// REQUIRES: `trimmed` has no leading zero and at most 255 bytes.
    init(trimmed: [UInt8], isNegative: Bool) {
        self.magnitude = trimmed
        self.isNegative = isNegative && !trimmed.isEmpty
    }

    /// The decimal digits.
    public var description: String {
        var digits: [UInt8] = []
        var number = magnitude
        while !number.isEmpty {
            var remainder = 0
            var quotient: [UInt8] = []
            for byte in number {
                let value = remainder * 256 + Int(byte)
                let q = value / 10
                remainder = value % 10
                if !(quotient.isEmpty && q == 0) { quotient.append(UInt8(q)) }
            }
            digits.append(UInt8(remainder))
            number = quotient
        }
        if digits.isEmpty { return "0" }
        return (isNegative ? "-" : "") + String(digits.reversed().map { Character(String($0)) })
    }
}

/// A FoundationDB versionstamp: 10 bytes of transaction version and 2 of user version.
public struct Versionstamp: Sendable, Hashable, CustomStringConvertible {
    /// The size of a versionstamp in bytes: 12.
    public static let length = 12
    /// The versionstamp's 12 bytes.
    public let bytes: [UInt8]

    /// A versionstamp of `bytes`.
    /// - Throws: `.invalidArgument` unless `bytes` has 12 bytes.
    public init(bytes: [UInt8]) throws {
        guard bytes.count == Self.length else {
            throw KVDocsError(.invalidArgument, "a versionstamp has 12 bytes, not \(bytes.count)")
        }
        self.bytes = bytes
    }

    /// `Versionstamp(0x…)` with the 12 bytes in hex.
    public var description: String { "Versionstamp(0x" + bytes.map { String(format: "%02x", $0) }.joined() + ")" }
}

// MARK: - Literals

extension TupleElement: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(nilLiteral: ()) { self = .null }
}

// MARK: - Equality, hashing and order: by encoding

extension TupleElement: Hashable, Comparable {
    public static func == (a: TupleElement, b: TupleElement) -> Bool {
        a.encoded == b.encoded
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(encoded) }

    public static func < (a: TupleElement, b: TupleElement) -> Bool {
        a.encoded.lexicographicallyPrecedes(b.encoded)
    }

    /// The element's encoding as the only element of a tuple.
    var encoded: [UInt8] {
        var encoder = TupleEncoder()
        encoder.append(self, nested: false)
        return encoder.bytes
    }
}

// MARK: - Description

extension TupleElement: CustomStringConvertible {
    /// Readable, in the syntax of kvrepl literals: `"text"`, `42`, `-1.5`, `true`, `nil`,
    /// `0x0102` (bytes), `("nested", 1)`.
    public var description: String {
        switch self {
        case .null: return "nil"
        case .bytes(let b): return "0x" + b.map { String(format: "%02x", $0) }.joined()
        case .string(let s): return quoted(s)
        case .tuple(let t): return t.description
        case .int(let i): return String(i)
        case .uint(let u): return String(u)
        case .largeInteger(let l): return l.description
        case .float(let f): return "Float(\(f))"
        case .double(let d): return d.description
        case .bool(let b): return b ? "true" : "false"
        case .uuid(let u): return "UUID(\(u.uuidString))"
        case .versionstamp(let v): return v.description
        }
    }
}

/// A string in double quotes with `\"`, `\\`, `\n`, `\t`, `\r` and `\xHH` escapes for
/// other control characters.
func quoted(_ s: String) -> String {
    var out = "\""
    for scalar in s.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\t": out += "\\t"
        case "\r": out += "\\r"
        case _ where scalar.value < 0x20 || scalar.value == 0x7F:
            out += String(format: "\\x%02x", scalar.value)
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}
