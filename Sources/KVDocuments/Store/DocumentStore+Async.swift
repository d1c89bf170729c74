// The async API: the same reads and writes as the synchronous one, run on the store's
// executor (``BlockingCallExecutor``) so that the awaiting thread never blocks on LevelDB. Reads
// run concurrently; a store's writes run in the order they were submitted.
//
// Naming: the store's `read`, `write`, `fetch` and `changes` have async overloads, as GRDB's
// `read`/`write` do (in an async function, `try await store.read { … }`,
// `try await store.fetch(request)`). A collection's async writes and lookups are spelled
// `collection.async.upsert(…)` (``AsyncDocumentCollection``,
// ``AsyncTypedCollection``), so a collection call written without `await` is the
// synchronous one wherever it is written, and `try await people.async.upsert(…)` at top
// level is the async one: no overload shadows another.
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
    ///     (try tx.get("people", id: "p1"), try tx.find("trips", DocumentQuery().where("person", .equal("p1"))))
    /// }
    /// ```
    public func read<R: Sendable>(_ body: @escaping @Sendable (ReadTransaction) throws -> R) async throws -> R {
        try await executor.read { [self] in try read(body) }
    }

    /// Runs `body` and applies all its writes in one atomic batch, on the store's write
    /// executor (after this store's writes submitted before it). See ``write(sync:_:)``.
    public func write<R: Sendable>(
        sync: Bool = false,
        _ body: @escaping @Sendable (borrowing DocumentBatch) throws -> R
    ) async throws -> R {
        try await executor.write { [self] in try write(sync: sync, body) }
    }

    /// The changes after `sequence`, read on the store's read executor. See
    /// ``changes(since:limit:)``.
    public func changes(since sequence: Int64 = 0, limit: Int? = nil) async throws -> [DocumentChange] {
        try await executor.read { [self] in try changes(since: sequence, limit: limit) }
    }
}

extension DocumentCollection {
    /// This collection's async writes and lookups, run on the store's executor:
    /// `try await people.async.upsert(document)`.
    public var async: AsyncDocumentCollection { AsyncDocumentCollection(collection: self) }
}

extension TypedCollection where T: Sendable {
    /// This collection's async writes and lookups, run on the store's executor:
    /// `try await athletes.async.upsert(athlete)`.
    public var async: AsyncTypedCollection<T> { AsyncTypedCollection(collection: self) }
}
