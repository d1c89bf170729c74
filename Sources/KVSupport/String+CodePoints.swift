import Foundation

extension String {
    /// Whether two strings have the same Unicode code points (the same UTF-8 bytes). Swift's
    /// `==` is canonical equivalence, which would take `"café"` with U+00E9 and `"café"`
    /// with U+0065 U+0301 for one name although they are two different keys.
    ///
    /// Compares lengths first, then the contiguous UTF-8 bytes with `memcmp`: names, keys
    /// and index identities are compared on every write, so this is on the hot path.
    package func hasSameCodePoints(as other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        var a = self, b = other
        return a.withUTF8 { x in
            b.withUTF8 { y in
                guard let px = x.baseAddress, let py = y.baseAddress else { return x.count == y.count }
                return memcmp(px, py, x.count) == 0
            }
        }
    }
}
