import Foundation
import KVKeys
import KVStorage
import KVSupport

/// Documents in collections, with declared secondary indexes kept exact on every write.
///
/// ```swift
/// let store = try DocumentStore(database: db, schema: DocumentSchema(contentsOfFile: "schema.json"))
/// let people = try store.collection("people")
/// try people.insert(["id": "p1", "name": "Ada", "age": 36])
/// let adults = try people.find(DocumentQuery().where("age", .greaterOrEqual(18)).orderBy("age").limit(10))
/// ```
///
/// **Layout.** Everything lives under ``root`` as tuple keys:
/// `("d", collection, id)` → the document's JSON; `("i", collection, index, values…, id)` →
/// an index entry (values in ``ValueOrder``'s encoding); `("g", collection, index)`, a cell
/// code and the id → a geo index entry (the point's coordinates); `("f", sequence)` →
/// `(collection, id, operation)`, the change feed; `("m", …)` → the catalog (schema,
/// index states, last sequence); `("t", …)` → text indexes; `("x", kind, collection,
/// index, …)` → indexes of registered kinds (the package's `IndexKindRegistry`).
///
/// **Writes.** Each insert, update or delete writes the document, its new index entries,
/// the removal of stale ones and a change record in one LevelDB write batch, so the
/// indexes are never stale and a failed write leaves nothing behind. Writers are
/// serialized per database (``LevelDB/withWriterLock(_:)``); readers never block.
///
/// **Durability.** Every write method takes `sync: Bool = false`
/// (``DocumentCollection/insert(_:sync:)``, `upsert`, `update`, `delete`, the same on
/// ``TypedCollection``, ``write(sync:_:)-1pmoz`` for a ``DocumentBatch``, and
/// ``importJSONLines(into:path:mode:batchSize:maximumLineLength:sync:progress:)``), passed to
/// LevelDB's `sync` write option. A write is in LevelDB's log, handed to the operating
/// system, before it returns, so **every acknowledged write survives a crash of the
/// process**, synced or not. **A power loss or an OS crash keeps only the writes made with
/// `sync: true` and everything acknowledged before them**; later unsynced writes may be lost,
/// each one whole (documents and index entries together, never one without the other).
/// Schema changes and index builds are always synced. See ``LevelDB``, Durability.
///
/// **Typed documents.** `Codable` values are stored as their JSON, with `Date`s as the
/// store's ``dateStrategy`` says (Unix seconds for a new store), recorded in the catalog
/// so that a store is never read with another strategy than it was written with.
///
/// **Schema changes.** Opening with a schema that differs from the stored one builds new
/// indexes, drops removed ones and rebuilds changed ones before `init` returns, reporting
/// progress. A query only ever uses an index whose state is `ready`.
///
/// Thread-safe: one store can serve many threads (see ``LevelDB``).
public final class DocumentStore: Sendable {
    // Checked Sendable: mutable state is in `state` (a Locked of a Sendable value).

    /// The LevelDB database the store lives in (a layered store's user database), or `nil`
    /// for a store opened on another ``KeyValueStore`` (``init(store:schema:root:dates:writeAttempts:progress:)``).
    /// The store itself reads and writes through the storage seam (``KeyValueStore``), which
    /// `LevelDB` implements; this property is for callers that need the database itself.
    public let database: LevelDB?
    /// What the store reads and writes through: the narrow storage seam (the database).
    package let storage: any KeyValueStore
    /// How many times a write runs when the storage reports that another writer changed
    /// what it read (``KeyValueStore/transact(attempts:_:)``); LevelDB never does, so there
    /// a write runs once.
    public let writeAttempts: Int
    /// The subspace holding all of the store's keys.
    public let root: Subspace
    /// The store's catalog records (keys under `("m", …)` of ``root``).
    package let records: DocumentCatalog
    /// How the store's typed documents write and read `Date`s: recorded in the catalog
    /// (`("m", "dates")`) by the first open of this version, and never changed after.
    ///
    /// A new store uses the strategy it is opened with, else ``DateStrategy/default``
    /// (seconds since 1970). A store written before strategies were recorded that holds
    /// documents keeps ``DateStrategy/secondsSince2001``, what it was written with. Every
    /// typed API of the store (``TypedCollection``, typed reads of a ``ReadTransaction``,
    /// typed writes of a ``DocumentBatch``, ids given as `Date`s) uses it; to convert a
    /// value yourself, pass it to ``JSONValue/init(encoding:dates:)`` and
    /// ``JSONValue/decode(_:dates:)``.
    public let dateStrategy: DateStrategy

