import Foundation
import KVStorage
import KVSupport

/// Reads of a document store against one snapshot: every query, lookup and count made
/// through the transaction sees the same state of the database, whatever writers do.
///
/// ```swift
/// try store.read { tx in
///     let person = try tx.get("people", id: "p1")
///     let trips = try tx.find("trips", DocumentQuery().where("person", .equal("p1")))
/// }
/// ```
public final class ReadTransaction {
    /// The store read.
    public let store: DocumentStore
    /// The LevelDB snapshot all reads go through (`nil` only for a store over another
    /// implementation of the storage seam, whose snapshot reader is not a LevelDB one).
    public let snapshot: LevelDBSnapshot?
    /// The schema and index states of the snapshot: queries are planned with them.
    package let catalog: CompiledCatalog
    /// Reads through the snapshot: the storage seam.
    package let reader: any KeyValueReader
    /// The snapshot reader this transaction made (and releases), or `nil` for one given.
    private let owned: (any SnapshotReader)?
    /// The collections this transaction's reads touched, in the order first read (told
    /// apart by their UTF-8 bytes, as the hub tells writes apart).
    private var namesRead: [String] = []

    /// Reads through `snapshot`, or through a new snapshot reader of the store's storage.
    init(store: DocumentStore, snapshot: LevelDBSnapshot? = nil) throws {
        self.store = store
        if let snapshot {
            self.snapshot = snapshot
            self.reader = snapshot.reader
            self.owned = nil
            self.catalog = try store.catalog(reader, latest: false)
        } else {
            // Over a LevelDB database, a snapshot taken while no write ran is the state after
            // the writes counted then: the catalog checked at that count needs no read.
            let counter = store.writeCounter
            let before = counter?.quiescentCount
            let made = try store.storage.snapshotReader()
            self.owned = made
            self.reader = made
            self.snapshot = (made as? SnapshotKeyValueReader)?.snapshot
            do {
                self.catalog = try store.catalog(made, latest: false, stateCount: counter?.unchanged(since: before))
            } catch {
                made.release()
                throw error
            }
        }
    }

    /// Reads the latest state through `reader`, with `catalog` (the one the store checked at
    /// that state): for a single read, which needs no snapshot to be consistent.
    init(store: DocumentStore, latest reader: any KeyValueReader, catalog: CompiledCatalog) {
        self.store = store
        self.reader = reader
        self.owned = nil
        self.snapshot = nil
        self.catalog = catalog
    }

    /// Reads through `reader` (a frozen state the caller keeps and releases).
    package init(store: DocumentStore, reader: any KeyValueReader) throws {
        self.store = store
        self.reader = reader
        self.owned = nil
        self.snapshot = (reader as? SnapshotKeyValueReader)?.snapshot
        self.catalog = try store.catalog(reader, latest: false)
    }

    /// Releases the snapshot reader this transaction made.
    func release() { owned?.release() }

    /// Records that a read of `collection` is made (before it can fail: a read that fails
    /// while an index is being built still names what it waits for).
    /// REQUIRES: cheap, as every `get` calls it: a transaction reads few collections, so a
    /// scan of those read (the last first) allocates nothing once a collection is known.
    func recordRead(_ collection: String) {
        if let last = namesRead.last, last.utf8.elementsEqual(collection.utf8) { return }
        guard !namesRead.contains(where: { $0.utf8.elementsEqual(collection.utf8) }) else { return }
        namesRead.append(collection)
    }

    /// The collections this transaction's reads touched (as UTF-8, so names that differ
    /// only in Unicode normalisation stay distinct): what an observation tracks.
    var collectionsRead: Set<[UInt8]> { Set(namesRead.map { Array($0.utf8) }) }

    /// The planner for this transaction's snapshot.
    var planner: QueryPlanner { QueryPlanner(catalog: catalog, layout: store.layout) }

    /// The document with primary key `id`, or `nil`.
    public func get(_ collection: String, id: JSONValue) throws -> JSONValue? {
        recordRead(collection)
        let schema = try catalog.schema.collection(collection)
        let element = try DocumentStore.idElement(id, collection: collection, primaryKey: schema.primaryKey)
        // Decoded from the reader's own buffer (LevelDB's), not a copy.
        let key = store.layout.document(collection, element)
        return try reader.withValue(forKey: key) { bytes in
            guard let bytes else { return nil }
            return try store.documentValue(buffer: bytes, collection: collection, id: element, key: key)
        }
    }

    /// The documents matching `query`, in its order, after its offset, up to its limit.
    public func find(_ collection: String, _ query: DocumentQuery = DocumentQuery()) throws -> [JSONValue] {
        try find(collection, query, cachedPlan: true)
    }

    /// The plan of `query`, made from scratch (`cachedPlan: false`) or through the catalog's
    /// plan cache, as ``find(_:_:)`` makes it: for the tests that compare the two.
    package func plan(_ collection: String, _ query: DocumentQuery, cachedPlan: Bool) throws -> QueryPlan {
        try planner.plan(collection, query, cached: cachedPlan)
    }

    /// ``find(_:_:)`` with a plan made from scratch (`cachedPlan: false`) or through the
    /// catalog's plan cache.
    package func find(_ collection: String, _ query: DocumentQuery, cachedPlan: Bool) throws -> [JSONValue] {
        recordRead(collection)
        let plan = try planner.plan(collection, query, cached: cachedPlan)
        let execution = QueryExecution(transaction: self, collection: collection, plan: plan)
        guard let fields = query.fields else {
            return try execution.documents(offset: query.offset, limit: query.limit)
        }
        let selected = fields.map(\.wholeField)
        var documents: [JSONValue] = []
        try execution.forEach(
            offset: query.offset, limit: query.limit, transform: { try execution.projected($0, onto: selected) }
        ) { documents.append($0) }
        return documents
    }

