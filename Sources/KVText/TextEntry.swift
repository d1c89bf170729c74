/// One posting being written: a row, its frequency, norm and stored occurrences.
package struct TextEntry {
    package var doc: Int
    package var frequency: Int
    package var norm: Int
    /// The length the block's impacts use for it (its exact length, or the smallest its
    /// norm allows: never more than the exact one).
    package var length: Int
    package var occurrences: ArraySlice<UInt8>

    package init(doc: Int, frequency: Int, norm: Int, length: Int, occurrences: ArraySlice<UInt8>) {
        self.doc = doc
        self.frequency = frequency
        self.norm = norm
        self.length = length
        self.occurrences = occurrences
    }
}
