import KVDocs
import Testing

extension DocumentStore {
    /// The LevelDB database of a store opened on one; the test fails where the store has none.
    public var leveldb: LevelDB {
        get throws { try #require(database, "the store is not opened on a LevelDB database") }
    }
}
