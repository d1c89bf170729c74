import KVStorage
import KVSupport

/// A region of the key space: every key that starts with a fixed prefix, usually an
/// encoded tuple. Keys inside are the prefix followed by an encoded tuple.
///
/// ```swift
/// let users = Subspace(["app", "users"])
/// let key = users.pack([42, "name"])            // ("app", "users", 42, "name") encoded
/// try users.unpack(key)                         // (42, "name")
/// let byID = users["by_id"]                     // nested: ("app", "users", "by_id")
/// try db.entries(users.range).forEach { entry in … }
/// ```
///
/// KVDocs lays out the whole database in subspaces (collections, indexes, text postings,
/// the catalog), so every key decodes as a tuple and tools can display it.
public struct Subspace: Sendable, Hashable, CustomStringConvertible {
    /// The raw prefix of every key in the subspace.
    public let prefix: [UInt8]

    /// The subspace of keys starting with `tuple`'s encoding.
    public init(_ tuple: Tuple = Tuple()) { prefix = tuple.encoded }

    /// The subspace of keys starting with arbitrary bytes.
    public init(rawPrefix: [UInt8]) { prefix = rawPrefix }

    /// A nested subspace: this prefix followed by `tuple`.
    public func subspace(_ tuple: Tuple) -> Subspace { Subspace(rawPrefix: prefix + tuple.encoded) }

    /// A nested subspace: this prefix followed by the encoded elements.
    public subscript(_ elements: any TupleElementConvertible...) -> Subspace {
        subspace(Tuple(elements.map(\.tupleElement)))
    }

    /// The key for `tuple` inside the subspace.
    public func pack(_ tuple: Tuple) -> [UInt8] { prefix + tuple.encoded }

    /// The key for the tuple of `elements` inside the subspace, encoded straight after the
    /// prefix: one allocation, where `pack(Tuple([...]))` makes three (the elements, their
    /// encoding, the concatenation). For hot paths (a document's key).
    package func pack(_ a: TupleElement, _ b: TupleElement, _ c: TupleElement) -> [UInt8] {
        var encoder = TupleEncoder(prefix: prefix, reserving: 40)
        encoder.append(a, nested: false)
        encoder.append(b, nested: false)
        encoder.append(c, nested: false)
        return encoder.bytes
    }

    /// The tuple after the prefix of `key`.
    /// - Throws: `.invalidArgument` when `key` is not in the subspace, `.decoding` when the
    ///   rest is not a tuple encoding.
    public func unpack<K: ByteRepresentable>(_ key: K) throws -> Tuple {
        try key.withBytes { k in
            guard hasPrefix(k) else {
                throw KVDocsError(
                    .invalidArgument,
                    "key 0x\(Array(k).map { String(format: "%02x", $0) }.joined()) is not in subspace \(self)")
            }
            return try Tuple(decoding: UnsafeRawBufferPointer(rebasing: k[prefix.count...]))
        }
    }

    /// Whether `key` starts with the prefix (the prefix itself included).
    public func contains<K: ByteRepresentable>(_ key: K) -> Bool {
        key.withBytes { hasPrefix($0) }
    }

    private func hasPrefix(_ k: UnsafeRawBufferPointer) -> Bool {
        k.count >= prefix.count && zip(prefix, k).allSatisfy { $0 == $1 }
    }

    /// Every key made by ``pack(_:)`` with a non-empty tuple: `[prefix + 0x00, prefix + 0xFF)`,
    /// as FoundationDB's `Subspace.range()`.
    public var range: KeyRange {
        KeyRange(lower: .included(prefix + [0x00]), upper: .excluded(prefix + [0xFF]))
    }

    /// The keys of tuples that start with `tuple` inside the subspace (the key of `tuple`
    /// itself included), for prefix scans such as "every departure from Perth".
    public func range(startingWith tuple: Tuple) -> KeyRange {
        .prefix(pack(tuple))
    }

    /// `Subspace("app", "users")` when the prefix is a tuple, else its hex.
    public var description: String {
        if let tuple = try? Tuple(decoding: prefix) {
            return "Subspace" + (tuple.count == 1 ? "(\(tuple.elements[0]))" : tuple.description)
        }
        return "Subspace(0x" + prefix.map { String(format: "%02x", $0) }.joined() + ")"
    }
}
