import KVSupport

/// Several document writes applied in one LevelDB write batch: all of them or none.
///
/// <!-- doc-code: preamble=examples -->
/// ```swift
/// try store.write { batch in
///     try batch.insert("people", ["id": "p1", "age": 30])
///     try batch.upsert("people", encoding: Person(id: "p2", name: "Ada", age: 36))
///     try batch.delete("people", id: "p0")
/// }
/// ```
///
/// `Codable` values are written with ``insert(_:encoding:)``, ``upsert(_:encoding:)`` and
/// ``update(_:encoding:)``, dates as the store writes them; ids may be given as Swift values.
///
/// Later writes in the batch see earlier ones (ids, unique values). If the body throws, or
/// any write fails, nothing is written.
public struct DocumentBatch: ~Copyable {
    let context: DocumentStore.WriteContext

    /// The document of `collection` with primary key `id` as the batch sees it: with the
    /// batch's earlier writes, else as stored when the batch runs.
    ///
    /// Read inside the write, so a read-modify-write is atomic: over LevelDB no other write
    /// runs meanwhile; over a store that other processes write, a batch whose document another
    /// writer changed before it committed runs again on the new state.
    ///
    /// <!-- doc-code: preamble=examples -->
    /// ```swift
    /// try store.write { batch in
    ///     var visits: Int64 = 0
    ///     if case .int(let n)? = try batch.get("people", id: "p1")?["visits"] { visits = n }
    ///     try batch.update("people", ["id": "p1", "visits": .int(visits + 1)])
    /// }
    /// ```
    /// - Throws: `.schema` for an unknown collection, `.notSupported` for a replicated one,
    ///   `.invalidArgument` for an id that is not a string or an integer; storage errors.
    public func get(_ collection: String, id: JSONValue) throws -> JSONValue? {
        try context.document(collection, id: id)
    }

    /// Adds a document to the batch.
    /// - Parameters:
    ///   - collection: the name of a collection of the store's schema.
    ///   - document: a JSON object whose primary-key field holds a string or an integer.
    /// - Returns: the change the write records (committed only if the whole batch is).
    /// - Throws: `.conflict` when a document with its id exists (in the store or earlier in
    ///   the batch), `.uniqueViolation` for a unique index, `.invalidArgument` for a document
    ///   that is not an object or lacks a valid primary key, `.schema` for an unknown
    ///   collection. After a unique violation the batch cannot be committed: `write` throws.
    @discardableResult
    public func insert(_ collection: String, _ document: JSONValue) throws -> DocumentChange {
        try required(context.write(collection, .insert, document: document, id: nil))
    }

    /// Adds a document to the batch, or replaces the one with the same id.
    /// - Parameters:
    ///   - collection: the name of a collection of the store's schema.
    ///   - document: a JSON object whose primary-key field holds a string or an integer.
    /// - Returns: the change the write records: `.insert` or `.update`.
    /// - Throws: as ``insert(_:_:)``, except that an existing id is not an error.
    @discardableResult
    public func upsert(_ collection: String, _ document: JSONValue) throws -> DocumentChange {
        try required(context.write(collection, .upsert, document: document, id: nil))
    }

    /// Replaces the document with the same id in the batch.
    /// - Parameters:
    ///   - collection: the name of a collection of the store's schema.
    ///   - document: a JSON object whose primary-key field holds a string or an integer.
    /// - Returns: the change the write records (an `.update`).
    /// - Throws: `.conflict` when there is no document with its id; otherwise as
    ///   ``insert(_:_:)``.
    @discardableResult
    public func update(_ collection: String, _ document: JSONValue) throws -> DocumentChange {
        try required(context.write(collection, .update, document: document, id: nil))
    }

    /// Deletes the document with primary key `id`; returns whether there was one.
    @discardableResult
    public func delete(_ collection: String, id: JSONValue) throws -> Bool {
        try context.write(collection, .delete, document: nil, id: id) != nil
    }

    /// Deletes the document whose primary key is `id`, given as a Swift value (`Int`,
    /// `String`, `UUID`, or any `Encodable` value whose JSON is a string or an integer);
    /// returns whether there was one.
    /// - Throws: `.invalidArgument` for an id whose JSON is neither.
    @discardableResult
    public func delete<ID: Encodable>(_ collection: String, id: ID) throws -> Bool {
        try delete(collection, id: try context.store.idJSON(id))
    }

    /// Inserts a `Codable` value, stored as its JSON with dates as the store writes them
    /// (``DocumentStore/dateStrategy``).
    ///
    /// <!-- doc-code: preamble=examples -->
    /// ```swift
    /// try store.write { batch in
    ///     for athlete in imported { try batch.insert("athletes", encoding: athlete) }
    ///     try batch.update("groups", encoding: group)
    ///     try batch.delete("groups", id: 12)
    /// }
    /// ```
    /// - Throws: `.invalidArgument` when `value` does not encode as a JSON object with a
    ///   valid primary key; otherwise as ``insert(_:_:)``.
    @discardableResult
    public func insert<T: Encodable>(_ collection: String, encoding value: T) throws -> DocumentChange {
        try insert(collection, try context.store.json(encoding: value))
    }

    /// Adds a `Codable` value, or replaces the document with its id; as
    /// ``insert(_:encoding:)`` otherwise.
    @discardableResult
    public func upsert<T: Encodable>(_ collection: String, encoding value: T) throws -> DocumentChange {
        try upsert(collection, try context.store.json(encoding: value))
    }

    /// Replaces the document with `value`'s id by `value`; as ``insert(_:encoding:)``
    /// otherwise.
    /// - Throws: `.conflict` when there is no document with its id.
    @discardableResult
    public func update<T: Encodable>(_ collection: String, encoding value: T) throws -> DocumentChange {
        try update(collection, try context.store.json(encoding: value))
    }

    private func required(_ change: DocumentChange?) throws -> DocumentChange {
        guard let change else { throw KVDocsError(.invalidArgument, "nothing was written") }
        return change
    }
}

extension DocumentStore {
    /// Runs `body` and applies all its writes in one atomic batch.
    /// - Parameters:
    ///   - sync: wait until the batch is on the disk (one `fsync` for all its
    ///     writes), so it and every write before it survive a power loss or an OS crash;
    ///     without it, it survives a crash of the process only (see ``DocumentStore``, Durability).
    ///   - body: makes the writes through the batch it is lent, which must not escape; if it
    ///     throws, nothing is written. Its result is returned. Over a store that other
    ///     processes write (``init(store:schema:root:dates:writeAttempts:progress:)``), a
    ///     batch that gave way to another writer runs `body` again on the new state, so it
    ///     should have no other effect than its writes; over LevelDB it runs once.
    /// - Throws: what `body` throws; the error of a write that failed after adding to the
    ///   batch (a unique violation), even when `body` caught it; a storage error of the
    ///   commit; a retryable `.conflict` after ``writeAttempts`` conflicts. Nothing is written then.
    public func write<R>(sync: Bool = false, _ body: (borrowing DocumentBatch) throws -> R) throws -> R {
        try performWrites(sync: sync) { context in try body(DocumentBatch(context: context)) }
    }
}
