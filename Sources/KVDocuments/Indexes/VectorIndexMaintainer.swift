import Foundation
import KVKeys
import KVStorage
import KVSupport
import KVVector

/// A vector index of a collection: keeps a ``VectorIndex`` (packed blocks of float32
/// vectors in id order) with the vector of every document whose field holds one.
///
/// **Invariants.** A document has a vector in the index if and only if its field holds an
/// array of exactly ``VectorIndexDefinition/dimensions`` finite numbers, and the index holds
/// those numbers rounded to float32. A write whose field holds anything else (but `null`,
/// which counts as absent) throws before anything is written. The changes of one batch are
/// applied to the blocks when the batch is finished (or flushed by a long build), in the
/// same atomic write.
package struct VectorIndexMaintainer: IndexMaintainer {
    package let identity: IndexIdentity
    package let definition: VectorIndexDefinition
    package let index: VectorIndex

    init(identity: IndexIdentity, definition: VectorIndexDefinition, subspace: Subspace) {
        self.identity = identity
        self.definition = definition
        self.index = VectorIndex(
            subspace: subspace, dimensions: definition.dimensions, metric: definition.metric,
            storage: definition.storage,
            name: "vector index \(definition.name) of \"\(identity.collection)\"")
    }

    package var definitionJSON: JSONValue { definition.json }
    /// 1: `("b", first id)` → packed float32 blocks, `("n",)` → the count. 2: and the lists
    /// of an approximate search, `("c",)` → centroids, `("p", list, first id)` → blocks (an
    /// index of format 1 is rebuilt when the store opens).
    package var formatVersion: Int64 { 2 }
    package var keyRange: KeyRange { index.keyRange }
    /// Blocks hold many documents' vectors: a layered store's user layer derives them whole.
    package var derivation: IndexDerivation { .whole }

    package func validate(id: TupleElement, document: JSONValue) throws {
        _ = try vector(in: document, id: id)
    }

    /// The vector `document` holds in the indexed field; `nil` when the field is missing or
    /// `null`.
    /// - Throws: `.invalidArgument` naming the index, the field, the document and what is
    ///   wrong with the value.
    func vector(in document: JSONValue, id: TupleElement) throws -> [Float]? {
        guard let value = definition.field.values(in: document).first, value != .null else { return nil }
        switch VectorValue.parse(value, dimensions: definition.dimensions) {
        case .success(let values): return values
        case .failure(let problem):
            throw KVDocsError(
                .invalidArgument,
                "vector index \(definition.name) of collection \"\(identity.collection)\": field \(definition.field) of document \(DocumentStore.idValue(id).compactDescription) holds \(problem.reason)"
            )
        }
    }

    package func update(id: TupleElement, old: JSONValue?, new: JSONValue?, context: IndexUpdateContext) throws {
        let after = try new.flatMap { try vector(in: $0, id: id) }
        let before = old.flatMap { try? vector(in: $0, id: id) }
        // A write that leaves the vector alone rewrites no block.
        if before == after { return }
        let changes = context.state(for: identity) { VectorChanges() }
        changes.pending[ByteKey(context.encodedID(id))] = .some(after)
        context.pendingWork += definition.dimensions
    }

    package func flush(context: IndexUpdateContext) throws {
        guard let changes = context.existingState(for: identity, as: VectorChanges.self) else { return }
        try index.apply(
            changes, reader: context.storage, maximumOperations: context.storage.maximumBatchCount,
            put: { context.put($0, $1) }, delete: { context.delete($0) })
    }

    package func finish(context: IndexUpdateContext) throws {
        try flush(context: context)
    }

    // MARK: - Verification

    /// The key of one vector in the normalized form verify compares (`("v", id)` under the
    /// index's subspace; never stored).
    func verificationKey(_ id: [UInt8]) -> [UInt8] { index.subspace.pack(["v"]) + id }

    /// The key of a vector the lists misplace, in the normalized form (`("x", id)`; never
    /// stored, and implied by no document, so that verify reports it).
    func misplacedKey(_ id: [UInt8]) -> [UInt8] { index.subspace.pack(["x"]) + id }

    /// One entry per stored vector (`("v", id)` → its float32 bytes) and the count, read
    /// from the blocks: what ``makeVerifier()`` expects, whatever the blocks' boundaries;
    /// and `("x", id)` for each vector the lists misplace (missing from the list of its
    /// nearest centroid, in another, twice, with other values, or in a list of an index
    /// without centroids).
    /// - Throws: `.corruption` for a damaged block or centroids, blocks whose ids overlap or
    ///   a key outside the layout.
    package func verificationEntries(_ reader: any KeyValueReader) throws -> [([UInt8], [UInt8])] {
        var result: [([UInt8], [UInt8])] = []
        var vectors: [([UInt8], [Float])] = []
        var listed: [ByteKey: (list: Int, values: [Float])] = [:]
        var misplaced = Set<ByteKey>()
        var lastID: [UInt8]?
        let centroids = try index.centroids(reader)
        let cursor = try reader.scan(index.keyRange, order: .forward)
        while let (key, value) = try cursor.next({ k, v in (Array(k), Array(v)) }) {
            if key == index.countKey {
                result.append((key, value))
                continue
            }
            if key == index.centroidsKey { continue }
            if key.starts(with: index.listsPrefix) {
                guard let tuple = try? Tuple(decoding: key.dropFirst(index.subspace.prefix.count)), tuple.count == 3,
                    case .int(let list) = tuple[1], list >= 0, list < Int64(centroids?.count ?? Int(Int32.max))
                else {
                    throw KVDocsError(.corruption, "\(index.name): a list key outside its layout", key: key)
                }
                let entries = try index.entries(key, value, prefix: index.listPrefix(Int(list)))
                // The codes (and the layout) are those the values make.
                let exact =
                    entries.count <= index.listCapacity
                    && VectorBlock.encode(entries, dimensions: index.dimensions, storage: index.storage) == value
                for entry in entries {
                    if !exact { misplaced.insert(ByteKey(entry.id)) }
                    if listed.updateValue((Int(list), entry.values), forKey: ByteKey(entry.id)) != nil {
                        misplaced.insert(ByteKey(entry.id))
                    }
                }
                continue
            }
            guard key.starts(with: index.blockPrefix) else {
                throw KVDocsError(.corruption, "\(index.name): a key outside its layout", key: key)
            }
            let entries = try index.entries(key, value)
            guard entries.count <= index.capacity else {
                throw KVDocsError(
                    .corruption, "\(index.name): a block of \(entries.count) vectors (at most \(index.capacity))",
                    key: key)
            }
            if let lastID, let first = entries.first, compareBytes(lastID, first.id) >= 0 {
                throw KVDocsError(
                    .corruption, "\(index.name): a block whose ids overlap the previous block's", key: key)
            }
            for entry in entries {
                result.append((verificationKey(entry.id), entry.values.withUnsafeBytes { Array($0) }))
                vectors.append((entry.id, entry.values))
            }
            lastID = entries.last?.id
        }
        if let centroids {
            for (id, values) in vectors {
                let inList = listed.removeValue(forKey: ByteKey(id))
                if inList?.list != centroids.list(of: values) || inList?.values != values {
                    misplaced.insert(ByteKey(id))
                }
            }
        }
        misplaced.formUnion(listed.keys)
        for id in misplaced.map(\.bytes).sorted(by: { compareBytes($0, $1) < 0 }) {
            result.append((misplacedKey(id), []))
        }
        return result
    }

    package func describe(key: [UInt8]) -> String? {
        if key == index.countKey { return "the vector count of \(index.name)" }
        let misplaced = index.subspace.pack(["x"])
        if key.starts(with: misplaced),
            let id = try? Tuple(decoding: key.dropFirst(misplaced.count)).elements.first
        {
            return
                "the place of document \(DocumentStore.idValue(id).compactDescription) in the lists of \(index.name) (it must be once in the list of its nearest centroid, with its vector)"
        }
        guard key.starts(with: index.blockPrefix),
            let id = try? Tuple(decoding: key.dropFirst(index.blockPrefix.count)).elements.first
        else { return nil }
        return "the block of \(index.name) from document \(DocumentStore.idValue(id).compactDescription)"
    }

    package func makeVerifier() -> any IndexVerifier { Verifier(maintainer: self) }

    struct Verifier: IndexVerifier {
        let maintainer: VectorIndexMaintainer
        var entries: [[UInt8]: [UInt8]] = [:]
        var count = 0

        mutating func add(id: TupleElement, document: JSONValue) {
            // A document whose field holds no vector has none (a write could not store one).
            guard let values = try? maintainer.vector(in: document, id: id) else { return }
            entries[maintainer.verificationKey(Tuple([id]).encoded)] = values.withUnsafeBytes { Array($0) }
            count += 1
        }

        func expectedEntries() -> [[UInt8]: [UInt8]] {
            var all = entries
            if count > 0 { all[maintainer.index.countKey] = Tuple([.int(Int64(count))]).encoded }
            return all
        }
    }
}
