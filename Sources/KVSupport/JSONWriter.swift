import Foundation

/// Writes ``JSONValue``s as UTF-8 JSON text: the canonical form (compact, object keys in
/// code-point order) that documents and catalog records are stored in, and an indented
/// form for people.
///
/// The canonical form of a value is unique: integers in decimal, decimals in the shortest
/// spelling that reads back as the same `Double` (always with a `.` or an exponent, so a
/// decimal reads back as a decimal, and `-0.0` keeps its sign), strings with only `"`, `\`
/// and control characters escaped, no whitespace.
struct JSONWriter {
    private(set) var bytes: [UInt8] = []
    private let indent: Int?

    init(indent: Int? = nil, capacity: Int = 256) {
        self.indent = indent
        bytes.reserveCapacity(capacity)
    }

    /// Appends `value`.
    /// - Throws: `.invalidArgument` for a NaN or infinite number, or nesting deeper than
    ///   ``JSONValue/maximumDepth``.
    mutating func write(_ value: JSONValue) throws {
        try write(value, depth: 0)
    }

    private mutating func write(_ value: JSONValue, depth: Int) throws {
        switch value {
        case .null: append("null")
        case .bool(let b): append(b ? "true" : "false")
        case .int(let i): appendInteger(i.magnitude, negative: i < 0)
        case .uint(let u): appendInteger(u, negative: false)
        case .double(let d):
            guard d.isFinite else {
                throw KVDocsError(.invalidArgument, "value cannot be written as JSON: \(d) is not a finite number")
            }
            bytes.append(contentsOf: d.description.utf8)
        case .string(let s):
            writeString(s)
        case .array(let elements):
            guard depth < JSONValue.maximumDepth else { throw tooDeep() }
            bytes.append(UInt8(ascii: "["))
            for (i, element) in elements.enumerated() {
                if i > 0 { bytes.append(UInt8(ascii: ",")) }
                newline(depth + 1)
                try write(element, depth: depth + 1)
            }
            if !elements.isEmpty { newline(depth) }
            bytes.append(UInt8(ascii: "]"))
        case .object(let object):
            guard depth < JSONValue.maximumDepth else { throw tooDeep() }
            bytes.append(UInt8(ascii: "{"))
            for (i, member) in object.enumerated() {
                if i > 0 { bytes.append(UInt8(ascii: ",")) }
                newline(depth + 1)
                writeString(member.key)
                if indent != nil { bytes.append(UInt8(ascii: " ")) }
                bytes.append(UInt8(ascii: ":"))
                if indent != nil { bytes.append(UInt8(ascii: " ")) }
                try write(member.value, depth: depth + 1)
            }
            if !object.isEmpty { newline(depth) }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    private func tooDeep() -> KVDocsError {
        KVDocsError(
            .invalidArgument,
            "value cannot be written as JSON: arrays and objects nest deeper than \(JSONValue.maximumDepth) levels")
    }

    private mutating func newline(_ depth: Int) {
        guard let indent else { return }
        bytes.append(0x0A)
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent * depth))
    }

    private mutating func append(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    private mutating func appendInteger(_ magnitude: UInt64, negative: Bool) {
        if negative { bytes.append(UInt8(ascii: "-")) }
        if magnitude < 10 {
            bytes.append(UInt8(ascii: "0") + UInt8(magnitude))
            return
        }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // room for 20 digits, on the stack
        let count = withUnsafeMutableBytes(of: &digits) { raw -> Int in
            var m = magnitude, n = 0
            while m > 0 {
                raw[19 - n] = UInt8(ascii: "0") + UInt8(m % 10)
                m /= 10
                n += 1
            }
            bytes.append(contentsOf: raw[(20 - n)..<20])
            return n
        }
        _ = count
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    private mutating func writeString(_ s: String) {
        bytes.append(UInt8(ascii: "\""))
        // The common case, nothing to escape: the UTF-8 bytes copied in one go.
        let plain: Bool? = s.utf8.withContiguousStorageIfAvailable { run in
            guard !run.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
                return false
            }
            bytes.append(contentsOf: run)
            return true
        }
        if plain == true {
            bytes.append(UInt8(ascii: "\""))
            return
        }
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "\""):
                bytes.append(0x5C)
                bytes.append(byte)
            case UInt8(ascii: "\\"):
                bytes.append(0x5C)
                bytes.append(byte)
            case 0x0A:
                bytes.append(0x5C)
                bytes.append(UInt8(ascii: "n"))
            case 0x0D:
                bytes.append(0x5C)
                bytes.append(UInt8(ascii: "r"))
            case 0x09:
                bytes.append(0x5C)
                bytes.append(UInt8(ascii: "t"))
            case 0x08:
                bytes.append(0x5C)
                bytes.append(UInt8(ascii: "b"))
            case 0x0C:
                bytes.append(0x5C)
                bytes.append(UInt8(ascii: "f"))
            case 0..<0x20:
                bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                bytes.append(Self.hexDigits[Int(byte >> 4)])
                bytes.append(Self.hexDigits[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

extension JSONValue {
    /// The canonical JSON text: the stored form of documents and catalog records. Compact,
    /// object keys in code-point order, integers in decimal, decimals in the shortest
    /// spelling that reads back as the same `Double` (always with a `.` or an exponent, and
    /// `-0.0` keeps its sign), only `"`, `\` and control characters escaped. Equal values have
    /// byte-identical canonical text.
    /// - Throws: `.invalidArgument` for a NaN or infinite number, which JSON cannot
    ///   represent, or nesting deeper than ``maximumDepth``.
    public func canonicalData() throws -> Data {
        Data(try canonicalBytes())
    }

    /// The canonical JSON text as bytes; see ``canonicalData()``.
    /// - Throws: `.invalidArgument`, as ``canonicalData()``.
    public func canonicalBytes() throws -> [UInt8] {
        var writer = JSONWriter()
        try writer.write(self)
        return writer.bytes
    }

    /// JSON text indented by `indent` spaces per level, keys in code-point order, for people.
    /// - Throws: `.invalidArgument`, as ``canonicalData()``.
    public func prettyText(indent: Int = 2) throws -> String {
        var writer = JSONWriter(indent: indent)
        try writer.write(self)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// One-line JSON text, for messages.
    public var compactDescription: String {
        (try? canonicalBytes()).map { String(decoding: $0, as: UTF8.self) } ?? "<not JSON: \(typeName)>"
    }
}