    package struct State {
        /// The catalog as last read from the latest state of the database.
        var catalog: CompiledCatalog {
            didSet { catalogCount = nil }
        }
        /// The number of writes of the store's LevelDB handle (``WriteCounter``) after which
        /// the data was last seen to hold ``catalog``'s generation: a reader whose state is
        /// the state after exactly that many writes uses the catalog without reading the
        /// generation. `nil` when unknown.
        var catalogCount: UInt64?
        var lastSequence: Int64
        /// A long index build writes its batch part-way once maintainers hold this much
        /// work (``IndexUpdateContext/pendingWork``); tests lower it.
        package var buildFlushThreshold = TextIndexMaintainer.flushThreshold
    }
    package let state: Locked<State>
    /// The change streams and observations of this root of the database, shared by every
    /// store open on it.
    package let hub: ChangeHub
    /// Documents decoded by this store's reads, returned again for the same stored bytes.
    package let documentCache = DecodedDocumentCache()
    /// Where the async API runs its LevelDB calls (``BlockingCallExecutor``).
    package let executor: BlockingCallExecutor
    /// Over a store that other processes write (``WatchableKeyValueStore``): the watch that
    /// brings their changes to the hub.
    private let following = Locked<(any KeyValueWatch)?>(nil)

    /// Progress of an index build, for the callback of ``init(database:schema:root:dates:progress:)``.
    public struct IndexBuildProgress: Sendable {
        /// The collection of the index being built.
        public let collection: String
        /// The name of the index being built; empty while opening a store of an older
        /// format rewrites the collection's documents in the current one.
        public let index: String
        /// Documents indexed so far.
        public let done: Int
        /// The documents of the collection, in all.
        public let total: Int
    }

    /// Opens the document layer of `database`.
    ///
    /// A store written by an older layout (``formatVersion``) is migrated first, and any
    /// index whose entries have an older format, or whose build was interrupted, is rebuilt,
    /// reporting progress, before `init` returns.
    ///
    /// - Parameters:
    ///   - database: the database holding the store. Several stores may be open on one
    ///     database: those with the same `root` share its documents and one sequence of changes.
    ///   - schema: the schema to use; `nil` keeps the stored one (or none). A schema that
    ///     differs from the stored one is applied (indexes added, dropped, rebuilt) and stored.
    ///     A stored schema that cannot be read is replaced by this one (every index built
    ///     again); without one, such a store throws `.corruption`.
    ///   - root: the subspace holding all of the store's keys; the whole key space by default.
    ///   - dates: how typed documents store `Date`s (``dateStrategy``); `nil` keeps the
    ///     recorded strategy, and gives a new store ``DateStrategy/default``. A strategy that
    ///     differs from the recorded one is refused: the stored dates would be misread.
    ///   - progress: called while indexes are built.
    /// - Throws: `.schema` for an invalid schema, `.uniqueViolation` when a new unique index
    ///   meets duplicate values (nothing of the new schema is kept), `.notSupported` for a
    ///   store written by a newer version, `.invalidArgument` for `dates` other than the
    ///   recorded strategy (naming both), storage errors.
    public convenience init(
        database: LevelDB, schema: DocumentSchema? = nil, root: Subspace = Subspace(), dates: DateStrategy? = nil,
        progress: ((IndexBuildProgress) -> Void)? = nil
    ) throws {
        try self.init(
            storage: database, database: database, schema: schema, root: root, dates: dates, finishingBuilds: true,
            progress: progress)
    }

    /// Opens the store; `finishingBuilds: false` leaves interrupted index builds unfinished
    /// (for ``salvage(database:root:quarantine:progress:)``, which rebuilds every index).
    convenience init(
        database: LevelDB, schema: DocumentSchema?, root: Subspace, finishingBuilds: Bool,
        progress: ((IndexBuildProgress) -> Void)?
    ) throws {
        try self.init(
            storage: database, database: database, schema: schema, root: root, finishingBuilds: finishingBuilds,
            progress: progress)
    }

