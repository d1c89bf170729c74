import KVSupport

/// Trains the centroids of a vector index's lists: k-means (Lloyd's iterations from a
/// k-means++ seeding) on a sample of the vectors, deterministic for a given sample.
package enum VectorTraining {
    /// How many lists an index of `count` vectors gets: about √count, at most 4,096.
    package static func listCount(for count: Int) -> Int {
        max(1, min(4096, Int(Double(count).squareRoot())))
    }

    /// How many vectors training samples per list.
    package static let samplePerList = 32

    /// Lloyd's iterations after the seeding.
    static let iterations = 8

    /// `lists` centroids for `sample` (vectors of `dimensions` values each, at least one),
    /// clustered by `metric`'s score (``VectorCentroids/list(of:)``); for cosine each centroid
    /// is normalized.
    /// - Parameter trainedOn: the index's vector count, recorded with the centroids.
    package static func train(
        _ sample: [[Float]], lists: Int, dimensions: Int, metric: VectorMetric, trainedOn: Int
    ) -> VectorCentroids {
        let lists = max(1, min(lists, sample.count))
        var rng = SplitMix64(seed: UInt64(truncatingIfNeeded: sample.count) &* 0x9E37_79B9 &+ UInt64(lists))
        // k-means++ seeding: each next centroid drawn with probability proportional to the
        // squared Euclidean distance to the nearest one chosen.
        var chosen: [Int] = [Int(rng.next() % UInt64(sample.count))]
        var nearest = [Double](repeating: .infinity, count: sample.count)
        while chosen.count < lists {
            let last = VectorKernel(metric: .l2, query: sample[chosen[chosen.count - 1]])
            var total = 0.0
            for (i, v) in sample.enumerated() {
                let d = v.withUnsafeBytes { Double(last.squaredDistance($0.baseAddress.unsafelyUnwrapped)) }
                nearest[i] = min(nearest[i], d)
                total += nearest[i]
            }
            guard total > 0 else { break }  // every sample on a chosen one: fewer distinct points
            var target = Double(rng.next() >> 11) * 0x1p-53 * total
            var pick = sample.count - 1
            for i in sample.indices {
                target -= nearest[i]
                if target < 0 {
                    pick = i
                    break
                }
            }
            chosen.append(pick)
        }
        var centroids = chosen.flatMap { sample[$0] }
        for _ in 0..<iterations {
            let current = VectorCentroids(
                values: centroids, dimensions: dimensions, metric: metric, trainedOn: trainedOn)
            var sums = [Double](repeating: 0, count: current.count * dimensions)
            var members = [Int](repeating: 0, count: current.count)
            for v in sample {
                let c = current.list(of: v)
                members[c] += 1
                for j in 0..<dimensions { sums[c * dimensions + j] += Double(v[j]) }
            }
            for c in 0..<current.count where members[c] > 0 {
                var mean = (0..<dimensions).map { sums[c * dimensions + $0] / Double(members[c]) }
                if metric == .cosine {
                    let norm = mean.reduce(0) { $0 + $1 * $1 }.squareRoot()
                    if norm > 0 { mean = mean.map { $0 / norm } }
                }
                for j in 0..<dimensions { centroids[c * dimensions + j] = Float(mean[j]) }
            }
            // An empty list keeps its centroid (a sample point): it stays a valid list.
        }
        return VectorCentroids(values: centroids, dimensions: dimensions, metric: metric, trainedOn: trainedOn)
    }
}
