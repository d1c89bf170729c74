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
        return node.value
    }

    /// Values encoded without their own `encode(to:)`, as `JSONEncoder` special-cases them.
    static func directValue(_ value: Any, path: [any CodingKey], dates: DateStrategy) throws -> JSONValue? {
        switch value {
        case let v as JSONValue: return v
        case let v as Date: return try dates.json(v, path: path)
        case let v as String: return .string(v)
        case let v as Bool: return .bool(v)
        case let v as Int: return .int(Int64(v))
        case let v as Int64: return .int(v)
        case let v as Double: return try number(v, path: path)
        case let v as Data: return .string(v.base64EncodedString())
        case let v as URL: return .string(v.absoluteString)
        case let v as Decimal: return try JSONValue(parsing: v.description)
        default: return nil
        }
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

    /// A value under construction: containers keep references to their children, so that a
    /// nested container filled later still lands in its parent.
    final class Node {
        enum Storage {
            case value(JSONValue)
            case object([(String, Node)])
            case array([Node])
        }
        var storage: Storage
        init(_ storage: Storage) { self.storage = storage }

        var value: JSONValue {
            switch storage {
            case .value(let v): return v
            case .array(let nodes): return .array(nodes.map(\.value))
            case .object(let members):
                var object = JSONObject()
                for (key, node) in members { object[key] = node.value }
                return .object(object)
            }
        }

        func set(_ key: String, _ node: Node) {
            guard case .object(var members) = storage else { return }
            storage = .value(.null)  // release the array before appending (no copy)
            members.append((key, node))
            storage = .object(members)
        }

        func append(_ node: Node) {
            guard case .array(var nodes) = storage else { return }
            storage = .value(.null)
            nodes.append(node)
            storage = .array(nodes)
        }

        var count: Int {
            if case .array(let nodes) = storage { return nodes.count }
            return 0
        }
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

        /// This encoder's node, made as `storage` the first time; a container asked again
        /// of the same kind shares it.
        func node(_ make: @autoclosure () -> Node.Storage) -> Node {
            if let node { return node }
            let made = Node(make())
            node = made
            return made
        }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            KeyedEncodingContainer(KeyedContainer<Key>(node: node(.object([])), codingPath: codingPath, dates: dates))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            UnkeyedContainer(node: node(.array([])), codingPath: codingPath, dates: dates)
        }

        func singleValueContainer() -> any SingleValueEncodingContainer { SingleValueContainer(encoder: self) }
    }

    /// The node of any value: direct for the special cases, else through its `encode(to:)`.
    static func node<T: Encodable>(_ value: T, path: [any CodingKey], dates: DateStrategy) throws -> Node {
        if let direct = try directValue(value, path: path, dates: dates) { return Node(.value(direct)) }
        let encoder = Encoder(path: path, dates: dates)
        try value.encode(to: encoder)
        // A value that encodes nothing is an empty object, as JSONEncoder writes it.
        return encoder.node ?? Node(.object([]))
    }

    struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let node: Node
        let codingPath: [any CodingKey]
        let dates: DateStrategy

        mutating func encodeNil(forKey key: Key) throws { node.set(key.stringValue, Node(.value(.null))) }
        mutating func encode(_ value: Bool, forKey key: Key) throws {
            node.set(key.stringValue, Node(.value(.bool(value))))
        }
        mutating func encode(_ value: String, forKey key: Key) throws {
            node.set(key.stringValue, Node(.value(.string(value))))
        }
        mutating func encode(_ value: Double, forKey key: Key) throws {
            node.set(key.stringValue, Node(.value(try number(value, path: codingPath + [key]))))
        }
        mutating func encode(_ value: Float, forKey key: Key) throws {
            node.set(key.stringValue, Node(.value(try number(value, path: codingPath + [key]))))
        }
        mutating func encode(_ value: Int, forKey key: Key) throws {
            node.set(key.stringValue, Node(.value(.int(Int64(value)))))
        }
        mutating func encode(_ value: Int8, forKey key: Key) throws {
            node.set(key.stringValue, Node(.value(.int(Int64(value)))))
        }
        mutating func encode(_ value: Int16, forKey key: Key) throws {
            node.set(key.stringValue, Node(.value(.int(Int64(value)))))
        }
        mutating func encode(_ value: Int32, forKey key: Key) throws {
            node.set(key.stringValue, Node(.value(.int(Int64(value)))))
        }
        mutating func encode(_ value: Int64, forKey key: Key) throws {
            node.set(key.stringValue, Node(.value(.int(value))))
        }
        mutating func encode(_ value: UInt, forKey key: Key) throws {
            node.set(key.stringValue, Node(.value(unsigned(UInt64(value)))))
        }
        mutating func encode(_ value: UInt8, forKey key: Key) throws {
            node.set(key.stringValue, Node(.value(.int(Int64(value)))))
        }
        mutating func encode(_ value: UInt16, forKey key: Key) throws {
            node.set(key.stringValue, Node(.value(.int(Int64(value)))))
        }
        mutating func encode(_ value: UInt32, forKey key: Key) throws {
            node.set(key.stringValue, Node(.value(.int(Int64(value)))))
        }
        mutating func encode(_ value: UInt64, forKey key: Key) throws {
            node.set(key.stringValue, Node(.value(unsigned(value))))
        }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            node.set(key.stringValue, try JSONValueEncoder.node(value, path: codingPath + [key], dates: dates))
        }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
            -> KeyedEncodingContainer<NestedKey>
        {
            let child = Node(.object([]))
            node.set(key.stringValue, child)
            return KeyedEncodingContainer(
                KeyedContainer<NestedKey>(node: child, codingPath: codingPath + [key], dates: dates))
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            let child = Node(.array([]))
            node.set(key.stringValue, child)
            return UnkeyedContainer(node: child, codingPath: codingPath + [key], dates: dates)
        }
        mutating func superEncoder() -> any Swift.Encoder { superEncoder(name: "super", key: nil) }
        mutating func superEncoder(forKey key: Key) -> any Swift.Encoder {
            superEncoder(name: key.stringValue, key: key)
        }

        private func superEncoder(name: String, key: (any CodingKey)?) -> any Swift.Encoder {
            let encoder = Encoder(path: codingPath + [key ?? IndexKey(stringValue: name)], dates: dates)
            let child = encoder.node(.object([]))
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

        mutating func encodeNil() throws { node.append(Node(.value(.null))) }
        mutating func encode(_ value: Bool) throws { node.append(Node(.value(.bool(value)))) }
        mutating func encode(_ value: String) throws { node.append(Node(.value(.string(value)))) }
        mutating func encode(_ value: Double) throws { node.append(Node(.value(try number(value, path: nextPath)))) }
        mutating func encode(_ value: Float) throws { node.append(Node(.value(try number(value, path: nextPath)))) }
        mutating func encode(_ value: Int) throws { node.append(Node(.value(.int(Int64(value))))) }
        mutating func encode(_ value: Int8) throws { node.append(Node(.value(.int(Int64(value))))) }
        mutating func encode(_ value: Int16) throws { node.append(Node(.value(.int(Int64(value))))) }
        mutating func encode(_ value: Int32) throws { node.append(Node(.value(.int(Int64(value))))) }
        mutating func encode(_ value: Int64) throws { node.append(Node(.value(.int(value)))) }
        mutating func encode(_ value: UInt) throws { node.append(Node(.value(unsigned(UInt64(value))))) }
        mutating func encode(_ value: UInt8) throws { node.append(Node(.value(.int(Int64(value))))) }
        mutating func encode(_ value: UInt16) throws { node.append(Node(.value(.int(Int64(value))))) }
        mutating func encode(_ value: UInt32) throws { node.append(Node(.value(.int(Int64(value))))) }
        mutating func encode(_ value: UInt64) throws { node.append(Node(.value(unsigned(value)))) }
        mutating func encode<T: Encodable>(_ value: T) throws {
            node.append(try JSONValueEncoder.node(value, path: nextPath, dates: dates))
        }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<
            NestedKey
        > {
            let path = nextPath
            let child = Node(.object([]))
            node.append(child)
            return KeyedEncodingContainer(KeyedContainer<NestedKey>(node: child, codingPath: path, dates: dates))
        }
        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            let path = nextPath
            let child = Node(.array([]))
            node.append(child)
            return UnkeyedContainer(node: child, codingPath: path, dates: dates)
        }
        mutating func superEncoder() -> any Swift.Encoder {
            let encoder = Encoder(path: nextPath, dates: dates)
            let child = encoder.node(.object([]))
            node.append(child)
            return ReferencingEncoder(base: encoder, child: child)
        }
    }

    struct SingleValueContainer: SingleValueEncodingContainer {
        let encoder: Encoder
        var codingPath: [any CodingKey] { encoder.codingPath }

        private func set(_ value: JSONValue) {
            if let node = encoder.node { node.storage = .value(value) } else { encoder.node = Node(.value(value)) }
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
            let child = try JSONValueEncoder.node(value, path: codingPath, dates: encoder.dates)
            if let node = encoder.node { node.storage = child.storage } else { encoder.node = child }
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
            if case .object(let m) = child.storage, m.isEmpty { child.storage = .array([]) }
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
