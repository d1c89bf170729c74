import KVSupport

/// The token counts of rows, by document number, in blocks of ``blockSize``: each block a
/// list of varints (0 for a slot without a row), trailing zeros dropped.
package enum TextLengths {
    static let blockSize = 128

    /// A length in one byte, rounded down: exact below 128, then 3 significant bits
    /// after the leading one (so at most 1/8 below), 255 past 2^23.
    package static func norm(_ length: Int) -> Int {
        guard length >= 128 else { return max(0, length) }
        let e = Int.bitWidth - 1 - length.leadingZeroBitCount  // 7 or more
        let code = 128 + (e - 7) * 8 + (length >> (e - 3)) & 7
        return min(code, 255)
    }

    /// The smallest length with norm `norm` (never more than the length it came from).
    package static func length(ofNorm norm: Int) -> Int {
        guard norm >= 128 else { return norm }
        let e = (norm - 128) / 8 + 7
        return (8 + (norm - 128) % 8) << (e - 3)
    }

    static func encode(_ lengths: [Int]) -> [UInt8] {
        var out: [UInt8] = []
        for l in lengths { Varint.append(l, to: &out) }
        return out
    }

    /// - Throws: `.corruption` for bytes that are not a length block.
    static func decode(_ bytes: [UInt8]) throws -> [Int] {
        try bytes.withUnsafeBytes { raw in
            var i = 0
            var result: [Int] = []
            while i < raw.count {
                let v = try Varint.read(raw, &i)
                guard v >= 0 && v <= TextDocument.maximumPosition, result.count < blockSize else {
                    throw KVDocsError(.corruption, "a text length block is damaged")
                }
                result.append(v)
            }
            return result
        }
    }
}