    /// Opens the document layer of a layered store: every read sees the base and the user
    /// layer merged (the user's documents win, the user's deletes hide base documents), and
    /// every write goes to the user layer. Indexes of every kind answer as over one database
    /// holding the merged documents; ``database`` is the user database.
    ///
    /// - Parameters:
    ///   - layered: the base and user databases.
    ///   - schema: as for ``init(database:schema:root:dates:progress:)``. The base's stored schema
    ///     and this one must agree on the collections they share.
    ///   - root: the subspace holding the store's keys, in both layers.
    ///   - dates: as for ``init(database:schema:root:dates:progress:)``; the strategy the base
    ///     records is the store's when the user layer records none.
    ///   - progress: called while indexes are built.
    /// - Throws: `.schema` naming the collection and the index when the base and the schema
    ///   disagree on a shared collection; otherwise as ``init(database:schema:root:dates:progress:)``.
    public convenience init(
        layered: LayeredKeyValueStore, schema: DocumentSchema? = nil, root: Subspace = Subspace(),
        dates: DateStrategy? = nil,
        progress: ((IndexBuildProgress) -> Void)? = nil
    ) throws {
        if let schema {
            try Self.checkAgreement(base: layered.base, schema: schema, root: root)
        }
        try self.init(
            storage: layered, database: layered.user, schema: schema, root: root, dates: dates, finishingBuilds: true,
            progress: progress)
    }

    /// Opens the document layer of any store behind the storage seam: a ``LevelDB``, a
    /// ``LayeredKeyValueStore``, or another implementation of ``KeyValueStore``, such as a
    /// store that several processes write at once.
    ///
    /// Over a `LevelDB` or a `LayeredKeyValueStore` this is ``init(database:schema:root:dates:progress:)``
    /// or ``init(layered:schema:root:dates:progress:)``. Over another store, ``database`` is
    /// `nil`, and what needs LevelDB's files (salvage, backups, layers) is not offered. Every
    /// document write runs in ``KeyValueStore/transact(attempts:_:)``: over a store whose
    /// transactions are checked when they commit, a write that gave way to another writer runs
    /// again on the new state, up to `writeAttempts` times, and then throws a retryable
    /// `.conflict`. The body of ``write(sync:_:)-1pmoz`` may then run more than once, so it
    /// should only write through its batch.
    ///
    /// ```swift
    /// let store = try DocumentStore(store: db, schema: schema)
    /// ```
    ///
    /// - Parameters:
    ///   - store: the storage to use.
    ///   - schema, root, dates, progress: as for ``init(database:schema:root:dates:progress:)``.
    ///   - writeAttempts: how many times a write runs at most when it conflicts (16 by default).
    /// - Throws: `.invalidArgument` for `writeAttempts` below 1; otherwise as
    ///   ``init(database:schema:root:dates:progress:)``.
    public convenience init(
        store: any KeyValueStore, schema: DocumentSchema? = nil, root: Subspace = Subspace(),
        dates: DateStrategy? = nil,
        writeAttempts: Int = 16, progress: ((IndexBuildProgress) -> Void)? = nil
    ) throws {
        guard writeAttempts >= 1 else {
            throw KVDocsError(
                .invalidArgument, "writeAttempts must be at least 1, not \(writeAttempts)", path: store.name)
        }
        if let layered = store as? LayeredKeyValueStore, let schema {
            try Self.checkAgreement(base: layered.base, schema: schema, root: root)
        }
        let database = (store as? LevelDB) ?? (store as? LayeredKeyValueStore)?.user
        try self.init(
            storage: store, database: database, schema: schema, root: root, dates: dates, finishingBuilds: true,
            writeAttempts: writeAttempts, progress: progress)
    }

