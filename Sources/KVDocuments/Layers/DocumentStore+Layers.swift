import Foundation
import KVKeys
import KVStorage
import KVSupport

/// The user layer's derived data (index entries and their tombstones, text postings and
/// statistics, geo entries) over a base, built apart from the user database and then copied
/// into it.
///
/// A base replacement first builds the derived data the user layer needs over the new base
/// into a **staging** database (``stage(root:base:user:staging:progress:)``); that is where a
/// unique conflict, a damaged base or a bad document fails, with the user database untouched.
/// Only then is the replacement recorded, and ``apply(staging:to:root:progress:)`` copies the
/// staged entries over the user's derived data: a copy that can be redone from the start
/// after a crash and cannot fail on the data.
enum LayerDerivation {
    /// The key ranges of derived data under `root`: secondary, text and geo indexes, and
    /// those of registered kinds (``Layout/subspace(of:)``).
    static func derivedRanges(_ root: Subspace) -> [KeyRange] {
        ["i", "t", "g", "x"].map { root.subspace([.string($0)]).range }
    }

    /// Builds into the empty database `staging` the user layer's derived data over `base`:
    /// for every document the user layer holds or deletes, the base's version of it leaves
    /// the indexes (first pass, so that values moving between documents never conflict), then
    /// the user's version enters them (second pass). Streams the user's documents, writing a
    /// batch every 10,000 entries: memory is bounded, time linear in the user layer.
    ///
    /// `staging` holds the result as the user layer stores it (tagged values, tombstones of
    /// base entries), relative to `base`.
    /// - Throws: `.uniqueViolation` when a user document and a base document share a unique
    ///   value; `.corruption` for an unreadable document or entry; storage errors.
    static func stage(
        root: Subspace, base: LevelDB, user: LevelDB, staging: LevelDB,
        progress: ((_ done: Int, _ total: Int) -> Void)? = nil
    ) throws {
        let layout = Layout(root: root)
        let store = try StagedDerivationStore(
            base: base, user: user, staging: staging, derived: derivedRanges(root),
            userOnly: [layout.changes.range])
        let catalog = try CompiledCatalog.load(store, DocumentCatalog(root: root), layout: layout)
        let whole = try indexesDerivedWhole(catalog, base: base, root: root)
        for maintainer in whole { try deriveWhole(maintainer, through: store, layout: layout) }
        func maintainers(of collection: String) -> [any IndexMaintainer] {
            catalog.maintainers(of: collection).filter { m in !whole.contains { $0.identity == m.identity } }
        }
        let documents = root.subspace(["d"])
        let total = try user.count(documents.range) * 2
        var done = 0
        for adding in [false, true] {
            var context = IndexUpdateContext(storage: store, batch: WriteBatch())
            var touched: [String] = []
            func finishChunk() throws {
                for name in touched {
                    for maintainer in maintainers(of: name) { try maintainer.finish(context: context) }
                }
                if context.batch.count > 0 { try store.write(context.batch, sync: false) }
                context = IndexUpdateContext(storage: store, batch: WriteBatch())
                touched.removeAll()
            }
            let cursor = try user.entries(documents.range)
            while let entry = try cursor.next() {
                done += 1
                if done % 1000 == 0 { progress?(done, total) }
                guard let t = try? documents.unpack(entry.key), t.count == 2, let collection = try? t.string(at: 0)
                else {
                    throw KVDocsError(
                        .corruption, "a document key of the user layer is not (collection, id)", path: user.path,
                        key: entry.key)
                }
                let maintainers = maintainers(of: collection)
                guard !maintainers.isEmpty else { continue }
                let bytes: [UInt8]?
                if adding {
                    bytes = try LayeredKeyValueStore.untag(entry.value, key: entry.key, name: user.path)
                } else {
                    bytes = try base.get(entry.key)
                }
                guard let bytes else { continue }
                let document: JSONValue
                do {
                    document = try DocumentStore.parseStored(bytes)
                } catch let e as KVDocsError {
                    throw KVDocsError(
                        .corruption,
                        "document \(t[1]) of \"\(collection)\" in the \(adding ? "user layer" : "base") is not valid JSON: \(e.message)",
                        path: adding ? user.path : (base.copiedFrom ?? base.path), key: entry.key)
                }
                if !touched.contains(collection) { touched.append(collection) }
                // Explicitly optional: JSONValue is expressible by `nil` (its null).
                let old: JSONValue? = adding ? Optional.none : Optional.some(document)
                let new: JSONValue? = adding ? Optional.some(document) : Optional.none
                for maintainer in maintainers {
                    try maintainer.update(id: t[1], old: old, new: new, context: context)
                }
                if context.batch.count >= 10_000 || context.pendingWork >= TextIndexMaintainer.flushThreshold {
                    try finishChunk()
                }
            }
            try finishChunk()
        }
        try staging.write(WriteBatch(), sync: true)
        progress?(total, total)
    }

