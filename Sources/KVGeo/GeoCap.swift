import Foundation

/// The points within a distance of a centre (a spherical cap), and the grid cells that
/// cover it.
///
/// **Invariants.** Every point whose haversine distance to ``center`` is at most ``radius``
/// lies in one of the cells of ``covering(maxCells:)``. The covering is found with bounds
/// on the distance from the centre to a cell that are never too large
/// (``minimumAngle(to:)``) and never too small (``maximumAngle(to:)``): they decide only
/// which cells are scanned, never which points are answers.
package struct GeoCap: Sendable {
    let center: GeoPoint
    /// Metres.
    let radius: Double
    /// Radians, at most π.
    let angle: Double
    private let phi: Double
    private let lambda: Double
    private let cosPhi: Double

    /// Slack added to every bound, in radians (about 0.6 m): haversine loses precision near
    /// antipodal points, and a bound must hold whatever the rounding.
    static let margin = 1e-7
    /// Slack added to every cell edge, in degrees: a point's cell is found in floating point.
    static let edgeSlack = 1e-9

    /// `sin²` of half the largest angle a cell's lower bound may have and still meet the cap.
    private let reachThreshold: Double
    /// `sin²` of half the largest angle a cell's upper bound may have and lie inside the cap.
    private let insideThreshold: Double

    package init(center: GeoPoint, radius: Double) {
        self.center = center
        self.radius = radius
        self.angle = min(Double.pi, radius / GeoPoint.earthRadius)
        let k = Haversine.radiansPerDegree
        phi = center.latitude * k
        lambda = center.longitude * k
        cosPhi = cos(phi)
        let reach = angle + Self.margin
        reachThreshold = reach >= Double.pi ? .infinity : Self.sinSquaredHalf(reach)
        let inside = angle - Self.margin
        insideThreshold = inside <= 0 ? -1 : Self.sinSquaredHalf(inside)
    }

    /// Whether the cap is the whole sphere.
    var isWholeSphere: Bool { angle + Self.margin >= Double.pi }

    // MARK: - Bounds

    private func edges(_ cell: GeoCell) -> (south: Double, north: Double, west: Double, east: Double) {
        let k = Haversine.radiansPerDegree
        let (s, n) = cell.latitudes, (w, e) = cell.longitudes
        return (
            max(-90, s - Self.edgeSlack) * k, min(90, n + Self.edgeSlack) * k, (w - Self.edgeSlack) * k,
            (e + Self.edgeSlack) * k
        )
    }

    /// The difference between two longitudes (radians, each within about [-π, π]), in [0, π].
    @inline(__always)
    private static func separation(_ a: Double, _ b: Double) -> Double {
        let d = abs(a - b)
        return d > Double.pi ? max(0, 2 * Double.pi - d) : d
    }

    private func containsLongitude(_ west: Double, _ east: Double) -> Bool {
        let twoPi = 2 * Double.pi
        return (west...east).contains(lambda) || (west...east).contains(lambda + twoPi)
            || (west...east).contains(lambda - twoPi)
    }

    @inline(__always)
    private static func sinSquaredHalf(_ x: Double) -> Double {
        let s = sin(x / 2)
        return s * s
    }

    /// A lower bound of the haversine `sin²(d/2)` from the centre to any point of `cell`:
    /// the latitude difference, the longitude difference and the cosine of the far latitude
    /// each at their least over the cell.
    private func leastHaversine(_ cell: GeoCell) -> Double {
        let (s, n, w, e) = edges(cell)
        let dPhi = max(0, s - phi, phi - n)
        let dLambda = containsLongitude(w, e) ? 0 : min(Self.separation(lambda, w), Self.separation(lambda, e))
        let latitudeTerm = Self.sinSquaredHalf(dPhi)
        guard dLambda > 0 else { return latitudeTerm }
        // cos is least at the edge farthest from the equator.
        let leastCos = max(0, cos(max(abs(s), abs(n))))
        return latitudeTerm + cosPhi * leastCos * Self.sinSquaredHalf(dLambda)
    }

    /// An upper bound of the haversine `sin²(d/2)` from the centre to any point of `cell`.
    private func greatestHaversine(_ cell: GeoCell) -> Double {
        let (s, n, w, e) = edges(cell)
        let dPhi = min(Double.pi, max(abs(phi - s), abs(phi - n)))
        let opposite = lambda + Double.pi
        let dLambda =
            e - w >= 2 * Double.pi || (w...e).contains(opposite) || (w...e).contains(opposite - 2 * Double.pi)
            ? Double.pi : max(Self.separation(lambda, w), Self.separation(lambda, e))
        let greatestCos = s <= 0 && n >= 0 ? 1 : cos(min(abs(s), abs(n)))
        return Self.sinSquaredHalf(dPhi) + cosPhi * greatestCos * Self.sinSquaredHalf(dLambda)
    }

    /// A lower bound of the angle (radians) from the centre to any point of `cell`.
    func minimumAngle(to cell: GeoCell) -> Double {
        2 * asin(sqrt(min(1, leastHaversine(cell)))) - Self.margin
    }

    /// An upper bound of the angle (radians) from the centre to any point of `cell`.
    func maximumAngle(to cell: GeoCell) -> Double {
        2 * asin(sqrt(min(1, greatestHaversine(cell)))) + Self.margin
    }

    /// Whether the cap may hold a point of `cell` (`minimumAngle(to:) <= angle`).
    @inline(__always)
    func mayReach(_ cell: GeoCell) -> Bool { leastHaversine(cell) <= reachThreshold }

    /// Whether every point of `cell` is in the cap (`maximumAngle(to:) <= angle`).
    @inline(__always)
    func holds(_ cell: GeoCell) -> Bool { insideThreshold >= 0 && greatestHaversine(cell) <= insideThreshold }

    // MARK: - Covering

    /// The finest level worth descending to: cells about an eighth of the radius tall.
    var finestLevel: Int {
        guard angle > 0 else { return GeoCell.leafLevel }
        let level = Int((log2(Double.pi * 8 / angle)).rounded(.up))
        return min(GeoCell.leafLevel, max(1, level))
    }

    /// The cells a covering starts from: those of the deepest level whose cells are at
    /// least as tall and as wide as the cap, among the centre's cell and its eight
    /// neighbours (longitudes wrap at ±180°), that the cap may reach; the root when the
    /// cap holds a pole or is wider than any level.
    func startingCells() -> [GeoCell] {
        let reach = angle + Self.margin
        guard abs(phi) + reach < Double.pi / 2 else { return [GeoCell.root] }
        let ratio = sin(reach) / cos(abs(phi) + reach)
        guard ratio < 1 else { return [GeoCell.root] }
        let halfWidth = asin(ratio) + Self.margin
        // Height π/2^l ≥ 2·reach and width 2π/2^l ≥ 2·halfWidth.
        let byHeight = log2(Double.pi / (2 * reach)), byWidth = log2(Double.pi / halfWidth)
        let level = min(GeoCell.leafLevel, Int(min(byHeight, byWidth).rounded(.down)))
        guard level >= 1 else { return [GeoCell.root] }
        let leaf = GeoCell(leafOf: center)
        let shift = UInt32(GeoCell.leafLevel - level)
        let i = Int64(leaf.latitudeIndex >> shift), j = Int64(leaf.longitudeIndex >> shift)
        let count = Int64(1) << Int64(level)
        var cells: [GeoCell] = []
        for di in -1...1 {
            let li = i + Int64(di)
            guard li >= 0, li < count else { continue }
            for dj in -1...1 {
                let lj = ((j + Int64(dj)) % count + count) % count
                let cell = GeoCell(level: level, latitudeIndex: UInt32(li), longitudeIndex: UInt32(lj))
                if !cells.contains(cell), mayReach(cell) { cells.append(cell) }
            }
        }
        return cells
    }

    /// Cells that together hold every point of the cap, at most `maxCells` of them unless
    /// the cap meets more cells of the level it starts from (``startingCells()``). Cells
    /// are split coarsest first, as long as the total stays within `maxCells`; a cell
    /// inside the cap is kept whole, and a cell the cap cannot reach is dropped.
    package func covering(maxCells: Int) -> [GeoCell] {
        if isWholeSphere { return [GeoCell.root] }
        let finest = finestLevel
        var result: [GeoCell] = []
        var queue = startingCells()
        var head = 0
        while head < queue.count {
            let cell = queue[head]
            head += 1
            if cell.level >= finest {
                result.append(cell)
                continue
            }
            var children = cell.children
            children.removeAll { !mayReach($0) }
            if cell.level >= 1, result.count + (queue.count - head) + children.count > maxCells {
                result.append(cell)
                continue
            }
            for child in children {
                if holds(child) { result.append(child) } else { queue.append(child) }
            }
        }
        return result
    }
}

