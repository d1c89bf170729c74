// The async API: the same reads and writes as the synchronous one, run on the store's
// executor (``StoreExecutor``) so that the awaiting thread never blocks on LevelDB. Reads
// run concurrently; a store's writes run in the order they were submitted.
//
// Cancellation: a task cancelled before its call starts gets `CancellationError` and
// nothing is read or written; a call that has started completes.

extension DocumentStore {
    /// Runs `body` with reads against one snapshot, on the store's read executor: several
    /// queries across collections see one consistent state, and the caller's thread does not
    /// block.
    ///
    /// ```swift
    /// let (person, trips) = try await store.read { tx in
    ///     (try tx.get("people", id: "p1"), try tx.find("trips", Query().where("person", .equal("p1"))))
    /// }
    /// ```
    public func read<R: Sendable>(_ body: @escaping @Sendable (ReadTransaction) throws -> R) async throws -> R {
        try await executor.read { [self] in try read(body) }
    }

    /// Runs `body` and applies all its writes in one atomic batch, on the store's write
    /// executor (after this store's writes submitted before it). See ``write(sync:_:)``.
    public func write<R: Sendable>(sync: Bool = false,
                                   _ body: @escaping @Sendable (borrowing DocumentBatch) throws -> R) async throws -> R {
        try await executor.write { [self] in try write(sync: sync, body) }
    }

    /// The changes after `sequence`, read on the store's read executor. See
    /// ``changes(since:limit:)``.
    public func changes(since sequence: Int64 = 0, limit: Int? = nil) async throws -> [Change] {
        try await executor.read { [self] in try changes(since: sequence, limit: limit) }
    }
}

extension DocumentCollection {
    /// Adds a document; see ``insert(_:sync:)``.
    @discardableResult
    public func insert(_ document: JSONValue, sync: Bool = false) async throws -> Change {
        try await store.executor.write { [self] in try insert(document, sync: sync) }
    }

    /// Adds or replaces a document; see ``upsert(_:sync:)``.
    @discardableResult
    public func upsert(_ document: JSONValue, sync: Bool = false) async throws -> Change {
        try await store.executor.write { [self] in try upsert(document, sync: sync) }
    }

    /// Replaces a document; see ``update(_:sync:)``.
    @discardableResult
    public func update(_ document: JSONValue, sync: Bool = false) async throws -> Change {
        try await store.executor.write { [self] in try update(document, sync: sync) }
    }

    /// Deletes a document; see ``delete(id:sync:)``.
    @discardableResult
    public func delete(id: JSONValue, sync: Bool = false) async throws -> Bool {
        try await store.executor.write { [self] in try delete(id: id, sync: sync) }
    }

    /// The document with primary key `id`; see ``get(id:)``.
    public func get(id: JSONValue) async throws -> JSONValue? {
        try await store.executor.read { [self] in try get(id: id) }
    }

    /// Deletes the document whose primary key is `id`, a Swift value (`Int`, `String`,
    /// `UUID`, …); see ``delete(id:sync:)``.
    @discardableResult
    public func delete<ID: Encodable>(id: ID, sync: Bool = false) async throws -> Bool {
        try await delete(id: try store.idJSON(id), sync: sync)
    }

    /// The document whose primary key is `id`, a Swift value (`Int`, `String`, `UUID`, …);
    /// see ``get(id:)``.
    public func get<ID: Encodable>(id: ID) async throws -> JSONValue? {
        try await get(id: try store.idJSON(id))
    }

    /// The documents matching `query`; see ``find(_:)``.
    public func find(_ query: Query = Query()) async throws -> [JSONValue] {
        try await store.executor.read { [self] in try find(query) }
    }

    /// The number of documents matching `query`; see ``count(_:)``.
    public func count(_ query: Query = Query()) async throws -> Int {
        try await store.executor.read { [self] in try count(query) }
    }

    /// The hits of a text query; see ``search(_:options:)``.
    public func search(_ query: String, options: SearchOptions = SearchOptions()) async throws -> [SearchHit] {
        try await store.executor.read { [self] in try search(query, options: options) }
    }

    /// The documents around `center`; see ``near(_:within:query:index:includeDocuments:)``.
    public func near(_ center: GeoPoint, within: Double? = nil, query: Query = Query(), index: String? = nil,
                     includeDocuments: Bool = true) async throws -> [NearHit] {
        try await store.executor.read { [self] in
            try near(center, within: within, query: query, index: index, includeDocuments: includeDocuments)
        }
    }
}

extension TypedCollection where T: Sendable {
    /// Adds a value; see ``insert(_:sync:)``.
    @discardableResult
    public func insert(_ value: T, sync: Bool = false) async throws -> Change {
        try await base.insert(try json(value), sync: sync)
    }

    /// Adds or replaces a value; see ``upsert(_:sync:)``.
    @discardableResult
    public func upsert(_ value: T, sync: Bool = false) async throws -> Change {
        try await base.upsert(try json(value), sync: sync)
    }

    /// Replaces a value; see ``update(_:sync:)``.
    @discardableResult
    public func update(_ value: T, sync: Bool = false) async throws -> Change {
        try await base.update(try json(value), sync: sync)
    }

    /// Deletes a value; see ``delete(id:sync:)``.
    @discardableResult
    public func delete(id: JSONValue, sync: Bool = false) async throws -> Bool {
        try await base.delete(id: id, sync: sync)
    }

    /// The value with primary key `id`; see ``get(id:)``.
    public func get(id: JSONValue) async throws -> T? {
        try await base.get(id: id).map { try self.value($0) }
    }

    /// Deletes the value whose primary key is `id`, a Swift value (`Int`, `String`,
    /// `UUID`, …); see ``delete(id:sync:)``.
    @discardableResult
    public func delete<ID: Encodable>(id: ID, sync: Bool = false) async throws -> Bool {
        try await base.delete(id: try base.store.idJSON(id), sync: sync)
    }

    /// The value whose primary key is `id`, a Swift value (`Int`, `String`, `UUID`, …);
    /// see ``get(id:)``.
    public func get<ID: Encodable>(id: ID) async throws -> T? {
        try await base.get(id: try base.store.idJSON(id)).map { try self.value($0) }
    }

    /// The values matching `query`; see ``find(_:)``.
    public func find(_ query: Query = Query()) async throws -> [T] {
        try await base.find(query).map { try self.value($0) }
    }

    /// The number of values matching `query`; see ``count(_:)``.
    public func count(_ query: Query = Query()) async throws -> Int {
        try await base.count(query)
    }

    /// The hits of a text query, decoded; see ``search(_:options:)-95y1v``.
    public func search(_ query: String, options: SearchOptions = SearchOptions()) async throws -> [TypedSearchHit<T>] {
        try await base.store.executor.read { [self] in try search(query, options: options) }
    }

    /// The values around `center`, decoded; see ``near(_:within:query:index:)-91jny``.
    public func near(_ center: GeoPoint, within: Double? = nil, query: Query = Query(), index: String? = nil) async throws -> [TypedNearHit<T>] {
        try await base.store.executor.read { [self] in try near(center, within: within, query: query, index: index) }
    }
}
