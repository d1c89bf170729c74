/// A phrase instance: where a phrase matched.
package struct PhraseInstance: Hashable {
    package let column: Int
    let start: Int
    let length: Int
}
