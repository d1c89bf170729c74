import Foundation
import KVSupport

/// A point on the Earth: a latitude and a longitude in degrees (WGS84), as a geo index
/// stores it.
///
/// **Invariants.** ``latitude`` is in [-90, 90] and ``longitude`` in [-180, 180], both
/// finite. Distances are haversine great-circle distances on a sphere of radius
/// ``earthRadius`` (the mean Earth radius), in metres.
public struct GeoPoint: Sendable, Hashable, CustomStringConvertible {
    /// Degrees north of the equator, in [-90, 90].
    public let latitude: Double
    /// Degrees east of Greenwich, in [-180, 180].
    public let longitude: Double

    /// The radius of the sphere distances are measured on: 6,371,008.8 m, the mean Earth
    /// radius (IUGG).
    public static let earthRadius = 6_371_008.8

    /// The greatest distance between two points: half the sphere's circumference.
    public static let maximumDistance = Double.pi * earthRadius

    /// A point.
    /// - Parameters:
    ///   - latitude: degrees north, in [-90, 90].
    ///   - longitude: degrees east, in [-180, 180].
    /// - Throws: `.invalidArgument` naming the coordinate out of range (or not finite).
    public init(latitude: Double, longitude: Double) throws {
        guard latitude.isFinite, latitude >= -90, latitude <= 90 else {
            throw KVDocsError(.invalidArgument, "latitude must be a number in [-90, 90], not \(latitude)")
        }
        guard longitude.isFinite, longitude >= -180, longitude <= 180 else {
            throw KVDocsError(.invalidArgument, "longitude must be a number in [-180, 180], not \(longitude)")
        }
        self.init(unchecked: latitude, longitude)
    }

    init(unchecked latitude: Double, _ longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// The haversine great-circle distance to `other`, in metres.
    public func distance(to other: GeoPoint) -> Double {
        Haversine(from: self).distance(latitude: other.latitude, longitude: other.longitude)
    }

    public var description: String { "(\(latitude), \(longitude))" }
}

// MARK: - Reading points from documents

extension GeoPoint {
    /// The point a JSON value holds, or `nil` when it holds none: either
    /// `{"lat": LAT, "lon": LON}` (other members ignored) or a GeoJSON Point
    /// `{"type": "Point", "coordinates": [LON, LAT]}` (an optional third coordinate, the
    /// altitude, ignored), with numbers in range.
    public init?(json: JSONValue) {
        guard case .success(let point) = Self.parse(json) else { return nil }
        self = point
    }

    /// The point `json` holds, or what is wrong with it (for messages).
    package static func parse(_ json: JSONValue) -> Result<GeoPoint, PointError> {
        guard case .object(let o) = json else {
            return .failure(PointError("\(article(json.typeName)) is not a point"))
        }
        let latitude: Double, longitude: Double
        if case .string("Point")? = o["type"], o["lat"] == nil, o["lon"] == nil {
            guard case .array(let c)? = o["coordinates"], c.count == 2 || c.count == 3,
                let lon = number(c[0]), let lat = number(c[1]), c.count == 2 || number(c[2]) != nil
            else {
                return .failure(PointError("a GeoJSON Point needs \"coordinates\": [LON, LAT] (numbers)"))
            }
            (latitude, longitude) = (lat, lon)
        } else {
            guard let lat = o["lat"].flatMap(number), let lon = o["lon"].flatMap(number) else {
                return .failure(PointError("a point needs numbers \"lat\" and \"lon\" (or a GeoJSON Point)"))
            }
            (latitude, longitude) = (lat, lon)
        }
        guard latitude >= -90, latitude <= 90 else {
            return .failure(PointError("latitude \(latitude) is outside [-90, 90]"))
        }
        guard longitude >= -180, longitude <= 180 else {
            return .failure(PointError("longitude \(longitude) is outside [-180, 180]"))
        }
        return .success(GeoPoint(unchecked: latitude, longitude))
    }

    /// Why a JSON value is not a point.
    package struct PointError: Error {
        package let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// The point as `{"lat": LAT, "lon": LON}`.
    public var json: JSONValue { ["lat": .double(latitude), "lon": .double(longitude)] }

    private static func number(_ value: JSONValue) -> Double? {
        switch value {
        case .int(let i): return Double(i)
        case .uint(let u): return Double(u)
        case .double(let d): return d
        default: return nil
        }
    }
}

// MARK: - Distance

/// Haversine distances from one fixed point, with its trigonometry computed once.
///
/// The formula, in this order of operations (a reference implementation written the
/// common way gives the same bits): with φ and λ in radians (degrees × (π/180)),
/// `a = sin(Δφ/2)² + cos φ₁ · cos φ₂ · sin(Δλ/2)²`, `d = R · 2 · asin(√a)`, `a` clamped to
/// [0, 1]. No longitude normalisation is needed across the antimeridian: `sin²` of half
/// the difference is the same for Δλ and 360° − Δλ.
struct Haversine {
    static let radiansPerDegree = Double.pi / 180
    let latitude: Double
    let longitude: Double
    private let cosLatitude: Double

    init(from point: GeoPoint) {
        latitude = point.latitude * Self.radiansPerDegree
        longitude = point.longitude * Self.radiansPerDegree
        cosLatitude = cos(latitude)
    }

    /// The distance in metres to a point given in degrees.
    @inline(__always)
    func distance(latitude lat: Double, longitude lon: Double) -> Double {
        GeoPoint.earthRadius * angle(latitude: lat, longitude: lon)
    }

    /// The central angle in radians to a point given in degrees.
    @inline(__always)
    func angle(latitude lat: Double, longitude lon: Double) -> Double {
        let phi = lat * Self.radiansPerDegree
        let dPhi = phi - latitude
        let dLambda = lon * Self.radiansPerDegree - longitude
        let s1 = sin(dPhi / 2), s2 = sin(dLambda / 2)
        let a = s1 * s1 + cosLatitude * cos(phi) * (s2 * s2)
        return 2 * asin(sqrt(min(1, max(0, a))))
    }
}
