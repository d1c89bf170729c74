/// The Porter stemmer as SQLite FTS5's `porter` tokenizer applies it: on the bytes of a
/// folded token of 3 to 64 bytes (other tokens pass through), with the rule lists of
/// Porter's algorithm (steps 1a–5b, including the `logi` and `bli` rules of FTS5's version).
/// In each step the rule is chosen by the longest listed suffix that matches; if its
/// condition fails, the step does nothing.
enum PorterStemmer {
    static func stem(_ token: [UInt8]) -> [UInt8] {
        guard token.count >= 3 && token.count <= 64 else { return token }
        var w = token
        step1a(&w)
        if step1b(&w) {
            if !step1b2(&w) {
                let c = w[w.count - 1]
                if !isVowel(c, previousIsConsonant: false) && c != UInt8(ascii: "l") && c != UInt8(ascii: "s")
                    && c != UInt8(ascii: "z") && w.count >= 2 && c == w[w.count - 2]
                {
                    w.removeLast()
                } else if measureIs1(w[...]) && endsCVC(w[...]) {
                    w.append(UInt8(ascii: "e"))
                }
            }
        }
        // Step 1c: y -> i when the stem has a vowel.
        if w.last == UInt8(ascii: "y"), hasVowel(w.dropLast()) { w[w.count - 1] = UInt8(ascii: "i") }
        apply(&w, step2)
        apply(&w, step3)
        apply(&w, step4)
        // Step 5a.
        if w.last == UInt8(ascii: "e") {
            let stem = w.dropLast()
            if measureAbove1(stem) || (measureIs1(stem) && !endsCVC(stem)) { w.removeLast() }
        }
        // Step 5b.
        if w.count > 1, w[w.count - 1] == UInt8(ascii: "l"), w[w.count - 2] == UInt8(ascii: "l"),
            measureAbove1(w.dropLast())
        {
            w.removeLast()
        }
        return w
    }

    // MARK: Conditions

    enum Condition { case none, m0, m1, vowel, m1ST }

    static func isVowel(_ c: UInt8, previousIsConsonant: Bool) -> Bool {
        switch c {
        case UInt8(ascii: "a"), UInt8(ascii: "e"), UInt8(ascii: "i"), UInt8(ascii: "o"), UInt8(ascii: "u"): return true
        case UInt8(ascii: "y"): return previousIsConsonant
        default: return false
        }
    }

    /// Skips a vowel run then a consonant: the end of one VC sequence, or nil.
    static func vcEnd(_ s: ArraySlice<UInt8>, previousIsConsonant: Bool) -> Int? {
        var consonant = previousIsConsonant
        var i = s.startIndex
        while i < s.endIndex {
            consonant = !isVowel(s[i], previousIsConsonant: consonant)
            i += 1
            if !consonant { break }
        }
        guard !consonant || i < s.endIndex else { return nil }
        if consonant { return nil }
        while i < s.endIndex {
            consonant = !isVowel(s[i], previousIsConsonant: consonant)
            i += 1
            if consonant { return i }
        }
        return nil
    }

    static func measureAbove0(_ s: ArraySlice<UInt8>) -> Bool { vcEnd(s, previousIsConsonant: false) != nil }

    static func measureAbove1(_ s: ArraySlice<UInt8>) -> Bool {
        guard let n = vcEnd(s, previousIsConsonant: false) else { return false }
        return vcEnd(s[n...], previousIsConsonant: true) != nil
    }

    static func measureIs1(_ s: ArraySlice<UInt8>) -> Bool {
        guard let n = vcEnd(s, previousIsConsonant: false) else { return false }
        return vcEnd(s[n...], previousIsConsonant: true) == nil
    }

    static func hasVowel(_ s: ArraySlice<UInt8>) -> Bool {
        for (k, i) in s.indices.enumerated() where isVowel(s[i], previousIsConsonant: k > 0) { return true }
        return false
    }

    /// *o: the stem ends consonant-vowel-consonant, the last not w, x or y.
    static func endsCVC(_ s: ArraySlice<UInt8>) -> Bool {
        guard let last = s.last, last != UInt8(ascii: "w"), last != UInt8(ascii: "x"), last != UInt8(ascii: "y") else {
            return false
        }
        var mask = 0
        var consonant = false
        for c in s {
            consonant = !isVowel(c, previousIsConsonant: consonant)
            mask = (mask << 1) | (consonant ? 1 : 0)
        }
        return mask & 0b111 == 0b101
    }

