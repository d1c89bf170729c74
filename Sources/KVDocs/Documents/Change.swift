/// One write recorded in the change feed.
public struct Change: Sendable, Hashable, CustomStringConvertible {
    public enum Operation: String, Sendable, Hashable {
        case insert, update, delete
    }

    /// The database-wide sequence number: increasing by one with each write, without gaps.
    public let sequence: Int64
    public let collection: String
    /// The document's primary key.
    public let id: JSONValue
    public let operation: Operation

    public var description: String { "\(sequence) \(operation.rawValue) \(collection) \(id.compactDescription)" }
}
