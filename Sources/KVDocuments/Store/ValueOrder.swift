import Foundation
import KVKeys
import KVSupport

/// The total order of JSON values used by indexes, queries and sorting, and its
/// order-preserving encoding as tuple elements.
///
/// Across types: missing < `null` < `false` < `true` < numbers < strings < arrays < objects.
/// Numbers compare numerically whatever their spelling (`30 == 30.0`, `29.5 < 30`), with
/// 64-bit integers exact beyond 2^53; strings compare by UTF-8 bytes; arrays element by
/// element (a prefix first); objects by their canonical JSON text.
///
/// A value encodes as a type tag followed by its payload (`null` → `0`; booleans →
/// `1, b`; numbers → `2, d, r` where `d` is the nearest double and `r` the exact integer
/// remainder; strings → `3, s`; arrays → `4, (elements…)`; objects → `5, json`), so
/// comparing encodings compares values.
public enum ValueOrder {
    enum Tag: Int64 {
        case null = 0, bool = 1, number = 2, string = 3, array = 4, object = 5
    }

    /// Appends the encoding of `value` to `elements`.
    static func append(_ value: JSONValue, to elements: inout [TupleElement]) {
        switch value {
        case .null:
            elements.append(.int(Tag.null.rawValue))
        case .bool(let b):
            elements.append(.int(Tag.bool.rawValue))
            elements.append(.bool(b))
        case .int, .uint, .double:
            let (d, r) = numberKey(value)
            elements.append(.int(Tag.number.rawValue))
            elements.append(.double(d))
            elements.append(.int(r))
        case .string(let s):
            elements.append(.int(Tag.string.rawValue))
            elements.append(.string(s))
        case .array(let a):
            var inner: [TupleElement] = []
            for v in a { append(v, to: &inner) }
            elements.append(.int(Tag.array.rawValue))
            elements.append(.tuple(Tuple(inner)))
        case .object:
            let text = (try? value.canonicalData()).map { String(decoding: $0, as: UTF8.self) } ?? ""
            elements.append(.int(Tag.object.rawValue))
            elements.append(.string(text))
        }
    }

    /// The offset just past the `count` value encodings that start at `from` in `key`:
    /// each a type tag, then its payload's elements (none for `null` and for an index's
    /// missing marker, the tag -1; two for a number; one otherwise).
    /// - Throws: `.decoding` when the bytes end early or are not tuple elements.
    static func end(ofValues count: Int, in key: UnsafeRawBufferPointer, from: Int) throws -> Int {
        var decoder = TupleDecoder(key)
        decoder.position = from
        for _ in 0..<count {
            let tagStart = decoder.position
            guard tagStart < key.count else {
                throw KVDocsError(.decoding, "an index key ends at byte \(tagStart), before its \(count) values")
            }
            try decoder.skipElement()
            // Tags are small integers: 0x14 is 0 (null), 0x15 n is n, 0x13 0xFE is -1 (missing).
            let code = key[tagStart]
            let tag =
                code == 0x15 && decoder.position == tagStart + 2 ? Int(key[tagStart + 1]) : (code == 0x14 ? 0 : -1)
            let payload = tag <= 0 ? 0 : (tag == Int(Tag.number.rawValue) ? 2 : 1)
            for _ in 0..<payload { try decoder.skipElement() }
        }
        return decoder.position
    }

    /// The encoding of one value.
    public static func encode(_ value: JSONValue) -> [TupleElement] {
        var e: [TupleElement] = []
        append(value, to: &e)
        return e
    }

    /// The encoded bytes of one value (for comparisons): the tuple encoding of
    /// ``encode(_:)``, written straight into bytes.
    public static func key(_ value: JSONValue) -> [UInt8] {
        var encoder = TupleEncoder()
        append(value, to: &encoder)
        return encoder.bytes
    }

