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
///     count × dimensions × 4 bytes       the centroids, float32 little-endian
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
    }

    /// Stored centroids.
    /// - Throws: `.corruption` (without a location: the caller names the key) for bytes that
    ///   are not centroids of `dimensions` values.
    package init(decoding bytes: [UInt8], dimensions expected: Int, metric: VectorMetric) throws {
        func damaged(_ what: String) -> KVDocsError { KVDocsError(.corruption, "damaged vector centroids: \(what)") }
        guard bytes.first == Self.version else { throw damaged("unknown layout version") }
        let (count, dimensions, trainedOn, start) = try bytes.withUnsafeBytes { raw in
            var i = 1
            return (try Varint.read(raw, &i), try Varint.read(raw, &i), try Varint.read(raw, &i), i)
        }
        guard dimensions == expected else { throw damaged("they have \(dimensions) values, the index \(expected)") }
        guard count > 0, count <= 1 << 16 else { throw damaged("their count is out of range") }
        guard bytes.count - start == count * dimensions * 4 else { throw damaged("their length is wrong") }
        var values = [Float](repeating: 0, count: count * dimensions)
        values.withUnsafeMutableBytes { out in
            bytes.withUnsafeBytes { out.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[start...])) }
        }
        for i in values.indices { values[i] = Float(bitPattern: UInt32(littleEndian: values[i].bitPattern)) }
        guard values.allSatisfy(\.isFinite) else { throw damaged("a value is not finite") }
        self.init(values: values, dimensions: dimensions, metric: metric, trainedOn: trainedOn)
    }

    /// The stored bytes.
    package func encoded() -> [UInt8] {
        var out: [UInt8] = [Self.version]
        Varint.append(count, to: &out)
        Varint.append(dimensions, to: &out)
        Varint.append(trainedOn, to: &out)
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
