import Foundation

/// A cell of the geo index's grid: the rectangle of latitudes and longitudes reached by
/// halving [-90, 90] and [-180, 180] `level` times each.
///
/// Cells are numbered along a Z-order (Morton) curve: a leaf cell's ``code`` interleaves
/// the bits of its latitude and longitude indexes, latitude first. Every cell of a level
/// covers one contiguous interval of leaf codes (``codes``), so a set of cells is a set of
/// key ranges of the index.
///
/// **Invariants.** `level` is in 0...``leafLevel``; `latitudeIndex` and `longitudeIndex`
/// are below 2^level. A leaf cell measures about 9 mm north–south.
package struct GeoCell: Hashable, Sendable, CustomStringConvertible {
    /// The finest level: 31 bits per axis, 62-bit leaf codes.
    static let leafLevel = 31
    /// The whole sphere.
    static let root = GeoCell(level: 0, latitudeIndex: 0, longitudeIndex: 0)

    let level: Int
    let latitudeIndex: UInt32
    let longitudeIndex: UInt32

    /// The leaf cell holding `point` (a point on a cell boundary belongs to the cell north
    /// or east of it; the poles and 180° to the last row and column).
    package init(leafOf point: GeoPoint) {
        let scale = Double(UInt32(1) << UInt32(Self.leafLevel))
        let last = (UInt32(1) << UInt32(Self.leafLevel)) - 1
        func index(_ unit: Double) -> UInt32 {
            let scaled = (unit * scale).rounded(.down)
            return scaled <= 0 ? 0 : min(last, UInt32(scaled))
        }
        self.init(
            level: Self.leafLevel, latitudeIndex: index((point.latitude + 90) / 180),
            longitudeIndex: index((point.longitude + 180) / 360))
    }

    package init(level: Int, latitudeIndex: UInt32, longitudeIndex: UInt32) {
        self.level = level
        self.latitudeIndex = latitudeIndex
        self.longitudeIndex = longitudeIndex
    }

    /// The leaf code of a leaf cell, or of the first leaf of this cell.
    package var code: UInt64 {
        Self.interleave(latitudeIndex, longitudeIndex) << UInt64(2 * (Self.leafLevel - level))
    }

    /// The interval of leaf codes inside this cell.
    var codes: ClosedRange<UInt64> {
        let span = UInt64(1) << UInt64(2 * (Self.leafLevel - level))
        return code...(code + span - 1)
    }

    /// The four cells one level down (south-west, south-east, north-west, north-east: in code order).
    var children: [GeoCell] {
        let lat = latitudeIndex << 1, lon = longitudeIndex << 1
        return [
            GeoCell(level: level + 1, latitudeIndex: lat, longitudeIndex: lon),
            GeoCell(level: level + 1, latitudeIndex: lat, longitudeIndex: lon + 1),
            GeoCell(level: level + 1, latitudeIndex: lat + 1, longitudeIndex: lon),
            GeoCell(level: level + 1, latitudeIndex: lat + 1, longitudeIndex: lon + 1)
        ]
    }

    /// The southern and northern latitudes of the cell, in degrees.
    var latitudes: (south: Double, north: Double) {
        let height = 180 / Double(UInt64(1) << UInt64(level))
        return (Double(latitudeIndex) * height - 90, Double(latitudeIndex + 1) * height - 90)
    }

    /// The western and eastern longitudes of the cell, in degrees.
    var longitudes: (west: Double, east: Double) {
        let width = 360 / Double(UInt64(1) << UInt64(level))
        return (Double(longitudeIndex) * width - 180, Double(longitudeIndex + 1) * width - 180)
    }

    /// `LEVEL/0xCODE [lat S..N, lon W..E]`.
    package var description: String {
        let (s, n) = latitudes, (w, e) = longitudes
        func f(_ x: Double) -> String { String(format: "%.6f", x) }
        return "\(level)/0x\(String(code, radix: 16)) [lat \(f(s))..\(f(n)), lon \(f(w))..\(f(e))]"
    }

    /// The bits of `a` and `b` interleaved, `a`'s in the higher place of each pair.
    static func interleave(_ a: UInt32, _ b: UInt32) -> UInt64 {
        (spread(a) << 1) | spread(b)
    }

    /// The bits of `x` moved to the even bit positions of a 64-bit word.
    private static func spread(_ x: UInt32) -> UInt64 {
        var v = UInt64(x)
        v = (v | (v << 16)) & 0x0000_FFFF_0000_FFFF
        v = (v | (v << 8)) & 0x00FF_00FF_00FF_00FF
        v = (v | (v << 4)) & 0x0F0F_0F0F_0F0F_0F0F
        v = (v | (v << 2)) & 0x3333_3333_3333_3333
        v = (v | (v << 1)) & 0x5555_5555_5555_5555
        return v
    }
}