    package init(
        storage: any KeyValueStore, database: LevelDB?, schema: DocumentSchema?, root: Subspace,
        dates: DateStrategy? = nil,
        finishingBuilds: Bool, writeAttempts: Int = 16,
        migrator: DocumentMigrator? = nil, progress: ((IndexBuildProgress) -> Void)?,
        migrationProgress: ((MigrationProgress) -> Void)? = nil
    ) throws {
        self.database = database
        self.storage = storage
        self.writeAttempts = writeAttempts
        self.root = root
        self.hub = ChangeHub.of(storage, database: database, root: root)
        self.executor = BlockingCallExecutor(name: storage.name)
        let catalog = DocumentCatalog(root: root)
        self.records = catalog
        let format = try Self.readableFormat(catalog, in: storage)
        if schema != nil { try Self.dropUnreadableSchema(catalog, in: storage) }
        let (strategy, _) = try Self.dateStrategy(
            requested: dates, storage: storage, catalog: catalog, existing: format != nil, layout: Layout(root: root))
        self.dateStrategy = strategy
        let loaded = try CompiledCatalog.load(storage, catalog, layout: Layout(root: root))
        state = Locked(
            State(catalog: loaded, catalogCount: nil, lastSequence: try catalog.lastSequence(in: storage)))
        try open(
            format: format, schema: schema, finishingBuilds: finishingBuilds, migrator: migrator, progress: progress,
            migrationProgress: migrationProgress)
        try followOtherWriters()
    }

    deinit { following.withLock { $0?.cancel() } }

    /// Over a store that other processes write, delivers their changes to this process's
    /// change streams and observations too: the store's watch of the change feed calls
    /// ``catchUp()``, which reads the changes after the last delivered and publishes them.
    private func followOtherWriters() throws {
        guard let watchable = storage as? any WatchableKeyValueStore else { return }
        hub.deliverOnlyAfter(try records.lastSequence(in: storage))
        let watch = try watchable.watch(prefix: layout.changes.prefix) { [weak self] in self?.catchUp() }
        following.withLock { $0 = watch }
    }

    /// Publishes the changes of the feed after the last one the hub delivered. A failed read
    /// is left to the next call (the watch calls again after every write and reconnection).
    private func catchUp() {
        guard let delivered = hub.deliveredSequence, let changes = try? changes(since: delivered),
            let last = changes.last
        else { return }
        state.withLock { $0.lastSequence = max($0.lastSequence, last.sequence) }
        hub.publish(changes)
    }

    /// The stored format version (`nil`: no store yet).
    /// - Throws: `.notSupported` for a format written by a newer version of KVDocs.
    private static func readableFormat(_ catalog: DocumentCatalog, in storage: any KeyValueStore) throws -> Int64? {
        let format = try catalog.formatVersion(in: storage)
        if let format, format > Self.formatVersion {
            throw KVDocsError(
                .notSupported,
                "the document store in \(storage.name) has format version \(format), written by a newer version of KVDocs; this version reads format \(Self.formatVersion) and older",
                path: storage.name)
        }
        return format
    }

    /// Removes a stored schema that cannot be read, when a schema is given to replace it:
    /// the schema is then applied as to a store without one (every index of it built
    /// again, the states no index owns dropped).
    private static func dropUnreadableSchema(_ catalog: DocumentCatalog, in storage: any KeyValueStore) throws {
        guard let stored = try catalog.schemaData(in: storage), (try? DocumentSchema(json: Data(stored))) == nil else {
            return
        }
        let batch = WriteBatch()
        catalog.deleteRecords(
            [catalog.schemaKey], generation: try catalog.generation(in: storage).saturatingAdd(1), in: batch)
        try storage.write(batch, sync: true)
    }

