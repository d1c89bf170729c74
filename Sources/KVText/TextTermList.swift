import KVSupport

/// A chunk of a segment's sorted term list: varints `count`, then each term as a byte
/// length and its UTF-8 bytes.
enum TextTermList {
    /// Terms per chunk written by a batch.
    static let chunkSize = 1024

    static func encode(_ terms: ArraySlice<[UInt8]>) -> [UInt8] {
        var out: [UInt8] = []
        Varint.append(terms.count, to: &out)
        for t in terms {
            Varint.append(t.count, to: &out)
            out += t
        }
        return out
    }

    /// - Throws: `.corruption` for bytes that are not a term list.
    static func decode(_ bytes: [UInt8]) throws -> [[UInt8]] {
        try bytes.withUnsafeBytes { raw in
            var i = 0
            let count = try Varint.read(raw, &i)
            guard count >= 0, count <= raw.count else {
                throw KVDocsError(.corruption, "a text segment's term list is damaged")
            }
            var terms: [[UInt8]] = []
            terms.reserveCapacity(count)
            for _ in 0..<count {
                let n = try Varint.read(raw, &i)
                guard n >= 0, n <= raw.count - i else {
                    throw KVDocsError(.corruption, "a text segment's term list is truncated")
                }
                terms.append(Array(raw[i..<(i + n)]))
                i += n
            }
            guard i == raw.count else {
                throw KVDocsError(.corruption, "a text segment's term list has trailing bytes")
            }
            return terms
        }
    }
}