    /// Calls `body` with each document matching `query`, in its order, after its offset, up
    /// to its limit, as the query's scan finds it: the documents ``find(_:_:)`` returns,
    /// without holding them all. Export-sized results stay in bounded memory, like
    /// ``exportJSONLines(from:to:)``, except that an order no index gives holds the first
    /// `offset + limit` matches (all of them without a limit) to sort them.
    ///
    /// ```swift
    /// try store.read { tx in
    ///     try tx.forEach("people", DocumentQuery().where("age", .greaterOrEqual(18))) { print($0) }
    /// }
    /// ```
    /// - Throws: what ``find(_:_:)`` throws, met when the scan reaches it (documents before
    ///   it have been handed to `body`), or what `body` throws, which ends the scan.
    public func forEach(
        _ collection: String, _ query: DocumentQuery = DocumentQuery(), _ body: (JSONValue) throws -> Void
    ) throws {
        recordRead(collection)
        let plan = try planner.plan(collection, query)
        let selected = query.fields.map { $0.map(\.wholeField) }
        let execution = QueryExecution(transaction: self, collection: collection, plan: plan)
        try execution.forEach(
            offset: query.offset, limit: query.limit,
            transform: { match in
                try selected.map { try execution.projected(match, onto: $0) } ?? execution.value(match)
            },
            body)
    }

    /// Calls `body` with each document matching `query` decoded as `T`: straight from the
    /// stored bytes (no ``JSONValue`` built) unless the query selects fields or its filter
    /// or order needed the document's value.
    func forEachDecoded<T: Decodable>(
        _ collection: String, _ query: DocumentQuery, as type: T.Type, _ body: (T) throws -> Void
    )
        throws
    {
        recordRead(collection)
        let plan = try planner.plan(collection, query)
        let selected = query.fields.map { $0.map(\.wholeField) }
        let execution = QueryExecution(transaction: self, collection: collection, plan: plan)
        try execution.forEach(
            offset: query.offset, limit: query.limit,
            transform: { match in
                if let selected {
                    return try DocumentStore.decodeStored(
                        type, execution.projected(match, onto: selected), dates: store.dateStrategy)
                }
                return try execution.decode(match, as: type)
            }, body)
    }

    /// The document with primary key `id` decoded as `T` straight from its stored bytes, or `nil`.
    func getDecoded<T: Decodable>(_ collection: String, id: JSONValue, as type: T.Type) throws -> T? {
        recordRead(collection)
        let schema = try catalog.schema.collection(collection)
        let element = try DocumentStore.idElement(id, collection: collection, primaryKey: schema.primaryKey)
        return try reader.withValue(forKey: store.layout.document(collection, element)) { bytes in
            guard let bytes else { return nil }
            return try store.decodeDocument(type, buffer: bytes, collection: collection, id: element)
        }
    }

    /// The number of documents matching `query`'s conditions (its limit and offset ignored).
    public func count(_ collection: String, _ query: DocumentQuery = DocumentQuery()) throws -> Int {
        recordRead(collection)
        var q = query
        q.limit = nil
        q.offset = 0
        q.order = nil
        if q.conditions.isEmpty {
            _ = try catalog.schema.collection(collection)
            return try reader.count(store.layout.documents(collection).range)
        }
        return try QueryExecution(transaction: self, collection: collection, plan: try planner.plan(collection, q))
            .count()
    }

    /// The plan ``find(_:_:)`` would use. A full scan says how many documents it reads (a
    /// count at this snapshot) and what would let an index serve the query.
    public func explain(_ collection: String, _ query: DocumentQuery) throws -> QueryPlan {
        recordRead(collection)
        var plan = try planner.plan(collection, query)
        if plan.index == nil {
            plan.scannedDocuments = try reader.count(store.layout.documents(collection).range)
            plan.suggestion = planner.suggestion(collection, query)
        }
        return plan
    }
}

// A transaction wraps a snapshot, which belongs to one thread.
@available(*, unavailable)
extension ReadTransaction: Sendable {}

extension DocumentStore {
    /// Runs `body` with reads against one snapshot; several queries across collections
    /// see one consistent state.
    public func read<R>(_ body: (ReadTransaction) throws -> R) throws -> R {
        let transaction = try ReadTransaction(store: self)
        defer { transaction.release() }
        return try body(transaction)
    }

    /// Runs `body`, which makes one read only (a point read is consistent by itself), as
    /// ``read(_:)`` does, without a snapshot when it can: over a LevelDB database whose
    /// catalog was checked at the state now and no write starts while `body` runs. Otherwise
    /// (a write ran meanwhile, another store) `body` runs again in a transaction.
    /// REQUIRES: `body` only reads, once, and can run twice.
    func readOnce<R>(_ body: (ReadTransaction) throws -> R) throws -> R {
        if let counter = writeCounter, let before = counter.quiescentCount {
            let (cached, checkedAt) = state.withLock { ($0.catalog, $0.catalogCount) }
            if checkedAt == before, let database = storage as? LevelDB {
                let transaction = ReadTransaction(store: self, latest: database, catalog: cached)
                do {
                    let result = try body(transaction)
                    if counter.unchanged(since: before) != nil { return result }
                } catch {
                    // An error about the state read stands only if that state held still.
                    if counter.unchanged(since: before) != nil { throw error }
                }
            }
        }
        return try read(body)
    }

    /// Runs `body` with reads through an existing snapshot of the store's database (which
    /// stays the caller's to release).
    public func read<R>(using snapshot: LevelDBSnapshot, _ body: (ReadTransaction) throws -> R) throws -> R {
        try body(ReadTransaction(store: self, snapshot: snapshot))
    }
}
