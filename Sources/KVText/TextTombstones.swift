import KVSupport

/// A term's tombstones in one segment: ascending document numbers as varint deltas.
enum TextTombstones {
    static func encode(_ docs: [Int]) -> [UInt8] {
        var out: [UInt8] = []
        var previous = 0
        for d in docs {
            Varint.append(d - previous, to: &out)
            previous = d
        }
        return out
    }

    /// - Throws: `.corruption` for bytes that are not ascending document numbers.
    static func decode(_ bytes: UnsafeRawBufferPointer) throws -> [Int] {
        var i = 0
        var previous = 0
        var docs: [Int] = []
        while i < bytes.count {
            let delta = try Varint.read(bytes, &i)
            guard delta >= 0, delta <= TextDocument.maximumDocument, docs.isEmpty || delta > 0 else {
                throw KVDocsError(.corruption, "a text tombstone list is damaged")
            }
            previous += delta
            guard previous <= TextDocument.maximumDocument else {
                throw KVDocsError(.corruption, "a text tombstone is out of range")
            }
            docs.append(previous)
        }
        guard !docs.isEmpty else { throw KVDocsError(.corruption, "a text tombstone list is empty") }
        return docs
    }
}
