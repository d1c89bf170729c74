import Foundation

/// The points within a distance of a centre (a spherical cap), and the grid cells that
/// cover it.
///
/// **Invariants.** Every point whose haversine distance to ``center`` is at most ``radius``
/// lies in one of the cells of ``covering(maxCells:)``. The covering is found with bounds
/// on the distance from the centre to a cell that are never too large
/// (``minimumAngle(to:)``) and never too small (``maximumAngle(to:)``): they decide only
/// which cells are scanned, never which points are answers.
struct GeoCap: Sendable {
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

    init(center: GeoPoint, radius: Double) {
        self.center = center
        self.radius = radius
        self.angle = min(Double.pi, radius / GeoPoint.earthRadius)
        let k = Haversine.radiansPerDegree
        phi = center.latitude * k
        lambda = center.longitude * k
        cosPhi = cos(phi)
    }

    /// Whether the cap is the whole sphere.
    var isWholeSphere: Bool { angle + Self.margin >= Double.pi }

    // MARK: - Bounds

    private func edges(_ cell: GeoCell) -> (south: Double, north: Double, west: Double, east: Double) {
        let k = Haversine.radiansPerDegree
        let (s, n) = cell.latitudes, (w, e) = cell.longitudes
        return (max(-90, s - Self.edgeSlack) * k, min(90, n + Self.edgeSlack) * k, (w - Self.edgeSlack) * k, (e + Self.edgeSlack) * k)
    }

    /// The difference between two longitudes (radians), in [0, π].
    @inline(__always)
    private static func separation(_ a: Double, _ b: Double) -> Double {
        abs(remainder(a - b, 2 * Double.pi))
    }

    private func containsLongitude(_ west: Double, _ east: Double) -> Bool {
        let twoPi = 2 * Double.pi
        return (west...east).contains(lambda) || (west...east).contains(lambda + twoPi) || (west...east).contains(lambda - twoPi)
    }

    @inline(__always)
    private static func angle(haversine h: Double) -> Double {
        2 * asin(sqrt(min(1, max(0, h))))
    }

    @inline(__always)
    private static func sinSquaredHalf(_ x: Double) -> Double {
        let s = sin(x / 2)
        return s * s
    }

    /// A lower bound of the angle (radians) from the centre to any point of `cell`:
    /// the haversine with the latitude difference, the longitude difference and the
    /// cosine of the far latitude each at their least over the cell.
    func minimumAngle(to cell: GeoCell) -> Double {
        let (s, n, w, e) = edges(cell)
        let dPhi = max(0, s - phi, phi - n)
        let dLambda = containsLongitude(w, e) ? 0 : min(Self.separation(lambda, w), Self.separation(lambda, e))
        let leastCos = max(0, min(cos(s), cos(n)))
        let h = Self.sinSquaredHalf(dPhi) + cosPhi * leastCos * Self.sinSquaredHalf(dLambda)
        return Self.angle(haversine: h) - Self.margin
    }

    /// An upper bound of the angle (radians) from the centre to any point of `cell`.
    func maximumAngle(to cell: GeoCell) -> Double {
        let (s, n, w, e) = edges(cell)
        let dPhi = max(abs(phi - s), abs(phi - n))
        let opposite = lambda + Double.pi
        let dLambda = e - w >= 2 * Double.pi || (w...e).contains(opposite) || (w...e).contains(opposite - 2 * Double.pi)
            ? Double.pi : max(Self.separation(lambda, w), Self.separation(lambda, e))
        let greatestCos = s <= 0 && n >= 0 ? 1 : max(cos(s), cos(n))
        let h = Self.sinSquaredHalf(min(Double.pi, dPhi)) + cosPhi * greatestCos * Self.sinSquaredHalf(dLambda)
        return Self.angle(haversine: h) + Self.margin
    }

    // MARK: - Covering

    /// The finest level worth descending to: cells about an eighth of the radius tall.
    var finestLevel: Int {
        guard angle > 0 else { return GeoCell.leafLevel }
        let level = Int((log2(Double.pi * 8 / angle)).rounded(.up))
        return min(GeoCell.leafLevel, max(1, level))
    }

    /// Cells that together hold every point of the cap, at most `maxCells` of them unless
    /// the cap meets more cells of the coarsest useful level. Cells are split coarsest
    /// first, as long as the total stays within `maxCells`; a cell inside the cap is kept
    /// whole, and a cell the cap cannot reach is dropped.
    func covering(maxCells: Int) -> [GeoCell] {
        if isWholeSphere { return [GeoCell.root] }
        let finest = finestLevel
        var result: [GeoCell] = []
        var queue: [GeoCell] = [GeoCell.root]
        var head = 0
        while head < queue.count {
            let cell = queue[head]
            head += 1
            if cell.level >= finest {
                result.append(cell)
                continue
            }
            let children = cell.children.filter { minimumAngle(to: $0) <= angle }
            if cell.level >= 1, result.count + (queue.count - head) + children.count > maxCells {
                result.append(cell)
                continue
            }
            for child in children {
                if maximumAngle(to: child) <= angle { result.append(child) } else { queue.append(child) }
            }
        }
        return result
    }
}

/// A set of leaf-code intervals, sorted and merged (adjacent intervals joined).
struct GeoIntervals: Sendable, Equatable {
    private(set) var intervals: [ClosedRange<UInt64>] = []

    init() {}

    /// The intervals of `cells`, merged.
    init(_ cells: [GeoCell]) {
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
    mutating func formUnion(_ other: GeoIntervals) {
        intervals = Self.merged(intervals + other.intervals)
    }

    /// The parts of these intervals outside `other`.
    func subtracting(_ other: GeoIntervals) -> GeoIntervals {
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
                if o.upperBound >= r.upperBound { done = true; break }
                low = o.upperBound + 1
                k += 1
            }
            if !done { result.intervals.append(low...r.upperBound) }
        }
        return result
    }

    var isEmpty: Bool { intervals.isEmpty }
}
