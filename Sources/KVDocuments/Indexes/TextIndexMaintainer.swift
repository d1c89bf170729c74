import Foundation
import KVKeys
import KVStorage
import KVSupport
import KVText

/// A full-text index of a collection: each document is a row of the text layer's
/// ``TextIndex``, its columns the string values at the definition's field paths.
package struct TextIndexMaintainer: IndexMaintainer {
    package let identity: IndexIdentity
    package let definition: TextIndexDefinition
    package let index: TextIndex

    init(collection: String, definition: TextIndexDefinition, subspace: Subspace) {
        self.identity = IndexIdentity(collection, definition.name, .text)
        self.definition = definition
        self.index = TextIndex(
            subspace: subspace, tokenizer: TextTokenizer(definition.tokenizer, caseSensitive: definition.caseSensitive),
            columns: definition.fields.map(\.description), detail: definition.detail)
    }

    package var definitionJSON: JSONValue { definition.json }
    /// 1: one entry per posting keyed by the row id; 2: dense document numbers and blocks
    /// rewritten in place; 3: immutable segments merged in tiers.
    package var formatVersion: Int64 { 3 }
    package var keyRange: KeyRange { index.layout.subspace.range }

    /// A long build flushes its postings when this many are pending.
    package static let flushThreshold = 1_000_000

    package func update(id: TupleElement, old: JSONValue?, new: JSONValue?, context: IndexUpdateContext) throws {
        let before = old.map { index.contribution(Self.columnTexts(definition, $0)) }
        let after = new.map { index.contribution(Self.columnTexts(definition, $0)) }
        let changes = try context.state(for: identity) { TextIndexChanges(try index.statistics(context.storage)) }
        let pending = changes.pending
        try index.update(
            id: id, old: before, new: after, changes: changes, reader: context.storage,
            put: { context.put($0, $1) }, delete: { context.delete($0) })
        context.pendingWork += changes.pending - pending
    }

    package func flush(context: IndexUpdateContext) throws {
        guard let changes = context.existingState(for: identity, as: TextIndexChanges.self) else { return }
        try index.apply(changes, reader: context.storage, put: { context.put($0, $1) }, delete: { context.delete($0) })
    }

    package func finish(context: IndexUpdateContext) throws {
        var changes = context.existingState(for: identity, as: TextIndexChanges.self)
        if changes == nil, context.building {
            let empty = TextIndexChanges(TextStatistics())
            empty.statisticsChanged = true
            changes = empty
        }
        guard let changes else { return }
        try index.apply(changes, reader: context.storage, put: { context.put($0, $1) }, delete: { context.delete($0) })
        // One bounded step of merging per write, in the same batch (so atomic with it); in a
        // store that bounds its transactions (etcd), within what the batch leaves of the
        // bound (less a margin for the writes that follow: feed, counters, other indexes).
        var maximumOperations: Int?
        if let bound = context.storage.maximumBatchCount {
            maximumOperations = max(0, bound - context.batch.count - Self.boundMargin)
        }
        if maximumOperations.map({ $0 >= Self.boundMargin }) ?? true {
            try index.mergeStep(
                changes, budget: index.mergeBudget(changes), maximumOperations: maximumOperations,
                reader: context.storage, put: { context.put($0, $1) }, delete: { context.delete($0) })
        }
        if changes.statisticsChanged {
            context.put(index.layout.statistics, index.statisticsValue(changes.statistics))
        }
    }

    /// The operations of a bounded store's transaction that a merge step leaves to the
    /// writes after it, and the least a merge step is worth starting with.
    static let boundMargin = 16

    package func makeVerifier() -> any IndexVerifier { Verifier(maintainer: self) }

    /// Serving reads: the best `limit` rows (all with `nil`) matching the FTS5 query
    /// `query`, ranked by BM25, at `reader`'s state.
    /// - Throws: `.invalidArgument` for a malformed query (naming the position) or one the
    ///   index's `detail` does not allow, storage errors.
    func rank(_ query: String, limit: Int?, reader: any KeyValueReader) throws -> TextRanking {
        try index.rank(query, limit: limit, reader: reader)
    }

    package func describe(key: [UInt8]) -> String? {
        key == index.layout.statistics ? "the corpus statistics (documents, tokens)" : nil
    }

    /// The index's entries as the verifier compares them: by row id rather than by
    /// document number and block (block boundaries depend on the order of writes).
    package func verificationEntries(_ reader: any KeyValueReader) throws -> [([UInt8], [UInt8])] {
        try TextIndexInspector(index: index, reader: reader).logicalEntries()
    }

    struct Verifier: IndexVerifier {
        let maintainer: TextIndexMaintainer
        var entries: [[UInt8]: [UInt8]] = [:]
        var documents = 0, tokens = 0

        mutating func add(id: TupleElement, document: JSONValue) {
            let contribution = maintainer.index.contribution(
                TextIndexMaintainer.columnTexts(maintainer.definition, document))
            for (key, value) in TextIndexInspector.logicalEntries(of: id, contribution, index: maintainer.index) {
                entries[key] = value
            }
            documents += 1
            tokens += contribution.totalTokens
        }

        func expectedEntries() -> [[UInt8]: [UInt8]] {
            var all = entries
            all[maintainer.index.layout.statistics] = TextIndexInspector.logicalStatistics(
                documents: documents, tokens: tokens)
            return all
        }
    }

    /// The text of each column: the string values at the field's path, joined by spaces
    /// (so an array of strings is one column); other JSON types are not indexed.
    package static func columnTexts(_ definition: TextIndexDefinition, _ document: JSONValue) -> [String] {
        definition.fields.map { field in
            field.values(in: document).flatMap { value -> [String] in
                switch value {
                case .string(let s): return [s]
                case .array(let a): return a.compactMap { if case .string(let s) = $0 { s } else { nil } }
                default: return []
                }
            }.joined(separator: " ")
        }
    }
}

extension TextIndexDefinition {
    /// The definition as the catalog stores it.
    var json: JSONValue {
        var o: JSONObject = [
            "name": .string(name), "fields": .array(fields.map { .string($0.description) }),
            "tokenizer": .string(tokenizerSpec)
        ]
        // Written only when not the default, so definitions stored before the option existed
        // compare equal and their indexes are not rebuilt for it.
        if detail != .full { o["detail"] = .string(detail.rawValue) }
        return .object(o)
    }
}

extension DocumentStore {
    /// The stored layout of a text index (for tests and tools that inspect it).
    package func textLayout(_ collection: String, _ index: String) -> TextIndexLayout {
        TextIndexLayout(subspace: layout.text(collection, index))
    }
}
