/// The narrow ordered key-value interface that the text and document layers read
/// through: a point read and a scan of a key range in either direction, both at one
/// consistent state of the data.
///
/// `KeyValueReader` is the storage seam. LevelDB implements it today, through
/// ``DatabaseReader`` (the latest state, or a ``Snapshot`` for a fixed one); layered
/// databases and other backends implement it too. Writes go through a ``WriteBatch``
/// applied atomically by the store that owns the data.
///
/// **Invariants.** Every read of one reader sees the same state: a reader made from a
/// snapshot never sees a later write. Keys compare bytewise (or by the store's
/// comparator), and a scan yields each key of its range once, in order.
public protocol KeyValueReader {
    /// The value stored under `key`, or `nil`.
    func value(forKey key: [UInt8]) throws -> [UInt8]?

    /// A cursor over the entries of `range`, in `order`.
    func scan(_ range: KeyRange, order: ScanOrder) throws -> any KeyValueCursor
}

/// Entries of a scan, one at a time, lent to a closure without copying.
public protocol KeyValueCursor: AnyObject {
    /// Calls `body` with the next entry's key and value, which are valid only inside
    /// `body`; returns `nil` at the end of the range.
    /// - Throws: a storage error met while moving (never a silent end), or what `body` throws.
    func next<R>(_ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> R) throws -> R?
}

extension Entries: KeyValueCursor {}

/// A ``KeyValueReader`` over a LevelDB ``Database``: the latest state, or the state of a
/// snapshot when the read options carry one.
public struct DatabaseReader: KeyValueReader {
    public let database: Database
    public let options: ReadOptions

    public init(_ database: Database, options: ReadOptions = ReadOptions()) {
        self.database = database
        self.options = options
    }

    public func value(forKey key: [UInt8]) throws -> [UInt8]? {
        try database.get(key, options: options)
    }

    public func scan(_ range: KeyRange, order: ScanOrder = .forward) throws -> any KeyValueCursor {
        try database.entries(range, order: order, options: options)
    }
}

extension Snapshot {
    /// A reader of the database as this snapshot froze it.
    public var reader: DatabaseReader { DatabaseReader(database, options: readOptions()) }
}