    /// Appends the tuple encoding of `value`'s elements to `encoder`, as
    /// `Tuple(encode(value))` would encode them (inside a nested tuple when `nested`).
    static func append(_ value: JSONValue, to encoder: inout TupleEncoder, nested: Bool = false) {
        switch value {
        case .null:
            encoder.append(.int(Tag.null.rawValue), nested: nested)
        case .bool(let b):
            encoder.append(.int(Tag.bool.rawValue), nested: nested)
            encoder.append(.bool(b), nested: nested)
        case .int, .uint, .double:
            let (d, r) = numberKey(value)
            encoder.append(.int(Tag.number.rawValue), nested: nested)
            encoder.append(.double(d), nested: nested)
            encoder.append(.int(r), nested: nested)
        case .string(let s):
            encoder.append(.int(Tag.string.rawValue), nested: nested)
            encoder.append(.string(s), nested: nested)
        case .array(let a):
            encoder.append(.int(Tag.array.rawValue), nested: nested)
            encoder.bytes.append(TupleEncoder.Code.nested)
            for v in a { append(v, to: &encoder, nested: true) }
            encoder.bytes.append(0x00)
        case .object:
            let text = (try? value.canonicalData()).map { String(decoding: $0, as: UTF8.self) } ?? ""
            encoder.append(.int(Tag.object.rawValue), nested: nested)
            encoder.append(.string(text), nested: nested)
        }
    }

    /// Compares two values in the total order: negative, zero or positive.
    public static func compare(_ a: JSONValue, _ b: JSONValue) -> Int {
        let ka = key(a), kb = key(b)
        return ka == kb ? 0 : (ka.lexicographicallyPrecedes(kb) ? -1 : 1)
    }

    /// A number as (nearest double, exact remainder): ordering pairs orders the numbers.
    /// -0.0 is 0.
    static func numberKey(_ value: JSONValue) -> (Double, Int64) {
        switch value {
        case .int(let i):
            let d = Double(i)
            return (d, Int64(Int128(i) - Int128(d)))
        case .uint(let u):
            let d = Double(u)
            return (d, Int64(Int128(u) - Int128(d)))
        case .double(let d):
            return (d == 0 ? 0 : d, 0)
        default:
            return (0, 0)
        }
    }

    /// The first encoded element of values of `value`'s type (its tag).
    static func tag(of value: JSONValue) -> Tag {
        switch value {
        case .null: .null
        case .bool: .bool
        case .int, .uint, .double: .number
        case .string: .string
        case .array: .array
        case .object: .object
        }
    }

    /// Decodes one value from `elements` starting at `index`, advancing it; `nil` when the
    /// elements are not a value encoding.
    static func decode(_ elements: [TupleElement], at index: inout Int) -> JSONValue? {
        guard index < elements.count, case .int(let raw) = elements[index], let tag = Tag(rawValue: raw) else {
            return nil
        }
        index += 1
        func next() -> TupleElement? {
            guard index < elements.count else { return nil }
            defer { index += 1 }
            return elements[index]
        }
        switch tag {
        case .null: return .null
        case .bool:
            guard case .bool(let b)? = next() else { return nil }
            return .bool(b)
        case .number:
            guard case .double(let d)? = next(), case .int(let r)? = next() else { return nil }
            if r == 0 && d.rounded() != d { return .double(d) }
            if r == 0, let i = Int64(exactly: d) { return .int(i) }
            let exact = Int128(d) + Int128(r)
            if let i = Int64(exactly: exact) { return .int(i) }
            if let u = UInt64(exactly: exact) { return .uint(u) }
            return .double(d)
        case .string:
            guard case .string(let s)? = next() else { return nil }
            return .string(s)
        case .array:
            guard case .tuple(let t)? = next() else { return nil }
            var values: [JSONValue] = []
            var i = 0
            while i < t.elements.count {
                guard let v = decode(t.elements, at: &i) else { return nil }
                values.append(v)
            }
            return .array(values)
        case .object:
            guard case .string(let s)? = next() else { return nil }
            return try? JSONValue(parsing: Data(s.utf8))
        }
    }
}
