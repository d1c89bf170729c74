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
        /// Indexes a query may use.
        var readyIndexes: Set<IndexIdentity>
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
        let format = try Self.storedFormat(database, layout)
        if let format, format > Self.formatVersion {
            throw KVDocsError(.notSupported, "the document store in \(database.path) has format version \(format), written by a newer version of KVDocs; this version reads format \(Self.formatVersion) and older", path: database.path)
        }
        state = Mutex(State(schema: stored.schema, readyIndexes: stored.ready, lastSequence: stored.lastSequence))
        if let format, format < Self.formatVersion {
            try migrate(from: format, progress: progress)
        }
        if let schema {
            try apply(schema, progress: progress)
        } else if stored.ready.count < stored.schema.collections.values.reduce(0, { $0 + $1.indexes.count + $1.text.count }) {
            // An index build was interrupted: finish it.
            try apply(stored.schema, progress: progress)
        }
    }

    /// The current schema.
    public var schema: Schema { state.withLock { $0.schema } }

    /// The sequence number of the last write to this database under ``root`` (0 before the
    /// first), through this store or any other store on the same database.
    public var lastSequence: Int64 { (try? storedSequence()) ?? state.withLock { $0.lastSequence } }

    /// The last sequence number as stored in the catalog.
    func storedSequence() throws -> Int64 {
        guard let t = try database.get(layout.sequenceKey, as: Tuple.self) else { return 0 }
        do {
            return try t.int64(at: 0)
        } catch {
            throw KVDocsError(.corruption, "the stored sequence number of the document store is not an integer", path: database.path)
        }
    }

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
        state.withLock { $0.readyIndexes.contains(IndexIdentity(collection, index, .secondary)) }
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
    /// The store's format version (absent in stores written before versions were kept: 1).
    var formatKey: [UInt8] { root.pack(["m", "format"]) }
    func text(_ collection: String, _ index: String) -> Subspace { root.subspace(["t", .string(collection), .string(index)]) }
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
    /// Opening a store with an older version migrates it before `init` returns, reporting
    /// progress like an index build; a newer version is refused with `.notSupported`.
    public static let formatVersion: Int64 = 2

    /// The stored format version: `nil` for a database with no document store yet.
    static func storedFormat(_ db: Database, _ layout: Layout) throws -> Int64? {
        if let t = try db.get(layout.formatKey, as: Tuple.self) {
            do {
                return try t.int64(at: 0)
            } catch {
                throw KVDocsError(.corruption, "the document store's format version is not an integer", path: db.path)
            }
        }
        let exists = try db.get(layout.schemaKey) != nil || db.get(layout.sequenceKey) != nil
        return exists ? 1 : nil
    }

    /// Brings a store of an older format to ``formatVersion``. Each step is idempotent, and
    /// the new version is stored only after every step succeeded, so an interrupted
    /// migration runs again on the next open.
    func migrate(from format: Int64, progress: ((IndexBuildProgress) -> Void)?) throws {
        try database.withExclusiveWriter {
            if format < 2 {
                // Version 1 read numbers inexactly and wrote objects through JSONEncoder:
                // rebuild every secondary index from the documents as this version reads them.
                let schema = self.schema
                for (name, collection) in schema.collections.sorted(by: { JSONObject.compareKeys($0.key, $1.key) < 0 }) {
                    for index in collection.indexes where isReady(name, index.name) {
                        try buildIndex(name, collection, index, progress: progress)
                    }
                }
            }
            try database.put(layout.formatKey, Tuple([.int(Self.formatVersion)]), sync: true)
        }
    }
}
