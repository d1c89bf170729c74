import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@testable import KVVector

/// The float32 estimates of the scan: on the AVX2 kernels (where this processor has them)
/// and on the Swift SIMD ones, each a lower bound of the exact score.
@Suite struct VectorKernelTests {
    @Test func eachKernelsBoundNeverExceedsTheExactScoreAndTheyAgree() {
        var rng = SplitMix64(seed: 53)
        func value() -> Float {
            switch rng.next() % 10 {
            case 0: return 0
            case 1: return Float(Double(rng.next() % 2001) - 1000) * 1e-30  // tiny: underflow
            case 2: return Float(Double(rng.next() % 2001) - 1000) * 1e15  // huge
            default: return Float(Double(rng.next() >> 11) / Double(1 << 53) * 2 - 1)
            }
        }
        var checked = 0
        for dimensions in [1, 3, 7, 8, 9, 31, 32, 33, 100, 384, 1000] {
            for metric in VectorMetric.allCases {
                for _ in 0..<40 {
                    let query = (0..<dimensions).map { _ in value() }
                    // Near the query (close distances), or anywhere.
                    let stored: [Float] =
                        rng.next() % 2 == 0
                        ? query.map { $0 * (1 + Float(Double(rng.next() % 100) * 1e-7)) }
                        : (0..<dimensions).map { _ in value() }
                    let norm = stored.withUnsafeBufferPointer { VectorKernel.storedNorm($0) }
                    let swift = VectorKernel(metric: metric, query: query, allowAVX2: false)
                    let native = VectorKernel(metric: metric, query: query)
                    stored.withUnsafeBytes { raw in
                        let p = raw.baseAddress.unsafelyUnwrapped
                        let exact = swift.exactScore(p)
                        let a = swift.lowerBound(p, norm: norm)
                        let b = native.lowerBound(p, norm: norm)
                        #expect(Double(a) <= exact, "swift \(metric) d\(dimensions): \(a) > \(exact)")
                        #expect(Double(b) <= exact, "native \(metric) d\(dimensions): \(b) > \(exact)")
                        #expect(native.exactScore(p) == exact)
                        if a.isFinite, b.isFinite, abs(exact) < 1e30 {
                            #expect(abs(Double(a) - Double(b)) <= 1e-3 * max(1, abs(exact)), "\(a) vs \(b)")
                        }
                    }
                    checked += 1
                }
            }
        }
        #expect(checked == 11 * 3 * 40)
    }
}

/// The quantized codes of the lists: each code's bound never exceeds the exact float32
/// score, on the AVX2/F16C kernels and the portable ones, and the half-precision code agrees
/// with Swift's `Float16`.
@Suite struct VectorCodeTests {
    @Test(arguments: [VectorStorage.float16, .int8, .bit])
    func eachCodesBoundNeverExceedsTheExactScore(storage: VectorStorage) throws {
        var rng = SplitMix64(seed: 54)
        func value() -> Float {
            switch rng.next() % 12 {
            case 0: return 0
            case 1: return Float(Double(rng.next() % 2001) - 1000) * 1e-30  // tiny: underflow
            case 2: return Float(Double(rng.next() % 2001) - 1000) * 1e15  // huge: beyond float16
            case 3: return Float(Double(rng.next() % 2001) - 1000) * 1e-6  // float16 subnormals
            default: return Float(Double(rng.next() >> 11) / Double(1 << 53) * 2 - 1)
            }
        }
        for dimensions in [1, 7, 8, 9, 16, 17, 33, 100, 384] {
            for metric in VectorMetric.allCases {
                for _ in 0..<30 {
                    let query = (0..<dimensions).map { _ in value() }
                    // Several stored vectors, near the query or anywhere, one block.
                    let entries = (0..<6).map { i in
                        let values: [Float] =
                            i % 2 == 0
                            ? query.map { $0 * (1 + Float(Double(rng.next() % 100) * 1e-4)) }
                            : (0..<dimensions).map { _ in value() }
                        return VectorBlock.Entry(id: Tuple([.int(Int64(i))]).encoded, values: values)
                    }
                    let bytes = VectorBlock.encode(entries, dimensions: dimensions, storage: storage)
                    try bytes.withUnsafeBytes { raw in
                        let view = try VectorBlock.View(raw, dimensions: dimensions)
                        #expect(view.storage == storage)
                        #expect(try view.entries() == entries)
                        for allowAVX2 in [false, true] {
                            let kernel = VectorKernel(
                                metric: metric, query: query, allowAVX2: allowAVX2, storage: storage)
                            for slot in 0..<view.count {
                                let exact = kernel.exactScore(view.vector(slot))
                                let bound = kernel.codedLowerBound(view, slot)
                                #expect(
                                    Double(bound) <= exact,
                                    "\(storage) \(metric) d\(dimensions) avx2 \(allowAVX2): \(bound) > \(exact)")
                            }
                        }
                    }
                }
            }
        }
    }

    /// Codes of vectors near the query bound tightly enough to prune: the bound of the
    /// nearest is below the exact score of a far vector.
    @Test func boundsOfNearVectorsSeparateThemFromFarOnes() throws {
        let query: [Float] = (0..<64).map { Float(sin(Double($0))) }
        let near = VectorBlock.Entry(id: [1], values: query.map { $0 * 1.01 })
        let far = VectorBlock.Entry(id: [2], values: query.map { -$0 })
        for storage in [VectorStorage.float16, .int8, .bit] {
            let bytes = VectorBlock.encode([near, far], dimensions: 64, storage: storage)
            try bytes.withUnsafeBytes { raw in
                let view = try VectorBlock.View(raw, dimensions: 64)
                let kernel = VectorKernel(metric: .cosine, query: query, storage: storage)
                #expect(Double(kernel.codedLowerBound(view, 0)) < kernel.exactScore(view.vector(1)), "\(storage)")
                #expect(kernel.codedLowerBound(view, 1) > 1, "\(storage)")
            }
        }
    }

    #if !(os(macOS) && arch(x86_64))
    /// The binary16 conversions against Swift's `Float16` (round to nearest even), over
    /// normals, subnormals, ties and the edges of the range.
    @Test func halfPrecisionCodesAgreeWithSwiftsFloat16() {
        var rng = SplitMix64(seed: 55)
        var values: [Float] = [
            0, -0, 1, -1, 65504, -65504, 0x1p-14, 0x1p-24, 0x1p-25, 0x1.8p-25, 0x1p-26, 65519, 2049, 2051
        ]
        for _ in 0..<20000 {
            let magnitude = Float(bitPattern: UInt32(truncatingIfNeeded: rng.next()) & 0x7FFF_FFFF)
            guard magnitude.isFinite, magnitude < 65504 else { continue }
            values.append(rng.next() % 2 == 0 ? magnitude : -magnitude)
        }
        for v in values {
            let h = VectorCodes.halfBits(v)
            #expect(h == Float16(v).bitPattern || (v == 0 && h & 0x7FFF == 0), "\(v)")
            #expect(VectorCodes.float(fromHalf: h) == Float(Float16(bitPattern: h)), "\(v)")
        }
    }
    #endif
}
