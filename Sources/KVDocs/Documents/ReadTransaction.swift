import Foundation

/// Reads of a document store against one snapshot: every query, lookup and count made
/// through the transaction sees the same state of the database, whatever writers do.
///
/// ```swift
/// try store.read { tx in
///     let person = try tx.get("people", id: "p1")
///     let trips = try tx.find("trips", Query().where("person", .equal("p1")))
/// }
/// ```
public final class ReadTransaction {
    /// The store read.
    public let store: DocumentStore
    /// The LevelDB snapshot all reads go through (`nil` only for a store over another
    /// implementation of the storage seam, whose snapshot reader is not a LevelDB one).
    public let snapshot: Snapshot?
    /// The schema and index states of the snapshot: queries are planned with them.
    let catalog: StoreCatalog
    /// Reads through the snapshot: the storage seam.
    let reader: any KeyValueReader
    /// The snapshot reader this transaction made (and releases), or `nil` for one given.
    private let owned: (any SnapshotReader)?

    /// Reads through `snapshot`, or through a new snapshot reader of the store's storage.
    init(store: DocumentStore, snapshot: Snapshot? = nil) throws {
        self.store = store
        if let snapshot {
            self.snapshot = snapshot
            self.reader = snapshot.reader
            self.owned = nil
        } else {
            let made = try store.storage.snapshotReader()
            self.owned = made
            self.reader = made
            self.snapshot = (made as? SnapshotKeyValueReader)?.snapshot
        }
        self.catalog = try store.catalog(reader, latest: false)
    }

    /// Releases the snapshot reader this transaction made.
    func release() { owned?.release() }

    /// The planner for this transaction's snapshot.
    var planner: QueryPlanner { QueryPlanner(catalog: catalog, layout: store.layout) }

    /// The document with primary key `id`, or `nil`.
    public func get(_ collection: String, id: JSONValue) throws -> JSONValue? {
        let schema = try catalog.schema.collection(collection)
        let element = try DocumentStore.idElement(id, collection: collection, primaryKey: schema.primaryKey)
        guard let bytes = try reader.value(forKey: store.layout.document(collection, element)) else { return nil }
        return try store.documentValue(bytes, collection: collection, id: element)
    }

    /// The documents matching `query`, in its order, after its offset, up to its limit.
    public func find(_ collection: String, _ query: Query = Query()) throws -> [JSONValue] {
        try execute(collection, query).map(\.document)
    }

    /// The number of documents matching `query`'s conditions (its limit and offset ignored).
    public func count(_ collection: String, _ query: Query = Query()) throws -> Int {
        var q = query
        q.limit = nil
        q.offset = 0
        q.order = nil
        if q.conditions.isEmpty {
            return try reader.count(store.layout.documents(collection).range)
        }
        return try execute(collection, q).count
    }

    /// The plan ``find(_:_:)`` would use.
    public func explain(_ collection: String, _ query: Query) throws -> QueryPlan {
        try planner.plan(collection, query)
    }

    /// Runs a plan: scans its ranges, fetches and filters documents, orders and slices them.
    func execute(_ collection: String, _ query: Query) throws -> [(id: TupleElement, document: JSONValue)] {
        let plan = try planner.plan(collection, query)
        let layout = store.layout
        // offset + limit saturates: a limit of Int.max means "all of them", whatever the offset.
        let wanted = query.limit.map { query.offset.saturatingAdd($0) }
        var results: [(id: TupleElement, document: JSONValue)] = []
        var seen = Set<TupleElement>()

        if plan.index == nil {
            let docs = layout.documents(collection)
            let entries = try reader.scan(docs.range, order: .forward)
            while let entry = try entries.next({ k, v in (try docs.unpack(k), Array(v)) }) {
                guard entry.0.count == 1 else { continue }
                let document = try store.documentValue(entry.1, collection: collection, id: entry.0[0])
                guard query.matches(document) else { continue }
                results.append((entry.0[0], document))
                if plan.orderedByScan, let wanted, results.count >= wanted { break }
            }
        } else {
            scan: for range in plan.ranges {
                let entries = try reader.scan(range, order: plan.reverse ? .reverse : .forward)
                while let key = try entries.next({ k, _ in Array(k) }) {
                    // The id is the last element of the entry's key.
                    guard let id = try? Tuple(decoding: key).elements.last else { continue }
                    if plan.mayRepeat { guard seen.insert(id).inserted else { continue } }
                    guard let bytes = try reader.value(forKey: layout.document(collection, id)) else { continue }
                    let document = try store.documentValue(bytes, collection: collection, id: id)
                    guard query.matches(document) else { continue }
                    results.append((id, document))
                    if plan.orderedByScan, let wanted, results.count >= wanted { break scan }
                }
            }
        }

        if !plan.orderedByScan {
            results = Self.sorted(results, query.order)
        }
        let start = min(query.offset, results.count)
        let end = query.limit.map { min(start.saturatingAdd($0), results.count) } ?? results.count
        return Array(results[start..<end])
    }

    /// Sorts by the order field (missing first), ties by primary key; or by primary key.
    static func sorted(_ results: [(id: TupleElement, document: JSONValue)], _ order: Query.Order?) -> [(id: TupleElement, document: JSONValue)] {
        let keyed = results.map { r -> (sortKey: [UInt8], idKey: [UInt8], r: (id: TupleElement, document: JSONValue)) in
            let sortKey = order.flatMap { $0.field.values(in: r.document).first.map(ValueOrder.key) } ?? []
            return (sortKey, Tuple([r.id]).encoded, r)
        }
        let descending = order?.descending ?? false
        func compare(_ x: [UInt8], _ y: [UInt8]) -> Int { x == y ? 0 : (x.lexicographicallyPrecedes(y) ? -1 : 1) }
        return keyed.sorted { a, b in
            var c = compare(a.sortKey, b.sortKey)
            if c == 0 { c = compare(a.idKey, b.idKey) }
            return descending ? c > 0 : c < 0
        }.map(\.r)
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

    /// Runs `body` with reads through an existing snapshot of the store's database (which
    /// stays the caller's to release).
    public func read<R>(using snapshot: Snapshot, _ body: (ReadTransaction) throws -> R) throws -> R {
        try body(ReadTransaction(store: self, snapshot: snapshot))
    }
}
