import KVKeys
import KVStorage
import KVSupport

/// One geo index in a subspace of an ordered key-value store: one entry per row that has a
/// point, read by ``GeoSearch``.
///
/// The geo layer knows rows, not documents: a row is identified by the tuple encoding of
/// its id and has at most one point. Which documents and fields feed it is the document
/// layer's business (`GeoIndexMaintainer`), as with ``TextIndex``.
///
/// **Layout.** Under the subspace: the 8 bytes of the point's leaf cell code (``GeoCell``,
/// big-endian, so key order is Z-order), then the tuple encoding of the id → the point's
/// latitude and longitude as two big-endian `Double` bit patterns. A query reads a few
/// ranges of cell codes and measures the exact distance from the stored coordinates,
/// without reading the rows.
///
/// **Invariants.** A row has an entry if and only if it has a point, and the entry holds
/// that point's coordinates exactly.
package struct GeoIndex: Sendable {
    /// Where the entries are.
    package let subspace: Subspace
    /// How errors name the index (the document layer's index identity).
    package let name: String

    package init(subspace: Subspace, name: String) {
        self.subspace = subspace
        self.name = name
    }

    /// Every entry's key.
    package var keyRange: KeyRange { subspace.range }

    /// Records that the row whose encoded id is `idBytes` goes from point `before` to
    /// `after` (`nil`: none), through `put` and `delete`.
    package func update(
        idBytes: [UInt8], before: GeoPoint?, after: GeoPoint?,
        put: ([UInt8], [UInt8]) -> Void, delete: ([UInt8]) -> Void
    ) {
        if before == after { return }
        if let before { delete(key(before, idBytes)) }
        if let after { put(key(after, idBytes), Self.value(after)) }
    }

    /// The entry key of `point` for the row whose encoded id is `idBytes`.
    package func key(_ point: GeoPoint, _ idBytes: [UInt8]) -> [UInt8] {
        var key = subspace.prefix
        key.reserveCapacity(key.count + 8 + idBytes.count)
        Self.appendBigEndian(GeoCell(leafOf: point).code, to: &key)
        key.append(contentsOf: idBytes)
        return key
    }

    /// The key of the first entry of leaf code `code` (ranges of codes are ranges of keys).
    package func key(code: UInt64) -> [UInt8] {
        var key = subspace.prefix
        Self.appendBigEndian(code, to: &key)
        return key
    }

    /// The key range of the leaf codes in `codes` (62-bit codes: the successor never overflows).
    package func keyRange(_ codes: ClosedRange<UInt64>) -> KeyRange {
        KeyRange(lower: .included(key(code: codes.lowerBound)), upper: .excluded(key(code: codes.upperBound + 1)))
    }

    /// The stored value of an entry: latitude and longitude, big-endian bit patterns.
    package static func value(_ point: GeoPoint) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        appendBigEndian(point.latitude.bitPattern, to: &bytes)
        appendBigEndian(point.longitude.bitPattern, to: &bytes)
        return bytes
    }

    /// The cell code and the encoded id of an entry's key, `nil` when `key` is not one.
    package func parse(key: [UInt8]) -> (code: UInt64, idBytes: ArraySlice<UInt8>)? {
        let prefix = subspace.prefix
        guard key.count >= prefix.count + 8, key.starts(with: prefix) else { return nil }
        let code = key.withUnsafeBytes { Self.readBigEndian($0, at: prefix.count) }
        return (code, key[(prefix.count + 8)...])
    }

    @inline(__always)
    package static func appendBigEndian(_ x: UInt64, to bytes: inout [UInt8]) {
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: x >> UInt64(shift)))
        }
    }

    @inline(__always)
    package static func readBigEndian(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt64 {
        var x: UInt64 = 0
        for i in 0..<8 { x = x << 8 | UInt64(bytes[offset + i]) }
        return x
    }
}