/// A set of leaf-code intervals, sorted and merged (adjacent intervals joined).
package struct GeoIntervals: Sendable, Equatable {
    package private(set) var intervals: [ClosedRange<UInt64>] = []

    init() {}

    /// The intervals of `cells`, merged.
    package init(_ cells: [GeoCell]) {
        intervals = Self.merged(cells.map(\.codes))
    }

    private static func merged(_ ranges: [ClosedRange<UInt64>]) -> [ClosedRange<UInt64>] {
        var result: [ClosedRange<UInt64>] = []
        for r in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = result.last, r.lowerBound <= last.upperBound &+ 1, last.upperBound != .max {
                result[result.count - 1] = last.lowerBound...max(last.upperBound, r.upperBound)
            } else {
                result.append(r)
            }
        }
        return result
    }

    /// Adds `other`'s intervals.
    package mutating func formUnion(_ other: GeoIntervals) {
        intervals = Self.merged(intervals + other.intervals)
    }

    /// The parts of these intervals outside `other`.
    package func subtracting(_ other: GeoIntervals) -> GeoIntervals {
        var result = GeoIntervals()
        var j = 0
        for r in intervals {
            var low = r.lowerBound
            var done = false
            while j < other.intervals.count, other.intervals[j].upperBound < low { j += 1 }
            var k = j
            while k < other.intervals.count, other.intervals[k].lowerBound <= r.upperBound {
                let o = other.intervals[k]
                if o.lowerBound > low { result.intervals.append(low...(o.lowerBound - 1)) }
                if o.upperBound >= r.upperBound {
                    done = true
                    break
                }
                low = o.upperBound + 1
                k += 1
            }
            if !done { result.intervals.append(low...r.upperBound) }
        }
        return result
    }

    var isEmpty: Bool { intervals.isEmpty }
}
