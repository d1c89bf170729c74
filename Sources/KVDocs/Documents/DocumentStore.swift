import Foundation
import Synchronization

/// Documents in collections, with declared secondary indexes kept exact on every write.
///
/// ```swift
/// let store = try DocumentStore(database: db, schema: Schema(contentsOfFile: "schema.json"))
/// let people = try store.collection("people")
/// try people.insert(["id": "p1", "name": "Ada", "age": 36])
/// let adults = try people.find(Query().where("age", .greaterOrEqual(18)).orderBy("age").limit(10))
/// ```
///
/// **Layout.** Everything lives under ``root`` as tuple keys:
/// `("d", collection, id)` → the document's JSON; `("i", collection, index, values…, id)` →
/// an index entry (values in ``ValueOrder``'s encoding); `("f", sequence)` →
/// `(collection, id, operation)`, the change feed; `("m", …)` → the catalog (schema,
/// index states, last sequence); `("t", …)` → text indexes.
///
/// **Writes.** Each insert, update or delete writes the document, its new index entries,
/// the removal of stale ones and a change record in one LevelDB write batch, so the
/// indexes are never stale and a failed write leaves nothing behind. Writers are
/// serialized per database (``Database/withExclusiveWriter(_:)``); readers never block.
///
/// **Durability.** Every write method takes `sync: Bool = false`
/// (``DocumentCollection/insert(_:sync:)``, `upsert`, `update`, `delete`, the same on
/// ``TypedCollection``, ``write(sync:_:)`` for a ``DocumentBatch``, and
/// ``importJSONLines(into:path:mode:batchSize:maximumLineLength:sync:progress:)``), passed to
/// LevelDB's `sync` write option. A write is in LevelDB's log, handed to the operating
/// system, before it returns, so **every acknowledged write survives a crash of the
/// process**, synced or not. **A power loss or an OS crash keeps only the writes made with
/// `sync: true` and everything acknowledged before them**; later unsynced writes may be lost,
/// each one whole (documents and index entries together, never one without the other).
/// Schema changes and index builds are always synced. See ``Database``, Durability.
///
/// **Schema changes.** Opening with a schema that differs from the stored one builds new
/// indexes, drops removed ones and rebuilds changed ones before `init` returns, reporting
/// progress. A query only ever uses an index whose state is `ready`.
///
/// Thread-safe: one store can serve many threads (see ``Database``).
public final class DocumentStore: @unchecked Sendable {
    // @unchecked Sendable: mutable state is in `state` (a Mutex); the database is Sendable.

    public let database: Database
    /// The subspace holding all of the store's keys.
    public let root: Subspace

    struct State {
        var schema: Schema
        /// Indexes a query may use, as "collection/index".
        var readyIndexes: Set<String>
        var lastSequence: Int64
        var observers: [UUID: AsyncStream<Change>.Continuation] = [:]
    }
    let state: Mutex<State>

    /// Progress of an index build, for the callback of ``init(database:schema:root:progress:)``.
    public struct IndexBuildProgress: Sendable {
        public let collection: String
        public let index: String
        /// Documents indexed so far, and in all.
        public let done: Int
        public let total: Int
    }

    /// Opens the document layer of `database`.
    ///
    /// - Parameters:
    ///   - schema: the schema to use; `nil` keeps the stored one (or none). A schema that
    ///     differs from the stored one is applied (indexes added, dropped, rebuilt) and stored.
    ///   - progress: called while indexes are built.
    /// - Throws: `.schema` for an invalid schema, `.uniqueViolation` when a new unique index
    ///   meets duplicate values (nothing of the new schema is kept), storage errors.
    public init(database: Database, schema: Schema? = nil, root: Subspace = Subspace(),
                progress: ((IndexBuildProgress) -> Void)? = nil) throws {
        self.database = database
        self.root = root
        let layout = Layout(root: root)
        let stored = try Self.loadCatalog(database, layout)
        state = Mutex(State(schema: stored.schema, readyIndexes: stored.ready, lastSequence: stored.lastSequence))
        if let schema {
            try apply(schema, progress: progress)
        } else if stored.ready.count < stored.schema.collections.values.reduce(0, { $0 + $1.indexes.count + $1.text.count }) {
            // An index build was interrupted: finish it.
            try apply(stored.schema, progress: progress)
        }
    }

    /// The current schema.
    public var schema: Schema { state.withLock { $0.schema } }

    /// The sequence number of the last write (0 before the first).
    public var lastSequence: Int64 { state.withLock { $0.lastSequence } }

    var layout: Layout { Layout(root: root) }

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

    func isReady(_ collection: String, _ index: String) -> Bool {
        state.withLock { $0.readyIndexes.contains("\(collection)/\(index)") }
    }
}

/// The key layout of a document store.
struct Layout: Sendable {
    let root: Subspace

    func document(_ collection: String, _ id: TupleElement) -> [UInt8] { root.pack(["d", .string(collection), id]) }
    func documents(_ collection: String) -> Subspace { root.subspace(["d", .string(collection)]) }
    func index(_ collection: String, _ index: String) -> Subspace { root.subspace(["i", .string(collection), .string(index)]) }
    func change(_ sequence: Int64) -> [UInt8] { root.pack(["f", .int(sequence)]) }
    var changes: Subspace { root.subspace(["f"]) }
    var schemaKey: [UInt8] { root.pack(["m", "schema"]) }
    func indexState(_ collection: String, _ index: String) -> [UInt8] { root.pack(["m", "index", .string(collection), .string(index)]) }
    var indexStates: Subspace { root.subspace(["m", "index"]) }
    var sequenceKey: [UInt8] { root.pack(["m", "seq"]) }
    func text(_ collection: String, _ index: String) -> Subspace { root.subspace(["t", .string(collection), .string(index)]) }
}

extension KVDocsError.Kind {
    /// A write would give two documents the same value in a unique index.
    public static let uniqueViolation = KVDocsError.Kind("unique violation")
    /// A document with that id already exists (insert), or none exists (update).
    public static let conflict = KVDocsError.Kind("conflict")
}
