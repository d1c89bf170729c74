import Foundation

/// A full-text index of a collection: each document is a row of the text layer's
/// ``TextIndex``, its columns the string values at the definition's field paths.
struct TextIndexMaintainer: IndexMaintainer {
    let identity: IndexIdentity
    let definition: TextIndexDefinition
    let index: TextIndex

    init(collection: String, definition: TextIndexDefinition, subspace: Subspace) {
        self.identity = IndexIdentity(collection, definition.name, .text)
        self.definition = definition
        self.index = TextIndex(subspace: subspace, tokenizer: TextTokenizer(definition.tokenizer),
                               columns: definition.fields.map(\.description))
    }

    var definitionJSON: JSONValue { definition.json }
    var formatVersion: Int64 { 1 }
    var keyRange: KeyRange { index.layout.subspace.range }

    /// The corpus statistics as the batch changes them.
    final class Statistics {
        var documents: Int
        var tokens: Int
        var changed = false
        init(_ stored: (documents: Int, tokens: Int)) {
            documents = stored.documents
            tokens = stored.tokens
        }
    }

    func update(id: TupleElement, old: JSONValue?, new: JSONValue?, context: IndexUpdateContext) throws {
        let before = old.map { index.contribution(Self.columnTexts(definition, $0)) }
        let after = new.map { index.contribution(Self.columnTexts(definition, $0)) }
        let delta = index.update(id: id, old: before, new: after, put: { context.put($0, $1) }, delete: { context.delete($0) })
        let statistics = try context.state(for: identity) { Statistics(try index.statistics(context.storage)) }
        // Saturating: stored statistics are data, and damaged ones must not trap.
        statistics.documents = statistics.documents.saturatingAdd(delta.documents)
        statistics.tokens = statistics.tokens.saturatingAdd(delta.tokens)
        statistics.changed = true
    }

    func finish(context: IndexUpdateContext) throws {
        var statistics = context.existingState(for: identity, as: Statistics.self)
        if statistics == nil, context.building {
            let empty = Statistics((0, 0))
            empty.changed = true
            statistics = empty
        }
        guard let statistics, statistics.changed else { return }
        context.put(index.layout.statistics, index.statisticsValue(documents: statistics.documents, tokens: statistics.tokens))
    }

    func makeVerifier() -> any IndexVerifier { Verifier(maintainer: self) }

    /// Serving reads: every document matching the FTS5 query `query`, ranked by BM25, at
    /// `reader`'s state.
    /// - Throws: `.invalidArgument` for a malformed query (naming the position), storage errors.
    func rank(_ query: String, reader: any KeyValueReader) throws -> TextRanking {
        try index.rank(query, reader: reader)
    }

    func describe(key: [UInt8]) -> String? {
        key == index.layout.statistics ? "the corpus statistics (documents, tokens)" : nil
    }

    struct Verifier: IndexVerifier {
        let maintainer: TextIndexMaintainer
        var entries: [[UInt8]: [UInt8]] = [:]
        var documents = 0, tokens = 0

        mutating func add(id: TupleElement, document: JSONValue) {
            let contribution = maintainer.index.contribution(TextIndexMaintainer.columnTexts(maintainer.definition, document))
            for (key, value) in maintainer.index.entries(id: id, contribution) { entries[key] = value }
            documents += 1
            tokens += contribution.totalTokens
        }

        func expectedEntries() -> [[UInt8]: [UInt8]] {
            var all = entries
            all[maintainer.index.layout.statistics] = maintainer.index.statisticsValue(documents: documents, tokens: tokens)
            return all
        }
    }

    /// The text of each column: the string values at the field's path, joined by spaces
    /// (so an array of strings is one column); other JSON types are not indexed.
    static func columnTexts(_ definition: TextIndexDefinition, _ document: JSONValue) -> [String] {
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
        .object(["name": .string(name), "fields": .array(fields.map { .string($0.description) }), "tokenizer": .string(tokenizer.rawValue)])
    }
}

extension DocumentStore {
    /// The stored layout of a text index (for tests and tools that inspect it).
    func textLayout(_ collection: String, _ index: String) -> TextIndexLayout {
        TextIndexLayout(subspace: layout.text(collection, index))
    }
}
