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
