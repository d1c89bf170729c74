import Foundation
import KVStorage
import KVSupport

/// An ordered list of typed values that encodes to bytes whose order is the tuple's order:
/// the FoundationDB tuple layer encoding (`design/tuple.md`), byte for byte, so other
/// languages' tuple packages read the same keys.
///
/// ```swift
/// let key: Tuple = ["users", 42]
/// try db.put(key, "…")                             // a Tuple is a key anywhere
/// let users = try db.entries(.prefix(Tuple(["users"])))
/// while let entry = try users.next() {
///     let decoded = try Tuple(decoding: entry.key)
///     let id = try decoded.int(at: 1)              // 42
///     print(decoded)                               // ("users", 42)
/// }
/// ```
///
/// Order, equality and hashing follow the encoding: tuples compare element by element,
/// by type code first, then by value (integers numerically, strings by UTF-8 bytes,
/// doubles with -NaN < -inf < … < -0.0 < 0.0 < … < inf < NaN), a prefix first.
public struct Tuple: Sendable, Hashable, Comparable, ExpressibleByArrayLiteral, CustomStringConvertible {
    /// The elements.
    public var elements: [TupleElement]

    /// A tuple of `elements`; the empty tuple by default (its encoding is no bytes).
    public init(_ elements: [TupleElement] = []) { self.elements = elements }
    public init(arrayLiteral elements: TupleElement...) { self.elements = elements }
    /// A tuple of Swift values: `Tuple("users", 42)`.
    public init(_ elements: any TupleElementConvertible...) { self.elements = elements.map(\.tupleElement) }

    /// The number of elements.
    public var count: Int { elements.count }
    /// Whether the tuple has no elements.
    public var isEmpty: Bool { elements.isEmpty }

    /// The element at `index`. REQUIRES: a valid index; use ``element(at:)`` for a checked read.
    public subscript(index: Int) -> TupleElement { elements[index] }

    /// A tuple with `other`'s elements after this one's.
    public func appending(_ other: Tuple) -> Tuple { Tuple(elements + other.elements) }

    /// A tuple with `element` appended.
    public func appending(_ element: any TupleElementConvertible) -> Tuple { Tuple(elements + [element.tupleElement]) }

    /// The tuple's encoding.
    public var encoded: [UInt8] {
        var encoder = TupleEncoder()
        for element in elements { encoder.append(element, nested: false) }
        return encoder.bytes
    }

    /// Every key that is an encoded tuple extending this one (not the tuple's own key):
    /// `[encoded + 0x00, encoded + 0xFF)`, as FoundationDB's `range()`.
    public var range: KeyRange {
        let p = encoded
        return KeyRange(lower: .included(p + [0x00]), upper: .excluded(p + [0xFF]))
    }

    public static func == (a: Tuple, b: Tuple) -> Bool { a.encoded == b.encoded }
    public func hash(into hasher: inout Hasher) { hasher.combine(encoded) }
    public static func < (a: Tuple, b: Tuple) -> Bool { a.encoded.lexicographicallyPrecedes(b.encoded) }

    /// `("users", 42, -1.5, true, nil)`; one element is written `("a",)`.
    public var description: String {
        "(" + elements.map(\.description).joined(separator: ", ") + (elements.count == 1 ? ",)" : ")")
    }
}

extension Tuple: ByteRepresentable {
    /// A tuple is stored as its encoding, so it can be a key or a value anywhere.
    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try encoded.withUnsafeBytes(body)
    }
}

extension Tuple: ByteDecodable {
    public init(storedBytes bytes: UnsafeRawBufferPointer) throws {
        self = try Tuple(decoding: bytes)
    }
}

// MARK: - Typed access

extension Tuple {
    /// The element at `index`.
    /// - Throws: `.invalidArgument` when the tuple has no such element.
    public func element(at index: Int) throws -> TupleElement {
        guard elements.indices.contains(index) else {
            throw KVDocsError(
                .invalidArgument,
                "tuple \(self) has \(count) element\(count == 1 ? "" : "s"); there is no element \(index)")
        }
        return elements[index]
    }

    /// The element at `index` as a `T`.
    /// - Throws: `.invalidArgument` when the tuple has no such element or an integer does
    ///   not fit in `T`; `.typeMismatch` naming the index, the tuple, and both types.
    public func get<T: TupleElementConvertible>(_ index: Int, as type: T.Type = T.self) throws -> T {
        let element = try element(at: index)
        do {
            return try T(tupleElement: element)
        } catch let error as KVDocsError where error.kind == .typeMismatch {
            throw KVDocsError(
                .typeMismatch,
                "element \(index) of \(self) is \(article(element.typeName)), not \(article(T.tupleTypeName))")
        }
    }

    /// The string at `index`.
    /// - Throws: as ``get(_:as:)``.
    public func string(at index: Int) throws -> String { try get(index) }
    /// The integer at `index`.
    /// - Throws: as ``get(_:as:)``; `.invalidArgument` when it does not fit in an `Int`.
    public func int(at index: Int) throws -> Int { try get(index) }
    /// The integer at `index`.
    /// - Throws: as ``get(_:as:)``; `.invalidArgument` when it does not fit in an `Int64`.
    public func int64(at index: Int) throws -> Int64 { try get(index) }
    /// The integer at `index`.
    /// - Throws: as ``get(_:as:)``; `.invalidArgument` when it does not fit in a `UInt64`.
    public func uint64(at index: Int) throws -> UInt64 { try get(index) }
    /// The double at `index` (a float or an integer is a type mismatch).
    /// - Throws: as ``get(_:as:)``.
    public func double(at index: Int) throws -> Double { try get(index) }
    /// The 32-bit float at `index`.
    /// - Throws: as ``get(_:as:)``.
    public func float(at index: Int) throws -> Float { try get(index) }
    /// The boolean at `index`.
    /// - Throws: as ``get(_:as:)``.
    public func bool(at index: Int) throws -> Bool { try get(index) }
    /// The byte string at `index`.
    /// - Throws: as ``get(_:as:)``.
    public func bytes(at index: Int) throws -> [UInt8] { try get(index) }
    /// The UUID at `index`.
    /// - Throws: as ``get(_:as:)``.
    public func uuid(at index: Int) throws -> UUID { try get(index) }
    /// The nested tuple at `index`.
    /// - Throws: as ``get(_:as:)``.
    public func tuple(at index: Int) throws -> Tuple { try get(index) }
    /// Whether the element at `index` is null.
    /// - Throws: `.invalidArgument` when the tuple has no such element.
    public func isNull(at index: Int) throws -> Bool {
        if case .null = try element(at: index) { return true }
        return false
    }
}
