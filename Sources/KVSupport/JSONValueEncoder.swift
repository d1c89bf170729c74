import Foundation

/// Encodes `Encodable` values straight into a ``JSONValue``: no JSON text in between.
///
/// The result is exactly what parsing Foundation's `JSONEncoder` output (default
/// strategies) would give: integers as integers, a `Double` with an integral value below
/// 2^53 (inclusive) as an integer (as `JSONEncoder` writes `1.0` as `1`), `-0.0` kept, `Float` by its
/// shortest decimal spelling, `Date` as its ``DateStrategy`` writes it (`JSONEncoder`'s
/// default is ``DateStrategy/secondsSince2001``), `Data` as base64, `URL` as its absolute
/// string, `Decimal` as a number. Non-finite numbers throw.
/// Of duplicate keys in one container, the last wins.
struct JSONValueEncoder {
    /// The JSON value of `value`.
    /// - Throws: `EncodingError.invalidValue` for a non-finite number or a value that
    ///   encodes nothing.
    static func encode<T: Encodable>(_ value: T, dates: DateStrategy = .secondsSince2001) throws -> JSONValue {
        if let direct = try directValue(value, path: [], dates: dates) { return direct }
        let encoder = Encoder(path: [], dates: dates)
        try value.encode(to: encoder)
        guard let node = encoder.node else {
            throw EncodingError.invalidValue(
                value, .init(codingPath: [], debugDescription: "\(T.self) encoded no value"))
        }
        return node.take()
    }

    /// Values encoded without their own `encode(to:)`, as `JSONEncoder` special-cases them.
    /// Chosen by comparing metatypes (a cast to each of the types costs more than encoding
    /// a small value); `nil` for every other type.
    static func directValue<T>(_ value: T, path: [any CodingKey], dates: DateStrategy) throws -> JSONValue? {
        let type = T.self
        if type == String.self, let v = value as? String { return .string(v) }
        if type == Int.self, let v = value as? Int { return .int(Int64(v)) }
        if type == Double.self, let v = value as? Double { return try number(v, path: path) }
        if type == Bool.self, let v = value as? Bool { return .bool(v) }
        if type == Int64.self, let v = value as? Int64 { return .int(v) }
        if type == Date.self, let v = value as? Date { return try dates.json(v, path: path) }
        if type == JSONValue.self, let v = value as? JSONValue { return v }
        if type == Data.self, let v = value as? Data { return .string(v.base64EncodedString()) }
        if type == URL.self, let v = value as? URL { return .string(v.absoluteString) }
        if type == Decimal.self, let v = value as? Decimal { return try JSONValue(parsing: v.description) }
        return nil
    }

    /// A double as `JSONEncoder` writes it and the parser reads it back.
    static func number(_ d: Double, path: @autoclosure () -> [any CodingKey]) throws -> JSONValue {
        guard d.isFinite else {
            throw EncodingError.invalidValue(
                d, .init(codingPath: path(), debugDescription: "\(d) is not a JSON number"))
        }
        if d.rounded() == d && abs(d) <= 9_007_199_254_740_992 {
            if d == 0 && d.sign == .minus { return .double(-0.0) }
            return .int(Int64(d))
        }
        return .double(d)
    }

    /// A float by its shortest spelling, as `JSONEncoder` writes it.
    static func number(_ f: Float, path: @autoclosure () -> [any CodingKey]) throws -> JSONValue {
        guard f.isFinite else {
            throw EncodingError.invalidValue(
                f, .init(codingPath: path(), debugDescription: "\(f) is not a JSON number"))
        }
        var text = f.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        return try JSONValue(parsing: text)
    }

    /// A value under construction: containers keep references to their nested containers,
    /// so that a nested container filled later still lands in its parent; scalars are kept
    /// as values (no node each), appended straight to the container's list.
    final class Node {
        enum Kind { case value, object, array }
        var kind: Kind
        /// The value of a ``Kind/value`` node.
        var scalar: JSONValue = .null
        /// An object's members, in the order encoded (of duplicate keys, the last wins).
        var members: [JSONObject.Element] = []
        /// An array's elements.
        var elements: [JSONValue] = []
        /// The nested containers' nodes and the positions (in ``members`` or ``elements``)
        /// their values take when this node's value is made.
        var nested: [(position: Int, node: Node)] = []

