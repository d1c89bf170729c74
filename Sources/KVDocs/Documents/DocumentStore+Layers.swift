import Foundation

extension DocumentStore {
    /// Makes the user layer's derived data (index entries and their tombstones, text
    /// postings and statistics, geo entries) exact over `layered`'s current base: drops
    /// every derived entry of the user layer, then replays each document the user layer
    /// holds (or deletes) as a write from the base's version of it to the user's. The user's
    /// documents and document deletes are kept as they are (a delete of a base document
    /// hides that id in every later base too); user-only collections come out as they were.
    ///
    /// REQUIRES: the store reads and writes through `layered`.
    /// - Throws: `.uniqueViolation` when a user document and a base document now share a
    ///   unique value; storage errors. The user layer's derived data is then inexact until
    ///   the next call succeeds (a replacement undoes itself with one).
    func rederive(_ layered: LayeredStore, progress: ((IndexBuildProgress) -> Void)? = nil) throws {
        try storage.withExclusiveWrite {
            let user = layered.user, base = layered.base
            for kind in ["i", "t", "g"] {
                try user.deleteAll(in: root.subspace([.string(kind)]).range)
            }
            let documents = root.subspace(["d"])
            var overrides: [(key: [UInt8], collection: String, id: TupleElement, document: [UInt8]?)] = []
            let cursor = try user.entries(documents.range)
            while let entry = try cursor.next() {
                let document = try LayeredStore.untag(entry.value, key: entry.key, name: user.path)
                guard let t = try? documents.unpack(entry.key), t.count == 2, let collection = try? t.string(at: 0) else {
                    throw KVDocsError(.corruption, "a document key of the user layer is not (collection, id)", path: user.path, key: entry.key)
                }
                overrides.append((entry.key, collection, t[1], document))
            }

            let catalog = try self.catalog()
            let context = IndexUpdateContext(storage: storage, batch: WriteBatch())
            var touched: [String] = []
            let total = overrides.count
            for (done, override) in overrides.enumerated() {
                let maintainers = catalog.maintainers(of: override.collection)
                guard !maintainers.isEmpty else { continue }
                if !touched.contains(override.collection) { touched.append(override.collection) }
                let old = try base.get(override.key).map { try documentValue($0, collection: override.collection, id: override.id) }
                let new = try override.document.map { try documentValue($0, collection: override.collection, id: override.id) }
                for maintainer in maintainers {
                    try maintainer.update(id: override.id, old: old, new: new, context: context)
                }
                if context.batch.count >= 10_000 || context.pendingWork >= TextIndexMaintainer.flushThreshold {
                    for name in touched { for maintainer in catalog.maintainers(of: name) { try maintainer.flush(context: context) } }
                    try storage.write(context.batch, sync: false)
                    context.batch.clear()
                    context.pendingWork = 0
                }
                if done % 1000 == 0 { progress?(IndexBuildProgress(collection: override.collection, index: "*", done: done, total: total)) }
            }
            for name in touched { for maintainer in catalog.maintainers(of: name) { try maintainer.finish(context: context) } }
            try storage.write(context.batch, sync: true)
        }
    }
}
