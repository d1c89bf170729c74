/// Escaped and hex renderings of inputs, for failure reports.
enum FuzzShow {
    /// `"…"` with printable ASCII as is and every other byte escaped (`\n`, `\xHH`), as
    /// bash's `$'…'` reads it.
    static func escaped(_ bytes: [UInt8], limit: Int = 200) -> String {
        var s = "\""
        for b in bytes.prefix(limit) {
            switch b {
            case 0x5C: s += "\\\\"
            case 0x22: s += "\\\""
            case 0x27: s += "\\'"
            case 0x0A: s += "\\n"
            case 0x0D: s += "\\r"
            case 0x09: s += "\\t"
            case 0x20..<0x7F: s.unicodeScalars.append(Unicode.Scalar(b))
            default: s += "\\x" + hexByte(b)
            }
        }
        s += "\""
        if bytes.count > limit { s += "… (\(bytes.count) bytes)" }
        return s
    }

    static func hex(_ bytes: [UInt8], limit: Int = 64) -> String {
        bytes.prefix(limit).map(hexByte).joined() + (bytes.count > limit ? "…" : "")
    }

    static func hexByte(_ b: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(b >> 4)], digits[Int(b & 15)]])
    }

    /// A string with its line breaks and other control characters escaped.
    static func escaped(_ text: String, limit: Int = 300) -> String { escaped(Array(text.utf8), limit: limit) }
}