    static func holds(_ condition: Condition, _ stem: ArraySlice<UInt8>) -> Bool {
        switch condition {
        case .none: return true
        case .m0: return measureAbove0(stem)
        case .m1: return measureAbove1(stem)
        case .vowel: return hasVowel(stem)
        case .m1ST:
            guard let last = stem.last, last == UInt8(ascii: "s") || last == UInt8(ascii: "t") else { return false }
            return measureAbove1(stem)
        }
    }

    // MARK: Steps

    static func step1a(_ w: inout [UInt8]) {
        guard w.last == UInt8(ascii: "s"), w.count >= 2 else { return }
        if w[w.count - 2] == UInt8(ascii: "e") {
            if (w.count > 4 && w[w.count - 4] == UInt8(ascii: "s") && w[w.count - 3] == UInt8(ascii: "s"))
                || (w.count > 3 && w[w.count - 3] == UInt8(ascii: "i"))
            {
                w.removeLast(2)  // sses -> ss, ies -> i
            } else {
                w.removeLast()  // es -> e
            }
        } else if w[w.count - 2] != UInt8(ascii: "s") {
            w.removeLast()  // s -> (nothing); ss stays
        }
    }

    /// eed -> ee (m>0); ed, ing -> (nothing) when the stem has a vowel. Returns whether
    /// ed or ing was removed.
    static func step1b(_ w: inout [UInt8]) -> Bool {
        if ends(w, "eed") {
            if measureAbove0(w.dropLast(3)) { w.removeLast() }
            return false
        }
        for suffix in ["ed", "ing"] where ends(w, suffix) {
            if hasVowel(w.dropLast(suffix.utf8.count)) {
                w.removeLast(suffix.utf8.count)
                return true
            }
            return false
        }
        return false
    }

    static func step1b2(_ w: inout [UInt8]) -> Bool {
        for (suffix, replacement) in [("at", "ate"), ("bl", "ble"), ("iz", "ize")] where ends(w, suffix) {
            w.removeLast(suffix.utf8.count)
            w.append(contentsOf: replacement.utf8)
            return true
        }
        return false
    }

    typealias Rule = (suffix: String, condition: Condition, replacement: String)

    static let step2: [Rule] = [
        ("ational", .m0, "ate"), ("tional", .m0, "tion"), ("enci", .m0, "ence"), ("anci", .m0, "ance"),
        ("izer", .m0, "ize"), ("logi", .m0, "log"), ("bli", .m0, "ble"), ("alli", .m0, "al"),
        ("entli", .m0, "ent"), ("eli", .m0, "e"), ("ousli", .m0, "ous"), ("ization", .m0, "ize"),
        ("ation", .m0, "ate"), ("ator", .m0, "ate"), ("alism", .m0, "al"), ("iveness", .m0, "ive"),
        ("fulness", .m0, "ful"), ("ousness", .m0, "ous"), ("aliti", .m0, "al"), ("iviti", .m0, "ive"),
        ("biliti", .m0, "ble")
    ]
    static let step3: [Rule] = [
        ("icate", .m0, "ic"), ("ative", .m0, ""), ("alize", .m0, "al"), ("iciti", .m0, "ic"),
        ("ical", .m0, "ic"), ("ful", .m0, ""), ("ness", .m0, "")
    ]
    static let step4: [Rule] = [
        ("al", .m1, ""), ("ance", .m1, ""), ("ence", .m1, ""), ("er", .m1, ""), ("ic", .m1, ""),
        ("able", .m1, ""), ("ible", .m1, ""), ("ant", .m1, ""), ("ement", .m1, ""), ("ment", .m1, ""),
        ("ent", .m1, ""), ("ion", .m1ST, ""), ("ou", .m1, ""), ("ism", .m1, ""), ("ate", .m1, ""),
        ("iti", .m1, ""), ("ous", .m1, ""), ("ive", .m1, ""), ("ize", .m1, "")
    ]

    /// Applies the first rule (in FTS5's order for the word's second-to-last letter) whose
    /// suffix matches with a non-empty stem; if its condition fails, nothing changes.
    static func apply(_ w: inout [UInt8], _ rules: [Rule]) {
        guard w.count >= 2 else { return }
        let key = w[w.count - 2]
        for rule in rules {
            let suffix = Array(rule.suffix.utf8)
            guard suffix[suffix.count - 2] == key, w.count > suffix.count, w.suffix(suffix.count).elementsEqual(suffix)
            else { continue }
            let stem = w.dropLast(suffix.count)
            if holds(rule.condition, stem) {
                w.removeLast(suffix.count)
                w.append(contentsOf: rule.replacement.utf8)
            }
            return
        }
    }

    static func ends(_ w: [UInt8], _ suffix: String) -> Bool {
        let s = Array(suffix.utf8)
        return w.count > s.count && w.suffix(s.count).elementsEqual(s)
    }
}
