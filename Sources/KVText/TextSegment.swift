import KVSupport

/// A segment of a text index: the postings one batch (or one merge) wrote, under keys no
/// earlier write used. Stored under `("g", id)` as varints `order, level, postings,
/// tombstones, chunks`.
///
/// `order` places segments by age: a batch's segment takes its own id, a merge's output
/// the order of its oldest input. Segments sorted by order hold ascending, disjoint ranges
/// of document numbers, and their levels never increase from the oldest to the newest
/// (merges take a run of segments of one level, adjacent in age, as FTS5's levels do).
package struct TextSegment: Equatable {
    var id: Int
    var order: Int
    var level: Int
    /// Postings (term, row) it holds.
    var postings: Int
    /// Tombstones it holds.
    package var tombstones: Int
    /// Chunks of its term list.
    var chunks: Int

    /// Segment ids and orders stay below this (2^40).
    static let maximumID = 1 << 40

    func encoded() -> [UInt8] {
        var out: [UInt8] = []
        for v in [order, level, postings, tombstones, chunks] { Varint.append(v, to: &out) }
        return out
    }

    /// - Throws: `.corruption` for bytes that are not a segment record.
    init(id: Int, _ bytes: [UInt8]) throws {
        let values = try bytes.withUnsafeBytes { raw -> [Int] in
            var i = 0
            var values: [Int] = []
            while i < raw.count { values.append(try Varint.read(raw, &i)) }
            return values
        }
        guard values.count == 5, values.allSatisfy({ $0 >= 0 && $0 < Self.maximumID }), values[1] < 64 else {
            throw KVDocsError(.corruption, "the record of text segment \(id) is damaged")
        }
        self.init(
            id: id, order: values[0], level: values[1], postings: values[2], tombstones: values[3], chunks: values[4])
    }

    init(id: Int, order: Int, level: Int, postings: Int, tombstones: Int, chunks: Int) {
        self.id = id
        self.order = order
        self.level = level
        self.postings = postings
        self.tombstones = tombstones
        self.chunks = chunks
    }
}