    /// The steps of opening once the handle's state is loaded, in this order:
    /// 1. a database migrated by a newer app is refused, before anything is changed;
    /// 2. an older format is upgraded;
    /// 3. a data migration the process died in is undone, whoever opens the store;
    /// 4. the schema given is applied (or, without one, interrupted index builds and
    ///    indexes of an older format are finished);
    /// 5. the date strategy is recorded, once the store exists (an empty database opened
    ///    without a schema is not written to), before any migration writes documents;
    /// 6. the migrator's data migrations run.
    private func open(
        format: Int64?, schema: DocumentSchema?, finishingBuilds: Bool, migrator: DocumentMigrator?,
        progress: ((IndexBuildProgress) -> Void)?, migrationProgress: ((MigrationProgress) -> Void)?
    ) throws {
        if let migrator { try checkMigrationsKnown(migrator) }
        if let format, format < Self.formatVersion {
            try migrate(from: format, progress: progress)
        }
        try recoverInterruptedMigration(progress: migrationProgress)
        if let schema {
            try apply(schema, progress: progress)
        } else if finishingBuilds, !(try self.catalog()).unready.isEmpty {
            try apply(try self.catalog().schema, progress: progress)
        }
        if try records.formatVersion(in: storage) != nil, try !holdsOwnDateRecord() {
            try recordDateStrategy()
        }
        if let migrator { try runMigrations(migrator, progress: migrationProgress) }
    }

    /// The write counter of the store's LevelDB database, when the store is on one: a
    /// LevelDB database is written through one handle, so its count tells a reader whether the
    /// data changed since a state it knows. `nil` over another store (others may write it).
    var writeCounter: WriteCounter? { (storage as? LevelDB)?.writeCounter }

    /// The catalog at the latest state, from the cache when its generation is the one cached.
    package func catalog() throws -> CompiledCatalog {
        try catalog(storage, latest: true)
    }

    /// The catalog at `reader`'s state (a snapshot's, or the latest when `latest`), from the
    /// cache when its generation is the one cached.
    ///
    /// `stateCount`: the number of writes of the store's LevelDB handle after which `reader`'s
    /// state is known to be, when the caller knows it (``writeCounter``): a state the cache
    /// was already checked against needs no read of the generation.
    func catalog(_ reader: some KeyValueReader, latest: Bool, stateCount: UInt64? = nil) throws -> CompiledCatalog {
        if let stateCount {
            let (cached, checkedAt) = state.withLock { ($0.catalog, $0.catalogCount) }
            if checkedAt == stateCount { return cached }
        }
        let generation = try records.generation(in: reader)
        let cached = state.withLock { $0.catalog }
        if cached.generation == generation {
            if let stateCount {
                state.withLock { if $0.catalog.generation == generation { $0.catalogCount = stateCount } }
            }
            return cached
        }
        guard latest else { return try CompiledCatalog.load(reader, records, layout: layout) }
        // The latest state is read through a snapshot, so the schema, the states and the
        // generation they are cached under are of one moment, whatever writers do meanwhile.
        let snapshot = try storage.snapshotReader()
        defer { snapshot.release() }
        let loaded = try CompiledCatalog.load(snapshot, records, layout: layout)
        state.withLock { if $0.catalog.generation < loaded.generation { $0.catalog = loaded } }
        return loaded
    }

    /// The current schema, as stored at the latest state of the database (read again when
    /// another store on the database changed it).
    /// - Throws: storage errors, and `.corruption` for a catalog that cannot be read; never
    ///   a stale schema in their place.
    public var schema: DocumentSchema {
        get throws { try catalog().schema }
    }

    /// The sequence number of the last write to this database under ``root`` (0 before the
    /// first), through this store or any other store on the same database, read from the
    /// catalog.
    /// - Throws: storage errors, and `.corruption` for a stored sequence that is not an
    ///   integer; never a stale number in their place.
    public var lastSequence: Int64 {
        get throws { try storedSequence() }
    }

    /// The most bytes of decoded documents this store keeps, so that an untyped read meeting
    /// the same stored bytes again (a get, a query, a covering index's entry) returns the
    /// value already built instead of decoding it: 8 MiB by default, 0 keeps none. Setting
    /// it drops what is kept.
    ///
    /// A kept value is returned only for a read of byte-identical stored bytes under the
    /// same key, so it is never stale: a document rewritten since, or read in another
    /// snapshot or layer, has other bytes and is decoded again. Typed reads decode straight
    /// from the bytes and do not use it. The charge per document is about four times its
    /// stored size, and a document charged more than an eighth of the limit is not kept.
    public var decodedDocumentCacheLimit: Int {
        get { documentCache.limit }
        set { documentCache.limit = newValue }
    }

