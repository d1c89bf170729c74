import Foundation
import KVDocs

/// An error in a command line: what was expected and where (1-based column).
public struct ShellCommandError: Error, Equatable, CustomStringConvertible {
    public let message: String
    public let column: Int?
    /// `column N: message`, on one line: control characters in quoted input are escaped.
    public var description: String { (column.map { "column \($0): \(message)" } ?? message).escapingControlCharacters }
}

/// Reads the parts of one command line: words, key literals, JSON values, quoted text.
///
/// Key literals: `word` (its UTF-8 bytes), `"quoted text"` (UTF-8, with `\n`, `\t`, `\r`,
/// `\"`, `\\`, `\xHH` escapes), `0x68656c6c6f` (raw bytes), `("dep", "Perth", 1700000000)`
/// (a tuple-encoded key: strings, integers, decimals, `true`, `false`, `null`, `0x..`
/// bytes, nested tuples). Tuples may nest at most `Tuple.maximumNestingDepth` (128) levels
/// inside the outermost one, the most the tuple decoder reads back; deeper nesting is an
/// error naming the column of the first "(" too deep.
public struct LineScanner {
    let bytes: [UInt8]
    public internal(set) var position = 0

    public init(_ line: String) { bytes = Array(line.utf8) }

    /// An error at `at`, or at the next non-blank character.
    func fail(_ message: String, at: Int? = nil) -> ShellCommandError {
        var p = position
        while p < bytes.count, bytes[p] == 0x20 || bytes[p] == 0x09 { p += 1 }
        return ShellCommandError(message: message, column: (at ?? p) + 1)
    }

    public mutating func skipSpaces() {
        while position < bytes.count, bytes[position] == 0x20 || bytes[position] == 0x09 { position += 1 }
    }

    public var atEnd: Bool {
        mutating get {
            skipSpaces()
            return position >= bytes.count
        }
    }

    var current: UInt8? { position < bytes.count ? bytes[position] : nil }

    /// The next whitespace-delimited word, or nil at the end.
    public mutating func word() -> String? {
        skipSpaces()
        guard position < bytes.count else { return nil }
        let start = position
        while position < bytes.count, bytes[position] != 0x20, bytes[position] != 0x09 { position += 1 }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    /// The next word without consuming it.
    public mutating func peekWord() -> String? {
        let save = position
        defer { position = save }
        return word()
    }

    /// Consumes `keyword` (case-insensitive) if it is next.
    public mutating func accept(_ keyword: String) -> Bool {
        let save = position
        if let w = word(), w.lowercased() == keyword.lowercased() { return true }
        position = save
        return false
    }

    /// A required word, with `what` naming it in the error.
    public mutating func expectWord(_ what: String) throws -> String {
        guard let w = word() else { throw fail("expected \(what)") }
        return w
    }

    /// A non-negative integer argument, at most `Int.max`; a larger one is an error naming
    /// the bound rather than a value that wraps or traps later.
    public mutating func expectCount(_ what: String) throws -> Int {
        skipSpaces()
        let start = position
        guard let w = word() else { throw fail("expected \(what) (a non-negative integer)", at: start) }
        if let n = Int(w), n >= 0 { return n }
        let digits = w.hasPrefix("+") ? w.utf8.dropFirst() : w.utf8[...]
        if !digits.isEmpty, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            throw fail(
                "expected \(what) (a non-negative integer), but \(w) is larger than the most allowed, \(Int.max)",
                at: start)
        }
        throw fail("expected \(what) (a non-negative integer)", at: start)
    }

    /// The rest of the line, trimmed.
    public mutating func rest() -> String {
        skipSpaces()
        defer { position = bytes.count }
        return String(decoding: bytes[position...], as: UTF8.self).trimmingCharacters(in: .whitespaces)
    }

    // MARK: Literals

