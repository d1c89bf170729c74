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
/// its change record. Building from scratch, verifying and dropping are the same for every
/// kind, driven by the store through this protocol. Adding a kind means adding one type
/// that conforms, and an ``IndexKind`` registered with ``IndexKindRegistry``.
///
/// **Invariants.** Every key an index writes lies in ``keyRange``. After any sequence of
/// updates, the entries in ``keyRange`` are exactly those a fresh ``makeVerifier()`` would
/// expect from the documents (verify and rebuild rely on it).
package protocol IndexMaintainer: Sendable {
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

    /// Serving reads: a plan that answers the `find` query `query` from this index, with a
    /// score (higher is better), or `nil` when the index cannot serve it. The
    /// ``QueryPlanner`` asks every ready index of the collection and takes the best. Kinds
    /// that answer other reads serve them through their own methods (text indexes:
    /// ``TextIndexMaintainer/rank(_:reader:)``).
    func candidatePlan(for query: DocumentQuery) -> (score: Int, plan: QueryPlan)?
}

extension IndexMaintainer {
    package func validate(id: TupleElement, document: JSONValue) throws {}
    package func finish(context: IndexUpdateContext) throws {}
    package func flush(context: IndexUpdateContext) throws {}
    package func verificationEntries(_ reader: any KeyValueReader) throws -> [([UInt8], [UInt8])] {
        var result: [([UInt8], [UInt8])] = []
        let stored = try reader.scan(keyRange, order: .forward)
        while let entry = try stored.next({ k, v in (Array(k), Array(v)) }) { result.append(entry) }
        return result
    }
    package func describe(key: [UInt8]) -> String? { nil }
    package func candidatePlan(for query: DocumentQuery) -> (score: Int, plan: QueryPlan)? { nil }
}

/// Accumulates the entries (key → value) that documents imply, for ``DocumentStore/verify(collection:)``.
package protocol IndexVerifier {
    mutating func add(id: TupleElement, document: JSONValue)
    /// Every entry expected in the index's ``IndexMaintainer/keyRange``.
    func expectedEntries() -> [[UInt8]: [UInt8]]
}

/// What maintainers share while one write batch is assembled.
///
/// REQUIRES: used on one thread, under the database's exclusive writer lock, so reads of
/// the database see every committed write and nothing can commit in between.
package final class IndexUpdateContext {
    /// The store's data, at its latest state (the writer lock keeps it still).
    package let storage: any KeyValueStore
    package let batch: WriteBatch
    /// Whether this context builds an index from scratch (every maintainer writes its
    /// complete state at the end, even for a collection with no documents).
    var building = false
    /// Work maintainers hold for the batch but have not added to it yet (postings of text
    /// indexes); a long build flushes it and writes the batch when it grows large.
    var pendingWork = 0
    /// Per-maintainer state for the batch, by index.
    private var scratch: [IndexIdentity: AnyObject] = [:]

    init(storage: any KeyValueStore, batch: WriteBatch) {
        self.storage = storage
        self.batch = batch
    }

    package func put(_ key: [UInt8], _ value: [UInt8]) {
        batch.put(key, value)
    }

    package func delete(_ key: [UInt8]) {
        batch.delete(key)
    }

    /// The state `index` keeps for this batch, if it made one.
    package func existingState<T: AnyObject>(for index: IndexIdentity, as type: T.Type) -> T? {
        scratch[index] as? T
    }

    /// The state `index` keeps for this batch, made by `make` on first use.
    package func state<T: AnyObject>(for index: IndexIdentity, _ make: () throws -> T) rethrows -> T {
        if let existing = scratch[index] as? T { return existing }
        let created = try make()
        scratch[index] = created
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
                IndexKindRegistry.kind(d.kind)?.maintainer(d, collection: collection, schema: self, layout: layout)
            }
        }
    }
}