    /// The last sequence number as stored in the catalog.
    func storedSequence() throws -> Int64 {
        try records.lastSequence(in: storage)
    }

    package var layout: Layout { Layout(root: root) }

    /// A handle on the collection `name`.
    /// - Throws: `.schema` when the schema does not declare it.
    public func collection(_ name: String) throws -> DocumentCollection {
        _ = try schema.collection(name)
        return DocumentCollection(store: self, name: name)
    }

    /// A handle on the collection `name` that reads and writes `T` values.
    public func collection<T: Codable>(_ name: String, of type: T.Type) throws -> TypedCollection<T> {
        TypedCollection(base: try collection(name))
    }
}

// MARK: - Format versions

extension DocumentStore {
    /// The version of the stored layout this library writes.
    ///
    /// - 1: documents and index values written through Foundation's `JSONSerialization` and
    ///   `JSONEncoder` (no version key was stored).
    /// - 2: the byte-level canonical JSON (decimals keep their shortest spelling and `-0.0`
    ///   its sign; object keys in code-point order). Object values in secondary indexes are
    ///   keyed by this text, so opening a version 1 store rebuilds its secondary indexes.
    ///
    /// - 3: version 2 with the records of data migrations (``DocumentMigrator``): the
    ///   migrations run, and the journal of one running. A store is marked 3 in the same
    ///   write that starts its first data migration, so a KVDocs version that knows nothing
    ///   of migrations refuses it (with `.notSupported`) instead of reading half-migrated
    ///   documents, or ignoring a journal it cannot undo. A store that never ran a data
    ///   migration stays at version 2, readable by those versions.
    /// - 4: documents and the entries of covering indexes in the binary form
    ///   (tagged values, sorted members behind an offset table): a member is found by binary search, and typed reads decode
    ///   straight from the bytes. Every store this version writes is at 4. Opening an older
    ///   store rewrites its documents in the binary form and rebuilds its covering indexes,
    ///   reporting progress (a document rewrite reports an empty index name). Documents as
    ///   JSON text stay readable, told apart by their first byte, so a layered store does
    ///   not copy an older base's documents into its user layer: they are read as they are.
    /// - 5: replicated collections (``CollectionSchema/replicated``): their revision trees,
    ///   leaf bodies and by-sequence entries under `("r", collection, …)`. Nothing of an
    ///   older store changes (no data lives under `"r"` there): the migration only records
    ///   the version, so that a KVDocs of format 4, which would write a replicated
    ///   collection's documents without their trees, refuses the store.
    ///
    /// Opening a store with an older version migrates it before `init` returns, reporting
    /// progress like an index build; a newer version is refused with `.notSupported`. Each
    /// index also records the format of its own entries (``IndexState/format``): an index
    /// of an older format is rebuilt on open.
    public static let formatVersion: Int64 = 5

    /// The version to record with a schema. REQUIRES: the writer lock.
    func recordedFormat() throws -> Int64 {
        Self.formatVersion
    }

    /// Brings a store of an older format to ``formatVersion``. Each step is idempotent,
    /// and the new version is stored only after every step succeeded, so an interrupted
    /// migration runs again on the next open.
    func migrate(from format: Int64, progress: ((IndexBuildProgress) -> Void)?) throws {
        try storage.withWriteTransaction {
            if format < 2 {
                // Version 1 read numbers inexactly and wrote objects through JSONEncoder:
                // rebuild every secondary index from the documents as this version reads them.
                let current = try catalog()
                for maintainer in current.schema.collections.keys.sorted(by: { JSONObject.compareKeys($0, $1) < 0 })
                    .flatMap({ current.maintainers(of: $0) })
                where maintainer.identity.kind == .secondary && current.isReady(maintainer.identity) {
                    try rebuild(maintainer, progress: progress)
                }
            }
            if format < 4, !(storage is LayeredKeyValueStore) {
                // Documents and covering entries in the binary form. (A layered store reads
                // its base's text documents as they are.)
                let current = try catalog()
                let names = current.schema.collections.keys.sorted(by: { JSONObject.compareKeys($0, $1) < 0 })
                for name in names { try rewriteInBinaryForm(name, progress: progress) }
                for maintainer in names.flatMap({ current.maintainers(of: $0) })
                where (maintainer as? SecondaryIndexMaintainer)?.carriesDocuments == true
                    && current.isReady(maintainer.identity)
                {
                    try rebuild(maintainer, progress: progress)
                }
            }
            let batch = WriteBatch()
            records.putFormat(Self.formatVersion, in: batch)
            try storage.write(batch, sync: true)
        }
        // Documents read differently now: every observer looks again.
        hub.publishToAll()
    }
}

