import KVSupport

/// The quantized codes of ``VectorStorage``'s smaller forms: how a vector's values become a
/// code, what values the code stands for (x̂), and the stored bounds a search needs.
///
/// A code is deterministic: the same values give the same bytes on every machine, so that a
/// rebuilt block equals the stored one (`verify` compares them).
package enum VectorCodes {
    /// The bytes of one vector's code.
    package static func codeBytes(_ storage: VectorStorage, dimensions: Int) -> Int {
        switch storage {
        case .float32: dimensions * 4
        case .float16: dimensions * 2
        case .int8: dimensions
        case .bit: (dimensions + 7) / 8
        }
    }

    /// A vector's code and what a search bounds with: the scale of int8 and bit codes (1 for
    /// float16), ‖x̂‖ rounded up, and ‖x − x̂‖ rounded up.
    package struct Encoded {
        package var code: [UInt8]
        package var scale: Float
        package var codedNorm: Float
        package var error: Float
    }

    /// The code of `values` (finite) in `storage` (not float32).
    package static func encode(_ values: [Float], _ storage: VectorStorage) -> Encoded {
        var code: [UInt8] = []
        var scale: Float = 1
        var decoded = [Float](repeating: 0, count: values.count)
        switch storage {
        case .float32:
            values.withUnsafeBytes { code.append(contentsOf: $0) }
            decoded = values
        case .float16:
            code.reserveCapacity(values.count * 2)
            for (i, v) in values.enumerated() {
                let h = halfBits(v)
                code.append(UInt8(h & 0xFF))
                code.append(UInt8(h >> 8))
                decoded[i] = float(fromHalf: h)
            }
        case .int8:
            let largest = values.reduce(Float(0)) { max($0, abs($1)) }
            scale = largest > 0 ? largest / 127 : 0
            code.reserveCapacity(values.count)
            for (i, v) in values.enumerated() {
                let c = scale > 0 ? Int8(max(-127, min(127, (v / scale).rounded()))) : 0
                code.append(UInt8(bitPattern: c))
                decoded[i] = scale * Float(c)
            }
        case .bit:
            var sum = 0.0
            for v in values { sum += Double(abs(v)) }
            scale = Float(sum / Double(max(1, values.count)))
            code = [UInt8](repeating: 0, count: (values.count + 7) / 8)
            for (i, v) in values.enumerated() {
                if v >= 0 { code[i >> 3] |= 1 << UInt8(i & 7) }
                decoded[i] = v >= 0 ? scale : -scale
            }
        }
        var norm = 0.0, error = 0.0
        for (v, d) in zip(values, decoded) {
            norm += Double(d) * Double(d)
            error += (Double(v) - Double(d)) * (Double(v) - Double(d))
        }
        // Rounded up, with a margin for the double sums' own rounding.
        return Encoded(
            code: code, scale: scale, codedNorm: Float(norm.squareRoot() * (1 + 0x1p-40)).nextUp,
            error: Float(error.squareRoot() * (1 + 0x1p-40)).nextUp)
    }

    /// The values a code stands for (x̂): what a search's kernels compute with.
    package static func decode(_ code: UnsafeRawPointer, _ storage: VectorStorage, scale: Float, dimensions: Int)
        -> [Float]
    {
        (0..<dimensions).map { i in
            switch storage {
            case .float32: code.loadUnaligned(fromByteOffset: i * 4, as: Float.self)
            case .float16:
                float(fromHalf: UInt16(littleEndian: code.loadUnaligned(fromByteOffset: i * 2, as: UInt16.self)))
            case .int8: scale * Float(code.load(fromByteOffset: i, as: Int8.self))
            case .bit: code.load(fromByteOffset: i >> 3, as: UInt8.self) & (1 << UInt8(i & 7)) != 0 ? scale : -scale
            }
        }
    }

    /// The binary16 nearest `v` (ties to even), magnitudes beyond its range clamped to its
    /// largest finite value.
    static func halfBits(_ v: Float) -> UInt16 {
        let bits = v.bitPattern
        let sign = UInt16((bits >> 16) & 0x8000)
        let magnitude = abs(v)
        if magnitude >= 65504 { return sign | 0x7BFF }
        if magnitude < 0x1p-25 { return sign }
        let exponent = Int(magnitude.exponent)
        if exponent < -14 {
            // Subnormal: a multiple of 2⁻²⁴.
            let scaled = (magnitude * 0x1p24).rounded(.toNearestOrEven)
            return sign | UInt16(scaled)
        }
        // Normal: 10 bits of significand, rounded to nearest even (a carry may bump the exponent).
        let significand = magnitude.significand  // in [1, 2)
        var mantissa = Int(((significand - 1) * 1024).rounded(.toNearestOrEven))
        var e = exponent
        if mantissa == 1024 {
            mantissa = 0
            e += 1
        }
        if e > 15 { return sign | 0x7BFF }
        return sign | UInt16(e + 15) << 10 | UInt16(mantissa)
    }

    /// The float32 value of binary16 `h` (exact).
    static func float(fromHalf h: UInt16) -> Float {
        let sign: Float = h & 0x8000 != 0 ? -1 : 1
        let e = Int((h >> 10) & 0x1F)
        let m = Float(h & 0x3FF)
        switch e {
        case 0: return sign * m * 0x1p-24
        case 31: return m == 0 ? sign * .infinity : .nan
        default: return sign * (1 + m / 1024) * Float(sign: .plus, exponent: e - 15, significand: 1)
        }
    }
}
