/// `word` after its indefinite article, for error messages: "an int", "a string".
package func article(_ word: String) -> String {
    (["a", "e", "i", "o", "u"].contains(word.prefix(1)) ? "an " : "a ") + word
}
