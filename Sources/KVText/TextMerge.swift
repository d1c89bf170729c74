import KVSupport

/// The merge in progress (`("m",)`): a run of input segments being merged, term by term in
/// term order, into one output segment. Each step moves whole terms (reads their blocks
/// in every input, deletes them, writes the merged blocks under the output) and records
/// how far each input's term list has been read, all in one write batch, so a crash
/// leaves either the step done or not begun. The output's record is written, and the
/// inputs' records and term lists deleted, by the step that finishes.
struct TextMerge: Equatable {
    var output: Int
    var level: Int
    var order: Int
    /// Whether the run holds the oldest segment: then a tombstone whose posting is not in
    /// the run has no posting anywhere, and is dropped.
    var bottom: Bool
    var postings = 0
    var tombstones = 0
    var chunks = 0
    var inputs: [Input]

    struct Input: Equatable {
        var segment: Int
        var chunks: Int
        /// The next term to read: chunk and place in it.
        var chunk = 0
        var offset = 0
    }

    func encoded() -> [UInt8] {
        var out: [UInt8] = []
        for v in [output, level, order, bottom ? 1 : 0, postings, tombstones, chunks, inputs.count] {
            Varint.append(v, to: &out)
        }
        for i in inputs { for v in [i.segment, i.chunks, i.chunk, i.offset] { Varint.append(v, to: &out) } }
        return out
    }

    /// - Throws: `.corruption` for bytes that are not a merge state.
    init(_ bytes: [UInt8]) throws {
        let values = try bytes.withUnsafeBytes { raw -> [Int] in
            var i = 0
            var values: [Int] = []
            while i < raw.count { values.append(try Varint.read(raw, &i)) }
            return values
        }
        guard values.count >= 8, values.allSatisfy({ $0 >= 0 && $0 < TextSegment.maximumID }), values[7] >= 1,
            values.count == 8 + 4 * values[7]
        else {
            throw KVDocsError(.corruption, "the merge state of a text index is damaged")
        }
        output = values[0]
        level = values[1]
        order = values[2]
        bottom = values[3] == 1
        postings = values[4]
        tombstones = values[5]
        chunks = values[6]
        inputs = stride(from: 8, to: values.count, by: 4).map {
            Input(segment: values[$0], chunks: values[$0 + 1], chunk: values[$0 + 2], offset: values[$0 + 3])
        }
        guard inputs.allSatisfy({ $0.chunk <= $0.chunks }) else {
            throw KVDocsError(.corruption, "the merge state of a text index is damaged")
        }
    }

    init(output: Int, level: Int, order: Int, bottom: Bool, inputs: [Input]) {
        self.output = output
        self.level = level
        self.order = order
        self.bottom = bottom
        self.inputs = inputs
    }
}