        init(_ kind: Kind, _ scalar: JSONValue = .null) {
            self.kind = kind
            self.scalar = scalar
            // Room for a typical struct's members at once, not four regrowths.
            if kind == .object { members.reserveCapacity(8) }
        }

        /// The finished value, taken once, when encoding is done: the node gives up its
        /// lists (so they are sorted and filled in place, not copied) and is empty after.
        func take() -> JSONValue {
            switch kind {
            case .value: return scalar
            case .array:
                var elements: [JSONValue] = []
                swap(&elements, &self.elements)
                for (position, node) in nested { elements[position] = node.take() }
                nested = []
                return .array(elements)
            case .object:
                var members: [JSONObject.Element] = []
                swap(&members, &self.members)
                for (position, node) in nested { members[position].value = node.take() }
                nested = []
                return .object(JSONObject(parsedMembers: members))
            }
        }

        /// Adds a member.
        func set(_ key: String, _ value: JSONValue) {
            guard kind == .object else { return }
            members.append((key: key, value: value))
        }

        /// Adds a member that is a nested container's node.
        func set(_ key: String, _ node: Node) {
            guard kind == .object else { return }
            nested.append((members.count, node))
            members.append((key: key, value: .null))
        }

        func append(_ value: JSONValue) {
            guard kind == .array else { return }
            elements.append(value)
        }

        /// Adds an element that is a nested container's node.
        func append(_ node: Node) {
            guard kind == .array else { return }
            nested.append((elements.count, node))
            elements.append(.null)
        }

        var count: Int { kind == .array ? elements.count : 0 }
    }

    final class Encoder: Swift.Encoder {
        let codingPath: [any CodingKey]
        let dates: DateStrategy
        var userInfo: [CodingUserInfoKey: Any] { [:] }
        var node: Node?

        init(path: [any CodingKey], dates: DateStrategy) {
            self.codingPath = path
            self.dates = dates
        }

        /// This encoder's node, made of `kind` the first time; a container asked again of
        /// the same kind shares it.
        func node(_ kind: Node.Kind) -> Node {
            if let node { return node }
            let made = Node(kind)
            node = made
            return made
        }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            KeyedEncodingContainer(KeyedContainer<Key>(node: node(.object), codingPath: codingPath, dates: dates))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            UnkeyedContainer(node: node(.array), codingPath: codingPath, dates: dates)
        }