    /// The indexes whose entries in `base` are not the ones `catalog` (the user layer's over
    /// `base`) uses: the base lacks the index, or holds it at another definition or format
    /// (written by an older KVDocs, say), and those whose kind asks for it
    /// (``IndexDerivation/whole``). Their base entries cannot be kept, so they are derived
    /// whole, over every document.
    static func indexesDerivedWhole(_ catalog: CompiledCatalog, base: LevelDB, root: Subspace) throws
        -> [any IndexMaintainer]
    {
        let records = DocumentCatalog(root: root)
        let all = catalog.schema.collections.keys.sorted { JSONObject.compareKeys($0, $1) < 0 }.flatMap {
            catalog.maintainers(of: $0)
        }
        var states: [IndexIdentity: IndexState] = [:]
        for kind in Set(all.map(\.identity.kind)) { states.merge(try records.indexStates(kind, in: base)) { $1 } }
        return all.filter { maintainer in
            if maintainer.derivation == .whole { return true }
            guard let state = states[maintainer.identity] else { return true }
            return
                !(state.phase == .ready && state.definition == maintainer.definitionJSON
                && state.format == maintainer.formatVersion)
        }
    }

    /// Derives one index whole through `store`: a tombstone for each of the base's entries,
    /// then the entries of every document the layers hold together.
    static func deriveWhole(_ maintainer: any IndexMaintainer, through store: StagedDerivationStore, layout: Layout)
        throws
    {
        try store.deleteAll(in: maintainer.keyRange)
        let collection = maintainer.identity.collection
        let docs = layout.documents(collection)
        let cursor = try store.scan(docs.range, order: .forward)
        let context = IndexUpdateContext(storage: store, batch: WriteBatch())
        context.building = true
        while let entry = try cursor.next({ k, v in (try docs.unpack(Array(k)), Array(v)) }) {
            guard entry.0.count == 1 else { continue }
            let document: JSONValue
            do {
                document = try DocumentStore.parseStored(entry.1)
            } catch let e as KVDocsError {
                throw KVDocsError(
                    .corruption, "document \(entry.0[0]) of \"\(collection)\" is not valid JSON: \(e.message)",
                    path: store.name, key: docs.pack(entry.0))
            }
            try maintainer.update(id: entry.0[0], old: nil, new: document, context: context)
            if context.batch.count >= 10_000 || context.pendingWork >= TextIndexMaintainer.flushThreshold {
                try maintainer.flush(context: context)
                try store.write(context.batch, sync: false)
                context.batch.clear()
                context.pendingWork = 0
            }
        }
        try maintainer.finish(context: context)
        try store.write(context.batch, sync: false)
    }

    /// Makes the user layer's derived data exact over `base` in one go: stages it in a
    /// temporary database at `stagingPath` (removed afterwards), then applies it inside
    /// `around` (a caller that must hold readers back wraps the apply).
    static func rederive(
        root: Subspace, base: LevelDB, user: LevelDB, stagingPath: String,
        progress: ((_ done: Int, _ total: Int) -> Void)? = nil,
        around: (() throws -> Void) throws -> Void = { try $0() }
    ) throws {
        defer { try? FileManager.default.removeItem(atPath: stagingPath) }
        let staging = try LevelDB(path: stagingPath)
        defer { staging.close() }
        try stage(root: root, base: base, user: user, staging: staging, progress: progress)
        try around { _ = try apply(staging: staging, to: user, root: root) }
    }

