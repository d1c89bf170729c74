import Foundation

/// Decodes `Decodable` values straight from the binary form (``BinaryJSON``): members are
/// found by binary search over an object's offsets, and no ``JSONValue`` is built except
/// for a scalar being read (or a whole value asked for as `JSONValue`).
///
/// It accepts exactly what ``JSONValueDecoder`` accepts from the same value, with the same
/// errors and coding paths: the scalar rules are shared.
package struct BinaryJSONDecoder {
    /// Decodes a `T` from `bytes` (starting with ``BinaryJSON/marker``).
    /// - Throws: `DecodingError` as ``JSONValueDecoder``; `.decoding` for damaged bytes.
    package static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8], dates: DateStrategy) throws -> T {
        try bytes.withUnsafeBufferPointer { try decode(type, from: $0, dates: dates) }
    }

    /// Decodes a `T` from `bytes` (starting with ``BinaryJSON/marker``) in place: nothing
    /// points into `bytes` once the call returns (``Storage/borrowing(_:_:)``).
    /// - Throws: `DecodingError` as ``JSONValueDecoder``; `.decoding` for damaged bytes.
    package static func decode<T: Decodable>(
        _ type: T.Type, from bytes: UnsafeBufferPointer<UInt8>, dates: DateStrategy
    )
        throws -> T
    {
        guard bytes.first == BinaryJSON.marker else {
            throw BinaryJSON.Reader.damaged("does not start with the binary form's marker", at: 0)
        }
        return try Storage.borrowing(bytes) { storage in
            try Decoder(storage: storage, position: 1, codingPath: [], dates: dates).decode(type)
        }
    }

    /// The bytes decoded, shared by every container of one decode, so that readers point
    /// into them without a closure per read: a private copy, or bytes lent for the length
    /// of one call (``borrowing(_:_:)``).
    package final class Storage {
        private(set) var buffer: UnsafeBufferPointer<UInt8>
        /// The object (its offsets' position) and the member index that the last lookup of
        /// a key found: `Codable` asks for members one after the other, most often in an order
        /// where the next one asked for is the next one stored, tried first.
        var lastFound = (object: -1, index: 0)
        /// Whether ``buffer`` is this storage's own copy, freed with it.
        private var owned: Bool

        private init(lent bytes: UnsafeBufferPointer<UInt8>) {
            buffer = bytes
            owned = false
        }

        deinit {
            if owned { UnsafeMutableBufferPointer(mutating: buffer).deallocate() }
        }

        /// Runs `body` with storage over `bytes` themselves, not a copy. A storage still
        /// referenced when `body` returns (a decoder that what it decoded kept) takes a copy
        /// of the bytes then, so nothing points into `bytes` after the call.
        package static func borrowing<R>(_ bytes: UnsafeBufferPointer<UInt8>, _ body: (Storage) throws -> R) rethrows
            -> R
        {
            var storage = Storage(lent: bytes)
            defer {
                if !isKnownUniquelyReferenced(&storage) { storage.takeCopy() }
            }
            return try body(storage)
        }

        /// Replaces lent bytes by a copy of them.
        private func takeCopy() {
            guard !owned else { return }
            let copy = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: buffer.count)
            _ = copy.initialize(fromContentsOf: buffer)
            buffer = UnsafeBufferPointer(copy)
            owned = true
        }

        /// A reader at `position`.
        @inline(__always)
        func reader(at position: Int) -> BinaryJSON.Reader {
            var reader = BinaryJSON.Reader(buffer)
            reader.position = position
            return reader
        }

        /// Runs `body` with a reader at `position`.
        @inline(__always)
        func read<R>(at position: Int, _ body: (inout BinaryJSON.Reader) throws -> R) rethrows -> R {
            var reader = reader(at: position)
            return try body(&reader)
        }

        /// The tag of the value at `position`.
        func tag(at position: Int) throws -> UInt8 {
            guard position >= 0, position < buffer.count else {
                throw BinaryJSON.Reader.damaged("ends in the middle of a value", at: position)
            }
            return buffer[position]
        }

        /// The whole value at `position`.
        package func value(at position: Int) throws -> JSONValue {
            try read(at: position) { try $0.value(depth: 0) }
        }

        /// Where the value after the one at `position` starts.
        func end(of position: Int) throws -> Int {
            try read(at: position) { r in
                try r.skip()
                return r.position
            }
        }

        // Fast paths for the scalars `Codable` types read most: each returns `nil` when the
        // value is of another kind (or damaged), and the caller then goes the general way
        // (a `JSONValue` and ``JSONValueDecoder``'s rules), which gives the same answer or
        // the same error.

        /// The string at `position`, when it is one.
        func string(at position: Int) -> String? {
            guard position >= 0, position < buffer.count, buffer[position] == BinaryJSON.Tag.string else { return nil }
            var r = reader(at: position + 1)
            return try? r.string()
        }

        /// The integer at `position`, when it is a signed one.
        func integer(at position: Int) -> Int64? {
            guard position >= 0, position < buffer.count, let width = BinaryJSON.Reader.intWidth(tag: buffer[position])
            else { return nil }
            var r = reader(at: position + 1)
            guard let bits = try? r.fixed(width) else { return nil }
            return BinaryJSON.Reader.signExtend(bits, width: width)
        }

        /// The number at `position` as a `Double`, when it is a double or a signed integer.
        func double(at position: Int) -> Double? {
            guard position >= 0, position < buffer.count else { return nil }
            if buffer[position] == BinaryJSON.Tag.double {
                var r = reader(at: position + 1)
                guard let bits = try? r.fixed(8) else { return nil }
                let d = Double(bitPattern: bits)
                return d.isFinite ? d : nil
            }
            return integer(at: position).map(Double.init)
        }

        /// The boolean at `position`, when it is one.
        func bool(at position: Int) -> Bool? {
            guard position >= 0, position < buffer.count else { return nil }
            switch buffer[position] {
            case BinaryJSON.Tag.true: return true
            case BinaryJSON.Tag.false: return false
            default: return nil
            }
        }
    }

    final class Decoder: Swift.Decoder {
        let storage: Storage
        let position: Int
        let codingPath: [any CodingKey]
        let dates: DateStrategy
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        init(storage: Storage, position: Int, codingPath: [any CodingKey], dates: DateStrategy) {
            self.storage = storage
            self.position = position
            self.codingPath = codingPath
            self.dates = dates
        }

        var value: JSONValue {
            get throws { try storage.value(at: position) }
        }

        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            guard let object = try ObjectHeader(storage, at: position) else {
                throw JSONValueDecoder.mismatch([String: JSONValue].self, try value, codingPath)
            }
            return KeyedDecodingContainer(
                KeyedContainer<Key>(storage: storage, object: object, codingPath: codingPath, dates: dates))
        }

        func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
            guard try storage.tag(at: position) == BinaryJSON.Tag.array else {
                throw JSONValueDecoder.mismatch([JSONValue].self, try value, codingPath)
            }
            return try UnkeyedContainer(storage: storage, at: position, codingPath: codingPath, dates: dates)
        }

        func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleValueContainer(decoder: self) }

        /// Decodes `type` from this decoder's value, special-casing what ``JSONValueDecoder`` does.
        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            if type == JSONValue.self || type == Date.self || type == Data.self || type == URL.self
                || type == Decimal.self
            {
                return try JSONValueDecoder.Decoder(value: try value, codingPath: codingPath, dates: dates).decode(type)
            }
            return try T(from: self)
        }
    }

    /// An object's layout: its offsets and members.
    package struct ObjectHeader {
        let width: Int
        let count: Int
        /// Where the offsets start.
        let offsets: Int
        /// Where the first member starts (offsets count from here).
        let first: Int
        /// Where the object ends.
        let end: Int

        /// The object at `position`, or `nil` when the value there is not an object.
        package init?(_ storage: Storage, at position: Int) throws {
            guard let width = BinaryJSON.Reader.offsetWidth(tag: try storage.tag(at: position)) else { return nil }
            (count, offsets, end) = try storage.read(at: position + 1) { r in
                let n = try r.varint()
                let end = try r.bodyEnd()
                guard n <= (end - r.position) / width else {
                    throw BinaryJSON.Reader.damaged("has an object whose count does not fit its length", at: position)
                }
                return (n, r.position, end)
            }
            self.width = width
            first = offsets + count * width
        }

        /// The position of the member `name`'s value, or `nil`: a binary search of the
        /// members, which are in code-point order.
        package func find(_ name: String, in storage: Storage) throws -> Int? {
            var name = name
            return try name.withUTF8 { target in
                var r = storage.reader(at: 0)
                // The member after the one found last in this object, when it is the one.
                if storage.lastFound.object == offsets, storage.lastFound.index + 1 < count {
                    let next = storage.lastFound.index + 1
                    if try compareKey(at: next, with: target, &r) == 0 {
                        storage.lastFound.index = next
                        return r.position
                    }
                }
                var low = 0, high = count
                while low < high {
                    let mid = (low + high) / 2
                    let c = try compareKey(at: mid, with: target, &r)
                    if c == 0 {
                        storage.lastFound = (offsets, mid)
                        return r.position
                    }
                    if c < 0 { low = mid + 1 } else { high = mid }
                }
                return nil
            }
        }

        /// How the key of member `index` compares with `target`; leaves `r` at its value.
        @inline(__always)
        private func compareKey(at index: Int, with target: UnsafeBufferPointer<UInt8>, _ r: inout BinaryJSON.Reader)
            throws -> Int
        {
            r.position = offsets + index * width
            r.position = first + Int(try r.fixed(width))
            guard r.position < end else {
                throw BinaryJSON.Reader.damaged("has a member offset beyond its object", at: offsets + index * width)
            }
            return BinaryJSON.Reader.compare(try r.span(try r.varint()), target)
        }

        /// Every key, in order.
        func keys(in storage: Storage) throws -> [String] {
            try storage.read(at: first) { r in
                var keys: [String] = []
                for _ in 0..<count {
                    keys.append(try r.string())
                    try r.skip()
                }
                return keys
            }
        }
    }

    struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let storage: Storage
        let object: ObjectHeader
        let codingPath: [any CodingKey]
        let dates: DateStrategy

        var allKeys: [Key] { ((try? object.keys(in: storage)) ?? []).compactMap { Key(stringValue: $0) } }
        func contains(_ key: Key) -> Bool { ((try? object.find(key.stringValue, in: storage)) ?? nil) != nil }

        private func position(_ key: Key) throws -> Int {
            guard let p = try object.find(key.stringValue, in: storage) else {
                throw DecodingError.keyNotFound(
                    key, .init(codingPath: codingPath, debugDescription: "no member \"\(key.stringValue)\""))
            }
            return p
        }
        private func value(_ key: Key) throws -> JSONValue { try storage.value(at: try position(key)) }
        private func path(_ key: Key) -> [any CodingKey] { codingPath + [key] }
        private func decoder(_ key: Key) throws -> Decoder {
            Decoder(storage: storage, position: try position(key), codingPath: path(key), dates: dates)
        }

        func decodeNil(forKey key: Key) throws -> Bool { try storage.tag(at: try position(key)) == BinaryJSON.Tag.null }
        // Strings, booleans, doubles and integers are read straight from the bytes; any other
        // kind of value (or one out of range) goes through ``JSONValueDecoder``'s rules,
        // which convert it or throw the same error as for JSON.
        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
            let p = try position(key)
            return try storage.bool(at: p) ?? JSONValueDecoder.bool(storage.value(at: p), path(key))
        }
        func decode(_ type: String.Type, forKey key: Key) throws -> String {
            let p = try position(key)
            return try storage.string(at: p) ?? JSONValueDecoder.string(storage.value(at: p), path(key))
        }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
            let p = try position(key)
            return try storage.double(at: p) ?? JSONValueDecoder.double(storage.value(at: p), path(key))
        }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
            try JSONValueDecoder.float(value(key), path(key))
        }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(type, key) }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(type, key) }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(type, key) }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(type, key) }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(type, key) }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(type, key) }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(type, key) }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(type, key) }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(type, key) }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(type, key) }

        @inline(__always)
        private func integer<I: FixedWidthInteger>(_ type: I.Type, _ key: Key) throws -> I {
            let p = try position(key)
            if let i = storage.integer(at: p), let result = I(exactly: i) { return result }
            return try JSONValueDecoder.integer(type, storage.value(at: p), path(key))
        }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try decoder(key).decode(type) }
        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            guard let p = try object.find(key.stringValue, in: storage), try storage.tag(at: p) != BinaryJSON.Tag.null
            else { return nil }
            return try Decoder(storage: storage, position: p, codingPath: path(key), dates: dates).decode(type)
        }
        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            try decoder(key).container(keyedBy: type)
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try decoder(key).unkeyedContainer()
        }
        func superDecoder() throws -> any Swift.Decoder {
            try superDecoder(named: "super", path: codingPath + [IndexKey(stringValue: "super")])
        }
        func superDecoder(forKey key: Key) throws -> any Swift.Decoder {
            try superDecoder(named: key.stringValue, path: path(key))
        }
        private func superDecoder(named name: String, path: [any CodingKey]) throws -> any Swift.Decoder {
            guard let p = try object.find(name, in: storage) else {
                return JSONValueDecoder.Decoder(value: .null, codingPath: path, dates: dates)
            }
            return Decoder(storage: storage, position: p, codingPath: path, dates: dates)
        }
    }

    struct UnkeyedContainer: UnkeyedDecodingContainer {
        let storage: Storage
        let codingPath: [any CodingKey]
        let dates: DateStrategy
        let total: Int
        let end: Int
        var currentIndex = 0
        /// Where the element at `currentIndex` starts.
        var position: Int
        var count: Int? { total }
        var isAtEnd: Bool { currentIndex >= total }

        init(storage: Storage, at start: Int, codingPath: [any CodingKey], dates: DateStrategy) throws {
            self.storage = storage
            self.codingPath = codingPath
            self.dates = dates
            (total, position, end) = try storage.read(at: start + 1) { r in
                let n = try r.varint()
                let end = try r.bodyEnd()
                guard n <= end - r.position else {
                    throw BinaryJSON.Reader.damaged("has an array whose count does not fit its length", at: start)
                }
                return (n, r.position, end)
            }
        }

        private var path: [any CodingKey] { codingPath + [IndexKey(intValue: currentIndex)] }

        private func check(_ type: Any.Type) throws {
            guard currentIndex < total else {
                throw DecodingError.valueNotFound(
                    type, .init(codingPath: path, debugDescription: "the array has no more elements"))
            }
        }

        private mutating func advance() throws {
            position = try storage.end(of: position)
            guard position <= end else {
                throw BinaryJSON.Reader.damaged("has an array element beyond its end", at: position)
            }
            currentIndex += 1
        }

        private mutating func take<T>(
            _ type: T.Type, _ fast: (Int) -> T? = { _ in nil }, _ body: (JSONValue, [any CodingKey]) throws -> T
        ) throws -> T {
            try check(type)
            let v = try fast(position) ?? body(try storage.value(at: position), path)
            try advance()
            return v
        }

        mutating func decodeNil() throws -> Bool {
            try check(Never.self)
            guard try storage.tag(at: position) == BinaryJSON.Tag.null else { return false }
            try advance()
            return true
        }
        mutating func decode(_ type: Bool.Type) throws -> Bool {
            try take(type, { [storage] in storage.bool(at: $0) }) { try JSONValueDecoder.bool($0, $1) }
        }
        mutating func decode(_ type: String.Type) throws -> String {
            try take(type, { [storage] in storage.string(at: $0) }) { try JSONValueDecoder.string($0, $1) }
        }
        mutating func decode(_ type: Double.Type) throws -> Double {
            try take(type, { [storage] in storage.double(at: $0) }) { try JSONValueDecoder.double($0, $1) }
        }
        mutating func decode(_ type: Float.Type) throws -> Float {
            try take(type) { try JSONValueDecoder.float($0, $1) }
        }
        mutating func decode(_ type: Int.Type) throws -> Int { try integer(type) }
        mutating func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
        mutating func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
        mutating func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
        mutating func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
        mutating func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
        mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
        mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
        mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
        mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

        private mutating func integer<I: FixedWidthInteger>(_ type: I.Type) throws -> I {
            let storage = storage
            return try take(type, { storage.integer(at: $0).flatMap(I.init(exactly:)) }) {
                try JSONValueDecoder.integer(type, $0, $1)
            }
        }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
            try check(type)
            let v = try Decoder(storage: storage, position: position, codingPath: path, dates: dates).decode(type)
            try advance()
            return v
        }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            try check(KeyedDecodingContainer<NestedKey>.self)
            let v = try Decoder(storage: storage, position: position, codingPath: path, dates: dates).container(
                keyedBy: type)
            try advance()
            return v
        }
        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
            try check((any UnkeyedDecodingContainer).self)
            let v = try Decoder(storage: storage, position: position, codingPath: path, dates: dates).unkeyedContainer()
            try advance()
            return v
        }
        mutating func superDecoder() throws -> any Swift.Decoder {
            try check((any Swift.Decoder).self)
            let v = Decoder(storage: storage, position: position, codingPath: path, dates: dates)
            try advance()
            return v
        }
    }

    struct SingleValueContainer: SingleValueDecodingContainer {
        let decoder: Decoder
        var codingPath: [any CodingKey] { decoder.codingPath }
        private var value: JSONValue { get throws { try decoder.value } }

        func decodeNil() -> Bool { (try? decoder.storage.tag(at: decoder.position)) == BinaryJSON.Tag.null }
        private var storage: Storage { decoder.storage }
        private var position: Int { decoder.position }
        func decode(_ type: Bool.Type) throws -> Bool {
            try storage.bool(at: position) ?? JSONValueDecoder.bool(value, codingPath)
        }
        func decode(_ type: String.Type) throws -> String {
            try storage.string(at: position) ?? JSONValueDecoder.string(value, codingPath)
        }
        func decode(_ type: Double.Type) throws -> Double {
            try storage.double(at: position) ?? JSONValueDecoder.double(value, codingPath)
        }
        func decode(_ type: Float.Type) throws -> Float { try JSONValueDecoder.float(value, codingPath) }
        func decode(_ type: Int.Type) throws -> Int { try integer(type) }
        func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
        func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
        func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
        func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
        func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
        func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
        func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
        func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
        func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

        private func integer<I: FixedWidthInteger>(_ type: I.Type) throws -> I {
            if let i = storage.integer(at: position), let result = I(exactly: i) { return result }
            return try JSONValueDecoder.integer(type, value, codingPath)
        }
        func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.decode(type) }
    }
}
