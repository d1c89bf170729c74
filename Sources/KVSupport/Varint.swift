/// LEB128 variable-length unsigned integers.
package enum Varint {
    package static func append(_ value: Int, to out: inout [UInt8]) {
        var v = UInt64(max(0, value))
        while v >= 0x80 {
            out.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    /// The varint at `i` of `bytes` (raw bytes or a slice of stored ones); moves `i` past it.
    ///
    /// Inlinable so that each caller gets it specialized to its collection: called generically
    /// from another module, it went through witness tables for every byte (about 200
    /// instructions a varint, measured in a vector search's id walks).
    @inlinable
    package static func read<Bytes: RandomAccessCollection>(_ bytes: Bytes, _ i: inout Int) throws -> Int
    where Bytes.Element == UInt8, Bytes.Index == Int {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while i < bytes.endIndex {
            let b = bytes[i]
            i += 1
            value |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 { return Int(truncatingIfNeeded: value) }
            shift += 7
            if shift > 56 { break }
        }
        throw KVDocsError(.corruption, "a truncated or overlong varint")
    }
}