extension DocumentStore {
    /// Rewrites the documents of `collection` that are JSON text in the binary form, in
    /// batches, reporting progress with an empty index name. REQUIRES: the writer lock.
    func rewriteInBinaryForm(_ collection: String, progress: ((IndexBuildProgress) -> Void)?) throws {
        let documents = layout.documents(collection)
        let range = documents.range
        let total = try storage.count(range)
        progress?(IndexBuildProgress(collection: collection, index: "", done: 0, total: total))
        let snapshot = try storage.snapshotReader()
        defer { snapshot.release() }
        let cursor = try snapshot.scan(range, order: .forward)
        let batch = WriteBatch()
        var done = 0
        while let (key, value) = try cursor.next({ (Array($0), Array($1)) }) {
            done += 1
            if !BinaryJSON.isBinary(value) {
                let document = try documentValue(
                    value, collection: collection, key: key, idOffset: documents.prefix.count)
                batch.put(key, try Self.storedBytes(document))
            }
            if batch.count >= 1000 {
                try storage.write(batch, sync: false)
                batch.clear()
                progress?(IndexBuildProgress(collection: collection, index: "", done: done, total: total))
            }
        }
        try storage.write(batch, sync: false)
        progress?(IndexBuildProgress(collection: collection, index: "", done: done, total: total))
    }
}

// MARK: - Layers

extension DocumentStore {
    /// Throws when the schema stored in `base` and `schema` declare a shared collection
    /// differently: its primary key, or an index missing from one side or defined otherwise.
    static func checkAgreement(base: LevelDB, schema: DocumentSchema, root: Subspace, named: String? = nil) throws {
        let catalog = DocumentCatalog(root: root)
        guard let data = try catalog.schemaData(in: base) else { return }
        let stored = try DocumentSchema(json: Data(data), file: "the base's stored schema")
        for name in stored.collections.keys.sorted() {
            guard let mine = schema[collection: name], let theirs = stored[collection: name] else { continue }
            func fail(_ what: String) -> KVDocsError {
                KVDocsError(
                    .schema,
                    "the base \(named ?? base.copiedFrom ?? base.path) and the user layer disagree on collection \"\(name)\": \(what)"
                )
            }
            if theirs.replicated {
                throw KVDocsError(
                    .notSupported,
                    "the base \(named ?? base.copiedFrom ?? base.path) has the replicated collection \"\(name)\"; a layered store cannot share a replicated collection with its base"
                )
            }
            if !mine.primaryKey.hasSameCodePoints(as: theirs.primaryKey) {
                throw fail(
                    "primary key \"\(theirs.primaryKey)\" in the base, \"\(mine.primaryKey)\" in the user's schema")
            }
            let baseIndexes = theirs.definitionsByName, userIndexes = mine.definitionsByName
            for (index, definition) in baseIndexes.sorted(by: { $0.key < $1.key }) {
                guard let other = userIndexes[index] else {
                    throw fail("index \"\(index)\" is in the base and not in the user's schema")
                }
                if other != definition {
                    throw fail(
                        "index \"\(index)\" is defined differently (base: \(definition.compactDescription); user: \(other.compactDescription))"
                    )
                }
            }
            if let extra = userIndexes.keys.sorted().first(where: { baseIndexes[$0] == nil }) {
                throw fail("index \"\(extra)\" is in the user's schema and not in the base")
            }
        }
    }
}

extension CollectionSchema {
    /// Every index's definition as the schema JSON writes it, by name, for every kind.
    var definitionsByName: [String: JSONValue] {
        Dictionary(definitions.map { ($0.name, JSONValue.object($0.entry)) }, uniquingKeysWith: { first, _ in first })
    }
}
