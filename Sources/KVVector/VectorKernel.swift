internal import CVectorKernels

#if _endian(big)
#error("KVVector stores float32 values little-endian and reads them in place: a big-endian host is not supported")
#endif

/// The distances of stored vectors to one query vector: a fast float32 estimate with a
/// proven error bound (SIMD over the stored bytes, read in place), and the exact value in
/// double precision.
///
/// A search ranks every vector by its estimate's lower bound and computes exact distances
/// only while a vector could still enter the top k (``NearestSelection``), so that results
/// are exact (ties by id) while the scan runs at float32 speed.
///
/// Internally each metric has a *score*, smaller nearer: the squared Euclidean distance for
/// ``VectorMetric/l2``, `1 − cos` for ``VectorMetric/cosine``, `−a·b` for
/// ``VectorMetric/dot``. ``distance(score:)`` turns a score into the reported distance.
///
/// REQUIRES: every vector handed to it has ``dimensions`` float32 values.
package struct VectorKernel {
    package let metric: VectorMetric
    package let dimensions: Int
    /// The query's values.
    package let query: [Float]
    /// The query's norm, in double precision.
    package let queryNorm: Double
    /// The relative error of a float32 sum of `dimensions` products (with a margin):
    /// `(dimensions + 4) · 2⁻²⁴ · 1.5`.
    let gamma: Double
    /// What float32's gradual underflow may add to a sum of `dimensions` terms, at most.
    let tiny: Double

    /// Whether the float32 sums run on the AVX2 and FMA kernels (x86-64 processors that
    /// have them, checked once), else on the Swift SIMD ones below.
    let avx2: Bool

    package init(metric: VectorMetric, query: [Float], allowAVX2: Bool = true) {
        self.avx2 = allowAVX2 && Self.avx2Available
        self.metric = metric
        self.dimensions = query.count
        self.query = query
        var sum = 0.0
        for v in query { sum += Double(v) * Double(v) }
        self.queryNorm = sum.squareRoot()
        self.gamma = Double(query.count + 4) * 0x1p-24 * 1.5
        self.tiny = Double(query.count + 4) * 0x1p-148
    }

    /// The norm of `values` as a vector index stores it beside them (float32, rounded up so
    /// that it bounds the norm used in error bounds).
    package static func storedNorm(_ values: UnsafeBufferPointer<Float>) -> Float {
        var sum = 0.0
        for v in values { sum += Double(v) * Double(v) }
        return Float(sum.squareRoot()).nextUp
    }

    /// A lower bound of the exact score of the vector at `vector` (its float32 values, in
    /// place, not necessarily aligned) whose stored norm is `norm`.
    @inline(__always)
    package func lowerBound(_ vector: UnsafeRawPointer, norm: Float) -> Float {
        switch metric {
        case .l2:
            // An estimate that overflowed bounds nothing: the vector is then ranked first, so
            // that its exact distance is computed.
            let q = Double(squaredDistance(vector))
            guard q.isFinite else { return -.infinity }
            return Float(q * (1 - 2 * gamma) - tiny).nextDown
        case .dot:
            let q = -Double(dot(vector))
            guard q.isFinite else { return -.infinity }
            return Float(q - 2 * gamma * Double(norm) * queryNorm - tiny).nextDown
        case .cosine:
            let denominator = Double(norm) * queryNorm
            guard denominator > 0 else { return 1 }
            let q = 1 - Double(dot(vector)) / denominator
            guard q.isFinite else { return -.infinity }
            return Float(q - 4 * gamma - 0x1p-60).nextDown
        }
    }

    /// The exact score of the vector at `vector`: computed in double precision from its
    /// float32 values.
    package func exactScore(_ vector: UnsafeRawPointer) -> Double {
        switch metric {
        case .l2:
            var sum = 0.0
            query.withUnsafeBufferPointer { q in
                for i in 0..<dimensions {
                    let d = Double(q[i]) - Double(vector.loadUnaligned(fromByteOffset: i * 4, as: Float.self))
                    sum += d * d
                }
            }
            return sum
        case .dot:
            return -exactDot(vector)
        case .cosine:
            var norm = 0.0
            for i in 0..<dimensions {
                let v = Double(vector.loadUnaligned(fromByteOffset: i * 4, as: Float.self))
                norm += v * v
            }
            let denominator = norm.squareRoot() * queryNorm
            guard denominator > 0 else { return 1 }
            return 1 - exactDot(vector) / denominator
        }
    }

    private func exactDot(_ vector: UnsafeRawPointer) -> Double {
        var sum = 0.0
        query.withUnsafeBufferPointer { q in
            for i in 0..<dimensions {
                sum += Double(q[i]) * Double(vector.loadUnaligned(fromByteOffset: i * 4, as: Float.self))
            }
        }
        return sum
    }

    /// The distance reported for a score: the Euclidean distance for ``VectorMetric/l2``,
    /// the score itself otherwise.
    package func distance(score: Double) -> Double {
        metric == .l2 ? max(0, score).squareRoot() : score
    }

    /// Whether this processor runs CVectorKernels' AVX2 and FMA kernels.
    package static let avx2Available = kv_vector_avx2_available() != 0

    @inline(__always)
    func dot(_ vector: UnsafeRawPointer) -> Float {
        if avx2 { return query.withUnsafeBufferPointer { kv_vector_dot_avx2($0.baseAddress, vector, dimensions) } }
        return Self.dot(query, vector, dimensions)
    }

    @inline(__always)
    func squaredDistance(_ vector: UnsafeRawPointer) -> Float {
        if avx2 { return query.withUnsafeBufferPointer { kv_vector_l2sq_avx2($0.baseAddress, vector, dimensions) } }
        return Self.squaredDistance(query, vector, dimensions)
    }

    // MARK: - float32 SIMD

    /// `Σ aᵢ bᵢ` in float32, eight lanes at a time, four accumulators.
    @inline(__always)
    static func dot(_ a: [Float], _ b: UnsafeRawPointer, _ n: Int) -> Float {
        a.withUnsafeBytes { a in
            guard let a = a.baseAddress else { return 0 }
            var s0 = SIMD8<Float>(), s1 = SIMD8<Float>(), s2 = SIMD8<Float>(), s3 = SIMD8<Float>()
            var i = 0
            while i + 32 <= n {
                let o = i * 4
                s0 +=
                    a.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self)
                    * b.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self)
                s1 +=
                    a.loadUnaligned(fromByteOffset: o + 32, as: SIMD8<Float>.self)
                    * b.loadUnaligned(fromByteOffset: o + 32, as: SIMD8<Float>.self)
                s2 +=
                    a.loadUnaligned(fromByteOffset: o + 64, as: SIMD8<Float>.self)
                    * b.loadUnaligned(fromByteOffset: o + 64, as: SIMD8<Float>.self)
                s3 +=
                    a.loadUnaligned(fromByteOffset: o + 96, as: SIMD8<Float>.self)
                    * b.loadUnaligned(fromByteOffset: o + 96, as: SIMD8<Float>.self)
                i += 32
            }
            while i + 8 <= n {
                s0 +=
                    a.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
                    * b.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
                i += 8
            }
            var sum = ((s0 + s1) + (s2 + s3)).sum()
            while i < n {
                sum +=
                    a.loadUnaligned(fromByteOffset: i * 4, as: Float.self)
                    * b.loadUnaligned(fromByteOffset: i * 4, as: Float.self)
                i += 1
            }
            return sum
        }
    }

    /// `Σ (aᵢ − bᵢ)²` in float32, eight lanes at a time, four accumulators.
    @inline(__always)
    static func squaredDistance(_ a: [Float], _ b: UnsafeRawPointer, _ n: Int) -> Float {
        a.withUnsafeBytes { a in
            guard let a = a.baseAddress else { return 0 }
            var s0 = SIMD8<Float>(), s1 = SIMD8<Float>(), s2 = SIMD8<Float>(), s3 = SIMD8<Float>()
            var i = 0
            while i + 32 <= n {
                let o = i * 4
                let d0 =
                    a.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self)
                    - b.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self)
                let d1 =
                    a.loadUnaligned(fromByteOffset: o + 32, as: SIMD8<Float>.self)
                    - b.loadUnaligned(fromByteOffset: o + 32, as: SIMD8<Float>.self)
                let d2 =
                    a.loadUnaligned(fromByteOffset: o + 64, as: SIMD8<Float>.self)
                    - b.loadUnaligned(fromByteOffset: o + 64, as: SIMD8<Float>.self)
                let d3 =
                    a.loadUnaligned(fromByteOffset: o + 96, as: SIMD8<Float>.self)
                    - b.loadUnaligned(fromByteOffset: o + 96, as: SIMD8<Float>.self)
                s0 += d0 * d0
                s1 += d1 * d1
                s2 += d2 * d2
                s3 += d3 * d3
                i += 32
            }
            while i + 8 <= n {
                let d =
                    a.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
                    - b.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
                s0 += d * d
                i += 8
            }
            var sum = ((s0 + s1) + (s2 + s3)).sum()
            while i < n {
                let d =
                    a.loadUnaligned(fromByteOffset: i * 4, as: Float.self)
                    - b.loadUnaligned(fromByteOffset: i * 4, as: Float.self)
                sum += d * d
                i += 1
            }
            return sum
        }
    }
}
