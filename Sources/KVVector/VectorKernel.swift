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

    /// The codes this kernel bounds (``codedLowerBound(_:_:)``): float32 for none.
    package let storage: VectorStorage
    /// `Σ |qᵢ|`, in double precision (the bit codes' error bound).
    let queryL1: Double
    /// `Σ qᵢ` in float32 (the bit codes' dot products).
    let querySum: Float
    /// For bit codes: for each byte of a code and each of its 256 values, the float32 sum of
    /// the query values whose bits are set.
    let bitTable: [Float]
    /// Whether the half-precision codes run on CVectorKernels' F16C kernel.
    let f16c: Bool

    package init(metric: VectorMetric, query: [Float], allowAVX2: Bool = true, storage: VectorStorage = .float32) {
        self.avx2 = allowAVX2 && Self.avx2Available
        self.f16c = allowAVX2 && Self.f16cAvailable
        self.storage = storage
        var l1 = 0.0
        for v in query { l1 += Double(abs(v)) }
        self.queryL1 = l1
        self.querySum = query.reduce(0, +)
        var table: [Float] = []
        if storage == .bit {
            let codeBytes = (query.count + 7) / 8
            table = [Float](repeating: 0, count: codeBytes * 256)
            for byte in 0..<codeBytes {
                for value in 1..<256 {
                    // value's lowest set bit added to the sum of the others.
                    let bit = value.trailingZeroBitCount
                    let index = byte * 8 + bit
                    let q = index < query.count ? query[index] : 0
                    table[byte * 256 + value] = table[byte * 256 + (value & (value - 1))] + q
                }
            }
        }
        self.bitTable = table
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

    /// A lower bound of the exact score of the vector in `slot` of a block of codes (layout
    /// 2, of this kernel's ``storage``), from its code and its stored bounds: with x̂ the
    /// values the code stands for and e ≥ ‖x − x̂‖, `q·x` lies within `q·x̂ ± (‖q‖ e + ρ)`
    /// (ρ the float32 sum's rounding), and ‖q − x‖ ≥ ‖q − x̂‖ − e.
    @inline(__always)
    package func codedLowerBound(_ view: VectorBlock.View, _ slot: Int) -> Float {
        let (scale, codedNorm, error) = view.codeBounds(slot)
        let code = view.code(slot)
        let approximate = codedDot(code, scale: scale)
        let xHat = Double(codedNorm)
        // The rounding of the float32 sum (and of the scaling), bounded generously.
        let rounding =
            storage == .bit
            ? 4 * gamma * Double(scale) * queryL1 + abs(approximate) * 0x1p-22 + Double(scale) * tiny
            : 2 * gamma * queryNorm * xHat + abs(approximate) * 0x1p-22 + Double(scale) * tiny + tiny
        let spread = queryNorm * Double(error) + rounding
        let upper = approximate + spread
        let bound: Double
        switch metric {
        case .dot:
            bound = -upper
        case .cosine:
            let norm = Double(view.norm(slot))
            guard norm > 0, queryNorm > 0 else { return 1 }
            // The stored norm is rounded up; the true one is at least this.
            let low = norm * (1 - 0x1p-20)
            let cosine = min(1, upper > 0 ? upper / (queryNorm * low) : upper / (queryNorm * norm))
            bound = 1 - cosine - 0x1p-40
        case .l2:
            // ‖q − x̂‖² = ‖q‖² + ‖x̂‖² − 2 q·x̂, with ‖x̂‖ at least its rounded-up value's lower neighbour.
            let xLow = xHat * (1 - 0x1p-20)
            let squared = queryNorm * queryNorm * (1 - 0x1p-40) + xLow * xLow - 2 * (approximate + rounding)
            let distance = max(0, squared).squareRoot() - Double(error)
            bound = distance > 0 ? distance * distance * (1 - 0x1p-30) : 0
        }
        guard bound.isFinite else { return -.infinity }
        return Float(bound).nextDown
    }

    /// An estimate of the score of the vector in `slot` of a block of codes: the score of
    /// x̂, the values its code stands for (not a bound; a rescored search ranks by it).
    @inline(__always)
    package func codedEstimate(_ view: VectorBlock.View, _ slot: Int) -> Float {
        let (scale, codedNorm, _) = view.codeBounds(slot)
        let dot = codedDot(view.code(slot), scale: scale)
        let n = Double(codedNorm)
        let estimate: Double
        switch metric {
        case .dot: estimate = -dot
        case .cosine: estimate = n > 0 && queryNorm > 0 ? 1 - dot / (queryNorm * n) : 1
        case .l2: estimate = queryNorm * queryNorm + n * n - 2 * dot
        }
        // Ranked first when it cannot be computed, so that its exact score is.
        return estimate.isFinite ? Float(estimate) : -.infinity
    }

    /// `q·x̂`: a float32 sum, times the scale in double precision (so that a tiny scale does
    /// not underflow), for a code of this kernel's ``storage``.
    @inline(__always)
    func codedDot(_ code: UnsafeRawPointer, scale: Float) -> Double {
        switch storage {
        case .float32:
            return Double(dot(code))
        case .float16:
            if f16c {
                let sum = query.withUnsafeBufferPointer { kv_vector_dot_f16_avx2($0.baseAddress, code, dimensions) }
                return Double(sum)
            }
            var sum: Float = 0
            for i in 0..<dimensions {
                let h = UInt16(littleEndian: code.loadUnaligned(fromByteOffset: i * 2, as: UInt16.self))
                sum += query[i] * VectorCodes.float(fromHalf: h)
            }
            return Double(sum)
        case .int8:
            if avx2 {
                return Double(scale)
                    * Double(query.withUnsafeBufferPointer { kv_vector_dot_i8_avx2($0.baseAddress, code, dimensions) })
            }
            var sum: Float = 0
            for i in 0..<dimensions { sum += query[i] * Float(code.load(fromByteOffset: i, as: Int8.self)) }
            return Double(scale) * Double(sum)
        case .bit:
            // q·x̂ = scale · (Σ over set bits − Σ over clear bits) = scale · (2 Σset − Σq).
            var set: Float = 0
            bitTable.withUnsafeBufferPointer { table in
                for byte in 0..<((dimensions + 7) / 8) {
                    set += table[byte * 256 + Int(code.load(fromByteOffset: byte, as: UInt8.self))]
                }
            }
            return Double(scale) * Double(2 * set - querySum)
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
    /// Whether this processor also runs the F16C kernel.
    package static let f16cAvailable = kv_vector_f16c_available() != 0

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
