import Foundation

/// A secondary index: plain, unique, compound (several fields) or multi-valued (one `[]`
/// field), stored as `(…index subspace, value encodings…, id) → ""`.
///
/// Each combination of the fields' values (in ``ValueOrder``'s encoding) is one entry; a
/// document missing a field has none. A unique index allows one document per combination:
/// "is it taken?" is answered from the batch's own additions, then by the database.
struct SecondaryIndexMaintainer: IndexMaintainer {
    let identity: IndexIdentity
    let definition: IndexDefinition
    let subspace: Subspace
    let documents: Layout

    init(collection: String, definition: IndexDefinition, subspace: Subspace, documents: Layout) {
        self.identity = IndexIdentity(collection, definition.name, .secondary)
        self.definition = definition
        self.subspace = subspace
        self.documents = documents
    }

    var definitionJSON: JSONValue { definition.json }
    var formatVersion: Int64 { 1 }
    var keyRange: KeyRange { subspace.range }

    /// Values added to a unique index in the current batch: entry prefix → id.
    final class UniqueAdditions {
        var owners: [[UInt8]: TupleElement] = [:]
    }

    func update(id: TupleElement, old: JSONValue?, new: JSONValue?, context: IndexUpdateContext) throws {
        let idBytes = Tuple([id]).encoded
        let oldPrefixes = Set(old.map { Self.values(definition, $0).map { subspace.pack(Tuple($0)) } } ?? [])
        let newValues = new.map { Self.values(definition, $0) } ?? []
        let newPrefixes = Set(newValues.map { subspace.pack(Tuple($0)) })
        let additions = definition.unique ? context.state(for: identity) { UniqueAdditions() } : nil
        for prefix in oldPrefixes.subtracting(newPrefixes) {
            context.delete(prefix + idBytes)
            if let additions, additions.owners[prefix] == id { additions.owners[prefix] = nil }
        }
        for values in newValues {
            let prefix = subspace.pack(Tuple(values))
            guard !oldPrefixes.contains(prefix) else { continue }
            if let additions {
                try checkUnique(values, prefix: prefix, id: id, additions: additions, context: context)
                additions.owners[prefix] = id
            }
            context.put(prefix + idBytes, [])
        }
    }

    /// Throws when another document has `prefix`'s values in the unique index.
    private func checkUnique(_ values: [TupleElement], prefix: [UInt8], id: TupleElement,
                             additions: UniqueAdditions, context: IndexUpdateContext) throws {
        if let other = additions.owners[prefix], other != id {
            throw violation(values, existing: other, new: id, in: context.storage.name)
        }
        var conflict: TupleElement?
        let entries = try context.storage.scan(.prefix(prefix), order: .forward)
        while conflict == nil, let key = try entries.next({ k, _ in Array(k) }) {
            guard !context.deleted.contains(key),
                  let other = try? Tuple(decoding: key[prefix.count...]).elements.first, other != id else { continue }
            conflict = other
        }
        if let conflict { throw violation(values, existing: conflict, new: id, in: context.storage.name) }
    }

    func violation(_ values: [TupleElement], existing: TupleElement, new: TupleElement, in name: String) -> KVDocsError {
        var i = 0
        var shown: [String] = []
        while i < values.count, let v = ValueOrder.decode(values, at: &i) { shown.append(v.compactDescription) }
        return KVDocsError(.uniqueViolation,
            "unique index \"\(definition.name)\" of \"\(identity.collection)\" already has \(shown.joined(separator: ", ")) (document \(existing)); document \(new) cannot have it too",
            path: name, key: documents.document(identity.collection, new))
    }

    func makeVerifier() -> any IndexVerifier { Verifier(maintainer: self) }

    struct Verifier: IndexVerifier {
        let maintainer: SecondaryIndexMaintainer
        var entries: [[UInt8]: [UInt8]] = [:]

        mutating func add(id: TupleElement, document: JSONValue) {
            let idBytes = Tuple([id]).encoded
            for values in SecondaryIndexMaintainer.values(maintainer.definition, document) {
                entries[maintainer.subspace.pack(Tuple(values)) + idBytes] = []
            }
        }

        func expectedEntries() -> [[UInt8]: [UInt8]] { entries }
    }

    /// Every combination of the index's field values in `document` (the encoded values of
    /// each field, in order); none when a field is missing. A multi-valued field gives each
    /// distinct element once.
    static func values(_ index: IndexDefinition, _ document: JSONValue) -> [[TupleElement]] {
        var combinations: [[TupleElement]] = [[]]
        for field in index.fields {
            var values = field.values(in: document)
            if values.isEmpty { return [] }
            if field.isMultiValued {
                var unique: [[UInt8]: JSONValue] = [:]
                for v in values { unique[ValueOrder.key(v)] = v }
                values = unique.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map(\.value)
            }
            combinations = combinations.flatMap { prefix in values.map { prefix + ValueOrder.encode($0) } }
        }
        return combinations
    }
}

extension IndexDefinition {
    /// The definition as the catalog stores it.
    var json: JSONValue {
        .object(["name": .string(name), "fields": .array(fields.map { .string($0.description) }), "unique": .bool(unique)])
    }
}
