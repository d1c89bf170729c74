import Foundation
import KVKeys
import KVStorage
import KVSupport

/// A secondary index: plain, unique, compound (several fields) or multi-valued (one `[]`
/// field).
///
/// Each combination of the fields' values (in ``ValueOrder``'s encoding) is one entry. In a
/// sparse index (``SecondaryIndexDefinition/sparse``, and every unique index) a document missing a
/// field has none; otherwise each missing field (or multi-valued field without elements)
/// is the ``missingMarker``, which orders before every value, so every document has an
/// entry and the index serves any leading prefix of its fields.
/// - A plain index stores `(…index subspace, value encodings…, id) → ""`: entries of one
///   value are sorted by id.
/// - A unique index (format 2) stores `(…index subspace, value encodings…) → id`: one entry
///   per value, so "is this value taken?" is one point read. It is answered from the
///   batch's own additions and releases first, then by the database.
///
/// Entries are computed as bytes (no tuple elements): the subspace prefix is compiled once
/// per schema, and old and new entries are diffed as sorted byte strings.
package struct SecondaryIndexMaintainer: IndexMaintainer {
    package let identity: IndexIdentity
    let definition: SecondaryIndexDefinition
    let subspace: Subspace
    let documents: Layout

    /// For an index that includes fields: the whole fields its entries carry (the included
    /// ones, the indexed ones and the primary key); `nil` otherwise.
    let carried: [[String]]?

    init(
        collection: String, definition: SecondaryIndexDefinition, primaryKey: String, subspace: Subspace,
        documents: Layout
    ) {
        self.identity = IndexIdentity(collection, definition.name, .secondary)
        self.definition = definition
        self.subspace = subspace
        self.documents = documents
        if case .fields(let included) = definition.include {
            carried = included.map(\.wholeField) + definition.fields.map(\.wholeField) + [[primaryKey]]
        } else {
            carried = nil
        }
    }

    /// Whether entries carry (part of) their document: a covering index.
    var carriesDocuments: Bool {
        if case .none = definition.include { return false }
        return true
    }

    /// What an entry of `document` carries besides its key (in the binary form,
    /// ``BinaryJSON``, like stored documents), or `nil` for an index that includes nothing.
    func payload(_ document: JSONValue) throws -> [UInt8]? {
        switch definition.include {
        case .none: return nil
        case .document: return try DocumentStore.storedBytes(document)
        case .fields: return try DocumentStore.storedBytes(FieldPath.project(document, onto: carried ?? []))
        }
    }

    /// Whether the entries of this index carry every field `query` reads (its conditions,
    /// order and selected fields), so it can be answered from the index alone.
    func covers(_ query: DocumentQuery) -> Bool {
        switch definition.include {
        case .none: return false
        case .document: return true
        case .fields:
            guard let selected = query.fields, let carried else { return false }
            let read = selected + query.conditions.map(\.field) + (query.order.map { [$0.field] } ?? [])
            return read.allSatisfy { FieldPath.covers(carried, $0.wholeField) }
        }
    }

    package var definitionJSON: JSONValue { definition.json }
    /// 1: every index `(values…, id) → ""`, documents missing a field left out (sparse
    /// plain indexes stay at 1). 2: unique indexes `(values…) → id`. 3: plain indexes that
    /// are not sparse, with an entry for every document (``missingMarker``).
    package var formatVersion: Int64 { definition.unique ? 2 : (definition.sparse ? 1 : 3) }

    /// What stands for a missing field in the entries of an index that is not sparse: the
    /// tuple integer -1, which orders before every ``ValueOrder`` encoding (their type tags
    /// are 0 and up), so missing sorts before `null`, as the query order requires.
    package static let missingMarker: [UInt8] = Tuple([.int(-1)]).encoded
    package var keyRange: KeyRange { subspace.range }
    /// Whether an entry's id is its value (unique indexes) rather than its key's last element.
    var idInValue: Bool { definition.unique }

    /// A unique index's changes in the current batch: values taken (entry key → id bytes)
    /// and values released by the batch's own writes.
    final class UniqueChanges {
        var owners: [ByteKey: [UInt8]] = [:]
        var released: Set<ByteKey> = []
    }

    package func validate(id: TupleElement, document: JSONValue) throws {
        try Self.checkNesting(definition, document, collection: identity.collection)
    }

    package func update(id: TupleElement, old: JSONValue?, new: JSONValue?, context: IndexUpdateContext) throws {
        if try updateSingleValued(id: id, old: old, new: new, context: context) { return }
        let oldValues = old.map { Self.encodedValues(definition, $0) } ?? []
        // `validate(id:document:)` has checked the nesting of `new` before any update.
        let newValues = new.map { Self.encodedValues(definition, $0) } ?? []
        // A covering index rewrites kept entries whose carried fields changed.
        let newPayload = try new.flatMap { try payload($0) }
        let rewrite = try newPayload != nil && newPayload != old.flatMap { try payload($0) }
        if oldValues == newValues && !rewrite { return }
        let idBytes = context.encodedID(id)
        let value = idInValue ? idBytes + (newPayload ?? []) : (newPayload ?? [])
        let unique = definition.unique ? context.state(for: identity) { UniqueChanges() } : nil
        var key = subspace.prefix
        let prefixCount = key.count
        // Both lists are sorted and distinct: one merge pass finds removals and additions.
        var i = 0, j = 0
        while i < oldValues.count || j < newValues.count {
            let c = i == oldValues.count ? 1 : (j == newValues.count ? -1 : compareBytes(oldValues[i], newValues[j]))
            key.removeSubrange(prefixCount...)
            if c == 0 {
                if rewrite {
                    key.append(contentsOf: newValues[j])
                    if !idInValue { key.append(contentsOf: idBytes) }
                    context.batch.put(key, value)
                }
                i += 1
                j += 1
                continue
            }
            if c < 0 {
                key.append(contentsOf: oldValues[i])
                i += 1
                if let unique {
                    context.batch.delete(key)
                    if unique.owners[ByteKey(key)] == idBytes { unique.owners[ByteKey(key)] = nil }
                    unique.released.insert(ByteKey(key))
                } else {
                    key.append(contentsOf: idBytes)
                    context.batch.delete(key)
                }
            } else {
                key.append(contentsOf: newValues[j])
                j += 1
                if let unique {
                    try checkUnique(key, id: id, idBytes: idBytes, changes: unique, context: context)
                    unique.owners[ByteKey(key)] = idBytes
                } else {
                    key.append(contentsOf: idBytes)
                }
                context.batch.put(key, value)
            }
        }
    }

    /// The update of an index that carries nothing, when each of its fields holds at most
    /// one value in both documents (most indexes, most writes): at most one entry removed and
    /// one added, their keys built in the context's reused buffers. Returns `false`, having
    /// done nothing, when the general path must run (a covering index, a field holding
    /// several values).
    private func updateSingleValued(id: TupleElement, old: JSONValue?, new: JSONValue?, context: IndexUpdateContext)
        throws -> Bool
    {
        guard case .none = definition.include else { return false }
        return try context.withKeyBuffers { oldKey, newKey -> Bool in
            var oldEntry = false
            var newEntry = false
            if let old {
                guard let entry = Self.singleEntryKey(definition, old, prefix: subspace.prefix, into: &oldKey) else {
                    return false
                }
                oldEntry = entry
            }
            if let new {
                guard let entry = Self.singleEntryKey(definition, new, prefix: subspace.prefix, into: &newKey) else {
                    return false
                }
                newEntry = entry
            }
            if oldEntry && newEntry && oldKey == newKey { return true }
            let idBytes = context.encodedID(id)
            if definition.unique {
                let unique = context.state(for: identity) { UniqueChanges() }
                if oldEntry {
                    context.batch.delete(oldKey)
                    if unique.owners[ByteKey(oldKey)] == idBytes { unique.owners[ByteKey(oldKey)] = nil }
                    unique.released.insert(ByteKey(oldKey))
                }
                if newEntry {
                    try checkUnique(newKey, id: id, idBytes: idBytes, changes: unique, context: context)
                    unique.owners[ByteKey(newKey)] = idBytes
                    context.batch.put(newKey, idBytes)
                }
            } else {
                if oldEntry {
                    oldKey.append(contentsOf: idBytes)
                    context.batch.delete(oldKey)
                }
                if newEntry {
                    newKey.append(contentsOf: idBytes)
                    context.batch.put(newKey, [UInt8]())
                }
            }
            return true
        }
    }

    /// The key of `document`'s one entry before its id (`prefix`, then each field's value
    /// encoding or the ``missingMarker``), written into `key`: `true`, or `false` when a
    /// sparse index leaves the document out; `nil` when a field holds several values
    /// (``encodedValues(_:_:)`` gives their combinations).
    package static func singleEntryKey(
        _ index: SecondaryIndexDefinition, _ document: JSONValue, prefix: [UInt8], into key: inout [UInt8]
    ) -> Bool? {
        var encoder = TupleEncoder(bytes: [])
        swap(&encoder.bytes, &key)
        defer { swap(&encoder.bytes, &key) }
        encoder.bytes.removeAll(keepingCapacity: true)
        encoder.bytes.append(contentsOf: prefix)
        for field in index.fields {
            var first: JSONValue?
            var several = false
            field.forEachValue(in: document) { value in
                if first == nil { first = value } else { several = true }
            }
            if several { return nil }
            guard let first else {
                if index.isSparse { return false }
                encoder.bytes.append(contentsOf: missingMarker)
                continue
            }
            ValueOrder.append(first, to: &encoder)
        }
        return true
    }

    /// Throws when another document holds the unique entry `key`: one taken earlier in this
    /// batch, or one stored and not released by this batch.
    private func checkUnique(
        _ key: [UInt8], id: TupleElement, idBytes: [UInt8], changes: UniqueChanges,
        context: IndexUpdateContext
    ) throws {
        var other: [UInt8]?
        if let owner = changes.owners[ByteKey(key)] {
            other = owner
        } else if !changes.released.contains(ByteKey(key)) {
            other = try context.storage.value(forKey: key)
        }
        guard let other, !other.starts(with: idBytes) || Self.idLength(other) != idBytes.count else { return }
        let existing = (try? Tuple(decoding: Array(other.prefix(Self.idLength(other)))).elements.first) ?? .bytes(other)
        throw violation(Array(key[subspace.prefix.count...]), existing: existing, new: id, in: context.storage.name)
    }

    /// The error for a value (its encoded bytes) held by `existing` and wanted by `new`.
    func violation(_ encodedValues: [UInt8], existing: TupleElement, new: TupleElement, in name: String) -> KVDocsError
    {
        let values = (try? Tuple(decoding: encodedValues).elements) ?? []
        var i = 0
        var shown: [String] = []
        while i < values.count, let v = ValueOrder.decode(values, at: &i) { shown.append(v.compactDescription) }
        return KVDocsError(
            .uniqueViolation,
            "unique index \"\(definition.name)\" of \"\(identity.collection)\" already has \(shown.joined(separator: ", ")) (document \(existing)); document \(new) cannot have it too",
            path: name, key: documents.document(identity.collection, new))
    }

    package func describe(key: [UInt8]) -> String? {
        guard idInValue, key.starts(with: subspace.prefix),
            let values = try? Tuple(decoding: key[subspace.prefix.count...]).elements
        else { return nil }
        var i = 0
        var shown: [String] = []
        while i < values.count, let v = ValueOrder.decode(values, at: &i) { shown.append(v.compactDescription) }
        return "the value \(shown.joined(separator: ", ")) (as its document id)"
    }

    /// The length of the id at the start of a unique entry's value (the carried fields
    /// follow it), or the whole value's when it is not a tuple element.
    static func idLength(_ value: [UInt8]) -> Int {
        value.withUnsafeBytes { bytes in (try? TupleDecoder.firstElementEnd(of: bytes)) ?? bytes.count }
    }

    package func makeVerifier() -> any IndexVerifier { Verifier(maintainer: self) }

    struct Verifier: IndexVerifier {
        let maintainer: SecondaryIndexMaintainer
        var entries: [[UInt8]: [UInt8]] = [:]

        mutating func add(id: TupleElement, document: JSONValue) {
            let idBytes = Tuple([id]).encoded
            let payload = (try? maintainer.payload(document)).flatMap { $0 } ?? []
            for values in SecondaryIndexMaintainer.encodedValues(maintainer.definition, document) {
                if maintainer.idInValue {
                    entries[maintainer.subspace.prefix + values] = idBytes + payload
                } else {
                    entries[maintainer.subspace.prefix + values + idBytes] = payload
                }
            }
        }

        func expectedEntries() -> [[UInt8]: [UInt8]] { entries }
    }

    /// Refuses a document whose indexed value holds arrays nested deeper than the tuple
    /// decoder reads back (``Tuple/maximumNestingDepth``): each array level is a nested tuple
    /// in the entry's key, and an entry that cannot be decoded would break every query of
    /// the index. JSON allows deeper nesting (``JSONValue/maximumDepth``).
    /// - Throws: `.invalidArgument` naming the index, the field and the limit.
    static func checkNesting(_ index: SecondaryIndexDefinition, _ document: JSONValue, collection: String) throws {
        for field in index.fields {
            try field.forEachValue(in: document) { try checkNesting(of: $0, index, field, collection: collection) }
        }
    }

    /// Refuses `value` (of `field`) when it nests arrays too deep for the tuple encoding.
    @inline(__always)
    private static func checkNesting(
        of value: JSONValue, _ index: SecondaryIndexDefinition, _ field: FieldPath, collection: String
    ) throws {
        guard case .array = value else { return }
        func depth(_ value: JSONValue) -> Int {
            guard case .array(let elements) = value else { return 0 }
            return 1 + elements.reduce(0) { max($0, depth($1)) }
        }
        let levels = depth(value)
        if levels > Tuple.maximumNestingDepth {
            throw KVDocsError(
                .invalidArgument,
                "index \(index.name) of collection \"\(collection)\": field \(field) holds arrays nested \(levels) levels deep; an indexed value may nest at most \(Tuple.maximumNestingDepth) levels (the tuple encoding's limit)"
            )
        }
    }

    /// Every combination of the index's field values in `document`, each as the tuple
    /// encoding of its fields' ``ValueOrder`` encodings, sorted bytewise and distinct. A
    /// multi-valued field gives each distinct element once. A missing field (or a
    /// multi-valued one without elements) leaves the document out of a sparse index, and is
    /// the ``missingMarker`` in any other.
    package static func encodedValues(_ index: SecondaryIndexDefinition, _ document: JSONValue) -> [[UInt8]] {
        var combinations: [[UInt8]] = [[]]
        var encoder = TupleEncoder()
        for field in index.fields {
            // The first value, and the others only when there are more (most fields hold one).
            var first: JSONValue?
            var more: [JSONValue] = []
            field.forEachValue(in: document) { value in
                if first == nil { first = value } else { more.append(value) }
            }
            guard let first else {
                if index.isSparse { return [] }
                for k in combinations.indices { combinations[k].append(contentsOf: missingMarker) }
                continue
            }
            if more.isEmpty {
                encoder.bytes.removeAll(keepingCapacity: true)
                ValueOrder.append(first, to: &encoder)
                for k in combinations.indices { combinations[k].append(contentsOf: encoder.bytes) }
                continue
            }
            var encoded = ([first] + more).map(ValueOrder.key)
            encoded.sort { compareBytes($0, $1) < 0 }
            var distinct: [[UInt8]] = []
            for e in encoded where distinct.last != e { distinct.append(e) }
            combinations = combinations.flatMap { prefix in distinct.map { prefix + $0 } }
        }
        if combinations.count > 1 { combinations.sort { compareBytes($0, $1) < 0 } }
        return combinations
    }

    /// Every combination of the index's field values in `document`, as tuple elements
    /// (the elements of ``encodedValues(_:_:)``).
    static func values(_ index: SecondaryIndexDefinition, _ document: JSONValue) -> [[TupleElement]] {
        encodedValues(index, document).compactMap { try? Tuple(decoding: $0).elements }
    }
}

extension SecondaryIndexDefinition {
    /// The definition as the catalog stores it.
    package var json: JSONValue {
        var o: JSONObject = [
            "name": .string(name), "fields": .array(fields.map { .string($0.description) }), "unique": .bool(unique)
        ]
        // Only when set, so definitions from before the member stay as they were stored.
        if sparse && !unique { o["sparse"] = true }
        switch include {
        case .none: break
        case .document: o["include"] = "*"
        case .fields(let included): o["include"] = .array(included.map { .string($0.description) })
        }
        return .object(o)
    }
}
