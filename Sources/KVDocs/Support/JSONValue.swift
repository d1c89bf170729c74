import Foundation

/// A JSON value as parsed by Foundation's `JSONDecoder`, keeping integers exact
/// (`Int64`/`UInt64`) and apart from decimals and booleans.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case uint(UInt64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Parses JSON text with Foundation's `JSONSerialization`, which keeps booleans,
    /// exact 64-bit integers and decimals apart (and is several times faster than decoding
    /// through `JSONDecoder` by trial of each type).
    /// - Throws: `.decoding` with Foundation's description of the syntax error (line and column).
    public init(parsing data: Data) throws {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            throw KVDocsError(.decoding, "invalid JSON" + Self.syntaxErrorLocation(data))
        }
        self = try Self.converting(object)
    }

    /// A `JSONSerialization` object as a value.
    static func converting(_ object: Any) throws -> JSONValue {
        // Containers and strings first: testing a Swift dictionary or array against
        // NSNumber would bridge it to Foundation's classes, recursively.
        if let o = object as? [String: Any] { return .object(try o.mapValues(converting)) }
        if let a = object as? [Any] { return .array(try a.map(converting)) }
        if let s = object as? String { return .string(s) }
        if let n = object as? NSNumber {
            // objCType: "c" for booleans (CFBoolean), "d" for decimals, "Q" for integers
            // above Int64.max, "q" for other integers.
            switch String(cString: n.objCType) {
            case "c", "B": return .bool(n.boolValue)
            case "d", "f": return .double(n.doubleValue)
            case "Q": return .uint(n.uint64Value)
            default: return .int(n.int64Value)
            }
        }
        if object is NSNull { return .null }
        throw KVDocsError(.decoding, "unexpected JSON value of type \(type(of: object))")
    }

    /// JSONDecoder does not say where the syntax error is; JSONSerialization gives a
    /// character offset ("… around character 10."), turned here into a line and column.
    static func syntaxErrorLocation(_ data: Data) -> String {
        do {
            _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            return ""
        } catch {
            let detail = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error)"
            guard let range = detail.range(of: #"character (\d+)"#, options: .regularExpression),
                  let offset = Int(detail[range].dropFirst("character ".count)) else { return ": " + detail }
            var line = 1, column = 1
            for byte in data.prefix(offset) {
                if byte == UInt8(ascii: "\n") { line += 1; column = 1 } else if byte & 0xC0 != 0x80 { column += 1 }
            }
            return " at line \(line), column \(column): " + detail
        }
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
}

extension JSONValue: Codable {
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
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let b): try container.encode(b)
        case .int(let i): try container.encode(i)
        case .uint(let u): try container.encode(u)
        case .double(let d): try container.encode(d)
        case .string(let s): try container.encode(s)
        case .array(let a): try container.encode(a)
        case .object(let o): try container.encode(o)
        }
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
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension JSONValue {
    /// Parses JSON text given as a string.
    public init(parsing text: String) throws { try self.init(parsing: Data(text.utf8)) }

    /// The member `key` of an object, or `nil`.
    public subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }
}

extension JSONValue: CustomStringConvertible {
    /// Compact JSON text.
    public var description: String { compactDescription }
}
