import Foundation
import KVStorage
import KVSupport

extension Tuple {
    /// The most levels of nested tuples the decoder follows; deeper input is rejected
    /// instead of exhausting the stack.
    public static let maximumNestingDepth = 128

    /// Decodes a tuple encoding.
    ///
    /// Decoding is total: any bytes either decode or throw a `.decoding` error that gives
    /// the byte offset and the reason. It never traps and runs in time linear in the input.
    public init<Bytes: ByteRepresentable>(decoding bytes: Bytes) throws {
        self = try bytes.withBytes { buffer in
            var decoder = TupleDecoder(buffer)
            return try decoder.decodeAll()
        }
    }
}

/// Reads the FoundationDB tuple encoding. See `TupleEncoder` for the layout.
package struct TupleDecoder {
    let input: UnsafeRawBufferPointer
    package var position = 0

    package init(_ input: UnsafeRawBufferPointer) { self.input = input }

    mutating func decodeAll() throws -> Tuple {
        var elements: [TupleElement] = []
        while position < input.count {
            elements.append(try decodeElement(depth: 0))
        }
        return Tuple(elements)
    }

    private func failure(_ reason: String, at offset: Int) -> KVDocsError {
        KVDocsError(.decoding, "invalid tuple encoding at byte \(offset): \(reason)")
    }

    private mutating func take(_ count: Int, for what: String, start: Int) throws -> UnsafeRawBufferPointer {
        guard count <= input.count - position else {
            throw failure(
                "\(what) needs \(count) byte\(count == 1 ? "" : "s"), \(input.count - position) remain", at: start)
        }
        defer { position += count }
        return UnsafeRawBufferPointer(rebasing: input[position..<(position + count)])
    }

    private mutating func decodeElement(depth: Int) throws -> TupleElement {
        let start = position
        let code = input[position]
        position += 1
        switch code {
        case 0x00:
            return .null
        case 0x01:
            return .bytes(try decodeEscaped(what: "byte string", start: start))
        case 0x02:
            let raw = try decodeEscaped(what: "string", start: start)
            guard let s = String(validating: raw, as: UTF8.self) else {
                throw failure("string is not valid UTF-8", at: start)
            }
            return .string(s)
        case 0x05:
            guard depth < Tuple.maximumNestingDepth else {
                throw failure("tuples nested deeper than \(Tuple.maximumNestingDepth) levels", at: start)
            }
            var elements: [TupleElement] = []
            while true {
                guard position < input.count else { throw failure("nested tuple is not terminated", at: start) }
                if input[position] == 0x00 {
                    if position + 1 < input.count && input[position + 1] == 0xFF {
                        elements.append(.null)
                        position += 2
                        continue
                    }
                    position += 1
                    return .tuple(Tuple(elements))
                }
                elements.append(try decodeElement(depth: depth + 1))
            }
        case 0x0C...0x1C:
            let n = abs(Int(code) - 0x14)
            let payload = try take(n, for: "integer", start: start)
            var value: UInt64 = 0
            for b in payload { value = value << 8 | UInt64(b) }
            if code >= 0x14 { return Self.integer(negative: false, magnitude: value) }
            // One's complement in n bytes: magnitude = (2^(8n) - 1) - value.
            let mask: UInt64 = n == 8 ? .max : (1 << UInt64(8 * n)) - 1
            return Self.integer(negative: true, magnitude: mask - value)
        case 0x0B, 0x1D:
            let lengthByte = try take(1, for: "integer length", start: start)[0]
            let negative = code == 0x0B
            let length = Int(negative ? lengthByte ^ 0xFF : lengthByte)
            let payload = try take(length, for: "integer", start: start)
            let magnitude = negative ? payload.map { ~$0 } : Array(payload)
            return Self.integer(negative: negative, magnitude: Array(magnitude.drop { $0 == 0 }))
        case 0x20:
            let payload = try take(4, for: "float", start: start)
            let bits = UInt32(truncatingIfNeeded: Self.unadjust(payload, byteCount: 4))
            return .float(Float(bitPattern: bits))
        case 0x21:
            let payload = try take(8, for: "double", start: start)
            return .double(Double(bitPattern: Self.unadjust(payload, byteCount: 8)))
        case 0x26:
            return .bool(false)
        case 0x27:
            return .bool(true)
        case 0x30:
            let payload = try take(16, for: "UUID", start: start)
            var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: payload) }
            return .uuid(UUID(uuid: uuid))
        case 0x33:
            let payload = try take(Versionstamp.length, for: "versionstamp", start: start)
            return .versionstamp(try Versionstamp(bytes: Array(payload)))
        default:
            throw failure(String(format: "unknown type code 0x%02x", code), at: start)
        }
    }

    /// Moves past one element without building it (for reading a key's last element
    /// without decoding the ones before). Validates lengths and terminators, not UTF-8.
    package mutating func skipElement() throws {
        let start = position
        var depth = 0
        repeat {
            guard position < input.count else { throw failure("tuple ends inside an element", at: start) }
            let code = input[position]
            position += 1
            switch code {
            case 0x00:
                // A null inside a nested tuple is `00 FF`; a bare `00` there ends the tuple.
                if depth > 0 {
                    if position < input.count && input[position] == 0xFF { position += 1 } else { depth -= 1 }
                }
            case 0x01, 0x02:
                try skipEscaped(start: start)
            case 0x05:
                guard depth < Tuple.maximumNestingDepth else {
                    throw failure("tuples nested deeper than \(Tuple.maximumNestingDepth) levels", at: start)
                }
                depth += 1
            case 0x0C...0x1C: _ = try take(abs(Int(code) - 0x14), for: "integer", start: start)
            case 0x0B, 0x1D:
                let lengthByte = try take(1, for: "integer length", start: start)[0]
                _ = try take(Int(code == 0x0B ? lengthByte ^ 0xFF : lengthByte), for: "integer", start: start)
            case 0x20: _ = try take(4, for: "float", start: start)
            case 0x21: _ = try take(8, for: "double", start: start)
            case 0x26, 0x27: break
            case 0x30: _ = try take(16, for: "UUID", start: start)
            case 0x33: _ = try take(Versionstamp.length, for: "versionstamp", start: start)
            default: throw failure(String(format: "unknown type code 0x%02x", code), at: start)
            }
        } while depth > 0
    }

    /// The offset where the last element of `input[from...]` starts, or `nil` when there
    /// is none.
    package static func lastElementStart(of input: UnsafeRawBufferPointer, from: Int) throws -> Int? {
        var decoder = TupleDecoder(input)
        decoder.position = from
        var last: Int?
        while decoder.position < input.count {
            last = decoder.position
            try decoder.skipElement()
        }
        return last
    }

    /// The offset where the first element of `input` ends.
    package static func firstElementEnd(of input: UnsafeRawBufferPointer) throws -> Int {
        var decoder = TupleDecoder(input)
        try decoder.skipElement()
        return decoder.position
    }

    private mutating func skipEscaped(start: Int) throws {
        // `memchr` finds each `00` (the end, or an escaped `00 FF`) without a loop per byte.
        if let base = input.baseAddress {
            while position < input.count {
                guard let zero = memchr(base + position, 0, input.count - position) else { break }
                position = base.distance(to: UnsafeRawPointer(zero)) + 1
                if position < input.count && input[position] == 0xFF { position += 1 } else { return }
            }
        }
        position = input.count
        throw failure("string is not terminated by 0x00", at: start)
    }

    /// Bytes up to an unescaped `00`; `00 FF` stands for `00`.
    private mutating func decodeEscaped(what: String, start: Int) throws -> [UInt8] {
        var out: [UInt8] = []
        while position < input.count {
            let b = input[position]
            position += 1
            if b == 0x00 {
                if position < input.count && input[position] == 0xFF {
                    out.append(0x00)
                    position += 1
                } else {
                    return out
                }
            } else {
                out.append(b)
            }
        }
        throw failure("\(what) is not terminated by 0x00", at: start)
    }

    /// The canonical element for an integer of up to 64 bits of magnitude.
    static func integer(negative: Bool, magnitude: UInt64) -> TupleElement {
        if !negative {
            return magnitude <= UInt64(Int64.max) ? .int(Int64(magnitude)) : .uint(magnitude)
        }
        if magnitude <= UInt64(Int64.max) { return .int(-Int64(magnitude)) }
        if magnitude == UInt64(Int64.max) + 1 { return .int(.min) }
        return .largeInteger(LargeInteger(trimmed: bigEndian(magnitude), isNegative: true))
    }

    /// The canonical element for a trimmed big-endian magnitude of up to 255 bytes.
    static func integer(negative: Bool, magnitude: [UInt8]) -> TupleElement {
        if magnitude.count <= 8 {
            var m: UInt64 = 0
            for b in magnitude { m = m << 8 | UInt64(b) }
            return integer(negative: negative, magnitude: m)
        }
        return .largeInteger(LargeInteger(trimmed: magnitude, isNegative: negative))
    }

    static func bigEndian(_ value: UInt64) -> [UInt8] {
        let n = (64 - value.leadingZeroBitCount + 7) / 8
        return (0..<n).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64(n - 1 - $0))) }
    }

    /// Undoes the float adjustment: a set sign bit marks a positive number (flip it back),
    /// a clear one a negative number (invert every bit).
    static func unadjust(_ payload: UnsafeRawBufferPointer, byteCount: Int) -> UInt64 {
        var bits: UInt64 = 0
        for b in payload { bits = bits << 8 | UInt64(b) }
        let signBit: UInt64 = 1 << UInt64(byteCount * 8 - 1)
        let mask: UInt64 = byteCount == 8 ? .max : (1 << UInt64(byteCount * 8)) - 1
        return bits & signBit != 0 ? bits ^ signBit : ~bits & mask
    }
}
