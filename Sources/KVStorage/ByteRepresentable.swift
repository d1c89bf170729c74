import Foundation
import KVSupport

/// A value whose bytes can be lent to LevelDB as a key or a value.
///
/// `[UInt8]`, `ArraySlice<UInt8>`, `Data`, `String` and `Substring` (as UTF-8)
/// conform, so every storage API takes any of them:
///
/// <!-- doc-code: preamble=examples -->
/// ```swift
/// try db.put("user:1", Data(json))
/// try db.put([0x00, 0xFF], "binary key")
/// ```
///
/// The buffer handed to `body` is valid only for the duration of the call.
public protocol ByteRepresentable {
    /// Calls `body` with the value's bytes, valid only during the call.
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R
}

extension Array: ByteRepresentable where Element == UInt8 {
    @inlinable
    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBytes(body)
    }
}

extension ArraySlice: ByteRepresentable where Element == UInt8 {
    @inlinable
    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBytes(body)
    }
}

extension ContiguousArray: ByteRepresentable where Element == UInt8 {
    @inlinable
    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBytes(body)
    }
}

extension Data: ByteRepresentable {
    @inlinable
    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBytes(body)
    }
}

extension String: ByteRepresentable {
    /// The string's UTF-8 bytes, without a terminating NUL.
    @inlinable
    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var copy = self
        return try copy.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
    }
}

extension Substring: ByteRepresentable {
    @inlinable
    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var copy = self
        return try copy.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
    }
}

extension UnsafeRawBufferPointer: ByteRepresentable {
    @inlinable
    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(self)
    }
}

/// A type that can be built from a stored value's bytes (`get(_:as:)`).
public protocol ByteDecodable {
    /// Creates a value from bytes that are valid only during the call.
    /// - Throws: ``KVDocsError`` of kind `.decoding` when the bytes do not form a value.
    init(storedBytes bytes: UnsafeRawBufferPointer) throws
}

extension Array: ByteDecodable where Element == UInt8 {
    public init(storedBytes bytes: UnsafeRawBufferPointer) { self.init(bytes) }
}

extension Data: ByteDecodable {
    public init(storedBytes bytes: UnsafeRawBufferPointer) { self.init(bytes) }
}

extension String: ByteDecodable {
    /// Decodes UTF-8; invalid UTF-8 throws rather than being silently repaired.
    public init(storedBytes bytes: UnsafeRawBufferPointer) throws {
        guard let string = String(validating: bytes, as: UTF8.self) else {
            throw KVDocsError(.decoding, "value is not valid UTF-8 (\(bytes.count) bytes)")
        }
        self = string
    }
}

extension UnsafeRawBufferPointer {
    /// The base address as LevelDB's `const char*`, never nil: LevelDB treats a NULL
    /// bound as "unbounded" in some calls, so an empty buffer gets a valid empty pointer.
    @inline(__always)
    var cChars: UnsafePointer<CChar> {
        guard let base = baseAddress else { return emptyCString }
        return base.assumingMemoryBound(to: CChar.self)
    }
}

/// A static, valid pointer for empty keys and values.
nonisolated(unsafe) let emptyCString: UnsafePointer<CChar> = {
    let p = UnsafeMutablePointer<CChar>.allocate(capacity: 1)
    p.initialize(to: 0)
    return UnsafePointer(p)
}()
