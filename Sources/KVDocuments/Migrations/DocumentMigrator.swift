import KVKeys
import KVStorage
import KVSupport

/// Named data migrations, registered in order, each run exactly once per database.
///
/// <!-- doc-code: preamble=examples -->
/// ```swift
/// var migrator = DocumentMigrator()
/// try migrator.register("split names") { migration in
///     try migration.forEach("people") { person in
///         guard case .string(let full)? = person["name"], case .object(var fields) = person else { return }
///         fields["first"] = .string(String(full.split(separator: " ").first ?? ""))
///         try migration.upsert("people", .object(fields))
///     }
/// }
/// let store = try DocumentStore(database: db, schema: schema, migrator: migrator)
/// ```
///
/// **When.** ``DocumentStore/init(database:schema:root:dates:migrator:progress:migrationProgress:)``
/// applies the schema (building new indexes), then runs every registered migration the
/// database has not run yet, in registration order, before it returns: the store is never
/// used with data half-migrated.
///
/// **Exactly once.** A migration that completes is recorded in the catalog under its name
/// (`("m", "migration", name)`) and never runs again on that database. Names are the
/// identity: never rename a migration that has shipped.
///
/// **All or nothing.** A migration's writes are committed in batches (so memory stays
/// bounded for millions of documents), with an undo journal of every document it
/// touched, as it was before. If the migration throws, the journal restores every document
/// it wrote, their index entries and the change feed, and the error is rethrown: the
/// database is as it was before that migration (the migrations before it stay done). If the
/// process dies during a migration, the next open of the store (with or without a
/// migrator) rolls it back the same way, and a migrator runs it again from the start.
///
/// **Unseen until done.** Observers (``DocumentObservation``) and change streams see nothing of a
/// migration while it runs: a completed one delivers its changes in order when it
/// completes, and one that was undone delivers nothing. Other stores open on the same
/// database wait for it to write, and their reads may see its batches (open the migrating
/// store first).
///
/// **Newer databases.** Opening with a migrator a database that recorded a migration this
/// migrator does not register (the database was migrated by a newer version of the app)
/// throws `.notSupported`, naming the migration, and changes nothing. Pass a migrator (an
/// empty one will do) wherever an app opens its store, so that this check runs. Versions of
/// KVDocs from before data migrations refuse any store that ran one (its format is 3, see
/// ``DocumentStore/formatVersion``).
///
/// **Order.** Migrations run in registration order; one registered between two that a
/// database already ran runs after them. A migration registered after a database was opened
/// runs on the next open.
public struct DocumentMigrator: Sendable {
    struct Migration: Sendable {
        let name: String
        let body: @Sendable (MigrationContext) throws -> Void
    }
    private(set) var migrations: [Migration] = []
    /// The documents a migration writes per committed batch, with their undo records (and
    /// the documents restored per batch when a migration is undone); 1,000 by default.
    /// Memory grows with it; a kill loses at most one batch, which the undo discards anyway.
    public var batchSize = 1000

    /// An empty migrator.
    public init() {}

    /// The names registered, in order.
    public var names: [String] { migrations.map(\.name) }

    /// Registers a migration after those already registered.
    /// - Parameters:
    ///   - name: its identity in every database: unique, never changed once shipped.
    ///   - migrate: reads and writes documents through the context it is given; throwing
    ///     undoes all its writes.
    /// - Throws: `.invalidArgument` for an empty name or one already registered.
    public mutating func register(_ name: String, _ migrate: @escaping @Sendable (MigrationContext) throws -> Void)
        throws
    {
        guard !name.isEmpty else { throw KVDocsError(.invalidArgument, "a migration needs a name") }
        if migrations.contains(where: { $0.name.hasSameCodePoints(as: name) }) {
            throw KVDocsError(.invalidArgument, "migration \"\(name)\" is registered twice")
        }
        migrations.append(Migration(name: name, body: migrate))
    }
}

/// Progress of the data migrations run when a store opens.
public struct MigrationProgress: Sendable {
    /// What is happening.
    public enum Phase: String, Sendable {
        /// The migration's closure runs; `documents` counts its writes so far.
        case running
        /// A migration that failed or was interrupted is being undone; `documents` counts
        /// documents restored so far.
        case rollingBack
        /// The migration completed and is recorded.
        case completed
    }
    /// The migration's name.
    public let name: String
    /// Its position among the migrations run by this open (0-based), and their number.
    public let index: Int
    /// The number of migrations this open runs.
    public let count: Int
    /// What is happening.
    public let phase: Phase
    /// Documents written (or restored) so far.
    public let documents: Int
}

/// What a migration reads and writes through: the documents of the store, as the writes
/// made so far by this migration left them.
///
/// Writes are committed in batches as the migration goes, each with the undo records of
/// the documents it touches first; they become final only when the migration returns.
/// The context must not escape the migration's closure.
public final class MigrationContext {
    package let store: DocumentStore
    let journal: MigrationJournal
    private let batchSize: Int
    private var context: DocumentStore.WriteContext
    /// Documents written so far, and the progress reporter.
    private(set) var written = 0
    /// The collections written (as UTF-8), whose observers the completed migration wakes.
    private(set) var touched: Set<[UInt8]> = []
    private let report: (Int) -> Void

    init(store: DocumentStore, journal: MigrationJournal, batchSize: Int, report: @escaping (Int) -> Void) throws {
        self.store = store
        self.journal = journal
        self.batchSize = batchSize
        self.report = report
        context = try Self.makeContext(store, journal)
    }

