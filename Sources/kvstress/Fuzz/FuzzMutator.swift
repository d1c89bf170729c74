/// Byte-level mutations: flips, inserts, deletes, truncation, splices of the corpus,
/// dictionary and shared tokens, limit numbers, Unicode and invalid UTF-8, repeated chunks
/// (nesting).
struct FuzzMutator {
    var corpus: [[UInt8]]
    var dictionary: [[UInt8]]

    static let interestingBytes: [UInt8] = [
        0x00, 0x01, 0x05, 0x09, 0x0A, 0x0D, 0x14, 0x1D, 0x20, 0x21, 0x22, 0x27, 0x28, 0x29, 0x2A,
        0x2B, 0x2C, 0x2D, 0x2E, 0x30, 0x39, 0x3A, 0x5B, 0x5C, 0x5D, 0x5E, 0x7B, 0x7D, 0x7F, 0x80,
        0xBF, 0xC0, 0xC2, 0xE0, 0xED, 0xF0, 0xF4, 0xFE, 0xFF
    ]

    /// Numbers at and past the 64-bit limits, and malformed ones.
    static let numbers = [
        "0", "-0", "1", "-1", "00", "007", "1.0", "-0.0", "0.5", ".5", "5.", "1e", "1e+", "+1", "0x1F",
        "127", "128", "255", "256", "-129", "65535", "4294967295", "4294967296",
        "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
        "18446744073709551615", "18446744073709551616", "-18446744073709551616",
        "1e308", "1e309", "-1e309", "1e-400", "4.9e-324", "2.2250738585072014e-308", "1.7976931348623157e308",
        "1.7976931348623159e308", "0.30000000000000004", "1E400", "1e-2147483649", "1e9999999999999999999",
        "123456789012345678901234567890", String(repeating: "9", count: 400),
        "0." + String(repeating: "0", count: 400) + "1",
        "NaN", "Infinity", "-Infinity", "inf", "nan"
    ]

    static let scalars: [Unicode.Scalar] = [
        "é", "\u{301}", "ß", "İ", "ı", "\u{FB01}", "ς", "Σ", "Ω", "中", "文", "😀", "\u{1F469}", "\u{200D}", "\u{FE0F}",
        "\u{2028}", "\u{2029}", "\u{85}", "\u{0B}", "\u{0C}", "\u{1B}", "\u{7F}",
        "\u{FEFF}", "\u{FFFD}", "\u{FFFF}", "\u{10FFFF}", "\u{202E}", "\u{E000}", "\u{0}", "\u{A0}", "\u{3000}", "ﾟ",
        "Ａ", "①", "½", "Ⅷ"
    ]

    /// Malformed UTF-8: overlong forms, surrogates, past U+10FFFF, truncated sequences, stray bytes.
    static let badUTF8: [[UInt8]] = [
        [0xC0, 0x80], [0xC1, 0xBF], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF],
        [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80], [0xFF], [0xFE],
        [0x80], [0xBF], [0xC3], [0xE2, 0x82], [0xF0, 0x9F, 0x98], [0xEF, 0xBB, 0xBF]
    ]

    /// Syntax, escapes and blanks most targets' grammars share, and brackets open 300 deep.
    static let tokens: [[UInt8]] = [
        "\"", "\\", "(", ")", "[", "]", "{", "}", ",", ":", "*", "^", "-", "+", "0.1", "\u{0}", "\u{FFFD}", "é",
        "\u{10FFFF}", "\u{D7FF}", "\\uD800", "\\uDC00", "\\u0000", " ", "\t", "\n", "\r\n",
        String(repeating: "(", count: 300), String(repeating: "[", count: 300), String(repeating: "{\"a\":", count: 300)
    ].map { Array($0.utf8) }

    /// Repetition counts around the nesting limits (128 tuples, 256 JSON and FTS5 levels).
    static let repeats = [2, 3, 8, 100, 126, 127, 128, 129, 130, 254, 255, 256, 257, 258, 1000, 5000]

    func mutate(_ input: [UInt8], _ r: inout FuzzRandom) -> [UInt8] {
        var b = input
        // One step half the time (most inputs stay close to valid), up to ten now and then.
        let steps = r.chance(50) ? 1 : 1 + r.below(r.chance(20) ? 10 : 3)
        for _ in 0..<steps { step(&b, &r) }
        if b.count > 300_000 { b.removeSubrange(300_000...) }
        return b
    }

    func step(_ b: inout [UInt8], _ r: inout FuzzRandom) {
        let at = r.below(b.count + 1)
        let i = r.below(b.count)
        switch r.below(18) {
        case 0 where !b.isEmpty: b[i] ^= UInt8(1) << UInt8(r.below(8))
        case 1 where !b.isEmpty: b[i] = r.byte()
        case 2 where !b.isEmpty: b[i] = r.pick(Self.interestingBytes)
        case 3: b.insert(contentsOf: r.bytes(1 + r.below(4)), at: at)
        case 4 where !b.isEmpty: b.remove(at: i)
        case 5 where !b.isEmpty: b.removeSubrange(i..<min(b.count, i + 1 + r.below(16)))
        case 6 where !b.isEmpty:
            let chunk = Array(b[i..<min(b.count, i + 1 + r.below(32))])
            b.insert(contentsOf: chunk, at: r.below(b.count + 1))
        case 7: b.removeSubrange(at...)
        case 8...9 where !dictionary.isEmpty: b.insert(contentsOf: r.pick(dictionary), at: at)
        case 10 where !b.isEmpty && !dictionary.isEmpty:
            b.replaceSubrange(i..<min(b.count, i + 1 + r.below(8)), with: r.pick(dictionary))
        case 11 where !corpus.isEmpty:
            let other = r.pick(corpus)
            let from = r.below(other.count)
            b.insert(contentsOf: other[from..<min(other.count, from + 1 + r.below(64))], at: at)
        case 12:
            if r.chance(40) {
                b.insert(contentsOf: r.pick(Self.badUTF8), at: at)
            } else {
                b.insert(contentsOf: Array(String(Character(r.pick(Self.scalars))).utf8), at: at)
            }
        case 13:
            // A chunk repeated: nesting near the limits, long runs.
            let unit: [UInt8]
            if !dictionary.isEmpty && r.bool() {
                unit = r.pick(dictionary)
            } else if b.isEmpty {
                unit = [r.pick(Self.interestingBytes)]
            } else {
                unit = Array(b[i..<min(b.count, i + 1 + r.below(4))])
            }
            let n = r.pick(Self.repeats)
            b.insert(contentsOf: (0..<n).flatMap { _ in unit }, at: at)
        case 14:
            // A number at or past a limit, in place of the digits at `i` (or inserted).
            let number = Array(r.pick(Self.numbers).utf8)
            var start = i, end = i
            while start > 0, Self.isNumberByte(b[start - 1]) { start -= 1 }
            while end < b.count, Self.isNumberByte(b[end]) { end += 1 }
            if end > start {
                b.replaceSubrange(start..<end, with: number)
            } else {
                b.insert(contentsOf: number, at: at)
            }
        case 15 where b.count > 1:
            b.swapAt(i, r.below(b.count))
        case 16: b.insert(contentsOf: r.pick(Self.tokens), at: at)
        default:
            b.insert(r.pick(Self.interestingBytes), at: at)
        }
    }

    static func isNumberByte(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || c == UInt8(ascii: "-") || c == UInt8(ascii: ".") || c == UInt8(ascii: "e")
            || c == UInt8(ascii: "+")
    }
}
