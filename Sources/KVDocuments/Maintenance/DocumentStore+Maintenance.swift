import Foundation
import KVKeys
import KVSupport

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

    /// Whether the indexes match the documents exactly: no missing or dangling entry and no bad document.
    public var isClean: Bool { missingEntries == 0 && danglingEntries == 0 && badDocuments == 0 }

    static let maximumProblems = 20

    mutating func note(_ problem: String) {
        if problems.count < Self.maximumProblems { problems.append(problem) }
    }

    public var description: String {
        var text = "\(documents) documents, \(indexEntries) index entries: "
        text +=
            isClean
            ? "ok"
            : "\(missingEntries) missing entries, \(danglingEntries) dangling entries, \(badDocuments) bad documents"
        for p in problems { text += "\n  " + p }
        return text
    }
}

extension DocumentStore {
    /// Checks that every document's index entries exist and that every index entry belongs
    /// to a document that implies it (with the value it implies), for every kind of index,
    /// reading one snapshot.
    /// - Parameter collection: one collection, or `nil` for all.
    public func verify(collection: String? = nil) throws -> VerifyReport {
        var report = VerifyReport()
        try read { tx in
            let schema = tx.catalog.schema
            if let collection { _ = try schema.collection(collection) }
            let names = collection.map { [$0] } ?? schema.collections.keys.sorted { JSONObject.compareKeys($0, $1) < 0 }
            for name in names {
                let collectionSchema = try schema.collection(name)
                let maintainers = tx.catalog.maintainers(of: name)
                for maintainer in maintainers where !tx.catalog.isReady(maintainer.identity) {
                    report.note("\(name).\(maintainer.identity.name): not ready (being built), not verified")
                }
                var verifiers = maintainers.filter { tx.catalog.isReady($0.identity) }.map { ($0, $0.makeVerifier()) }
                var documentIDs: [TupleElement] = []
                try readDocuments(name, collectionSchema, tx, into: &report) { id, document in
                    for i in verifiers.indices { verifiers[i].1.add(id: id, document: document) }
                    if collectionSchema.replicated { documentIDs.append(id) }
                }
                if collectionSchema.replicated { try verifyRevisions(name, documentIDs, tx, into: &report) }
                for (maintainer, verifier) in verifiers {
                    try compare(maintainer, verifier.expectedEntries(), tx, into: &report)
                }
            }
        }
        return report
    }

