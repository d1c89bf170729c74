import KVSupport

/// The centroids of a vector index's lists (an inverted file, IVF): each vector of the index
/// is also kept in the list of the centroid nearest to it, so that an approximate search
/// reads the few lists nearest the query instead of every vector.
///
/// **Assignment is a function of the vector and the centroids.** ``list(of:)`` is the
/// centroid of smallest exact score (double precision, ``VectorKernel/exactScore(_:)``),
/// ties to the smaller list number: the same on every machine, so that a write, a rebuild
/// and `verify` place a vector alike while the centroids stay the same.
///
/// The stored layout (version 1), integers varints:
///
///     01  count  dimensions  trainedOn
///     8 bytes                            the fingerprint: FNV-1a (64 bits) of the values' bytes
///     count × dimensions × 4 bytes       the centroids, float32 little-endian
///
/// The fingerprint tells a search whether the centroids it decoded before are still the
/// stored ones (``VectorIndex/centroids(_:)`` keeps the last decoded), without decoding them.
package struct VectorCentroids: Sendable, Equatable {
    package let metric: VectorMetric
    package let dimensions: Int
    /// How many lists (centroids).
    package let count: Int
    /// How many vectors the index held when these were trained.
    package let trainedOn: Int
    /// The centroids, `count × dimensions` values.
    package let values: [Float]
    /// Each centroid's norm, as blocks store norms (rounded up).
    let norms: [Float]
    /// FNV-1a of the values' little-endian bytes.
    package let fingerprint: UInt64

    static let version: UInt8 = 1

    /// - Precondition: `values.count` is a positive multiple of `dimensions` (callers build
    ///   them; stored ones go through ``init(decoding:dimensions:metric:)``).
    package init(values: [Float], dimensions: Int, metric: VectorMetric, trainedOn: Int) {
        self.metric = metric
        self.dimensions = dimensions
        self.count = values.count / dimensions
        self.trainedOn = trainedOn
        self.values = values
        self.norms = (0..<(values.count / dimensions)).map { c in
            values.withUnsafeBufferPointer {
                VectorKernel.storedNorm(UnsafeBufferPointer(rebasing: $0[(c * dimensions)..<((c + 1) * dimensions)]))
            }
        }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for v in values {
            withUnsafeBytes(of: v.bitPattern.littleEndian) {
                for byte in $0 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            }
        }
        self.fingerprint = hash
    }

    /// The header of stored centroids, read in place: their fingerprint and where their
    /// values start.
    /// - Throws: `.corruption` for a header that is not one.
    static func header(_ raw: UnsafeRawBufferPointer) throws -> (
        count: Int, dimensions: Int, trainedOn: Int, fingerprint: UInt64, valuesStart: Int
    ) {
        guard raw.first == Self.version else {
            throw KVDocsError(.corruption, "damaged vector centroids: unknown layout version")
        }
        var i = 1
        let count = try Varint.read(raw, &i)
        let dimensions = try Varint.read(raw, &i)
        let trainedOn = try Varint.read(raw, &i)
        guard i + 8 <= raw.count else { throw KVDocsError(.corruption, "damaged vector centroids: too short") }
        let fingerprint = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))
        return (count, dimensions, trainedOn, fingerprint, i + 8)
    }

    /// The fingerprint of stored centroids, read in place.
    /// - Throws: `.corruption` for a header that is not one.
    package static func fingerprint(_ raw: UnsafeRawBufferPointer) throws -> UInt64 { try header(raw).fingerprint }

    /// Stored centroids.
    /// - Throws: `.corruption` (without a location: the caller names the key) for bytes that
    ///   are not centroids of `dimensions` values.
    package init(decoding bytes: UnsafeRawBufferPointer, dimensions expected: Int, metric: VectorMetric) throws {
        func damaged(_ what: String) -> KVDocsError { KVDocsError(.corruption, "damaged vector centroids: \(what)") }
        let header = try Self.header(bytes)
        let (count, dimensions, start) = (header.count, header.dimensions, header.valuesStart)
        guard dimensions == expected else { throw damaged("they have \(dimensions) values, the index \(expected)") }
        guard count > 0, count <= 1 << 16 else { throw damaged("their count is out of range") }
        guard bytes.count - start == count * dimensions * 4 else { throw damaged("their length is wrong") }
        var values = [Float](repeating: 0, count: count * dimensions)
        values.withUnsafeMutableBytes { out in out.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[start...])) }
        for i in values.indices { values[i] = Float(bitPattern: UInt32(littleEndian: values[i].bitPattern)) }
        guard values.allSatisfy(\.isFinite) else { throw damaged("a value is not finite") }
        self.init(values: values, dimensions: dimensions, metric: metric, trainedOn: header.trainedOn)
        guard fingerprint == header.fingerprint else { throw damaged("their fingerprint does not match their values") }
    }

    /// The stored bytes.
    package func encoded() -> [UInt8] {
        var out: [UInt8] = [Self.version]
        Varint.append(count, to: &out)
        Varint.append(dimensions, to: &out)
        Varint.append(trainedOn, to: &out)
        withUnsafeBytes(of: fingerprint.littleEndian) { out.append(contentsOf: $0) }
        out.reserveCapacity(out.count + values.count * 4)
        for v in values { withUnsafeBytes(of: v.bitPattern.littleEndian) { out.append(contentsOf: $0) } }
        return out
    }

    /// Calls `body` with the values of centroid `c`, in place.
    @inline(__always)
    func withCentroid<R>(_ c: Int, _ body: (UnsafeRawPointer) -> R) -> R {
        values.withUnsafeBytes { body($0.baseAddress.unsafelyUnwrapped + c * dimensions * 4) }
    }

    /// The list of `vector` (of ``dimensions`` values): the centroid of smallest exact score,
    /// ties to the smaller list. Float32 lower bounds pick the few centroids whose exact
    /// score is computed.
    package func list(of vector: [Float]) -> Int {
        let kernel = VectorKernel(metric: metric, query: vector)
        var bounds = [Float](repeating: 0, count: count)
        var smallest = 0
        for c in 0..<count {
            bounds[c] = withCentroid(c) { kernel.lowerBound($0, norm: norms[c]) }
            if bounds[c] < bounds[smallest] { smallest = c }
        }
        var best = smallest
        var bestScore = withCentroid(smallest) { kernel.exactScore($0) }
        for c in 0..<count where c != smallest && Double(bounds[c]) <= bestScore {
            let score = withCentroid(c) { kernel.exactScore($0) }
            if score < bestScore || (score == bestScore && c < best) {
                best = c
                bestScore = score
            }
        }
        return best
    }

    /// The `probes` lists whose centroids are nearest `kernel`'s query (by float32 scores:
    /// which lists an approximate search reads), nearest first.
    package func nearestLists(_ kernel: VectorKernel, probes: Int) -> [Int] {
        var scored: [(score: Float, list: Int)] = []
        scored.reserveCapacity(count)
        for c in 0..<count {
            let score = withCentroid(c) { kernel.lowerBound($0, norm: norms[c]) }
            scored.append((score, c))
        }
        scored.sort { $0.score != $1.score ? $0.score < $1.score : $0.list < $1.list }
        return scored.prefix(max(0, probes)).map(\.list)
    }
}
