/// MD5 (RFC 1321), for revision ids and replication ids.
///
/// CouchDB's revision ids and PouchDB's replication ids are MD5 digests, Foundation on Linux
/// has no MD5, and KVDocs adds no cryptography dependency, so this is a small implementation
/// of the RFC. It is used as the protocol uses it, as a content fingerprint: not for
/// anything that needs collision resistance against an adversary.
///
/// Invariants: ``update(_:)`` may be called any number of times with any split of the
/// input; the digest is that of the concatenation. A value is finalized by
/// ``finalize()``, which does not change it (finalizing twice gives the same digest).
package struct MD5: Sendable {
    /// A, B, C, D of RFC 1321 §3.3.
    private var state: (UInt32, UInt32, UInt32, UInt32) = (0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476)
    /// Bytes not yet processed: fewer than 64.
    private var pending: [UInt8] = []
    /// Bytes given to ``update(_:)`` so far (the length appended by the padding, modulo 2^64).
    private var length: UInt64 = 0

    /// A digest of nothing yet.
    package init() {
        pending.reserveCapacity(64)
    }

    /// The 16-byte digest of `bytes`.
    package static func digest<Bytes: Sequence>(_ bytes: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        var md5 = MD5()
        md5.update(bytes)
        return md5.finalize()
    }

    /// The digest of `bytes` as 32 lowercase hexadecimal digits.
    package static func hexDigest<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        RevisionID.hex(digest(bytes))
    }

    /// Adds `bytes` to the input.
    package mutating func update<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        let done: Void? = bytes.withContiguousStorageIfAvailable { buffer in update(buffer: buffer) }
        guard done == nil else { return }
        for byte in bytes {
            pending.append(byte)
            length &+= 1
            if pending.count == 64 {
                processBlock(pending)
                pending.removeAll(keepingCapacity: true)
            }
        }
    }

    /// Adds contiguous bytes: whole blocks are processed where they lie.
    private mutating func update(buffer: UnsafeBufferPointer<UInt8>) {
        length &+= UInt64(buffer.count)
        var i = 0
        if !pending.isEmpty {
            let take = min(64 - pending.count, buffer.count)
            pending.append(contentsOf: buffer[0..<take])
            i = take
            guard pending.count == 64 else { return }
            processBlock(pending)
            pending.removeAll(keepingCapacity: true)
        }
        while buffer.count - i >= 64 {
            processBlock(buffer[i..<i + 64])
            i += 64
        }
        pending.append(contentsOf: buffer[i...])
    }

    /// The 16-byte digest of everything given to ``update(_:)`` (RFC 1321 §3.1–3.5).
    package func finalize() -> [UInt8] {
        var copy = self
        let bitLength = length &* 8
        var tail = copy.pending
        tail.append(0x80)
        while tail.count % 64 != 56 { tail.append(0) }
        for i in 0..<8 { tail.append(UInt8(truncatingIfNeeded: bitLength >> (8 * UInt64(i)))) }
        var offset = 0
        while offset < tail.count {
            copy.processBlock(tail[offset..<offset + 64])
            offset += 64
        }
        var out: [UInt8] = []
        out.reserveCapacity(16)
        for word in [copy.state.0, copy.state.1, copy.state.2, copy.state.3] {
            for i in 0..<4 { out.append(UInt8(truncatingIfNeeded: word >> (8 * UInt32(i)))) }
        }
        return out
    }

    /// The per-round shift amounts (RFC 1321 §3.4).
    private static let shifts: [UInt32] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
        5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
        4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
        6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21
    ]

    /// T[i] = floor(2^32 × |sin(i + 1)|) (RFC 1321 §3.4), written out rather than computed so
    /// that no floating-point library can change them.
    private static let table: [UInt32] = [
        0xd76a_a478, 0xe8c7_b756, 0x2420_70db, 0xc1bd_ceee, 0xf57c_0faf, 0x4787_c62a, 0xa830_4613, 0xfd46_9501,
        0x6980_98d8, 0x8b44_f7af, 0xffff_5bb1, 0x895c_d7be, 0x6b90_1122, 0xfd98_7193, 0xa679_438e, 0x49b4_0821,
        0xf61e_2562, 0xc040_b340, 0x265e_5a51, 0xe9b6_c7aa, 0xd62f_105d, 0x0244_1453, 0xd8a1_e681, 0xe7d3_fbc8,
        0x21e1_cde6, 0xc337_07d6, 0xf4d5_0d87, 0x455a_14ed, 0xa9e3_e905, 0xfcef_a3f8, 0x676f_02d9, 0x8d2a_4c8a,
        0xfffa_3942, 0x8771_f681, 0x6d9d_6122, 0xfde5_380c, 0xa4be_ea44, 0x4bde_cfa9, 0xf6bb_4b60, 0xbebf_bc70,
        0x289b_7ec6, 0xeaa1_27fa, 0xd4ef_3085, 0x0488_1d05, 0xd9d4_d039, 0xe6db_99e5, 0x1fa2_7cf8, 0xc4ac_5665,
        0xf429_2244, 0x432a_ff97, 0xab94_23a7, 0xfc93_a039, 0x655b_59c3, 0x8f0c_cc92, 0xffef_f47d, 0x8584_5dd1,
        0x6fa8_7e4f, 0xfe2c_e6e0, 0xa301_4314, 0x4e08_11a1, 0xf753_7e82, 0xbd3a_f235, 0x2ad7_d2bb, 0xeb86_d391
    ]

    /// Processes one 64-byte block (RFC 1321 §3.4).
    private mutating func processBlock<Block: Collection>(_ block: Block)
    where Block.Element == UInt8, Block.Index == Int {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 16) { x in
            let base = block.startIndex
            for i in 0..<16 {
                let j = base + 4 * i
                x[i] =
                    UInt32(block[j]) | UInt32(block[j + 1]) << 8 | UInt32(block[j + 2]) << 16 | UInt32(block[j + 3])
                    << 24
            }
            rounds(x)
        }
    }

    /// The 64 operations of RFC 1321 §3.4 on one block's 16 words.
    private mutating func rounds(_ x: UnsafeMutableBufferPointer<UInt32>) {
        var (a, b, c, d) = state
        for i in 0..<64 {
            let f: UInt32
            let g: Int
            switch i {
            case 0..<16:
                f = (b & c) | (~b & d)
                g = i
            case 16..<32:
                f = (d & b) | (~d & c)
                g = (5 * i + 1) % 16
            case 32..<48:
                f = b ^ c ^ d
                g = (3 * i + 5) % 16
            default:
                f = c ^ (b | ~d)
                g = (7 * i) % 16
            }
            let sum = a &+ f &+ MD5.table[i] &+ x[g]
            let s = MD5.shifts[i]
            let rotated = (sum << s) | (sum >> (32 - s))
            a = d
            d = c
            c = b
            b = b &+ rotated
        }
        state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d)
    }
}