    /// Checks a replicated collection's revision records against its documents (design
    /// §1.2): every tree decodes; a live winner is the stored document, with its `_rev`, and
    /// a deleted winner has none; every stored document has a tree; the separate bodies are
    /// exactly those of the leaves other than a live winner; the by-sequence entries name
    /// each tree once, at the sequence it records. Each disagreement counts as a bad
    /// document.
    private func verifyRevisions(
        _ name: String, _ documentIDs: [TupleElement], _ tx: ReadTransaction, into report: inout VerifyReport
    ) throws {
        func bad(_ problem: String) {
            report.badDocuments += 1
            report.note("\(name): \(problem)")
        }
        let trees = layout.revisionTrees(name)
        var separate: Set<[UInt8]> = []
        var sequences: [Int64: String] = [:]
        var withTrees: Set<String> = []
        let cursor = try tx.reader.scan(trees.range, order: .forward)
        while let (key, value) = try cursor.next({ (Array($0), Array($1)) }) {
            guard let t = try? trees.unpack(key), t.count == 1, case .string(let id) = t[0] else {
                bad("a revision tree key does not hold one string id: \(Self.describeEntry(key))")
                continue
            }
            let described = JSONValue.string(id).compactDescription
            withTrees.insert(id)
            let tree: RevisionTree, sequence: Int64
            do { (tree, sequence) = try RevisionTreeCodec.decode(value) } catch let e as KVDocsError {
                bad("document \(described): revision tree: \(e.message)")
                continue
            }
            if let other = sequences.updateValue(id, forKey: sequence) {
                bad(
                    "documents \(JSONValue.string(other).compactDescription) and \(described) record the same sequence \(sequence)"
                )
            }
            guard let winner = tree.winner else {
                bad("document \(described) has an empty revision tree")
                continue
            }
            let stored = try tx.reader.value(forKey: layout.document(name, .string(id))).flatMap {
                try? DocumentStore.parseStored($0)
            }
            if winner.deleted {
                if stored != nil {
                    bad(
                        "document \(described) is stored although its winning revision \(winner.revision) is a deletion"
                    )
                }
            } else if stored?["_rev"] != .string(winner.revision.description) {
                bad(
                    "document \(described): the stored document's _rev is \(stored?["_rev"]?.compactDescription ?? "missing"); the winning revision is \(winner.revision)"
                )
            }
            for leaf in tree.leaves where leaf.value.hasBody && !(leaf.revision == winner.revision && !leaf.deleted) {
                separate.insert(layout.revisionBody(name, id, leaf.revision))
            }
        }
        for id in documentIDs {
            guard case .string(let text) = id, withTrees.contains(text) else {
                bad("document \(id) has no revision tree")
                continue
            }
        }
        let bodies = try tx.reader.scan(layout.replication(name)["b"].range, order: .forward)
        while let key = try bodies.next({ k, _ in Array(k) }) {
            if separate.remove(key) == nil {
                bad("the revision body \(Self.describeEntry(key)) belongs to no leaf of its document")
            }
        }
        for key in separate.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            bad("the revision body \(Self.describeEntry(key)) is missing")
        }
        let bySequence = layout.bySequence(name)
        let entries = try tx.reader.scan(bySequence.range, order: .forward)
        while let (key, value) = try entries.next({ (Array($0), Array($1)) }) {
            guard let t = try? bySequence.unpack(key), t.count == 1, case .int(let sequence) = t[0],
                let named = try? Tuple(decoding: value), named.count == 1, case .string(let id) = named[0]
            else {
                bad("the by-sequence entry \(Self.describeEntry(key)) is damaged")
                continue
            }
            if sequences[sequence] == id {
                sequences[sequence] = nil
            } else {
                bad(
                    "the by-sequence entry at \(sequence) names document \(JSONValue.string(id).compactDescription), whose tree records another sequence"
                )
            }
        }
        for (sequence, id) in sequences.sorted(by: { $0.key < $1.key }) {
            bad("document \(JSONValue.string(id).compactDescription) has no by-sequence entry at \(sequence)")
        }
    }

    /// Reads every document of a collection, reporting bad ones, and hands each good one on.
    private func readDocuments(
        _ name: String, _ schema: CollectionSchema, _ tx: ReadTransaction, into report: inout VerifyReport,
        _ body: (TupleElement, JSONValue) -> Void
    ) throws {
        let docs = layout.documents(name)
        let entries = try tx.reader.scan(docs.range, order: .forward)
        while let entry = try entries.next({ k, v in (try? docs.unpack(Array(k)), Array(v)) }) {
            report.documents += 1
            guard let key = entry.0, key.count == 1 else {
                report.badDocuments += 1
                report.note("\(name): a document key does not hold one id")
                continue
            }
            let id = key[0]
            let document: JSONValue
            do {
                document = try DocumentStore.parseStored(entry.1)
            } catch let e as KVDocsError {
                report.badDocuments += 1
                report.note("\(name): document \(id) is not valid JSON: \(e.message)")
                continue
            }
            let pk = document[schema.primaryKey].flatMap {
                try? Self.idElement($0, collection: name, primaryKey: schema.primaryKey)
            }
            if pk != id {
                report.badDocuments += 1
                report.note(
                    "\(name): document \(id) has primary key \(document[schema.primaryKey]?.compactDescription ?? "missing")"
                )
            }
            body(id, document)
        }
    }

    /// Compares an index's stored entries with those its documents imply.
    private func compare(
        _ maintainer: any IndexMaintainer, _ expected: [[UInt8]: [UInt8]], _ tx: ReadTransaction,
        into report: inout VerifyReport
    ) throws {
        let name = "\(maintainer.identity.collection).\(maintainer.identity.name)"
        var wanted = expected
        for (key, value) in try maintainer.verificationEntries(tx.reader) {
            report.indexEntries += 1
            if let expectedValue = wanted.removeValue(forKey: key) {
                if expectedValue != value {
                    report.danglingEntries += 1
                    if let what = maintainer.describe(key: key) {
                        report.note(
                            "\(name): \(what) hold \(Self.describeEntry(value)); the documents imply \(Self.describeEntry(expectedValue))"
                        )
                    } else {
                        report.note("\(name): entry \(Self.describeEntry(key)) has a stale value")
                    }
                }
            } else {
                report.danglingEntries += 1
                report.note(
                    "\(name): \(maintainer.describe(key: key) ?? "entry \(Self.describeEntry(key))") belongs to no document"
                )
            }
        }
        report.missingEntries += wanted.count
        for key in wanted.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }).prefix(VerifyReport.maximumProblems) {
            report.note("\(name): \(maintainer.describe(key: key) ?? "entry \(Self.describeEntry(key))") is missing")
        }
    }

    static func describeEntry(_ key: [UInt8]) -> String {
        (try? Tuple(decoding: key).description) ?? "0x" + key.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    }

    /// Rebuilds one index (of any kind), or every index of the collection, from its
    /// documents. Writers wait while it runs; queries meanwhile scan documents instead of
    /// the index, and searches of a text index being rebuilt fail.
    /// - Throws: `.schema` for an unknown collection or index.
    public func reindex(collection: String, index: String? = nil, progress: ((IndexBuildProgress) -> Void)? = nil)
        throws
    {
        try storage.withWriteTransaction {
            let current = try catalog()
            let collectionSchema = try current.schema.collection(collection)
            var maintainers = current.maintainers(of: collection)
            if let index {
                maintainers = maintainers.filter { $0.identity.name.hasSameCodePoints(as: index) }
                if maintainers.isEmpty { _ = try collectionSchema.index(index, collection: collection) }
            }
            defer { hub.wake([Array(collection.utf8)]) }
            for maintainer in maintainers {
                try rebuild(maintainer, progress: progress)
            }
        }
    }
}
