/// A byte-level JSON parser (RFC 8259): UTF-8 bytes straight into ``JSONValue``, with no
/// Foundation bridging, exact numbers, object keys kept by code points, and an explicit
/// stack instead of recursion, so no input can overflow the call stack.
///
/// Errors name the byte offset (from 0), the line and column (from 1) and, inside a
/// document, the field where the problem is.
struct JSONParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0
    /// Scratch buffer for strings with escapes.
    private var scratch: [UInt8] = []

    private enum Frame {
        case array([JSONValue])
        case object([JSONObject.Element], key: String)
    }
    private var stack: [Frame] = []

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws -> JSONValue {
        var parser = JSONParser(bytes)
        return try parser.parseDocument()
    }

    // MARK: - Structure

    private mutating func parseDocument() throws -> JSONValue {
        // A UTF-8 byte order mark, as some editors write, is skipped.
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { position = 3 }
        var value = try parseValue()
        // `value` is complete: attach it to the enclosing container, if any. Each frame's
        // array is taken out of the stack (a placeholder left behind) before it grows, so it
        // is uniquely referenced and grows in place.
        while let last = stack.indices.last {
            switch stack[last] {
            case .array(var elements):
                stack[last] = .array([])
                elements.append(value)
                skipWhitespace()
                switch peek() {
                case UInt8(ascii: ","):
                    position += 1
                    stack[last] = .array(elements)
                    value = try parseValue()
                case UInt8(ascii: "]"):
                    position += 1
                    stack.removeLast()
                    value = .array(elements)
                default:
                    stack[last] = .array(elements)
                    throw error(
                        peek() == nil
                            ? "unexpected end of input in an array (expected ',' or ']')"
                            : "expected ',' or ']' after an array element, found \(describeByte())")
                }
            case .object(var members, let key):
                stack[last] = .array([])
                members.append((key: key, value: value))
                skipWhitespace()
                switch peek() {
                case UInt8(ascii: ","):
                    position += 1
                    skipWhitespace()
                    stack[last] = .object(members, key: "")
                    let next = try parseKey()
                    stack[last] = .object(members, key: next)
                    value = try parseValue()
                case UInt8(ascii: "}"):
                    position += 1
                    stack.removeLast()
                    value = .object(JSONObject(parsedMembers: members))
                default:
                    stack[last] = .object(members, key: key)
                    throw error(
                        peek() == nil
                            ? "unexpected end of input in an object (expected ',' or '}')"
                            : "expected ',' or '}' after an object member, found \(describeByte())")
                }
            }
        }
        skipWhitespace()
        if position < bytes.count {
            throw error("unexpected \(describeByte()) after the JSON value")
        }
        return value
    }

    /// Parses a scalar, or opens containers until one is complete or a first element is due.
    /// Returns a complete value (a scalar or an empty container).
    private mutating func parseValue() throws -> JSONValue {
        while true {
            skipWhitespace()
            guard let byte = peek() else {
                throw error(
                    stack.isEmpty && position == 0
                        ? "empty input (expected a JSON value)" : "unexpected end of input (expected a value)")
            }
            switch byte {
            case UInt8(ascii: "{"):
                try enter()
                position += 1
                skipWhitespace()
                if peek() == UInt8(ascii: "}") {
                    position += 1
                    return .object(JSONObject())
                }
                stack.append(.object([], key: ""))
                let key = try parseKey()
                // Room for the members of most objects, so they grow without reallocating.
                var members: [JSONObject.Element] = []
                members.reserveCapacity(8)
                stack[stack.count - 1] = .object(members, key: key)
                continue
            case UInt8(ascii: "["):
                try enter()
                position += 1
                skipWhitespace()
                if peek() == UInt8(ascii: "]") {
                    position += 1
                    return .array([])
                }
                stack.append(.array([]))
                continue
            case UInt8(ascii: "\""):
                return .string(try parseString())
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return try parseNumber()
            case UInt8(ascii: "t"):
                try literal("true")
                return .bool(true)
            case UInt8(ascii: "f"):
                try literal("false")
                return .bool(false)
            case UInt8(ascii: "n"):
                try literal("null")
                return .null
            default:
                throw error("expected a JSON value, found \(describeByte())")
            }
        }
    }

    /// Checks the depth before a container opens.
    private func enter() throws {
        if stack.count >= JSONValue.maximumDepth {
            throw error("arrays and objects nest deeper than \(JSONValue.maximumDepth) levels")
        }
    }

    /// A member's key and its colon.
    private mutating func parseKey() throws -> String {
        guard peek() == UInt8(ascii: "\"") else {
            throw error(
                peek() == nil
                    ? "unexpected end of input in an object (expected a key)"
                    : "expected a string key in an object, found \(describeByte())")
        }
        let key = try parseString()
        skipWhitespace()
        guard peek() == UInt8(ascii: ":") else {
            throw error(
                peek() == nil
                    ? "unexpected end of input (expected ':' after an object key)"
                    : "expected ':' after an object key, found \(describeByte())")
        }
        position += 1
        return key
    }

    private mutating func literal(_ word: StaticString) throws {
        let count = word.utf8CodeUnitCount
        let start = word.utf8Start
        for i in 0..<count {
            guard position + i < bytes.count, bytes[position + i] == start[i] else {
                position += i
                throw error(
                    position < bytes.count
                        ? "expected a JSON value, found \(describeByte())" : "unexpected end of input in a literal")
            }
        }
        position += count
    }

    @inline(__always) private func peek() -> UInt8? {
        position < bytes.count ? bytes[position] : nil
    }

    @inline(__always) private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    // MARK: - Strings

    private mutating func parseString() throws -> String {
        position += 1  // the opening quote
        let start = position
        var ascii = true
        // Fast path: no escapes.
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let run = UnsafeBufferPointer(rebasing: bytes[start..<position])
                if !ascii { try validateUTF8(run, at: start) }
                position += 1
                return String(decoding: run, as: UTF8.self)
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw error("control character \(hexByte(byte)) in a string must be escaped") }
            if byte >= 0x80 { ascii = false }
            position += 1
        }
        guard position < bytes.count else {
            position = start - 1
            throw error("unterminated string")
        }
        // Slow path: escapes, into the scratch buffer.
        scratch.removeAll(keepingCapacity: true)
        let prefix = UnsafeBufferPointer(rebasing: bytes[start..<position])
        if !ascii { try validateUTF8(prefix, at: start) }
        scratch.append(contentsOf: prefix)
        var runStart = position
        ascii = true
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                let run = UnsafeBufferPointer(rebasing: bytes[runStart..<position])
                if !ascii { try validateUTF8(run, at: runStart) }
                scratch.append(contentsOf: run)
                ascii = true
                if byte == UInt8(ascii: "\"") {
                    position += 1
                    return String(decoding: scratch, as: UTF8.self)
                }
                try parseEscape()
                runStart = position
                continue
            }
            if byte < 0x20 { throw error("control character \(hexByte(byte)) in a string must be escaped") }
            if byte >= 0x80 { ascii = false }
            position += 1
        }
        position = start - 1
        throw error("unterminated string")
    }

    private mutating func parseEscape() throws {
        let escapeStart = position
        position += 1  // the backslash
        guard let byte = peek() else { throw error("unterminated escape sequence") }
        position += 1
        switch byte {
        case UInt8(ascii: "\""): scratch.append(0x22)
        case UInt8(ascii: "\\"): scratch.append(0x5C)
        case UInt8(ascii: "/"): scratch.append(0x2F)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try hex4()
            if (0xD800...0xDBFF).contains(scalar) {
                // A high surrogate must be followed by an escaped low surrogate.
                guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                    bytes[position + 1] == UInt8(ascii: "u")
                else {
                    position = escapeStart
                    throw error("unpaired surrogate \\u\(String(scalar, radix: 16, uppercase: false)) in a string")
                }
                position += 2
                let low = try hex4()
                guard (0xDC00...0xDFFF).contains(low) else {
                    position = escapeStart
                    throw error("unpaired surrogate \\u\(String(scalar, radix: 16, uppercase: false)) in a string")
                }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                position = escapeStart
                throw error("unpaired surrogate \\u\(String(scalar, radix: 16, uppercase: false)) in a string")
            }
            appendUTF8(scalar)
        default:
            position = escapeStart
            throw error("invalid escape sequence \\\(describeByte(byte))")
        }
    }

    private mutating func hex4() throws -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = peek() else { throw error("unterminated \\u escape") }
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("expected four hexadecimal digits after \\u, found \(describeByte())")
            }
            value = value << 4 | digit
            position += 1
        }
        return value
    }

    private mutating func appendUTF8(_ scalar: UInt32) { UTF8Bytes.appendUTF8(scalar, to: &scratch) }

    /// Checks well-formed UTF-8 (no overlong forms, no surrogates, nothing past U+10FFFF).
    private mutating func validateUTF8(_ run: UnsafeBufferPointer<UInt8>, at offset: Int) throws {
        var i = 0
        while i < run.count {
            let b0 = run[i]
            if b0 < 0x80 {
                i += 1
                continue
            }
            var length = 0
            var lowest: UInt8 = 0x80, highest: UInt8 = 0xBF  // bounds of the second byte
            switch b0 {
            case 0xC2...0xDF: length = 2
            case 0xE0:
                length = 3
                lowest = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED:
                length = 3
                highest = 0x9F
            case 0xF0:
                length = 4
                lowest = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4:
                length = 4
                highest = 0x8F
            default: length = 0
            }
            var valid = length > 0 && i + length <= run.count
            if valid {
                valid = (lowest...highest).contains(run[i + 1])
                var k = 2
                while valid && k < length {
                    valid = run[i + k] & 0xC0 == 0x80
                    k += 1
                }
            }
            if !valid {
                position = offset + i
                throw error("invalid UTF-8 byte \(hexByte(b0)) in a string")
            }
            i += length
        }
    }

    // MARK: - Numbers

    private mutating func parseNumber() throws -> JSONValue {
        let start = position
        var negative = false
        if bytes[position] == UInt8(ascii: "-") {
            negative = true
            position += 1
        }
        // Integer part: 0, or a non-zero digit and more digits.
        guard let first = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
            throw error(
                peek() == nil
                    ? "unexpected end of input in a number" : "expected a digit after '-', found \(describeByte())")
        }
        var mantissa: UInt64 = 0
        var digits = 0  // significant digits accumulated in `mantissa`
        var overflowed = false  // more digits than `mantissa` holds
        var exponent = 0  // decimal exponent adjustment for the digits kept
        func accumulate(_ digit: UInt8) {
            if overflowed || digits >= 19 {
                overflowed = true
                return
            }
            mantissa = mantissa &* 10 &+ UInt64(digit)
            if mantissa != 0 { digits += 1 }
        }
        if first == UInt8(ascii: "0") {
            position += 1
            if let next = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(next) {
                throw error("a number cannot have a leading zero")
            }
        } else {
            while let byte = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                if overflowed || digits >= 19 {
                    overflowed = true
                    exponent += 1
                } else {
                    accumulate(byte - 48)
                }
                position += 1
            }
        }
        var isInteger = true
        if peek() == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            guard let byte = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else {
                throw error(
                    peek() == nil
                        ? "unexpected end of input in a number"
                        : "expected a digit after the decimal point, found \(describeByte())")
            }
            while let byte = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                if !(overflowed || digits >= 19) {
                    accumulate(byte - 48)
                    exponent -= 1
                } else {
                    overflowed = true
                }
                position += 1
            }
        }
        if let e = peek(), e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            isInteger = false
            position += 1
            var exponentNegative = false
            if let sign = peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
                exponentNegative = sign == UInt8(ascii: "-")
                position += 1
            }
            guard let byte = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else {
                throw error(
                    peek() == nil
                        ? "unexpected end of input in a number"
                        : "expected a digit in the exponent, found \(describeByte())")
            }
            var written = 0
            while let byte = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                written = min(written * 10 + Int(byte - 48), 1_000_000)
                position += 1
            }
            exponent += exponentNegative ? -written : written
        }
        let text = UnsafeBufferPointer(rebasing: bytes[start..<position])

        if isInteger && !overflowed && exponent == 0 {
            // `-0` keeps its sign as the decimal -0.0 (as in JavaScript; JSONEncoder writes -0.0 so).
            if negative && mantissa == 0 { return .double(-0.0) }
            if negative {
                if mantissa <= UInt64(Int64.max) { return .int(-Int64(mantissa)) }
                if mantissa == UInt64(Int64.max) + 1 { return .int(Int64.min) }
            } else {
                if mantissa <= UInt64(Int64.max) { return .int(Int64(mantissa)) }
                return .uint(mantissa)
            }
        }
        if isInteger && !negative, let u = UInt64(String(decoding: text, as: UTF8.self)) {
            return .uint(u)
        }
        // Exact fast path (Clinger): a mantissa below 2^53 times an exact power of ten.
        if !overflowed && mantissa < (1 << 53) && (-22...22).contains(exponent) {
            var d = Double(mantissa)
            if exponent < 0 { d /= Self.powersOfTen[-exponent] } else { d *= Self.powersOfTen[exponent] }
            return .double(negative ? -d : d)
        }
        // Otherwise the correctly rounded conversion of the whole text.
        guard let d = Double(String(decoding: text, as: UTF8.self)) else {
            position = start
            throw error("invalid number")
        }
        guard d.isFinite else {
            position = start
            throw error(
                "number \(String(decoding: text.prefix(40), as: UTF8.self))\(text.count > 40 ? "…" : "") is beyond the range of a 64-bit double"
            )
        }
        return .double(d)
    }

    private static let powersOfTen: [Double] = (0...22).map { exponent in
        var d = 1.0
        for _ in 0..<exponent { d *= 10 }
        return d
    }

    // MARK: - Errors

    private func describeByte(_ byte: UInt8? = nil) -> String {
        guard let byte = byte ?? peek() else { return "the end of input" }
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return hexByte(byte)
    }

    private func hexByte(_ byte: UInt8) -> String {
        "byte 0x" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
    }

    /// An error at the current position, with line, column and field path.
    private func error(_ message: String) -> KVDocsError {
        let offset = min(position, bytes.count)
        var line = 1, column = 1
        for i in 0..<offset {
            let byte = bytes[i]
            if byte == 0x0A {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        var text = "invalid JSON at line \(line), column \(column) (byte \(offset)): \(message)"
        let path = fieldPath()
        if !path.isEmpty { text += ", in \(path)" }
        return KVDocsError(.decoding, text)
    }

    /// Where the parser is, as `a.b[3].c`.
    private func fieldPath() -> String {
        var path = ""
        for frame in stack {
            switch frame {
            case .array(let elements):
                path += "[\(elements.count)]"
            case .object(_, let key):
                if !path.isEmpty { path += "." }
                path +=
                    key.contains(where: { $0 == "." || $0 == "[" || $0 == "\"" || $0 == " " }) || key.isEmpty
                    ? "\"\(key)\"" : key
            }
        }
        return path
    }
}
