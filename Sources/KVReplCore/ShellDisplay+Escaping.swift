import KVDocs

/// Stored data never drives the terminal (or the spreadsheet) that shows it.
///
/// A stored string such as `"\u{1B}]0;PWNED\u{7}\u{1B}[2J\r"` would retitle the window,
/// clear the screen and hide what came before it if it were printed as it is. Every output
/// of kvrepl that shows stored data goes through one of these functions:
/// - ``escaped(_:keeping:)`` for text (the cells of `table`, `line` and `csv`, terms,
///   highlights, the lines of the default output);
/// - ``jsonSafe(_:)`` for JSON text (`json`, `jsonl`, `--json`, documents in the default
///   output), whose writer already escapes C0 controls as JSON requires.
extension ShellDisplay {
    /// Whether `scalar` is a control character a terminal may act on: C0 (below U+0020),
    /// DEL, C1 (U+0080–U+009F, some terminals take U+009B as CSI), and the Unicode line and
    /// paragraph separators.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "\u{2028}" || scalar == "\u{2029}"
    }

    /// `text` with every control character but those in `kept` written as an escape: `\n`,
    /// `\r`, `\t`, else `\u{1b}` (Swift's spelling, in lower-case hex).
    ///
    /// ```swift
    /// ShellDisplay.escaped("a\u{1B}[2J\r")          // a\u{1b}[2J\r
    /// ShellDisplay.escaped("a\nb", keeping: ["\n"])  // unchanged
    /// ```
    static func escaped(_ text: String, keeping kept: Set<Unicode.Scalar> = []) -> String {
        guard text.unicodeScalars.contains(where: { isControl($0) && !kept.contains($0) }) else { return text }
        var shown = ""
        for scalar in text.unicodeScalars {
            guard isControl(scalar), !kept.contains(scalar) else {
                shown.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": shown += "\\n"
            case "\r": shown += "\\r"
            case "\t": shown += "\\t"
            default: shown += "\\u{\(String(scalar.value, radix: 16))}"
            }
        }
        return shown
    }

    /// Text for the terminal: every control character escaped but line feeds and tabs (the
    /// default output's multi-line results and aligned columns).
    public static func terminalSafe(_ text: String) -> String {
        escaped(text, keeping: ["\n", "\t"])
    }

    /// JSON text with the controls JSON leaves as they are (DEL, C1, U+2028, U+2029)
    /// written as `\u` escapes: the same JSON value, nothing a terminal acts on. Those
    /// characters can only be inside strings, where a `\u` escape means the same; the C0
    /// controls of JSON text are its whitespace (the writer escapes those in strings).
    public static func jsonSafe(_ json: String) -> String {
        func unescaped(_ scalar: Unicode.Scalar) -> Bool { scalar.value >= 0x20 && isControl(scalar) }
        guard json.unicodeScalars.contains(where: unescaped) else { return json }
        var shown = ""
        for scalar in json.unicodeScalars {
            if unescaped(scalar) {
                let hex = String(scalar.value, radix: 16)
                shown += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            } else {
                shown.unicodeScalars.append(scalar)
            }
        }
        return shown
    }

    /// A value as compact JSON, safe for a terminal.
    static func compactJSON(_ value: JSONValue) -> String {
        jsonSafe(value.compactDescription)
    }
}
