import Foundation
import KVStorage
import KVSupport

/// A declared family of keys: a name, a tuple prefix and named, typed components.
///
/// ```swift
/// let departure = try Keyspace(name: "departure", prefix: ["dep"], components: [
///     .init(name: "station", type: .string), .init(name: "time", type: .int),
/// ])
/// let key = try departure.key(["station": "Perth", "time": 1700000000])
/// try departure.decode(key).description     // departure(station: "Perth", time: 1700000000)
/// try db.entries(departure.range(["station": "Perth"])).forEach { entry in … }
/// ```
///
/// A key is the prefix followed by the components in declared order, tuple-encoded,
/// so keys sort by the components in that order. Building a key checks names, types and
/// arity, so keys stay consistent by declaration rather than by hand.
public struct Keyspace: Sendable, Hashable, CustomStringConvertible {
    /// The type of a component.
    ///
    /// The raw value is the name used in keyspace JSON files (`"string"`, `"int"`, …).
    public enum ComponentType: String, Sendable, Hashable, CaseIterable {
        /// A string, sorted by UTF-8 bytes.
        case string
        /// An integer, sorted numerically; any `FixedWidthInteger` up to 64 bits converts.
        case int
        /// A `Double`, sorted numerically (an integer that a double holds exactly is accepted).
        case double
        /// A `Bool`, `false` first.
        case bool
        /// Raw bytes (`[UInt8]` or `Data`), sorted bytewise.
        case bytes
        /// A `UUID`, sorted by its 16 bytes.
        case uuid
        /// A `Date`, stored as a double of seconds since 1970 (so dates sort in time order).
        case date
    }

    /// A named, typed part of a key.
    public struct Component: Sendable, Hashable {
        /// The component's name, unique within its keyspace and not empty.
        public var name: String
        /// The type every value of the component must have.
        public var type: ComponentType
        /// A component; ``Keyspace/init(name:prefix:components:)`` checks the name.
        public init(name: String, type: ComponentType) {
            self.name = name
            self.type = type
        }
    }

    /// The keyspace's name, not empty.
    public let name: String
    /// The tuple every key of the keyspace starts with.
    public let prefix: Tuple
    /// The named parts of a key after the prefix, in key order.
    public let components: [Component]

    /// Declares a keyspace.
    /// - Throws: `.schema` for an empty name, an empty component name or duplicate component names.
    public init(name: String, prefix: Tuple, components: [Component]) throws {
        guard !name.isEmpty else { throw KVDocsError(.schema, "a keyspace needs a non-empty name") }
        var seen = Set<String>()
        for c in components {
            guard !c.name.isEmpty else {
                throw KVDocsError(.schema, "keyspace \"\(name)\": a component needs a non-empty name")
            }
            guard seen.insert(c.name).inserted else {
                throw KVDocsError(.schema, "keyspace \"\(name)\": component \"\(c.name)\" is declared twice")
            }
        }
        self.name = name
        self.prefix = prefix
        self.components = components
    }

    /// The subspace of the keyspace's prefix.
    public var subspace: Subspace { Subspace(prefix) }

