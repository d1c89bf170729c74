import Foundation
import KVStorage
import KVSupport

/// Runs one geo query on a geo index: covers widening circles around the centre with grid
/// cells, reads the key ranges not read yet, and measures each entry's exact distance from
/// its stored coordinates.
///
/// **Exactness.** A covering holds every point within its radius (``GeoCap``), so after the
/// ring of radius `r` is read, every entry within `r` is known. The search stops when the
/// entries within `r` that pass the filter are enough (`needed`), or when `r` reached the
/// query's radius (or the whole sphere). The answer is then the passing entries within `r`,
/// nearest first, ties by primary key: exactly what a scan of every document would give.
///
/// **Rings.** A query with a radius and no limit reads one covering of that radius. A
/// k-nearest query starts at ``firstRing`` metres, or closer when the k entries that follow
/// the centre's cell on the curve are all nearer (they are real points, so the farthest of
/// them bounds the k-th nearest distance), and widens by the square root of the shortfall
/// (at least 1.5×, at most 4× a ring), or to the k-th nearest entry read so far; dense
/// places stop early and sparse ones reach far in a few rings. Each ring reads only what
/// the earlier ones did not.
package struct GeoSearch {
    /// The radius of the first ring of a k-nearest query, in metres.
    static let firstRing = 100.0
    /// The most cells of one covering.
    static let maxCells = 16

    package let index: GeoIndex
    let reader: any KeyValueReader
    let center: GeoPoint
    /// The query's radius in metres (`nil`: the whole sphere).
    let within: Double?

    /// An entry read: its distance and its id's tuple bytes.
    package struct Candidate {
        package let distance: Double
        package let id: [UInt8]
    }

    /// What one ring read, for ``GeoPlan``.
    package struct Ring {
        package let radius: Double
        package let cells: [GeoCell]
        package let ranges: [ClosedRange<UInt64>]
    }

    package private(set) var rings: [Ring] = []
    /// Entries read, in all.
    package private(set) var entriesRead = 0

    package init(index: GeoIndex, reader: any KeyValueReader, center: GeoPoint, within: Double?) {
        self.index = index
        self.reader = reader
        self.center = center
        self.within = within
    }

    /// The entries within the radius that `accept` passes, nearest first (ties by id), the
    /// first `needed` of them (all with `nil`). `accept` is asked at most once per entry.
    package mutating func run(needed: Int?, accept: ((Candidate) throws -> Bool)?) throws -> [Candidate] {
        if needed == 0 { return [] }
        let limit = min(within ?? GeoPoint.maximumDistance, GeoPoint.maximumDistance)
        var radius = needed == nil ? limit : min(limit, Self.firstRing)
        if let needed, needed <= Self.maximumProbe, accept == nil, radius > 0 {
            // The entries that follow the centre on the curve are real points, usually near
            // it: the farthest of `needed` of them bounds the needed-th nearest distance.
            if let bound = try probe(needed), bound < radius { radius = max(bound, 0) }
        }
        var scanned = GeoIntervals()
        var found: [Candidate] = []
        var verdicts: [[UInt8]: Bool] = [:]
        let haversine = Haversine(from: center)
        while true {
            let complete = radius >= limit
            let cap = GeoCap(center: center, radius: radius)
            let cells = complete && within == nil ? [GeoCell.root] : cap.covering(maxCells: Self.maxCells)
            let covering = GeoIntervals(cells)
            let fresh = covering.subtracting(scanned)
            try read(fresh, haversine, into: &found)
            scanned.formUnion(covering)
            rings.append(Ring(radius: radius, cells: cells, ranges: fresh.intervals))

            var settled = complete ? found : found.filter { $0.distance <= radius }
            settled.sort { $0.distance != $1.distance ? $0.distance < $1.distance : compareBytes($0.id, $1.id) < 0 }
            var passed: [Candidate] = []
            for candidate in settled {
                if let accept {
                    let verdict: Bool
                    if let known = verdicts[candidate.id] {
                        verdict = known
                    } else {
                        verdict = try accept(candidate)
                        verdicts[candidate.id] = verdict
                    }
                    if !verdict { continue }
                }
                passed.append(candidate)
                if let needed, passed.count >= needed { return passed }
            }
            if complete || needed == nil { return passed }
            let wanted = needed ?? 1
            let shortfall = Double(wanted) / Double(max(1, passed.count))
            let factor = passed.isEmpty ? 4 : min(4, max(1.5, shortfall.squareRoot() * 1.25))
            var next = min(limit, radius * factor)
            // Without conditions, the k-th nearest entry read so far (the cells reach past the
            // circle) bounds the k-th nearest of all: a circle of that radius is the last.
            if accept == nil, found.count >= wanted {
                var distances = found.map(\.distance)
                distances.sort()
                next = min(next, distances[wanted - 1])
            }
            radius = next > radius ? next : min(limit, radius * 1.5)
        }
    }

    /// The most entries a k-nearest query reads after the centre's cell before its first ring.
    static let maximumProbe = 64

    /// The distance of the farthest of the first `count` entries at or after the centre's
    /// leaf cell in key order, or `nil` when there are fewer.
    private mutating func probe(_ count: Int) throws -> Double? {
        let start = index.key(code: GeoCell(leafOf: center).code)
        let cursor = try reader.scan(KeyRange(lower: .included(start), upper: index.keyRange.upper), order: .forward)
        let haversine = Haversine(from: center)
        var farthest = 0.0, read = 0
        while read < count,
            let distance = try cursor.next({ _, value -> Double in
                guard value.count == 16 else { return .infinity }
                return haversine.distance(
                    latitude: Double(bitPattern: GeoIndex.readBigEndian(value, at: 0)),
                    longitude: Double(bitPattern: GeoIndex.readBigEndian(value, at: 8)))
            })
        {
            read += 1
            farthest = max(farthest, distance)
        }
        entriesRead += read
        return read == count ? farthest : nil
    }

    /// Reads the entries of `intervals`, keeping those within the query's radius.
    private mutating func read(_ intervals: GeoIntervals, _ haversine: Haversine, into found: inout [Candidate]) throws
    {
        guard !intervals.isEmpty else { return }
        let cursor = try reader.scan(ranges: intervals.intervals.map(index.keyRange))
        let idOffset = index.subspace.prefix.count + 8
        let within = within ?? .infinity
        var read = 0
        while let entry = try cursor.next({ key, value -> Candidate? in
            guard key.count > idOffset, value.count == 16 else {
                throw KVDocsError(
                    .corruption,
                    "a geo index entry of \(index.name) is malformed (\(key.count)-byte key, \(value.count)-byte value)",
                    path: reader.name, key: Array(key))
            }
            let latitude = Double(bitPattern: GeoIndex.readBigEndian(value, at: 0))
            let longitude = Double(bitPattern: GeoIndex.readBigEndian(value, at: 8))
            let distance = haversine.distance(latitude: latitude, longitude: longitude)
            guard distance <= within else { return nil }
            return Candidate(distance: distance, id: Array(key[idOffset...]))
        }) {
            read += 1
            if let entry { found.append(entry) }
        }
        entriesRead += read
    }
}
