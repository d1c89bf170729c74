import Foundation

extension DocumentStore {
    func textLayout(_ collection: String, _ index: String) -> TextIndexLayout {
        TextIndexLayout(subspace: layout.text(collection, index))
    }



    func isTextReady(_ collection: String, _ index: String) -> Bool {
        state.withLock { $0.readyIndexes.contains(IndexIdentity(collection, index, .text)) }
    }

    /// Corpus statistics of a text index: (documents, tokens).
    func textStatistics(_ layout: TextIndexLayout, options: ReadOptions = ReadOptions()) throws -> (documents: Int, tokens: Int) {
        guard let t = try database.get(layout.statistics, as: Tuple.self, options: options) else { return (0, 0) }
        return (try t.int(at: 0), try t.int(at: 1))
    }

    /// Adds what `document` contributes to a text index to `batch` (removing what
    /// `old` contributed), returning the change in (documents, tokens).
    static func updateText(_ layout: TextIndexLayout, _ definition: TextIndexDefinition, id: TupleElement,
                           old: JSONValue?, new: JSONValue?, batch: WriteBatch) -> (documents: Int, tokens: Int) {
        let before = old.map { TextDocument(definition, $0) }
        let after = new.map { TextDocument(definition, $0) }
        if before == after { return (0, 0) }
        if let before {
            for term in before.postings.keys where after?.postings[term] == nil { batch.delete(layout.posting(term, id)) }
            if after == nil { batch.delete(layout.lengths(id)) }
        }
        if let after {
            for (term, columns) in after.postings where before?.postings[term] != columns {
                batch.put(layout.posting(term, id), TextDocument.encode(columns))
            }
            if before?.lengths != after.lengths { batch.put(layout.lengths(id), Tuple(after.lengths.map { .int(Int64($0)) })) }
        }
        return ((after == nil ? 0 : 1) - (before == nil ? 0 : 1), (after?.totalTokens ?? 0) - (before?.totalTokens ?? 0))
    }

    /// Builds a text index from every document. REQUIRES: the exclusive writer lock.
    func buildTextIndex(_ name: String, _ definition: TextIndexDefinition, progress: ((IndexBuildProgress) -> Void)?) throws {
        let text = textLayout(name, definition.name)
        let stateKey = layout.root.pack(["m", "text", .string(name), .string(definition.name)])
        try database.put(stateKey, try JSONValue.object(["state": "building", "definition": definition.json]).canonicalData())
        try database.deleteRange(text.subspace.range)
        let docs = layout.documents(name)
        let total = try database.forEach(in: docs.range) { _, _ in }
        progress?(IndexBuildProgress(collection: name, index: definition.name, done: 0, total: total))
        let entries = try database.entries(docs.range)
        let batch = WriteBatch()
        var done = 0, tokens = 0
        while let entry = try entries.next({ k, v in (try docs.unpack(k), Array(v)) }) {
            guard entry.0.count == 1 else { continue }
            let document = try documentValue(entry.1, collection: name, id: entry.0[0])
            tokens += Self.updateText(text, definition, id: entry.0[0], old: nil, new: document, batch: batch).tokens
            done += 1
            if batch.count >= 10_000 {
                try database.write(batch)
                batch.clear()
            }
            if done % 1000 == 0 { progress?(IndexBuildProgress(collection: name, index: definition.name, done: done, total: total)) }
        }
        batch.put(text.statistics, Tuple([.int(Int64(done)), .int(Int64(tokens))]))
        batch.put(stateKey, try JSONValue.object(["state": "ready", "definition": definition.json]).canonicalData())
        try database.write(batch, sync: true)
        state.withLock { _ = $0.readyIndexes.insert(IndexIdentity(name, definition.name, .text)) }
        progress?(IndexBuildProgress(collection: name, index: definition.name, done: done, total: total))
    }

    func dropTextIndex(_ collection: String, _ index: String) throws {
        state.withLock { _ = $0.readyIndexes.remove(IndexIdentity(collection, index, .text)) }
        try database.delete(layout.root.pack(["m", "text", .string(collection), .string(index)]))
        try database.deleteRange(layout.text(collection, index).range)
    }

    /// Compares a text index with what its documents imply: postings, lengths, statistics.
    func verifyText(_ collection: String, _ definition: TextIndexDefinition, options: ReadOptions, into report: inout VerifyReport) throws {
        let text = textLayout(collection, definition.name)
        var expectedPostings: [[UInt8]: [UInt8]] = [:]
        var expectedLengths: [[UInt8]: [UInt8]] = [:]
        var documents = 0, tokens = 0
        let docs = layout.documents(collection)
        let entries = try database.entries(docs.range, options: options)
        while let entry = try entries.next({ k, v in (try? docs.unpack(k), Array(v)) }) {
            guard let key = entry.0, key.count == 1, let document = try? JSONValue(parsing: Data(entry.1)) else { continue }
            let contribution = TextDocument(definition, document)
            for (term, columns) in contribution.postings { expectedPostings[text.posting(term, key[0])] = TextDocument.encode(columns) }
            expectedLengths[text.lengths(key[0])] = Tuple(contribution.lengths.map { .int(Int64($0)) }).encoded
            documents += 1
            tokens += contribution.totalTokens
        }
        let name = "\(collection).\(definition.name)"
        for (subspace, expected) in [(text.allPostings, expectedPostings), (text.allLengths, expectedLengths)] {
            var wanted = expected
            let stored = try database.entries(subspace.range, options: options)
            while let entry = try stored.next() {
                report.indexEntries += 1
                if let value = wanted.removeValue(forKey: entry.key) {
                    if value != entry.value {
                        report.danglingEntries += 1
                        report.note("\(name): entry \(Self.describeEntry(entry.key)) has a stale value")
                    }
                } else {
                    report.danglingEntries += 1
                    report.note("\(name): entry \(Self.describeEntry(entry.key)) belongs to no document")
                }
            }
            report.missingEntries += wanted.count
            for key in wanted.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }).prefix(VerifyReport.maximumProblems) {
                report.note("\(name): entry \(Self.describeEntry(key)) is missing")
            }
        }
        let stats = try textStatistics(text, options: options)
        if stats.documents != documents || stats.tokens != tokens {
            report.danglingEntries += 1
            report.note("\(name): statistics say \(stats.documents) documents and \(stats.tokens) tokens; the documents have \(documents) and \(tokens)")
        }
    }
}

extension TextIndexDefinition {
    var json: JSONValue {
        .object(["name": .string(name), "fields": .array(fields.map { .string($0.description) }), "tokenizer": .string(tokenizer.rawValue)])
    }
}
