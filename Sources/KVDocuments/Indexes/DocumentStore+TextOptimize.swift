import Foundation
import KVStorage
import KVSupport
import KVText

extension DocumentStore {
    /// Merges every segment of a collection's text index (or of each of its text indexes)
    /// into one, as FTS5's `'optimize'` command does: tombstones and the postings they
    /// cancel are dropped, posting blocks are full and their score bounds tight again.
    ///
    /// Writes add postings as new segments that later writes merge a bounded step at a
    /// time; `optimize` finishes that work at once. It runs in steps of bounded size, each
    /// one atomic write batch, so an interruption leaves a consistent index (the next
    /// write or `optimize` continues the merge). Searches give the same answers before,
    /// during and after. In a store that bounds its transactions (etcd), each step fits the
    /// bound, and segments too large to merge within it are left as they are.
    ///
    /// ```swift
    /// try store.optimize(collection: "notes")
    /// ```
    /// - Parameters:
    ///   - collection: The collection.
    ///   - index: One text index by name, or `nil` for every text index of the collection.
    ///   - stepBudget: The postings one step reads at most (plus one term's):
    ///     smaller steps hold less in memory and write smaller batches.
    /// - Returns: The number of merge steps written (0 when there was nothing to merge).
    /// - Throws: `.schema` for an unknown collection, an unknown text index or one being
    ///   built; `.invalidArgument` for a step budget below 1; `.corruption` for a damaged
    ///   index; storage errors.
    @discardableResult
    public func optimize(collection: String, index: String? = nil, stepBudget: Int = DocumentStore.optimizeStepBudget)
        throws -> Int
    {
        guard stepBudget >= 1 else {
            throw KVDocsError(.invalidArgument, "optimize step budget must be at least 1 (got \(stepBudget))")
        }
        var steps = 0
        try storage.withWriteTransaction {
            let current = try catalog()
            let schema = try current.schema.collection(collection)
            var maintainers = current.maintainers(of: collection).compactMap { $0 as? TextIndexMaintainer }
            if let index {
                maintainers = maintainers.filter { $0.identity.name.hasSameCodePoints(as: index) }
                guard !maintainers.isEmpty else {
                    throw KVDocsError(.schema, "collection \"\(collection)\" has no text index \"\(index)\"")
                }
            } else if schema.text.isEmpty {
                throw KVDocsError(.schema, "collection \"\(collection)\" has no text index")
            }
            for maintainer in maintainers {
                guard current.isReady(maintainer.identity) else {
                    throw KVDocsError(
                        .schema, "text index \"\(maintainer.identity.name)\" of \"\(collection)\" is being built")
                }
                let text = maintainer.index
                while true {
                    let batch = WriteBatch()
                    let changes = TextIndexChanges(try text.statistics(storage))
                    let more = try text.mergeStep(
                        changes, budget: stepBudget, full: true,
                        maximumOperations: storage.maximumBatchCount.map { max(0, $0 - 4) }, reader: storage,
                        put: { batch.put($0, $1) }, delete: { batch.delete($0) })
                    if changes.statisticsChanged {
                        batch.put(text.layout.statistics, text.statisticsValue(changes.statistics))
                    }
                    guard batch.count > 0 else { break }  // in a bounded store: nothing more fits
                    try storage.write(batch, sync: !more)
                    steps += 1
                    if !more { break }
                }
            }
        }
        return steps
    }

    /// The postings one step of ``optimize(collection:index:stepBudget:)`` reads at most
    /// (plus one term) by default.
    public static let optimizeStepBudget = 200_000
}
