/// Writes tuple elements in the FoundationDB tuple encoding (`design/tuple.md`; the
/// Python binding `fdb/tuple.py` is the reference for boundary cases).
package struct TupleEncoder {
    package var bytes: [UInt8] = []

    package init() { bytes.reserveCapacity(32) }

    /// An encoder appending to `bytes` (nothing reserved: give it a buffer being reused).
    package init(bytes: [UInt8]) { self.bytes = bytes }

    /// An encoder appending to `prefix`, with room for `reserving` more bytes (one
    /// allocation for a key made of a subspace's prefix and a few elements).
    package init(prefix: [UInt8], reserving: Int) {
        bytes.reserveCapacity(prefix.count + reserving)
        bytes.append(contentsOf: prefix)
    }

    package enum Code {
        static let null: UInt8 = 0x00
        static let bytes: UInt8 = 0x01
        static let string: UInt8 = 0x02
        package static let nested: UInt8 = 0x05
        static let negativeLongInt: UInt8 = 0x0B
        static let intZero: UInt8 = 0x14
        static let positiveLongInt: UInt8 = 0x1D
        static let float: UInt8 = 0x20
        static let double: UInt8 = 0x21
        static let `false`: UInt8 = 0x26
        static let `true`: UInt8 = 0x27
        static let uuid: UInt8 = 0x30
        static let versionstamp: UInt8 = 0x33
    }

    /// Appends one element. Inside a nested tuple a null is `00 FF`, so it is not read as the end.
    package mutating func append(_ element: TupleElement, nested: Bool) {
        switch element {
        case .null:
            bytes.append(Code.null)
            if nested { bytes.append(0xFF) }
        case .bytes(let b):
            bytes.append(Code.bytes)
            appendEscaped(b)
        case .string(let s):
            bytes.append(Code.string)
            appendEscaped(s.utf8)
        case .tuple(let t):
            bytes.append(Code.nested)
            for e in t.elements { append(e, nested: true) }
            bytes.append(0x00)
        case .int(let i):
            if i >= 0 {
                appendInteger(negative: false, magnitude: UInt64(i))
            } else {
                appendInteger(negative: true, magnitude: i.magnitude)
            }
        case .uint(let u):
            appendInteger(negative: false, magnitude: u)
        case .largeInteger(let l):
            appendLargeInteger(l)
        case .float(let f):
            appendFloatBits(UInt64(f.bitPattern), byteCount: 4, code: Code.float)
        case .double(let d):
            appendFloatBits(d.bitPattern, byteCount: 8, code: Code.double)
        case .bool(let b):
            bytes.append(b ? Code.true : Code.false)
        case .uuid(let u):
            bytes.append(Code.uuid)
            withUnsafeBytes(of: u.uuid) { bytes.append(contentsOf: $0) }
        case .versionstamp(let v):
            bytes.append(Code.versionstamp)
            bytes.append(contentsOf: v.bytes)
        }
    }

    /// Appends the string whose UTF-8 bytes are `utf8`: the bytes `.string(s)` appends for
    /// `s.utf8 == utf8`, without making the `String`. `utf8` must be valid UTF-8.
    package mutating func appendString(utf8: UnsafeBufferPointer<UInt8>) {
        bytes.append(Code.string)
        appendEscaped(utf8)
    }

    /// Appends the integer `value`: the bytes of `.int(Int64(value))`.
    package mutating func appendInteger(_ value: Int) {
        if value >= 0 {
            appendInteger(negative: false, magnitude: UInt64(value))
        } else {
            appendInteger(negative: true, magnitude: UInt64(value.magnitude))
        }
    }

    /// Bytes followed by `00`, each embedded `00` written `00 FF`.
    private mutating func appendEscaped<S: Sequence>(_ source: S) where S.Element == UInt8 {
        // Contiguous bytes (a native string's UTF-8, an array) are copied in runs between
        // zero bytes, not one byte at a time.
        let copied: Void? = source.withContiguousStorageIfAvailable { run in
            var rest = run[...]
            while let zero = rest.firstIndex(of: 0x00) {
                bytes.append(contentsOf: rest[..<zero])
                bytes.append(0x00)
                bytes.append(0xFF)
                rest = rest[(zero + 1)...]
            }
            bytes.append(contentsOf: rest)
        }
        if copied == nil {
            for byte in source {
                bytes.append(byte)
                if byte == 0x00 { bytes.append(0xFF) }
            }
        }
        bytes.append(0x00)
    }

    /// Integers of up to 8 bytes: `0x14 ± n` and the magnitude (one's complement when
    /// negative) in the fewest bytes. Like the Python binding, |value| = 2^64-1 takes the
    /// long form (`1D 08 FF…` / `0B F7 00…`).
    private mutating func appendInteger(negative: Bool, magnitude: UInt64) {
        if magnitude == 0 {
            bytes.append(Code.intZero)
            return
        }
        if magnitude == UInt64.max {
            appendLargeInteger(LargeInteger(trimmed: [UInt8](repeating: 0xFF, count: 8), isNegative: negative))
            return
        }
        let n = (64 - magnitude.leadingZeroBitCount + 7) / 8
        let payload = negative ? ~magnitude : magnitude
        bytes.append(negative ? Code.intZero - UInt8(n) : Code.intZero + UInt8(n))
        for i in stride(from: n - 1, through: 0, by: -1) {
            bytes.append(UInt8(truncatingIfNeeded: payload >> (8 * UInt64(i))))
        }
    }

    /// Integers of 9 to 255 bytes (and ±(2^64-1)): a code, a length byte (inverted when
    /// negative), and the magnitude (one's complement when negative).
    private mutating func appendLargeInteger(_ value: LargeInteger) {
        let magnitude = value.magnitude
        if magnitude.count <= 8 && !(magnitude.count == 8 && magnitude.allSatisfy { $0 == 0xFF }) {
            // Fits the short form.
            var m: UInt64 = 0
            for b in magnitude { m = m << 8 | UInt64(b) }
            appendInteger(negative: value.isNegative, magnitude: m)
            return
        }
        let length = UInt8(truncatingIfNeeded: magnitude.count)
        if value.isNegative {
            bytes.append(Code.negativeLongInt)
            bytes.append(length ^ 0xFF)
            bytes.append(contentsOf: magnitude.map { ~$0 })
        } else {
            bytes.append(Code.positiveLongInt)
            bytes.append(length)
            bytes.append(contentsOf: magnitude)
        }
    }

    /// IEEE bits big-endian; a positive number's sign bit is flipped, a negative number's
    /// bits are all inverted, so the bytes sort as the numbers.
    private mutating func appendFloatBits(_ bits: UInt64, byteCount: Int, code: UInt8) {
        let signBit: UInt64 = 1 << UInt64(byteCount * 8 - 1)
        let mask: UInt64 = byteCount == 8 ? .max : (1 << UInt64(byteCount * 8)) - 1
        let adjusted = bits & signBit != 0 ? ~bits & mask : bits ^ signBit
        bytes.append(code)
        for i in stride(from: byteCount - 1, through: 0, by: -1) {
            bytes.append(UInt8(truncatingIfNeeded: adjusted >> (8 * UInt64(i))))
        }
    }
}