        func singleValueContainer() -> any SingleValueEncodingContainer { SingleValueContainer(encoder: self) }
    }

    /// Any value: direct for the special cases, else through its `encode(to:)` (a finished
    /// value either way: the encoder's containers are done when `encode(to:)` returns).
    static func child<T: Encodable>(_ value: T, path: [any CodingKey], dates: DateStrategy) throws -> JSONValue {
        if let direct = try directValue(value, path: path, dates: dates) { return direct }
        let encoder = Encoder(path: path, dates: dates)
        try value.encode(to: encoder)
        // A value that encodes nothing is an empty object, as JSONEncoder writes it.
        return encoder.node?.take() ?? .object(JSONObject())
    }

    struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let node: Node
        let codingPath: [any CodingKey]
        let dates: DateStrategy

        mutating func encodeNil(forKey key: Key) throws { node.set(key.stringValue, .null) }
        mutating func encode(_ value: Bool, forKey key: Key) throws {
            node.set(key.stringValue, .bool(value))
        }
        mutating func encode(_ value: String, forKey key: Key) throws {
            node.set(key.stringValue, .string(value))
        }
        mutating func encode(_ value: Double, forKey key: Key) throws {
            node.set(key.stringValue, try number(value, path: codingPath + [key]))
        }
        mutating func encode(_ value: Float, forKey key: Key) throws {
            node.set(key.stringValue, try number(value, path: codingPath + [key]))
        }
        mutating func encode(_ value: Int, forKey key: Key) throws {
            node.set(key.stringValue, .int(Int64(value)))
        }
        mutating func encode(_ value: Int8, forKey key: Key) throws {
            node.set(key.stringValue, .int(Int64(value)))
        }
        mutating func encode(_ value: Int16, forKey key: Key) throws {
            node.set(key.stringValue, .int(Int64(value)))
        }
        mutating func encode(_ value: Int32, forKey key: Key) throws {
            node.set(key.stringValue, .int(Int64(value)))
        }
        mutating func encode(_ value: Int64, forKey key: Key) throws {
            node.set(key.stringValue, .int(value))
        }
        mutating func encode(_ value: UInt, forKey key: Key) throws {
            node.set(key.stringValue, unsigned(UInt64(value)))
        }
        mutating func encode(_ value: UInt8, forKey key: Key) throws {
            node.set(key.stringValue, .int(Int64(value)))
        }
        mutating func encode(_ value: UInt16, forKey key: Key) throws {
            node.set(key.stringValue, .int(Int64(value)))
        }
        mutating func encode(_ value: UInt32, forKey key: Key) throws {
            node.set(key.stringValue, .int(Int64(value)))
        }
        mutating func encode(_ value: UInt64, forKey key: Key) throws {
            node.set(key.stringValue, unsigned(value))
        }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            node.set(key.stringValue, try JSONValueEncoder.child(value, path: codingPath + [key], dates: dates))
        }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
            -> KeyedEncodingContainer<NestedKey>
        {
            let child = Node(.object)
            node.set(key.stringValue, child)
            return KeyedEncodingContainer(
                KeyedContainer<NestedKey>(node: child, codingPath: codingPath + [key], dates: dates))
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            let child = Node(.array)
            node.set(key.stringValue, child)
            return UnkeyedContainer(node: child, codingPath: codingPath + [key], dates: dates)
        }
        mutating func superEncoder() -> any Swift.Encoder { superEncoder(name: "super", key: nil) }
        mutating func superEncoder(forKey key: Key) -> any Swift.Encoder {
            superEncoder(name: key.stringValue, key: key)
        }

        private func superEncoder(name: String, key: (any CodingKey)?) -> any Swift.Encoder {
            let encoder = Encoder(path: codingPath + [key ?? IndexKey(stringValue: name)], dates: dates)
            let child = encoder.node(.object)
            node.set(name, child)
            return ReferencingEncoder(base: encoder, child: child)
        }
    }

    struct UnkeyedContainer: UnkeyedEncodingContainer {
        let node: Node
        let codingPath: [any CodingKey]
        let dates: DateStrategy
        var count: Int { node.count }
        private var nextPath: [any CodingKey] { codingPath + [IndexKey(intValue: count)] }

        init(node: Node, codingPath: [any CodingKey], dates: DateStrategy) {
            self.node = node
            self.codingPath = codingPath
            self.dates = dates
        }

        mutating func encodeNil() throws { node.append(.null) }
        mutating func encode(_ value: Bool) throws { node.append(.bool(value)) }
        mutating func encode(_ value: String) throws { node.append(.string(value)) }
        mutating func encode(_ value: Double) throws { node.append(try number(value, path: nextPath)) }
        mutating func encode(_ value: Float) throws { node.append(try number(value, path: nextPath)) }
        mutating func encode(_ value: Int) throws { node.append(.int(Int64(value))) }
        mutating func encode(_ value: Int8) throws { node.append(.int(Int64(value))) }
        mutating func encode(_ value: Int16) throws { node.append(.int(Int64(value))) }
        mutating func encode(_ value: Int32) throws { node.append(.int(Int64(value))) }
        mutating func encode(_ value: Int64) throws { node.append(.int(value)) }
        mutating func encode(_ value: UInt) throws { node.append(unsigned(UInt64(value))) }
        mutating func encode(_ value: UInt8) throws { node.append(.int(Int64(value))) }
        mutating func encode(_ value: UInt16) throws { node.append(.int(Int64(value))) }
        mutating func encode(_ value: UInt32) throws { node.append(.int(Int64(value))) }
        mutating func encode(_ value: UInt64) throws { node.append(unsigned(value)) }
        mutating func encode<T: Encodable>(_ value: T) throws {
            node.append(try JSONValueEncoder.child(value, path: nextPath, dates: dates))
        }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<
            NestedKey
        > {
            let path = nextPath
            let child = Node(.object)
            node.append(child)
            return KeyedEncodingContainer(KeyedContainer<NestedKey>(node: child, codingPath: path, dates: dates))
        }
        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            let path = nextPath
            let child = Node(.array)
            node.append(child)
            return UnkeyedContainer(node: child, codingPath: path, dates: dates)
        }
        mutating func superEncoder() -> any Swift.Encoder {
            let encoder = Encoder(path: nextPath, dates: dates)
            let child = encoder.node(.object)
            node.append(child)
            return ReferencingEncoder(base: encoder, child: child)
        }
    }

    struct SingleValueContainer: SingleValueEncodingContainer {
        let encoder: Encoder
        var codingPath: [any CodingKey] { encoder.codingPath }

        private func set(_ value: JSONValue) {
            if let node = encoder.node {
                node.kind = .value
                node.scalar = value
            } else {
                encoder.node = Node(.value, value)
            }
        }

        mutating func encodeNil() throws { set(.null) }
        mutating func encode(_ value: Bool) throws { set(.bool(value)) }
        mutating func encode(_ value: String) throws { set(.string(value)) }
        mutating func encode(_ value: Double) throws { set(try number(value, path: codingPath)) }
        mutating func encode(_ value: Float) throws { set(try number(value, path: codingPath)) }
        mutating func encode(_ value: Int) throws { set(.int(Int64(value))) }
        mutating func encode(_ value: Int8) throws { set(.int(Int64(value))) }
        mutating func encode(_ value: Int16) throws { set(.int(Int64(value))) }
        mutating func encode(_ value: Int32) throws { set(.int(Int64(value))) }
        mutating func encode(_ value: Int64) throws { set(.int(value)) }
        mutating func encode(_ value: UInt) throws { set(unsigned(UInt64(value))) }
        mutating func encode(_ value: UInt8) throws { set(.int(Int64(value))) }
        mutating func encode(_ value: UInt16) throws { set(.int(Int64(value))) }
        mutating func encode(_ value: UInt32) throws { set(.int(Int64(value))) }
        mutating func encode(_ value: UInt64) throws { set(unsigned(value)) }
        mutating func encode<T: Encodable>(_ value: T) throws {
            set(try JSONValueEncoder.child(value, path: codingPath, dates: encoder.dates))
        }
    }

    /// The encoder of a `superEncoder()`: its node was placed in the parent when made.
    final class ReferencingEncoder: Swift.Encoder {
        let base: Encoder
        let child: Node
        init(base: Encoder, child: Node) {
            self.base = base
            self.child = child
        }
        var codingPath: [any CodingKey] { base.codingPath }
        var userInfo: [CodingUserInfoKey: Any] { [:] }
        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            base.container(keyedBy: type)
        }
        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            if child.kind == .object, child.members.isEmpty { child.kind = .array }
            return base.unkeyedContainer()
        }
        func singleValueContainer() -> any SingleValueEncodingContainer { base.singleValueContainer() }
    }

    /// An unsigned integer as the parser reads it: within Int64, an `int`.
    static func unsigned(_ u: UInt64) -> JSONValue { u <= UInt64(Int64.max) ? .int(Int64(u)) : .uint(u) }
}

/// A key of a path position: an array index, or `super`.
struct IndexKey: CodingKey {
    let stringValue: String
    let intValue: Int?
    init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
    }
    init(intValue: Int) {
        self.stringValue = "Index \(intValue)"
        self.intValue = intValue
    }
}
