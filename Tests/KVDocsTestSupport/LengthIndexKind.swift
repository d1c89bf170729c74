// A toy index kind, written as an app or a package outside KVDocs would write it: with the
// public API only (scripts/check-doc-code type-checks this file as a module of its own, which
// sees no `package` declaration). It is the kind ARCHITECTURE.md ("Adding an index kind")
// walks through, and the tests run it through everything a built-in kind does.
//
// A "length" index keeps, for each document whose field holds a string, the entry
// `(x, "length", collection, index, UTF-8 length, id) → ""`. Declared in the schema JSON as
// `{"name": …, "type": "length", "fields": [FIELD]}`. It answers its own query,
// ``LengthRequest`` (the documents whose string has a length in a range, shortest first,
// ties by id), and offers the kvrepl command `lengths COLLECTION MIN MAX [using INDEX]
// [where …] [limit N] [offset N]`.
import Foundation
import KVDocs

/// The kind: its name, the check of its declarations, its maintainer and its command.
package struct LengthIndexKind: IndexKind {
    package static let kind = IndexIdentity.Kind(catalogName: "length")
    package var kind: IndexIdentity.Kind { Self.kind }

    package init() {}

    package func validate(_ definition: AnyIndexDefinition) throws {
        if let extra = definition.options.keys.first(where: { $0 != "fields" }) {
            throw KVDocsError(.schema, "unknown member \"\(extra)\" for a length index (expected \"fields\")")
        }
        _ = try Self.field(definition)
    }

    /// The one field a definition indexes.
    static func field(_ definition: AnyIndexDefinition) throws -> FieldPath {
        guard case .array(let fields)? = definition.options["fields"], fields.count == 1,
            case .string(let path) = fields[0]
        else {
            throw KVDocsError(.schema, "a length index takes \"fields\": [one field path]")
        }
        return try FieldPath(path)
    }

    package func maintainer(
        for definition: AnyIndexDefinition, identity: IndexIdentity, schema: CollectionSchema, subspace: Subspace
    ) -> any IndexMaintainer {
        // validate(_:) passed, so the field reads.
        let field = (try? Self.field(definition)) ?? "value"
        var entry = definition.options
        entry["name"] = .string(definition.name)
        entry["type"] = .string(Self.kind.catalogName)
        return LengthIndexMaintainer(
            identity: identity, definitionJSON: .object(entry), field: field, subspace: subspace)
    }

    package var commands: [IndexKindCommand] {
        [
            IndexKindCommand(
                name: "lengths", summary: "the documents whose indexed string has a UTF-8 length in [MIN, MAX]",
                values: ["MIN", "MAX"]
            ) { invocation, transaction in
                guard case .int(let low) = invocation.values[0], case .int(let high) = invocation.values[1] else {
                    throw KVDocsError(
                        .invalidArgument,
                        "lengths takes two integers, MIN and MAX (got \(invocation.values.map(\.compactDescription).joined(separator: " ")))"
                    )
                }
                let request = LengthRequest(
                    invocation.collection, lengths: low...max(low, high), index: invocation.index,
                    query: invocation.query)
                return try transaction.fetch(request)
            }
        ]
    }
}

/// The index's entries: one per document whose field holds a string.
package struct LengthIndexMaintainer: IndexMaintainer {
    package let identity: IndexIdentity
    package let definitionJSON: JSONValue
    package let field: FieldPath
    package let subspace: Subspace

    package var formatVersion: Int64 { 1 }
    package var keyRange: KeyRange { subspace.range }

    /// The entry document `id` implies, if any.
    package func key(id: TupleElement, document: JSONValue) -> [UInt8]? {
        guard case .string(let s)? = field.values(in: document).first else { return nil }
        return subspace.pack([.int(Int64(s.utf8.count)), id])
    }

    package func update(id: TupleElement, old: JSONValue?, new: JSONValue?, context: IndexUpdateContext) throws {
        let before = old.flatMap { key(id: id, document: $0) }
        let after = new.flatMap { key(id: id, document: $0) }
        guard before != after else { return }
        if let before { context.delete(before) }
        if let after { context.put(after, []) }
    }

    package func makeVerifier() -> any IndexVerifier { Verifier(maintainer: self) }

    struct Verifier: IndexVerifier {
        let maintainer: LengthIndexMaintainer
        var entries: [[UInt8]: [UInt8]] = [:]
        mutating func add(id: TupleElement, document: JSONValue) {
            if let key = maintainer.key(id: id, document: document) { entries[key] = [] }
        }
        func expectedEntries() -> [[UInt8]: [UInt8]] { entries }
    }
}

/// The documents of a collection whose indexed string has a UTF-8 length in `lengths`,
/// shortest first, ties by id; `query`'s conditions are checked on each, then its offset and
/// limit apply. Fetched by any reader (`tx.fetch`, `store.fetch`, `try await store.fetch`,
/// `store.observe`), read from a length index.
package struct LengthRequest: DocumentRequest {
    package let collection: String
    package let lengths: ClosedRange<Int64>
    package let index: String?
    package let query: DocumentQuery

    package init(
        _ collection: String, lengths: ClosedRange<Int64>, index: String? = nil, query: DocumentQuery = DocumentQuery()
    ) {
        self.collection = collection
        self.lengths = lengths
        self.index = index
        self.query = query
    }

    package func fetch(from transaction: ReadTransaction) throws -> [JSONValue] {
        let index = try transaction.index(index, of: collection, as: LengthIndexMaintainer.self)
        let subspace = index.maintainer.subspace
        // The plan: one key range, from the first entry of length MIN to the last of MAX.
        let range = KeyRange(
            lower: subspace.subspace([.int(lengths.lowerBound)]).range.lower,
            upper: subspace.subspace([.int(lengths.upperBound)]).range.upper)
        var skipped = 0
        var documents: [JSONValue] = []
        let cursor = try index.reader.scan(range, order: .forward)
        while let key = try cursor.next({ key, _ in Array(key) }) {
            if let limit = query.limit, documents.count >= limit { break }
            let id = try subspace.unpack(key)[1]
            guard let document = try index.document(id: id), query.matches(document) else { continue }
            if skipped < query.offset {
                skipped += 1
                continue
            }
            documents.append(document)
        }
        return documents
    }
}
