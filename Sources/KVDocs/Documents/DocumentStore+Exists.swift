extension DocumentStore {
    /// Whether `database` holds a document store under `root`: a schema stored by
    /// ``init(database:schema:root:progress:)`` or ``apply(_:progress:)``.
    ///
    /// Tools use it to open the document layer only where there is one, without writing:
    ///
    /// ```swift
    /// let store = try DocumentStore.exists(in: db) ? DocumentStore(database: db) : nil
    /// ```
    /// - Throws: storage errors (`.closed`, `.corruption`, `.ioError`).
    public static func exists(in database: Database, root: Subspace = Subspace()) throws -> Bool {
        try Catalog(root: root).holdsDocumentStore(in: database)
    }
}