    /// Replaces the user layer's derived data with the entries of `staging`, byte for byte:
    /// deletes every derived entry of `user`, then copies the staged ones in batches, each
    /// synced (a power loss cannot tear an earlier batch). Idempotent: after a crash, calling
    /// it again gives the same result. Returns the entries copied.
    @discardableResult
    static func apply(staging: LevelDB, to user: LevelDB, root: Subspace, progress: ((_ done: Int) -> Void)? = nil)
        throws -> Int
    {
        let ranges = derivedRanges(root)
        for range in ranges { try user.deleteAll(in: range, sync: true) }
        let batch = WriteBatch()
        var copied = 0
        for range in ranges {
            let cursor = try staging.entries(range)
            while let entry = try cursor.next() {
                batch.put(entry.key, entry.value)
                copied += 1
                if batch.count >= 10_000 {
                    try user.write(batch, sync: true)
                    batch.clear()
                    progress?(copied)
                }
            }
        }
        try user.write(batch, sync: true)
        progress?(copied)
        return copied
    }
}

extension DocumentStore {
    /// Makes the user layer's derived data exact over `layered`'s current base (see
    /// ``LayerDerivation``): stages it in a temporary database beside the user database,
    /// then applies it, under the writer lock. It records nothing, so a crash while it
    /// applies leaves the derived data inexact: ``LayeredDocumentStore`` records its
    /// replacements instead; this serves tests of the derivation itself.
    ///
    /// REQUIRES: the store reads and writes through `layered`.
    /// - Throws: `.uniqueViolation` when a user document and a base document share a unique
    ///   value (the user layer is then unchanged); storage errors.
    package func rederive(_ layered: LayeredKeyValueStore, progress: ((IndexBuildProgress) -> Void)? = nil) throws {
        try storage.withWriteTransaction {
            try LayerDerivation.rederive(
                root: root, base: layered.base, user: layered.user,
                stagingPath: layered.user.path + ".derive-" + UUID().uuidString,
                progress: { progress?(IndexBuildProgress(collection: "*", index: "*", done: $0, total: $1)) },
                around: { apply in try layered.withReadsHeld(apply) })
        }
    }
}

/// The view a staged derivation reads and writes through: derived data is the staging
/// database's over the base, everything else the user layer's over the base; writes go to
/// the staging database, tagged as the user layer stores them.
///
/// REQUIRES: every scan lies within one side (a derived range, or none).
final class StagedDerivationStore: KeyValueStore, @unchecked Sendable {
    // @unchecked Sendable: used by one thread, under the user database's writer lock.
    private let derivedSide: LayeredKeyValueStore
    private let documentSide: LayeredKeyValueStore
    private let derived: [KeyRange]

    init(base: LevelDB, user: LevelDB, staging: LevelDB, derived: [KeyRange], userOnly: [KeyRange]) throws {
        derivedSide = try LayeredKeyValueStore(base: base, user: staging, userOnly: userOnly)
        documentSide = try LayeredKeyValueStore(base: base, user: user, userOnly: userOnly)
        self.derived = derived
    }

    var name: String { documentSide.user.path }

    private func side(_ key: [UInt8]?) -> LayeredKeyValueStore {
        guard let key, derived.contains(where: { $0.contains(key) }) else { return documentSide }
        return derivedSide
    }

    func value(forKey key: [UInt8]) throws -> [UInt8]? { try side(key).value(forKey: key) }

    func scan(_ range: KeyRange, order: ScanOrder) throws -> any KeyValueCursor {
        // A scan bounded on one side only (the last block at or before a key) is routed by
        // the bound it has.
        try side(range.lower?.key ?? range.upper?.key).scan(range, order: order)
    }

    func write(_ batch: WriteBatch, sync: Bool) throws { try derivedSide.write(batch, sync: sync) }

    func snapshotReader() throws -> any SnapshotReader {
        throw KVDocsError(.notSupported, "a staged derivation takes no snapshot", path: name)
    }

    func withWriterLock<R>(_ body: () throws -> R) rethrows -> R { try body() }

    func withWriteTransaction<R>(_ body: () throws -> R) throws -> R { try body() }
}