    /// A key (or value) literal, as bytes.
    public mutating func keyLiteral(_ what: String = "a key") throws -> [UInt8] {
        skipSpaces()
        guard let c = current else { throw fail("expected \(what)") }
        if c == UInt8(ascii: "\"") { return try quoted() }
        if c == UInt8(ascii: "(") { return try tuple().encoded }
        if c == UInt8(ascii: "0"), position + 1 < bytes.count, bytes[position + 1] | 0x20 == UInt8(ascii: "x") {
            let start = position
            let w = word() ?? ""
            guard let decoded = Self.hex(w.dropFirst(2)) else {
                throw fail("invalid hex bytes \"\(w)\": expected 0x followed by pairs of hex digits", at: start)
            }
            return decoded
        }
        return Array((word() ?? "").utf8)
    }

    static func hex<S: StringProtocol>(_ digits: S) -> [UInt8]? {
        let chars = Array(digits.utf8)
        guard chars.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        for i in stride(from: 0, to: chars.count, by: 2) {
            guard let b = UInt8(String(decoding: chars[i...i + 1], as: UTF8.self), radix: 16) else { return nil }
            out.append(b)
        }
        return out
    }

    /// A double-quoted string with escapes, as bytes (`\xHH` may make them non-UTF-8).
    public mutating func quoted() throws -> [UInt8] {
        let start = position
        guard current == UInt8(ascii: "\"") else { throw fail("expected a quoted string") }
        position += 1
        var out: [UInt8] = []
        while let c = current {
            position += 1
            switch c {
            case UInt8(ascii: "\""):
                return out
            case UInt8(ascii: "\\"):
                guard let e = current else { throw fail("unfinished escape at the end of the line") }
                position += 1
                switch e {
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "0"): out.append(0x00)
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "'"): out.append(e)
                case UInt8(ascii: "x"):
                    guard position + 2 <= bytes.count,
                        let b = Self.hex(String(decoding: bytes[position..<position + 2], as: UTF8.self))?.first
                    else {
                        throw fail("\\x needs two hex digits", at: position - 2)
                    }
                    out.append(b)
                    position += 2
                default:
                    throw fail(
                        "unknown escape \\\(Character(Unicode.Scalar(e))) (use \\n, \\t, \\r, \\0, \\\", \\\\ or \\xHH)",
                        at: position - 2)
                }
            default:
                out.append(c)
            }
        }
        throw fail("unterminated string (missing closing \")", at: start)
    }

    /// A single-quoted string: no escapes but `''` for a quote (for FTS5 queries).
    public mutating func singleQuoted() throws -> String {
        let start = position
        position += 1
        var out: [UInt8] = []
        while let c = current {
            position += 1
            if c == UInt8(ascii: "'") {
                if current == UInt8(ascii: "'") {
                    out.append(c)
                    position += 1
                    continue
                }
                return String(decoding: out, as: UTF8.self)
            }
            out.append(c)
        }
        throw fail("unterminated string (missing closing ')", at: start)
    }

    /// A tuple literal: `(elem, elem, …)`.
    public mutating func tuple() throws -> Tuple { try tuple(nesting: 0) }

    /// A tuple literal inside `nesting` others (recursing once per level, so bounded by
    /// `Tuple.maximumNestingDepth`).
    mutating func tuple(nesting: Int) throws -> Tuple {
        skipSpaces()
        let start = position
        guard current == UInt8(ascii: "(") else { throw fail("expected \"(\" to start a tuple") }
        position += 1
        var elements: [TupleElement] = []
        while true {
            skipSpaces()
            guard let c = current else { throw fail("unterminated tuple (missing \")\")", at: start) }
            if c == UInt8(ascii: ")") {
                position += 1
                return Tuple(elements)
            }
            elements.append(try tupleElement(nesting: nesting))
            skipSpaces()
            if current == UInt8(ascii: ",") {
                position += 1
                continue
            }
            if current == nil { throw fail("unterminated tuple (missing \")\")", at: start) }
            guard current == UInt8(ascii: ")") else { throw fail("expected \",\" or \")\" in a tuple") }
        }
    }

    /// An element of a tuple that is inside `nesting` others.
    mutating func tupleElement(nesting: Int) throws -> TupleElement {
        skipSpaces()
        let start = position
        guard let c = current else { throw fail("expected a tuple element") }
        if c == UInt8(ascii: "\"") {
            let raw = try quoted()
            guard let s = String(validating: raw, as: UTF8.self) else {
                throw fail("a tuple string must be UTF-8; use 0x… for bytes", at: start)
            }
            return .string(s)
        }
        if c == UInt8(ascii: "(") {
            // Numbered as the decoder numbers them: the elements of the outermost tuple are
            // at depth 0, and a nested tuple is allowed at depths 0 to maximumNestingDepth - 1.
            guard nesting < Tuple.maximumNestingDepth else {
                throw fail(
                    "tuples nested more than \(Tuple.maximumNestingDepth) levels deep inside a key (the most the tuple decoder reads back)",
                    at: start)
            }
            return .tuple(try tuple(nesting: nesting + 1))
        }
        while let d = current, d != UInt8(ascii: ","), d != UInt8(ascii: ")"), d != 0x20, d != 0x09 { position += 1 }
        let token = String(decoding: bytes[start..<position], as: UTF8.self)
        switch token {
        case "true": return .bool(true)
        case "false": return .bool(false)
        case "null", "nil": return .null
        default: break
        }
        if token.lowercased().hasPrefix("0x") {
            guard let b = Self.hex(token.dropFirst(2)) else { throw fail("invalid hex bytes \"\(token)\"", at: start) }
            return .bytes(b)
        }
        if let i = Int64(token) { return .int(i) }
        if let u = UInt64(token) { return .uint(u) }
        if token.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }), let d = Double(token), d.isFinite {
            return .double(d)
        }
        throw fail(
            "unexpected \"\(token)\" in a tuple: expected a string, an integer, a decimal, true, false, null, 0x… bytes or a nested tuple",
            at: start)
    }

    /// A JSON value: a string, number, true/false/null, array or object.
    public mutating func jsonValue(_ what: String = "a JSON value") throws -> JSONValue {
        skipSpaces()
        let start = position
        guard let c = current else { throw fail("expected \(what)") }
        var end = position
        if c == UInt8(ascii: "\"") || c == UInt8(ascii: "[") || c == UInt8(ascii: "{") {
            var depth = 0
            var inString = false
            var i = position
            scan: while i < bytes.count {
                let b = bytes[i]
                if inString {
                    if b == UInt8(ascii: "\\") {
                        i += 2
                        continue
                    }
                    if b == UInt8(ascii: "\"") {
                        inString = false
                        if depth == 0 {
                            i += 1
                            break scan
                        }
                    }
                } else {
                    switch b {
                    case UInt8(ascii: "\""): inString = true
                    case UInt8(ascii: "["), UInt8(ascii: "{"): depth += 1
                    case UInt8(ascii: "]"), UInt8(ascii: "}"):
                        depth -= 1
                        if depth == 0 {
                            i += 1
                            break scan
                        }
                    default: break
                    }
                }
                i += 1
            }
            end = min(i, bytes.count)
        } else {
            while end < bytes.count, ![0x20, 0x09, UInt8(ascii: ","), UInt8(ascii: ")")].contains(bytes[end]) {
                end += 1
            }
        }
        let text = String(decoding: bytes[start..<end], as: UTF8.self)
        do {
            let value = try JSONValue(parsing: text)
            position = end
            return value
        } catch let e as KVDocsError where !text.isEmpty {
            throw fail("expected \(what), found \(text) (\(e.message))", at: start)
        } catch {
            throw fail("expected \(what), found \(text.isEmpty ? "nothing" : text)", at: start)
        }
    }
}
