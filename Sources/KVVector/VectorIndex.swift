import KVKeys
import KVStorage
import KVSupport

/// The stored form of one vector index, under its subspace:
///
/// - `("b", first id)` → a ``VectorBlock`` of up to ``capacity`` vectors whose ids come
///   from `first id` (inclusive) to the next block's first id (exclusive), in id order;
/// - `("n",)` → the number of vectors, a tuple integer.
///
/// Blocks partition the ids: every vector is in the one block whose key is the greatest at
/// or below its id. A write rewrites the blocks its ids fall in (splitting one that grows past
/// ``capacity``, removing one left empty), so a scan reads a few large values rather than a
/// key per document. A block's first id is its key (a block whose smallest id goes away is
/// rewritten under its new first id).
package struct VectorIndex: Sendable {
    package let subspace: Subspace
    package let dimensions: Int
    package let metric: VectorMetric
    /// What messages call the index (`index by_embedding of "notes"`).
    package let name: String

    /// A block holds about this many bytes of vectors. Measured on 100,000 × 384 (kvprofile
    /// vector-scan): 32 KiB 11.8 ms a scan, 64 KiB 9.7, 128 KiB 9.5 (LevelDB's work per
    /// value); a write rewrites the blocks it touches, so a larger block costs random-id
    /// inserts more. Raising it later is compatible (smaller blocks stay valid); lowering it
    /// is a format change (``VectorIndexMaintainer/verificationEntries(_:)`` checks it).
    package static let targetBlockBytes = 64 * 1024

    package init(subspace: Subspace, dimensions: Int, metric: VectorMetric, name: String) {
        self.subspace = subspace
        self.dimensions = dimensions
        self.metric = metric
        self.name = name
        self.blockPrefix = subspace.pack(["b"])
        self.countKey = subspace.pack(["n"])
    }

    /// The most vectors a block holds.
    package var capacity: Int { max(1, Self.targetBlockBytes / (dimensions * 4 + 4)) }
    package let blockPrefix: [UInt8]
    package let countKey: [UInt8]
    package var blocks: KeyRange { .prefix(blockPrefix) }
    package var keyRange: KeyRange { subspace.range }

    /// The key of the block whose first id is `id` (tuple-encoded).
    package func blockKey(_ id: some Collection<UInt8>) -> [UInt8] { blockPrefix + id }

    /// The number of vectors stored.
    /// - Throws: `.corruption` for a damaged count.
    package func count(_ reader: some KeyValueReader) throws -> Int {
        guard let bytes = try reader.value(forKey: countKey) else { return 0 }
        guard let t = try? Tuple(decoding: bytes), t.count == 1, case .int(let n) = t[0], n >= 0 else {
            throw KVDocsError(.corruption, "\(name): the vector count is damaged", key: countKey)
        }
        return Int(n)
    }

    /// The key and bytes of the block that holds `id` if any block does: the one with the
    /// greatest first id at or below it.
    func block(holding id: [UInt8], _ reader: some KeyValueReader) throws -> (key: [UInt8], value: [UInt8])? {
        let range = KeyRange(lower: .included(blockPrefix), upper: .included(blockKey(id)))
        return try reader.scan(range, order: .reverse).next { k, v in (Array(k), Array(v)) }
    }

    /// The entries of a stored block.
    /// - Throws: `.corruption` naming the key for bytes that are not a block, or a block
    ///   whose first id is not its key's.
    package func entries(_ key: [UInt8], _ value: [UInt8]) throws -> [VectorBlock.Entry] {
        do {
            let entries = try value.withUnsafeBytes { try VectorBlock.View($0, dimensions: dimensions).entries() }
            guard let first = entries.first, blockKey(first.id) == key else {
                throw KVDocsError(.corruption, "a damaged vector block: its first id is not its key's")
            }
            return entries
        } catch let error as KVDocsError {
            throw KVDocsError(.corruption, "\(name): \(error.message)", key: key)
        }
    }

    /// Adds to a batch (`put`, `delete`) what `changes` makes of the stored blocks, read
    /// through `reader` (the state before the batch), and empties `changes`.
    /// - Throws: `.corruption` for a damaged block or count.
    package func apply(
        _ changes: VectorChanges, reader: some KeyValueReader, put: ([UInt8], [UInt8]) -> Void,
        delete: ([UInt8]) -> Void
    ) throws {
        guard !changes.pending.isEmpty else { return }
        let ids = changes.pending.keys.map(\.bytes).sorted { compareBytes($0, $1) < 0 }
        var delta = 0
        var i = 0
        while i < ids.count {
            // The block the next id falls in: the last at or below it, else the first one.
            var located = try block(holding: ids[i], reader)
            if located == nil {
                located = try reader.scan(blocks, order: .forward).next { k, v in (Array(k), Array(v)) }
            }
            var stored: [VectorBlock.Entry] = []
            var upper: [UInt8]?
            if let (key, value) = located {
                stored = try entries(key, value)
                let after = KeyRange(lower: .excluded(key), upper: blocks.upper)
                upper = try reader.scan(after, order: .forward).next { k, _ in Array(k.dropFirst(blockPrefix.count)) }
            }
            var j = i
            while j < ids.count, upper.map({ compareBytes(ids[j], $0) < 0 }) ?? true { j += 1 }
            // Merge the block's entries with the changes to ids[i..<j] (both ascending).
            var merged: [VectorBlock.Entry] = []
            merged.reserveCapacity(stored.count + (j - i))
            var s = 0
            for id in ids[i..<j] {
                while s < stored.count, compareBytes(stored[s].id, id) < 0 {
                    merged.append(stored[s])
                    s += 1
                }
                let present = s < stored.count && stored[s].id == id
                if present { s += 1 }
                // The changes hold every id they name.
                if let values = changes.pending[ByteKey(id)] ?? nil {
                    merged.append(VectorBlock.Entry(id: id, values: values))
                    if !present { delta += 1 }
                } else if present {
                    delta -= 1
                }
            }
            merged.append(contentsOf: stored[s...])
            // Each key written once (a store of transactions, etcd, takes one operation per key).
            var rewritten = false
            var start = 0
            while start < merged.count {
                let chunk = merged[start..<min(merged.count, start + capacity)]
                let key = blockKey(chunk[chunk.startIndex].id)
                if key == located?.key { rewritten = true }
                put(key, VectorBlock.encode(chunk, dimensions: dimensions))
                start += capacity
            }
            if let (key, _) = located, !rewritten { delete(key) }
            i = j
        }
        if delta != 0 {
            let total = try count(reader) + delta
            if total > 0 { put(countKey, Tuple([.int(Int64(total))]).encoded) } else { delete(countKey) }
        }
        changes.pending.removeAll(keepingCapacity: true)
    }
}

/// The vectors one batch sets or removes in a vector index, by document id
/// (tuple-encoded), applied together when the batch is finished (``VectorIndex/apply(_:reader:put:delete:)``).
package final class VectorChanges {
    /// The new vector of each document the batch changed; `nil`: it has none now.
    package var pending: [ByteKey: [Float]?] = [:]

    package init() {}
}
