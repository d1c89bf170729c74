import Foundation
import KVDocs

/// How keys and values are shown.
///
/// A key that decodes in a declared keyspace is shown with its names; else as a tuple if
/// it decodes as one; else as a quoted string if it is printable UTF-8; else as hex.
/// A value is shown as JSON (pretty-printed interactively) if it is a JSON object or
/// array, as text if printable, else as hex.
public enum ShellDisplay {
    public static func hex(_ bytes: [UInt8]) -> String {
        "0x" + bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// A distance: metres to the decimetre below 10 km, kilometres above.
    static func metres(_ m: Double) -> String {
        m < 10_000 ? String(format: "%.1f m", m) : String(format: "%.3f km", m / 1000)
    }

    /// Printable UTF-8 text (no control characters but tab and newline, see
    /// ``isControl(_:)``), or nil.
    static func printable(_ bytes: [UInt8]) -> String? {
        guard let s = String(validating: bytes, as: UTF8.self) else { return nil }
        let ok = s.unicodeScalars.allSatisfy { !isControl($0) || $0 == "\t" || $0 == "\n" }
        return ok ? s : nil
    }

    /// A key for display.
    public static func key(_ bytes: [UInt8], keyspaces: KeySchema?) -> String {
        if let decoded = keyspaces?.decode(bytes) { return decoded.description }
        if !bytes.isEmpty, let tuple = try? Tuple(decoding: bytes) { return tuple.description }
        if let s = printable(bytes) { return "\"" + s + "\"" }
        return hex(bytes)
    }

    /// A key for JSON output: the same, but a printable string without quotes.
    public static func keyJSON(_ bytes: [UInt8], keyspaces: KeySchema?) -> JSONValue {
        if let decoded = keyspaces?.decode(bytes) { return .string(decoded.description) }
        if !bytes.isEmpty, let tuple = try? Tuple(decoding: bytes) { return .string(tuple.description) }
        if let s = printable(bytes) { return .string(s) }
        return .string(hex(bytes))
    }

    /// A value for display.
    public static func value(_ bytes: [UInt8], pretty: Bool) -> String {
        if let json = jsonDocument(bytes) { return pretty ? prettyJSON(json) : compactJSON(json) }
        if let s = printable(bytes) { return s }
        return hex(bytes)
    }

    /// A value for JSON output: embedded JSON for objects and arrays, a string for text, hex otherwise.
    public static func valueJSON(_ bytes: [UInt8]) -> JSONValue {
        if let json = jsonDocument(bytes) { return json }
        if let s = printable(bytes) { return .string(s) }
        return .string(hex(bytes))
    }

    /// A stored document (in the binary form or as JSON text) or another JSON object or array.
    static func jsonDocument(_ bytes: [UInt8]) -> JSONValue? {
        if bytes.first == 0xF5, let value = try? JSONValue(storedDocument: bytes) {
            switch value {
            case .object, .array: return value
            default: return nil
            }
        }
        guard let first = bytes.first(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x09 && $0 != 0x0D }),
            first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
        else { return nil }
        return try? JSONValue(parsing: Data(bytes))
    }

    /// A value as pretty-printed JSON, safe for a terminal (``jsonSafe(_:)``).
    public static func prettyJSON(_ value: JSONValue) -> String {
        jsonSafe((try? value.prettyText()) ?? value.compactDescription)
    }

    /// A raw entry in `--json` mode.
    public static func entryJSON(key: [UInt8], value: [UInt8]?, keyspaces: KeySchema?) -> JSONValue {
        var o: JSONObject = [
            "key": keyJSON(key, keyspaces: keyspaces), "key_hex": .string(String(hex(key).dropFirst(2)))
        ]
        if let value {
            o["value"] = valueJSON(value)
            o["value_hex"] = .string(String(hex(value).dropFirst(2)))
        }
        return .object(o)
    }
}
