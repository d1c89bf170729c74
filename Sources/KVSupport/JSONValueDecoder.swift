import Foundation

/// Decodes `Decodable` values straight from a ``JSONValue``: no JSON text in between.
///
/// It accepts what Foundation's `JSONDecoder` (default strategies) accepts for the same
/// JSON: an integer type takes any number with an integral value in its range (`1.0`,
/// `1e2`), a floating-point type any number within its range, `Date` as its
/// ``DateStrategy`` writes it (`JSONDecoder`'s default is seconds since 2001),
/// `Data` base64, `URL` a string, `Decimal` a number. Object keys are looked up by exact
/// code points. Failures are `DecodingError`s with the coding path.
package struct JSONValueDecoder {
    /// Decodes a `T` from `value`.
    package static func decode<T: Decodable>(
        _ type: T.Type, from value: JSONValue, dates: DateStrategy = .secondsSince2001
    ) throws -> T {
        try Decoder(value: value, codingPath: [], dates: dates).decode(type)
    }

    final class Decoder: Swift.Decoder {
        let value: JSONValue
        let codingPath: [any CodingKey]
        let dates: DateStrategy
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        init(value: JSONValue, codingPath: [any CodingKey], dates: DateStrategy) {
            self.value = value
            self.codingPath = codingPath
            self.dates = dates
        }

        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            guard case .object(let object) = value else { throw mismatch([String: JSONValue].self, value, codingPath) }
            return KeyedDecodingContainer(KeyedContainer<Key>(object: object, codingPath: codingPath, dates: dates))
        }

        func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
            guard case .array(let array) = value else { throw mismatch([JSONValue].self, value, codingPath) }
            return UnkeyedContainer(array: array, codingPath: codingPath, dates: dates)
        }

        func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleValueContainer(decoder: self) }

        /// Decodes `type` from this decoder's value, special-casing what `JSONDecoder` does.
        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            if type == JSONValue.self, let v = value as? T { return v }
            if type == Date.self { return try cast(dates.date(value, path: codingPath)) }
            if type == Data.self {
                guard case .string(let s) = value else { throw mismatch(type, value, codingPath) }
                guard let data = Data(base64Encoded: s) else {
                    throw DecodingError.dataCorrupted(
                        .init(codingPath: codingPath, debugDescription: "not valid base64"))
                }
                return try cast(data)
            }
            if type == URL.self {
                guard case .string(let s) = value else { throw mismatch(type, value, codingPath) }
                guard let url = URL(string: s) else {
                    throw DecodingError.dataCorrupted(
                        .init(codingPath: codingPath, debugDescription: "not a valid URL: \(s)"))
                }
                return try cast(url)
            }
            if type == Decimal.self {
                guard let text = Self.numberText(value),
                    let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
                else {
                    throw mismatch(type, value, codingPath)
                }
                return try cast(decimal)
            }
            return try T(from: self)
        }

        private func cast<T, U>(_ value: U) throws -> T {
            guard let v = value as? T else {
                throw DecodingError.typeMismatch(
                    T.self, .init(codingPath: codingPath, debugDescription: "internal type mismatch"))
            }
            return v
        }

        /// A number's text as the canonical form writes it.
        static func numberText(_ value: JSONValue) -> String? {
            switch value {
            case .int(let i): return String(i)
            case .uint(let u): return String(u)
            case .double: return value.compactDescription
            default: return nil
            }
        }
    }

    // MARK: - Scalars

    static func mismatch(_ type: Any.Type, _ value: JSONValue, _ path: @autoclosure () -> [any CodingKey])
        -> DecodingError
    {
        let path = path()
        if case .null = value {
            return .valueNotFound(type, .init(codingPath: path, debugDescription: "expected \(type), found null"))
        }
        return .typeMismatch(
            type,
            .init(
                codingPath: path,
                debugDescription:
                    "expected \(type), found \(article(value.typeName)) (\(value.compactDescription.prefix(40)))"))
    }

    static func bool(_ value: JSONValue, _ path: @autoclosure () -> [any CodingKey]) throws -> Bool {
        guard case .bool(let b) = value else { throw mismatch(Bool.self, value, path()) }
        return b
    }

    static func string(_ value: JSONValue, _ path: @autoclosure () -> [any CodingKey]) throws -> String {
        guard case .string(let s) = value else { throw mismatch(String.self, value, path()) }
        return s
    }

    static func double(_ value: JSONValue, _ path: @autoclosure () -> [any CodingKey]) throws -> Double {
        switch value {
        case .int(let i): return Double(i)
        case .uint(let u): return Double(u)
        case .double(let d): return d
        default: throw mismatch(Double.self, value, path())
        }
    }

    static func float(_ value: JSONValue, _ path: @autoclosure () -> [any CodingKey]) throws -> Float {
        let f: Float?
        switch value {
        case .int(let i): f = Float(i)
        case .uint(let u): f = Float(u)
        // From the shortest spelling, as JSONDecoder reads the text (no double rounding).
        case .double(let d): f = Float(d.description)
        default: throw mismatch(Float.self, value, path())
        }
        // A nonzero number that a Float rounds to zero is refused, as JSONDecoder refuses it.
        let nonzero = try double(value, path()) != 0
        guard let f, f.isFinite, f != 0 || !nonzero else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: path(), debugDescription: "\(value.compactDescription) does not fit in Float"))
        }
        return f
    }

    static func integer<I: FixedWidthInteger>(
        _ type: I.Type, _ value: JSONValue, _ path: @autoclosure () -> [any CodingKey]
    ) throws -> I {
        let result: I?
        switch value {
        case .int(let i): result = I(exactly: i)
        case .uint(let u): result = I(exactly: u)
        case .double(let d):
            // Below 2^53 a double holds its integer exactly. Beyond, JSONDecoder reads the
            // number's shortest decimal spelling digit for digit (1.844674407370955e+19 is
            // 18446744073709550000, not the double's exact value): so does this.
            if d.rounded() != d {
                result = nil
            } else if abs(d) < 9_007_199_254_740_992 {
                result = I(exactly: d)
            } else {
                result = Self.integer(spelling: d, as: I.self)
            }
        default: throw mismatch(type, value, path())
        }
        guard let result else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: path(), debugDescription: "\(value.compactDescription) does not fit in \(type)"))
        }
        return result
    }

    /// The integer written by `d`'s shortest spelling (`1.844674407370955e+19` →
    /// 18446744073709550000), or `nil` when it does not fit in `I`.
    static func integer<I: FixedWidthInteger>(spelling d: Double, as type: I.Type) -> I? {
        let text = d.description
        let negative = text.hasPrefix("-")
        let body = negative ? text.dropFirst() : Substring(text)
        let parts = body.split(separator: "e", maxSplits: 1)
        let mantissa = parts.first ?? ""
        let exponent = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
        let pieces = mantissa.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        var digits = String(pieces.first ?? "")
        var fraction = pieces.count > 1 ? String(pieces[1]) : ""
        while fraction.hasSuffix("0") { fraction.removeLast() }
        let shift = exponent - fraction.count
        digits += fraction
        guard shift >= 0, shift < 40 else { return nil }
        digits += String(repeating: "0", count: shift)
        return I((negative ? "-" : "") + digits)
    }

    // MARK: - Containers

    struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let object: JSONObject
        let codingPath: [any CodingKey]
        let dates: DateStrategy

        var allKeys: [Key] { object.compactMap { Key(stringValue: $0.key) } }
        func contains(_ key: Key) -> Bool { object[key.stringValue] != nil }

        private func value(_ key: Key) throws -> JSONValue {
            guard let v = object[key.stringValue] else {
                throw DecodingError.keyNotFound(
                    key, .init(codingPath: codingPath, debugDescription: "no member \"\(key.stringValue)\""))
            }
            return v
        }
        private func path(_ key: Key) -> [any CodingKey] { codingPath + [key] }

        func decodeNil(forKey key: Key) throws -> Bool {
            if case .null = try value(key) { return true }
            return false
        }
        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try bool(value(key), path(key)) }
        func decode(_ type: String.Type, forKey key: Key) throws -> String { try string(value(key), path(key)) }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try double(value(key), path(key)) }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try float(value(key), path(key)) }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(type, value(key), path(key)) }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(type, value(key), path(key)) }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(type, value(key), path(key)) }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(type, value(key), path(key)) }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(type, value(key), path(key)) }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(type, value(key), path(key)) }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(type, value(key), path(key)) }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(type, value(key), path(key)) }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(type, value(key), path(key)) }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(type, value(key), path(key)) }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try Decoder(value: value(key), codingPath: path(key), dates: dates).decode(type)
        }
        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            try Decoder(value: value(key), codingPath: path(key), dates: dates).container(keyedBy: type)
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try Decoder(value: value(key), codingPath: path(key), dates: dates).unkeyedContainer()
        }
        func superDecoder() throws -> any Swift.Decoder {
            Decoder(
                value: object["super"] ?? .null, codingPath: codingPath + [IndexKey(stringValue: "super")], dates: dates
            )
        }
        func superDecoder(forKey key: Key) throws -> any Swift.Decoder {
            Decoder(value: object[key.stringValue] ?? .null, codingPath: path(key), dates: dates)
        }
    }

    struct UnkeyedContainer: UnkeyedDecodingContainer {
        let array: [JSONValue]
        let codingPath: [any CodingKey]
        let dates: DateStrategy
        var currentIndex = 0
        var count: Int? { array.count }
        var isAtEnd: Bool { currentIndex >= array.count }

        init(array: [JSONValue], codingPath: [any CodingKey], dates: DateStrategy) {
            self.array = array
            self.codingPath = codingPath
            self.dates = dates
        }

        private var path: [any CodingKey] { codingPath + [IndexKey(intValue: currentIndex)] }

        private mutating func next(_ type: Any.Type) throws -> JSONValue {
            guard currentIndex < array.count else {
                throw DecodingError.valueNotFound(
                    type, .init(codingPath: path, debugDescription: "the array has no more elements"))
            }
            return array[currentIndex]
        }

        private mutating func take<T>(_ type: T.Type, _ body: (JSONValue, [any CodingKey]) throws -> T) throws -> T {
            let v = try body(next(type), path)
            currentIndex += 1
            return v
        }

        mutating func decodeNil() throws -> Bool {
            guard case .null = try next(Never.self) else { return false }
            currentIndex += 1
            return true
        }
        mutating func decode(_ type: Bool.Type) throws -> Bool { try take(type) { try bool($0, $1) } }
        mutating func decode(_ type: String.Type) throws -> String { try take(type) { try string($0, $1) } }
        mutating func decode(_ type: Double.Type) throws -> Double { try take(type) { try double($0, $1) } }
        mutating func decode(_ type: Float.Type) throws -> Float { try take(type) { try float($0, $1) } }
        mutating func decode(_ type: Int.Type) throws -> Int { try take(type) { try integer(type, $0, $1) } }
        mutating func decode(_ type: Int8.Type) throws -> Int8 { try take(type) { try integer(type, $0, $1) } }
        mutating func decode(_ type: Int16.Type) throws -> Int16 { try take(type) { try integer(type, $0, $1) } }
        mutating func decode(_ type: Int32.Type) throws -> Int32 { try take(type) { try integer(type, $0, $1) } }
        mutating func decode(_ type: Int64.Type) throws -> Int64 { try take(type) { try integer(type, $0, $1) } }
        mutating func decode(_ type: UInt.Type) throws -> UInt { try take(type) { try integer(type, $0, $1) } }
        mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try take(type) { try integer(type, $0, $1) } }
        mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try take(type) { try integer(type, $0, $1) } }
        mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try take(type) { try integer(type, $0, $1) } }
        mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try take(type) { try integer(type, $0, $1) } }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
            let dates = self.dates
            return try take(type) { try Decoder(value: $0, codingPath: $1, dates: dates).decode(type) }
        }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            let dates = self.dates
            return try take(KeyedDecodingContainer<NestedKey>.self) {
                try Decoder(value: $0, codingPath: $1, dates: dates).container(keyedBy: type)
            }
        }
        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
            let dates = self.dates
            return try take((any UnkeyedDecodingContainer).self) {
                try Decoder(value: $0, codingPath: $1, dates: dates).unkeyedContainer()
            }
        }
        mutating func superDecoder() throws -> any Swift.Decoder {
            let dates = self.dates
            return try take((any Swift.Decoder).self) { Decoder(value: $0, codingPath: $1, dates: dates) }
        }
    }

    struct SingleValueContainer: SingleValueDecodingContainer {
        let decoder: Decoder
        var codingPath: [any CodingKey] { decoder.codingPath }
        private var value: JSONValue { decoder.value }

        func decodeNil() -> Bool {
            if case .null = value { return true }
            return false
        }
        func decode(_ type: Bool.Type) throws -> Bool { try bool(value, codingPath) }
        func decode(_ type: String.Type) throws -> String { try string(value, codingPath) }
        func decode(_ type: Double.Type) throws -> Double { try double(value, codingPath) }
        func decode(_ type: Float.Type) throws -> Float { try float(value, codingPath) }
        func decode(_ type: Int.Type) throws -> Int { try integer(type, value, codingPath) }
        func decode(_ type: Int8.Type) throws -> Int8 { try integer(type, value, codingPath) }
        func decode(_ type: Int16.Type) throws -> Int16 { try integer(type, value, codingPath) }
        func decode(_ type: Int32.Type) throws -> Int32 { try integer(type, value, codingPath) }
        func decode(_ type: Int64.Type) throws -> Int64 { try integer(type, value, codingPath) }
        func decode(_ type: UInt.Type) throws -> UInt { try integer(type, value, codingPath) }
        func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type, value, codingPath) }
        func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type, value, codingPath) }
        func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type, value, codingPath) }
        func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type, value, codingPath) }
        func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.decode(type) }
    }
}
