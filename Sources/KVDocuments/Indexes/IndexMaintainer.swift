import Foundation
import KVKeys
import KVStorage
import KVSupport

/// One index of one collection, kept exact on every write: the unit a new kind of index
/// plugs in as.
///
/// The document layer never looks inside an index. On a write it reads the old document
/// and asks each of the collection's maintainers for the changes that turn the old into
/// the new (``update(id:old:new:context:)``), in the same write batch as the document and
/// its change record. Building from scratch, verifying, rebuilding, dropping and deriving a
/// layered store's user layer are the same for every kind, driven by the store through this
/// protocol. Adding a kind means adding one type that conforms, and an ``IndexKind``
/// registered with ``IndexKindRegistry``.
///
/// **Invariants.** Every key an index writes lies in ``keyRange``. After any sequence of
/// updates, the entries in ``keyRange`` are exactly those a fresh ``makeVerifier()`` would
/// expect from the documents (verify and rebuild rely on it). ``update(id:old:new:context:)``
/// reads what it needs through ``IndexUpdateContext/storage`` (the latest state, under the
/// writer lock) and writes only through the context.
public protocol IndexMaintainer: Sendable {
    /// Which index this is.
    var identity: IndexIdentity { get }
    /// The definition as the catalog stores it; a stored definition that differs means the
    /// index must be rebuilt.
    var definitionJSON: JSONValue { get }
    /// The layout version of this kind's entries. A ready index whose stored format is
    /// older is rebuilt when the store opens.
    var formatVersion: Int64 { get }
    /// Every key of the index.
    var keyRange: KeyRange { get }

    /// Throws when the index cannot take `document` (a geo index: a field that holds no
    /// point; a secondary index: arrays nested too deep). Every maintainer of a collection
    /// validates a write before any of them updates, so a refused write leaves nothing in
    /// the batch or in any maintainer's state.
    func validate(id: TupleElement, document: JSONValue) throws

    /// Adds to `context.batch` what changes in the index when document `id` goes from `old`
    /// to `new` (`nil`: absent). Throws, writing nothing, when `new` is not allowed (a
    /// unique violation).
    func update(id: TupleElement, old: JSONValue?, new: JSONValue?, context: IndexUpdateContext) throws

    /// Adds what the whole batch changes once, before it commits (corpus statistics).
    func finish(context: IndexUpdateContext) throws

    /// Adds to `context.batch` the work collected so far, before a long build writes the
    /// batch part-way (``IndexUpdateContext/pendingWork`` tells when). State that must
    /// wait for the end (statistics) stays for ``finish(context:)``.
    func flush(context: IndexUpdateContext) throws

    /// The stored entries as ``makeVerifier()``'s expectations describe them; by default
    /// every entry in ``keyRange`` as it is stored.
    func verificationEntries(_ reader: any KeyValueReader) throws -> [([UInt8], [UInt8])]

    /// A fresh accumulator of the entries that a set of documents implies.
    func makeVerifier() -> any IndexVerifier

    /// A name for one of the index's keys in messages, when a plain tuple is not enough.
    func describe(key: [UInt8]) -> String?

    /// Serving `find`: a plan that answers the query `query` from this index, with a score
    /// (higher is better), or `nil` when the index cannot serve it (the default). The
    /// planner asks every ready index of the collection and takes the best; a plan of a
    /// registered kind is made with ``QueryPlan/init(collection:index:ranges:rangeConditions:query:keyPrefixLength:orderedByScan:reverse:mayRepeat:)``.
    /// Kinds that answer reads of their own serve them through their request types, which
    /// read the index with ``ReadTransaction/index(_:of:as:)``.
    func candidatePlan(for query: DocumentQuery) -> (score: Int, plan: QueryPlan)?

    /// How a layered store's user layer gets this index's entries over a new base:
    /// ``IndexDerivation/incremental`` (the default) or ``IndexDerivation/whole``.
    var derivation: IndexDerivation { get }
}

/// How a layered store derives an index's entries in its user layer over a base (see
/// ``LayeredDocumentStore``): the user layer holds the entries that differ from the
/// base's, and tombstones of the base's entries it hides.
public enum IndexDerivation: Sendable, Hashable {
    /// For each document the user layer writes or deletes, ``IndexMaintainer/update(id:old:new:context:)``
    /// from the base's version to the user's: right for an index whose entries each belong
    /// to one document (or whose shared state the maintainer reads and rewrites, as text
    /// statistics are).
    case incremental
    /// Every entry of the index derived again over the merged documents, hiding every base
    /// entry: for an index whose entries cannot be told apart by document.
    case whole
}

extension IndexMaintainer {
    /// Takes every document (the default).
    public func validate(id: TupleElement, document: JSONValue) throws {}
    /// Adds nothing at the end of a batch (the default).
    public func finish(context: IndexUpdateContext) throws {}
    /// Holds no work back (the default).
    public func flush(context: IndexUpdateContext) throws {}
    /// Every entry in ``keyRange`` as it is stored (the default).
    public func verificationEntries(_ reader: any KeyValueReader) throws -> [([UInt8], [UInt8])] {
        var result: [([UInt8], [UInt8])] = []
        let stored = try reader.scan(keyRange, order: .forward)
        while let entry = try stored.next({ k, v in (Array(k), Array(v)) }) { result.append(entry) }
        return result
    }
    /// No name beyond the key's tuple (the default).
    public func describe(key: [UInt8]) -> String? { nil }
    /// Serves no `find` (the default).
    public func candidatePlan(for query: DocumentQuery) -> (score: Int, plan: QueryPlan)? { nil }
    /// ``IndexDerivation/incremental`` (the default).
    public var derivation: IndexDerivation { .incremental }
}

