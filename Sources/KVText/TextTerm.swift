import KVSupport

/// A term as a dictionary key, compared by code points: two terms that Swift's `String`
/// would call equal (canonically equivalent spellings the tokenizer does not fold, such as
/// precomposed and conjoining Hangul) are two terms, as they are two posting keys.
package struct TextTerm: Hashable, Sendable {
    package let text: String
    init(_ text: String) { self.text = text }
    package static func == (a: TextTerm, b: TextTerm) -> Bool { a.text.hasSameCodePoints(as: b.text) }
    package func hash(into hasher: inout Hasher) { JSONValue.hashCodePoints(text, into: &hasher) }
}
