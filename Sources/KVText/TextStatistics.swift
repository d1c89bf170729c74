/// A text index's corpus statistics and counters (`("s",)`).
package struct TextStatistics: Equatable {
    package var documents = 0
    package var tokens = 0
    var nextDoc = 0
    var nextSegment = 0

    package init(documents: Int = 0, tokens: Int = 0, nextDoc: Int = 0, nextSegment: Int = 0) {
        self.documents = documents
        self.tokens = tokens
        self.nextDoc = nextDoc
        self.nextSegment = nextSegment
    }
}