    /// The key for a value of every component.
    /// - Throws: `.schema` naming the keyspace and the component for a missing, unknown or
    ///   mistyped value.
    public func key(_ values: [String: any TupleElementConvertible]) throws -> [UInt8] {
        let unknown = Set(values.keys).subtracting(components.map(\.name))
        if let extra = unknown.sorted().first {
            throw KVDocsError(
                .schema, "keyspace \"\(name)\" has no component \"\(extra)\"; its components are \(componentList)")
        }
        let missing = components.filter { values[$0.name] == nil }
        if !missing.isEmpty {
            throw KVDocsError(
                .schema,
                "keyspace \"\(name)\" needs \(components.count) component\(components.count == 1 ? "" : "s") (\(componentList)); missing \(missing.map { "\"\($0.name)\"" }.joined(separator: ", "))"
            )
        }
        return try subspace.pack(Tuple(components.map { try element($0, values[$0.name]!) }))
    }

    /// The key for values given in declared order.
    /// - Throws: `.schema` naming the keyspace for a wrong number of values or a mistyped one.
    public func key(_ values: any TupleElementConvertible...) throws -> [UInt8] {
        guard values.count == components.count else {
            throw KVDocsError(
                .schema,
                "keyspace \"\(name)\" needs \(components.count) component\(components.count == 1 ? "" : "s") (\(componentList)), got \(values.count)"
            )
        }
        return try subspace.pack(Tuple(zip(components, values).map { try element($0, $1) }))
    }

    /// The keys whose leading components have the given values (a prefix scan); the
    /// values must be for the first components in declared order, with no gap. No values
    /// give every key of the keyspace.
    /// - Throws: `.schema` for a value of an unknown component, a component used without the
    ///   ones before it, or a mistyped value.
    public func range(_ leading: [String: any TupleElementConvertible] = [:]) throws -> KeyRange {
        var elements: [TupleElement] = []
        for component in components {
            guard let value = leading[component.name] else { break }
            elements.append(try element(component, value))
        }
        guard elements.count == leading.count else {
            let used = Set(components.prefix(elements.count).map(\.name))
            let stray = leading.keys.filter { !used.contains($0) }.sorted()
            throw KVDocsError(
                .schema,
                "keyspace \"\(name)\": a range takes leading components in order (\(componentList)); \(stray.map { "\"\($0)\"" }.joined(separator: ", ")) cannot be used without the components before it"
            )
        }
        return subspace.range(startingWith: Tuple(elements))
    }

    /// Decodes a key of this keyspace, naming its parts.
    /// - Throws: `.schema` when the key is outside the prefix, has another arity, or a
    ///   component has the wrong type; `.decoding` when it is not a tuple encoding.
    public func decode<K: ByteRepresentable>(_ key: K) throws -> DecodedKey {
        guard subspace.contains(key) else {
            throw KVDocsError(.schema, "key is not in keyspace \"\(name)\" (prefix \(prefix))")
        }
        let tuple = try subspace.unpack(key)
        guard tuple.count == components.count else {
            throw KVDocsError(
                .schema,
                "key \(tuple) has \(tuple.count) component\(tuple.count == 1 ? "" : "s") after the prefix of keyspace \"\(name)\", which declares \(components.count) (\(componentList))"
            )
        }
        for (component, element) in zip(components, tuple.elements) where !Self.matches(element, component.type) {
            throw KVDocsError(
                .schema,
                "keyspace \"\(name)\": component \"\(component.name)\" should be \(article(component.type.rawValue)), found \(article(element.typeName)) \(element)"
            )
        }
        return DecodedKey(keyspace: name, components: zip(components, tuple.elements).map { ($0.name, $0.type, $1) })
    }

    /// `departure("dep",)(station: string, time: int)`: the name, the prefix and the components.
    public var description: String {
        "\(name)\(prefix)(" + components.map { "\($0.name): \($0.type.rawValue)" }.joined(separator: ", ") + ")"
    }

    private var componentList: String { components.map { "\($0.name): \($0.type.rawValue)" }.joined(separator: ", ") }

    /// Converts a value for `component`, checking its type. Integers are accepted for
    /// double and date components when exactly representable.
    private func element(_ component: Component, _ value: any TupleElementConvertible) throws -> TupleElement {
        if let date = value as? Date, component.type == .date {
            return .double(date.timeIntervalSince1970)
        }
        let element = value.tupleElement
        if Self.matches(element, component.type) { return element }
        if component.type == .double || component.type == .date, let d = Self.exactDouble(element) {
            return .double(d)
        }
        throw KVDocsError(
            .schema,
            "keyspace \"\(name)\": component \"\(component.name)\" is \(article(component.type.rawValue)), not \(article(element.typeName)) (\(element))"
        )
    }

    static func matches(_ element: TupleElement, _ type: ComponentType) -> Bool {
        switch (type, element) {
        case (.string, .string), (.int, .int), (.int, .uint), (.int, .largeInteger), (.double, .double),
            (.bool, .bool), (.bytes, .bytes), (.uuid, .uuid), (.date, .double):
            return true
        default:
            return false
        }
    }

    private static func exactDouble(_ element: TupleElement) -> Double? {
        switch element {
        case .int(let i): return Double(exactly: i)
        case .uint(let u): return Double(exactly: u)
        default: return nil
        }
    }
}

/// A key decoded by its keyspace: `departure(station: "Perth", time: 1700000000)`.
///
/// Equal when the keyspace, the component names and the values are; a `date` component is
/// shown as an ISO 8601 date.
public struct DecodedKey: Sendable, Hashable, CustomStringConvertible {
    /// The name of the keyspace that decoded the key.
    public let keyspace: String
    /// The components in declared order with their values.
    public let values: [(name: String, element: TupleElement)]
    private let types: [Keyspace.ComponentType]

    init(keyspace: String, components: [(String, Keyspace.ComponentType, TupleElement)]) {
        self.keyspace = keyspace
        self.values = components.map { ($0.0, $0.2) }
        self.types = components.map(\.1)
    }

    /// The value of the component `name`.
    public subscript(name: String) -> TupleElement? { values.first { $0.name == name }?.element }

    public var description: String {
        let parts = zip(values, types).map { value, type -> String in
            if type == .date, case .double(let seconds) = value.element {
                return "\(value.name): \(Date(timeIntervalSince1970: seconds).formatted(.iso8601))"
            }
            return "\(value.name): \(value.element)"
        }
        return "\(keyspace)(\(parts.joined(separator: ", ")))"
    }

    public static func == (a: DecodedKey, b: DecodedKey) -> Bool {
        a.keyspace == b.keyspace && a.values.map(\.name) == b.values.map(\.name)
            && a.values.map(\.element) == b.values.map(\.element)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(keyspace)
        for v in values {
            hasher.combine(v.name)
            hasher.combine(v.element)
        }
    }
}

extension Date: TupleElementConvertible {
    /// A date is stored as a double of seconds since 1970.
    public var tupleElement: TupleElement { .double(timeIntervalSince1970) }
    public init(tupleElement element: TupleElement) throws {
        self.init(timeIntervalSince1970: try Double(tupleElement: element))
    }
    public static var tupleTypeName: String { "date" }
}
