import Foundation

/// What ``DocumentStore/verify(collection:)`` found.
public struct VerifyReport: Sendable, CustomStringConvertible {
    /// Documents read.
    public var documents = 0
    /// Index entries read.
    public var indexEntries = 0
    /// Entries a document implies that the index lacks.
    public var missingEntries = 0
    /// Entries in an index that no document implies (a deleted or changed document).
    public var danglingEntries = 0
    /// Documents whose stored bytes or primary key are wrong.
    public var badDocuments = 0
    /// The first problems found, described.
    public var problems: [String] = []

    public var isClean: Bool { missingEntries == 0 && danglingEntries == 0 && badDocuments == 0 }

    static let maximumProblems = 20

    mutating func note(_ problem: String) {
        if problems.count < Self.maximumProblems { problems.append(problem) }
    }

    public var description: String {
        var text = "\(documents) documents, \(indexEntries) index entries: "
        text += isClean ? "ok" : "\(missingEntries) missing entries, \(danglingEntries) dangling entries, \(badDocuments) bad documents"
        for p in problems { text += "\n  " + p }
        return text
    }
}

extension DocumentStore {
    /// Checks that every document's index entries exist and that every index entry belongs
    /// to a document that implies it, reading one snapshot.
    /// - Parameter collection: one collection, or `nil` for all.
    public func verify(collection: String? = nil) throws -> VerifyReport {
        var report = VerifyReport()
        if let collection { _ = try schema.collection(collection) }
        let names = collection.map { [$0] } ?? schema.collections.keys.sorted()
        try read { tx in
            let options = tx.snapshot.readOptions()
            for name in names {
                let collectionSchema = try schema.collection(name)
                let docs = layout.documents(name)
                // Expected entries of every index, from the documents.
                var expected: [String: Set<[UInt8]>] = [:]
                let entries = try database.entries(docs.range, options: options)
                while let entry = try entries.next({ k, v in (try? docs.unpack(k), Array(v)) }) {
                    report.documents += 1
                    guard let key = entry.0, key.count == 1 else {
                        report.badDocuments += 1
                        report.note("\(name): a document key does not hold one id")
                        continue
                    }
                    let id = key[0]
                    guard let document = try? JSONValue(parsing: Data(entry.1)) else {
                        report.badDocuments += 1
                        report.note("\(name): document \(id) is not valid JSON")
                        continue
                    }
                    let pk = document[collectionSchema.primaryKey].flatMap { try? Self.idElement($0, collection: name, primaryKey: collectionSchema.primaryKey) }
                    if pk != id {
                        report.badDocuments += 1
                        report.note("\(name): document \(id) has primary key \(document[collectionSchema.primaryKey]?.compactDescription ?? "missing")")
                    }
                    let idBytes = Tuple([id]).encoded
                    for index in collectionSchema.indexes {
                        let subspace = layout.index(name, index.name)
                        for values in Self.indexValues(index, document) {
                            expected[index.name, default: []].insert(subspace.pack(Tuple(values)) + idBytes)
                        }
                    }
                }
                for index in collectionSchema.indexes {
                    var wanted = expected[index.name] ?? []
                    let actual = try database.entries(layout.index(name, index.name).range, options: options)
                    while let key = try actual.next({ k, _ in Array(k) }) {
                        report.indexEntries += 1
                        if wanted.remove(key) == nil {
                            report.danglingEntries += 1
                            report.note("\(name).\(index.name): entry \(Self.describeEntry(key)) belongs to no document")
                        }
                    }
                    report.missingEntries += wanted.count
                    for key in wanted.sorted(by: { $0.lexicographicallyPrecedes($1) }).prefix(VerifyReport.maximumProblems) {
                        report.note("\(name).\(index.name): entry \(Self.describeEntry(key)) is missing")
                    }
                }
                for text in collectionSchema.text {
                    try verifyText(name, text, options: options, into: &report)
                }
            }
        }
        return report
    }

    static func describeEntry(_ key: [UInt8]) -> String {
        (try? Tuple(decoding: key).description) ?? "0x" + key.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    }

    /// Rebuilds one index (secondary or text), or every index of the collection, from its
    /// documents. Writers wait while it runs; queries meanwhile scan documents instead of
    /// the index, and searches of a text index being rebuilt fail.
    public func reindex(collection: String, index: String? = nil, progress: ((IndexBuildProgress) -> Void)? = nil) throws {
        let collectionSchema = try schema.collection(collection)
        var indexes = collectionSchema.indexes
        var texts = collectionSchema.text
        if let index {
            indexes = indexes.filter { $0.name.hasSameCodePoints(as: index) }
            texts = texts.filter { $0.name.hasSameCodePoints(as: index) }
            if indexes.isEmpty && texts.isEmpty { _ = try collectionSchema.index(index, collection: collection) }
        }
        try database.withExclusiveWriter {
            for definition in indexes {
                try dropIndex(collection, definition.name)
                try buildIndex(collection, collectionSchema, definition, progress: progress)
            }
            for definition in texts {
                try dropTextIndex(collection, definition.name)
                try buildTextIndex(collection, definition, progress: progress)
            }
        }
    }
}