/// Accumulates the entries (key → value) that documents imply, for
/// ``DocumentStore/verify(collection:)``: a fresh verifier gets every document of the
/// collection, then is asked for the entries they imply, which must equal the stored ones.
public protocol IndexVerifier {
    /// Adds the entries document `id` implies.
    mutating func add(id: TupleElement, document: JSONValue)
    /// Every entry expected in the index's ``IndexMaintainer/keyRange``.
    func expectedEntries() -> [[UInt8]: [UInt8]]
}

/// What maintainers share while one write batch is assembled: the store to read, the batch
/// to add to, and state per index for the batch.
///
/// REQUIRES: used on one thread, under the database's exclusive writer lock, so reads of
/// the database see every committed write and nothing can commit in between.
public final class IndexUpdateContext {
    /// The store's data, at its latest state (the writer lock keeps it still).
    public let storage: any KeyValueStore
    /// The write batch being assembled; it commits with the documents it indexes.
    public let batch: WriteBatch
    /// Whether this context builds an index from scratch (every maintainer writes its
    /// complete state at the end, even for a collection with no documents).
    public internal(set) var building = false
    /// Work maintainers hold for the batch but have not added to it yet (postings of text
    /// indexes); a long build calls ``IndexMaintainer/flush(context:)`` and writes the batch
    /// when it grows large. A maintainer that buffers work adds to it.
    public var pendingWork = 0
    /// Per-maintainer state for the batch, by index.
    private var scratch: [IndexIdentity: AnyObject] = [:]
    /// The state ``state(for:_:)`` returned last, and its index.
    private var lastState: (index: IndexIdentity, state: AnyObject)?
    /// The last id encoded by ``encodedID(_:)``: the maintainers of one document share it.
    private var lastID: (element: TupleElement, bytes: [UInt8])?
    /// Key buffers a maintainer borrows for one update (``withKeyBuffers(_:)``), so that the
    /// writes of a batch build their entries' keys without allocating them anew.
    private var keyBuffers: ([UInt8], [UInt8]) = ([], [])

    /// Runs `body` with two key buffers (of unspecified contents) kept for the next update.
    package func withKeyBuffers<R>(_ body: (inout [UInt8], inout [UInt8]) throws -> R) rethrows -> R {
        var (a, b) = (([UInt8]()), ([UInt8]()))
        swap(&a, &keyBuffers.0)
        swap(&b, &keyBuffers.1)
        defer {
            swap(&a, &keyBuffers.0)
            swap(&b, &keyBuffers.1)
        }
        return try body(&a, &b)
    }

    /// The tuple encoding of a document's id (`Tuple([id]).encoded`), encoded once for all
    /// the maintainers that index the document.
    package func encodedID(_ id: TupleElement) -> [UInt8] {
        if let lastID, Self.sameEncoding(lastID.element, id) { return lastID.bytes }
        let bytes = Tuple([id]).encoded
        lastID = (id, bytes)
        return bytes
    }

    /// Whether two ids surely encode alike, decided without encoding them: strings of the
    /// same code points, equal integers (`==` on elements compares their encodings, which
    /// costs what encoding does). Other kinds are never the same here.
    private static func sameEncoding(_ a: TupleElement, _ b: TupleElement) -> Bool {
        switch (a, b) {
        case (.string(let x), .string(let y)): JSONObject.compareKeys(x, y) == 0
        case (.int(let x), .int(let y)): x == y
        default: false
        }
    }

    init(storage: any KeyValueStore, batch: WriteBatch) {
        self.storage = storage
        self.batch = batch
    }

    /// Adds the entry `key` → `value` to the batch.
    public func put(_ key: [UInt8], _ value: [UInt8]) {
        batch.put(key, value)
    }

    /// Adds the removal of `key` to the batch.
    public func delete(_ key: [UInt8]) {
        batch.delete(key)
    }

    /// The state `index` keeps for this batch, if it made one.
    public func existingState<T: AnyObject>(for index: IndexIdentity, as type: T.Type) -> T? {
        scratch[index] as? T
    }

    /// The state `index` keeps for this batch, made by `make` on first use.
    public func state<T: AnyObject>(for index: IndexIdentity, _ make: () throws -> T) rethrows -> T {
        // The documents of a batch ask one index after the other for the same state: the
        // last one found is compared (as the dictionary would) before the dictionary is hashed.
        if let last = lastState, last.index == index, let existing = last.state as? T { return existing }
        if let existing = scratch[index] as? T {
            lastState = (index, existing)
            return existing
        }
        let created = try make()
        scratch[index] = created
        lastState = (index, created)
        return created
    }
}

extension CollectionSchema {
    /// The maintainers of every index of collection `collection`, in the order of
    /// ``definitions``: secondary indexes, text indexes, geo indexes, then registered kinds.
    func maintainers(collection: String, layout: Layout) -> [any IndexMaintainer] {
        definitions.compactMap { d -> (any IndexMaintainer)? in
            switch d.builtIn {
            case .secondary(let definition)?:
                SecondaryIndexMaintainer(
                    collection: collection, definition: definition, primaryKey: primaryKey,
                    subspace: layout.index(collection, definition.name), documents: layout)
            case .text(let definition)?:
                TextIndexMaintainer(
                    collection: collection, definition: definition, subspace: layout.text(collection, definition.name))
            case .geo(let definition)?:
                GeoIndexMaintainer(
                    collection: collection, definition: definition, subspace: layout.geo(collection, definition.name))
            case nil:
                // A schema holds only kinds it validated as registered, and kinds stay registered.
                IndexKindRegistry.kind(d.kind).map { kind in
                    let identity = IndexIdentity(collection, d.name, d.kind)
                    return kind.maintainer(
                        for: d, identity: identity, schema: self, subspace: layout.subspace(of: identity))
                }
            }
        }
    }
}
