import KVKeys
import KVStorage

extension DocumentStore {
    /// Whether `database` holds a document store under `root`: a schema stored by
    /// ``init(database:schema:root:dates:progress:)`` or ``apply(_:progress:)``.
    ///
    /// Tools use it to open the document layer only where there is one, without writing:
    ///
    /// ```swift
    /// let store = try DocumentStore.exists(in: db) ? DocumentStore(database: db) : nil
    /// ```
    /// - Throws: storage errors (`.closed`, `.corruption`, `.ioError`).
    public static func exists(in database: LevelDB, root: Subspace = Subspace()) throws -> Bool {
        try DocumentCatalog(root: root).holdsDocumentStore(in: database)
    }

    /// Whether `database` is the user layer of a layered store, on its own: a backup or a
    /// copy of one (``LayeredDocumentStore/backup(to:progress:)``). Its values carry layer tags
    /// (``LayeredKeyValueStore``), so it opens only over its base, never as a store of its own.
    ///
    /// ```swift
    /// if try DocumentStore.isUserLayer(db) { print("open it over its base") }
    /// ```
    /// - Throws: storage errors.
    public static func isUserLayer(_ database: LevelDB, root: Subspace = Subspace()) throws -> Bool {
        // The catalog's integers and the change feed's records are tuples, which never
        // start with the tag byte of a present value (0x01 is the tuple code of bytes).
        func tagged(_ value: [UInt8]) -> Bool {
            value == [LayeredKeyValueStore.tombstone]
                || (value.first == LayeredKeyValueStore.present
                    && (try? Tuple(decoding: Array(value.dropFirst()))) != nil)
        }
        let records = DocumentCatalog(root: root)
        for key in [records.sequenceKey, records.formatKey, records.generationKey] {
            if let value = try database.get(key) { return tagged(value) }
        }
        let changes = try database.entries(Layout(root: root).changes.range, limit: 1)
        return try changes.next().map { tagged($0.value) } ?? false
    }
}