    private static func makeContext(_ store: DocumentStore, _ journal: MigrationJournal) throws
        -> DocumentStore.WriteContext
    {
        let context = try DocumentStore.WriteContext(store: store)
        context.journal = journal
        context.publishes = false
        return context
    }

    /// The store's schema.
    public var schema: DocumentSchema { context.catalog.schema }

    // MARK: - Reading

    /// The document with primary key `id`, as this migration left it.
    public func get(_ collection: String, id: JSONValue) throws -> JSONValue? {
        let schema = try context.catalog.schema.collection(collection)
        let element = try DocumentStore.idElement(id, collection: collection, primaryKey: schema.primaryKey)
        return try context.current(store.layout.document(collection, element), collection, element)
    }

    /// The value of `request`, read as this migration left the documents: the same
    /// requests as `store.fetch(_:)` reads. It commits the migration's pending
    /// batch first, so call it once, not once per document.
    ///
    /// <!-- doc-code: preamble=examples -->
    /// ```swift
    /// try migrator.register("tag minors") { migration in
    ///     for person in try migration.fetch(.find("people", DocumentQuery().where("age", .less(18)))) {
    ///         guard case .object(var fields) = person else { continue }
    ///         fields["minor"] = true
    ///         try migration.update("people", .object(fields))
    ///     }
    /// }
    /// ```
    /// - Throws: what the request's read throws (see ``DocumentRequest/fetch(from:)``), or
    ///   what committing the pending batch throws.
    public func fetch<Request: DocumentRequest>(_ request: Request) throws -> Request.Value {
        try flush()
        return try store.read { try $0.fetch(request) }
    }

    /// Calls `body` with every document of `collection` as they are when `forEach` starts,
    /// in primary-key order, reading in batches (memory stays bounded). Writes made by
    /// `body` do not change what is visited.
    ///
    /// - Important: `body` gets each document as it was when `forEach` started, even one
    ///   this migration has changed since (while visiting another document, say). To change
    ///   a document another step may have written, read it again with ``get(_:id:)``, which
    ///   sees this migration's writes.
    public func forEach(_ collection: String, _ body: (JSONValue) throws -> Void) throws {
        _ = try context.catalog.schema.collection(collection)
        try flush()
        let snapshot = try store.storage.snapshotReader()
        defer { snapshot.release() }
        let documents = store.layout.documents(collection)
        let cursor = try snapshot.scan(documents.range, order: .forward)
        while let (key, value) = try cursor.next({ k, v in (Array(k), Array(v)) }) {
            try body(try store.documentValue(value, collection: collection, key: key, idOffset: documents.prefix.count))
        }
    }

    // MARK: - Writing

    /// Adds a document. See ``DocumentBatch/insert(_:_:)``.
    @discardableResult
    public func insert(_ collection: String, _ document: JSONValue) throws -> DocumentChange {
        try write(collection, .insert, document, nil)
    }

    /// Adds or replaces a document. See ``DocumentBatch/upsert(_:_:)``.
    @discardableResult
    public func upsert(_ collection: String, _ document: JSONValue) throws -> DocumentChange {
        try write(collection, .upsert, document, nil)
    }

    /// Replaces a document. See ``DocumentBatch/update(_:_:)``.
    @discardableResult
    public func update(_ collection: String, _ document: JSONValue) throws -> DocumentChange {
        try write(collection, .update, document, nil)
    }

    /// Deletes a document; returns whether there was one.
    @discardableResult
    public func delete(_ collection: String, id: JSONValue) throws -> Bool {
        guard try context.write(collection, .delete, document: nil, id: id) != nil else { return false }
        try counted(collection)
        return true
    }

    private func write(_ collection: String, _ mode: DocumentStore.WriteMode, _ document: JSONValue, _ id: JSONValue?)
        throws -> DocumentChange
    {
        guard let change = try context.write(collection, mode, document: document, id: id) else {
            throw KVDocsError(.invalidArgument, "nothing was written")
        }
        try counted(collection)
        return change
    }

    private func counted(_ collection: String) throws {
        written += 1
        touched.insert(Array(collection.utf8))
        if context.writes >= batchSize || context.indexes.pendingWork >= TextIndexMaintainer.flushThreshold {
            try flush()
        }
    }

    /// Commits the writes made so far (with their undo records) and starts a new batch.
    package func flush() throws {
        guard context.writes > 0 else { return }
        try context.commit(sync: false)
        context = try Self.makeContext(store, journal)
        report(written)
    }
}

@available(*, unavailable)
extension MigrationContext: Sendable {}

/// The undo journal of the running migration: for each document it writes, the first
/// time, the document as it was before (or that there was none).
final class MigrationJournal {
    let records: DocumentCatalog
    let storage: any KeyValueStore
    let layout: Layout

    init(records: DocumentCatalog, storage: any KeyValueStore, layout: Layout) {
        self.records = records
        self.storage = storage
        self.layout = layout
    }

    /// The undo record's key for a document.
    func undoKey(_ collection: String, _ id: TupleElement) -> [UInt8] {
        records.undo.pack([.string(collection), id])
    }

    /// Adds to `batch` the undo record of the document under `key`, unless an earlier batch
    /// of this migration recorded it (its stored value is then no longer the original).
    /// REQUIRES: the document was not written earlier in this batch.
    func recordFirstWrite(of key: [UInt8], collection: String, id: TupleElement, in batch: WriteBatch) throws {
        let undo = undoKey(collection, id)
        guard try storage.value(forKey: undo) == nil else { return }
        let original = try storage.value(forKey: key)
        batch.put(undo, Tuple(original.map { [.bytes($0)] } ?? []))
    }
}
