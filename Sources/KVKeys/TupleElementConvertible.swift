import Foundation
import KVSupport

/// A Swift type that converts to and from a ``TupleElement``.
///
/// `String`, `Substring`, the integer types, `Double`, `Float`, `Bool`, `[UInt8]`, `Data`,
/// `UUID`, `Tuple` and `TupleElement` conform; so `Tuple("users", 42)` and
/// `try tuple.get(1, as: Int.self)` work.
public protocol TupleElementConvertible {
    /// The value as a tuple element.
    var tupleElement: TupleElement { get }
    /// The value of `element`.
    /// - Throws: `.typeMismatch` when `element` is of another type, `.invalidArgument` when
    ///   an integer does not fit.
    init(tupleElement element: TupleElement) throws
    /// The tuple type name, for messages.
    static var tupleTypeName: String { get }
}

private func mismatch(_ element: TupleElement, _ expected: String) -> KVDocsError {
    KVDocsError(.typeMismatch, "\(element) is \(article(element.typeName)), not \(article(expected))")
}

extension TupleElement: TupleElementConvertible {
    public var tupleElement: TupleElement { self }
    public init(tupleElement element: TupleElement) { self = element }
    public static var tupleTypeName: String { "element" }
}

extension String: TupleElementConvertible {
    public var tupleElement: TupleElement { .string(self) }
    public init(tupleElement element: TupleElement) throws {
        guard case .string(let s) = element else { throw mismatch(element, "string") }
        self = s
    }
    public static var tupleTypeName: String { "string" }
}

extension Substring: TupleElementConvertible {
    public var tupleElement: TupleElement { .string(String(self)) }
    public init(tupleElement element: TupleElement) throws { self = Substring(try String(tupleElement: element)) }
    public static var tupleTypeName: String { "string" }
}

extension Bool: TupleElementConvertible {
    public var tupleElement: TupleElement { .bool(self) }
    public init(tupleElement element: TupleElement) throws {
        guard case .bool(let b) = element else { throw mismatch(element, "bool") }
        self = b
    }
    public static var tupleTypeName: String { "bool" }
}

extension Double: TupleElementConvertible {
    public var tupleElement: TupleElement { .double(self) }
    public init(tupleElement element: TupleElement) throws {
        guard case .double(let d) = element else { throw mismatch(element, "double") }
        self = d
    }
    public static var tupleTypeName: String { "double" }
}

extension Float: TupleElementConvertible {
    public var tupleElement: TupleElement { .float(self) }
    public init(tupleElement element: TupleElement) throws {
        guard case .float(let f) = element else { throw mismatch(element, "float") }
        self = f
    }
    public static var tupleTypeName: String { "float" }
}

extension UUID: TupleElementConvertible {
    public var tupleElement: TupleElement { .uuid(self) }
    public init(tupleElement element: TupleElement) throws {
        guard case .uuid(let u) = element else { throw mismatch(element, "uuid") }
        self = u
    }
    public static var tupleTypeName: String { "uuid" }
}

extension Array: TupleElementConvertible where Element == UInt8 {
    public var tupleElement: TupleElement { .bytes(self) }
    public init(tupleElement element: TupleElement) throws {
        guard case .bytes(let b) = element else { throw mismatch(element, "bytes") }
        self = b
    }
    public static var tupleTypeName: String { "bytes" }
}

extension Data: TupleElementConvertible {
    public var tupleElement: TupleElement { .bytes(Array(self)) }
    public init(tupleElement element: TupleElement) throws { self = Data(try [UInt8](tupleElement: element)) }
    public static var tupleTypeName: String { "bytes" }
}

extension Tuple: TupleElementConvertible {
    public var tupleElement: TupleElement { .tuple(self) }
    public init(tupleElement element: TupleElement) throws {
        guard case .tuple(let t) = element else { throw mismatch(element, "tuple") }
        self = t
    }
    public static var tupleTypeName: String { "tuple" }
}

/// Integers convert through `Int64`/`UInt64`, failing when the stored value does not fit.
extension TupleElementConvertible where Self: FixedWidthInteger {
    public var tupleElement: TupleElement {
        if let i = Int64(exactly: self) { return .int(i) }
        return .uint(UInt64(self))  // only unsigned values above Int64.max get here
    }
    public init(tupleElement element: TupleElement) throws {
        let converted: Self?
        switch element {
        case .int(let i): converted = Self(exactly: i)
        case .uint(let u): converted = Self(exactly: u)
        case .largeInteger: converted = nil
        default: throw mismatch(element, "integer")
        }
        guard let converted else {
            throw KVDocsError(.invalidArgument, "integer \(element) does not fit in \(Self.self)")
        }
        self = converted
    }
    public static var tupleTypeName: String { "integer" }
}

extension Int: TupleElementConvertible {}
extension Int8: TupleElementConvertible {}
extension Int16: TupleElementConvertible {}
extension Int32: TupleElementConvertible {}
extension Int64: TupleElementConvertible {}
extension UInt: TupleElementConvertible {}
extension UInt8: TupleElementConvertible {}
extension UInt16: TupleElementConvertible {}
extension UInt32: TupleElementConvertible {}
extension UInt64: TupleElementConvertible {}
