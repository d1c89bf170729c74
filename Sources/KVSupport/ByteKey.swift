import Foundation

/// Bytes as a dictionary or set key, hashed as one block (`Array<UInt8>`'s own hashing
/// feeds the hasher one byte at a time, which dominated the write path's profile).
package struct ByteKey: Hashable, Sendable {
    package let bytes: [UInt8]

    @inlinable
    package init(_ bytes: [UInt8]) { self.bytes = bytes }

    @inlinable
    package func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        hasher.combine(bytes.count)
    }

    /// Compared as one block too (`Array`'s `==` compares a byte at a time).
    @inlinable
    package static func == (a: ByteKey, b: ByteKey) -> Bool {
        a.bytes.count == b.bytes.count
            && a.bytes.withUnsafeBytes { x in
                b.bytes.withUnsafeBytes { y in
                    guard let p = x.baseAddress, let q = y.baseAddress else { return true }  // both empty
                    return memcmp(p, q, x.count) == 0
                }
            }
    }
}
