import KVSupport

/// One write recorded in the change feed.
public struct DocumentChange: Sendable, Hashable, CustomStringConvertible {
    /// What a write did to the document; the raw value is how the change feed stores it.
    public enum Operation: String, Sendable, Hashable {
        /// The document was added: no document had its id before.
        case insert
        /// An existing document was replaced (by an update, or an upsert of an existing id).
        case update
        /// The document was removed. A delete of a missing document writes nothing and
        /// records no change.
        case delete
    }

    /// The database-wide sequence number: increasing by one with each write, without gaps.
    public let sequence: Int64
    /// The name of the collection written.
    public let collection: String
    /// The document's primary key.
    public let id: JSONValue
    /// What the write did to the document.
    public let operation: Operation

    public var description: String { "\(sequence) \(operation.rawValue) \(collection) \(id.compactDescription)" }
}
