import KVKeys
import KVStorage
import KVSupport

/// The stored form of one vector index, under its subspace:
///
/// - `("b", first id)` → a ``VectorBlock`` of up to ``capacity`` vectors whose ids come
///   from `first id` (inclusive) to the next block's first id (exclusive), in id order;
/// - `("n",)` → the number of vectors, a tuple integer;
/// - `("c",)` → the ``VectorCentroids`` of the lists, once the index holds
///   ``trainingThreshold`` vectors;
/// - `("p", list, first id)` → the blocks of each list: a second copy of every vector, in the
///   list of its nearest centroid (``VectorCentroids/list(of:)``), in id order within the
///   list, blocked as above. An approximate search reads the lists nearest its query.
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

    /// How the lists hold their vectors (the id-ordered blocks are always float32).
    package let storage: VectorStorage

    package init(
        subspace: Subspace, dimensions: Int, metric: VectorMetric, storage: VectorStorage = .float32, name: String
    ) {
        self.subspace = subspace
        self.dimensions = dimensions
        self.metric = metric
        self.storage = storage
        self.name = name
        self.blockPrefix = subspace.pack(["b"])
        self.countKey = subspace.pack(["n"])
    }

    /// The most vectors a block holds.
    package var capacity: Int { max(1, Self.targetBlockBytes / (dimensions * 4 + 4)) }
    /// The most vectors a block of a list holds (with their codes, for a quantized storage).
    package var listCapacity: Int {
        storage == .float32
            ? capacity
            : max(
                1,
                Self.targetBlockBytes / (dimensions * 4 + 16 + VectorCodes.codeBytes(storage, dimensions: dimensions)))
    }
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

    /// The entries of a stored block.
    /// - Throws: `.corruption` naming the key for bytes that are not a block, or a block
    ///   whose first id is not its key's.
    package func entries(_ key: [UInt8], _ value: [UInt8], prefix: [UInt8]? = nil) throws -> [VectorBlock.Entry] {
        do {
            let entries = try value.withUnsafeBytes { try VectorBlock.View($0, dimensions: dimensions).entries() }
            guard let first = entries.first, (prefix ?? blockPrefix) + first.id == key else {
                throw KVDocsError(.corruption, "a damaged vector block: its first id is not its key's")
            }
            return entries
        } catch let error as KVDocsError {
            throw KVDocsError(.corruption, "\(name): \(error.message)", key: key)
        }
    }

    /// Adds to a batch (`put`, `delete`) what `changes` makes of the stored blocks and lists,
    /// read through `reader` (the state before the batch), and empties `changes`.
    ///
    /// A vector changes in the id-ordered blocks and in its list (the old list of a moved
    /// vector loses it). When the count reaches ``trainingThreshold`` without centroids, or
    /// 4× the count they were trained on, the centroids are trained again and every list
    /// rewritten, in the same batch, unless that batch would exceed `maximumOperations`
    /// (a store that bounds its transactions: the lists then stay as they are, still
    /// correct).
    /// - Throws: `.corruption` for a damaged block, count or centroids.
    package func apply(
        _ changes: VectorChanges, reader: some KeyValueReader, maximumOperations: Int? = nil,
        put: ([UInt8], [UInt8]) -> Void, delete: ([UInt8]) -> Void
    ) throws {
        guard !changes.pending.isEmpty else { return }
        let ids = changes.pending.keys.map(\.bytes).sorted { compareBytes($0, $1) < 0 }
        let sorted = ids.map { ($0, changes.pending[ByteKey($0)] ?? nil) }
        let centroids = try self.centroids(reader)
        var listChanges: [Int: [(id: [UInt8], values: [Float]?)]] = [:]
        let delta = try merge(
            sorted, into: blockPrefix, capacity: capacity, storage: .float32, reader: reader, put: put, delete: delete
        ) { id, old, new in
            guard let centroids else { return }
            let from = old.map { centroids.list(of: $0) }
            let to = new.map { centroids.list(of: $0) }
            if let from, from != to { listChanges[from, default: []].append((id, nil)) }
            if let to { listChanges[to, default: []].append((id, new)) }
        }
        let before = try count(reader)
        let total = before + delta
        if total != before {
            if total > 0 { put(countKey, Tuple([.int(Int64(total))]).encoded) } else { delete(countKey) }
        }
        if shouldTrain(total, centroids), fitsTraining(total, before, maximumOperations) {
            try train(total, sorted, reader: reader, put: put, delete: delete)
        } else {
            for (list, entries) in listChanges.sorted(by: { $0.key < $1.key }) {
                _ = try merge(
                    entries, into: listPrefix(list), capacity: listCapacity, storage: storage, reader: reader, put: put,
                    delete: delete)
            }
        }
        changes.pending.removeAll(keepingCapacity: true)
    }

    /// Merges `changes` (ascending ids; `nil`: no vector now) into the blocks under `prefix`
    /// (the id-ordered blocks or one list), adding the rewritten blocks to the batch; returns
    /// the change in their vector count. `moved` is told each changed id with its stored
    /// vector (if any) and its new one.
    private func merge(
        _ changes: [(id: [UInt8], values: [Float]?)], into prefix: [UInt8], capacity: Int, storage: VectorStorage,
        reader: some KeyValueReader,
        put: ([UInt8], [UInt8]) -> Void, delete: ([UInt8]) -> Void,
        moved: (([UInt8], [Float]?, [Float]?) -> Void)? = nil
    ) throws -> Int {
        let partition = KeyRange.prefix(prefix)
        var delta = 0
        var i = 0
        while i < changes.count {
            // The block the next id falls in: the last at or below it, else the first one.
            let holding = KeyRange(lower: .included(prefix), upper: .included(prefix + changes[i].id))
            var located = try reader.scan(holding, order: .reverse).next { k, v in (Array(k), Array(v)) }
            if located == nil {
                located = try reader.scan(partition, order: .forward).next { k, v in (Array(k), Array(v)) }
            }
            var stored: [VectorBlock.Entry] = []
            var upper: [UInt8]?
            if let (key, value) = located {
                stored = try entries(key, value, prefix: prefix)
                let after = KeyRange(lower: .excluded(key), upper: partition.upper)
                upper = try reader.scan(after, order: .forward).next { k, _ in Array(k.dropFirst(prefix.count)) }
            }
            var j = i
            while j < changes.count, upper.map({ compareBytes(changes[j].id, $0) < 0 }) ?? true { j += 1 }
            // Merge the block's entries with the changes to ids[i..<j] (both ascending).
            var merged: [VectorBlock.Entry] = []
            merged.reserveCapacity(stored.count + (j - i))
            var s = 0
            for (id, values) in changes[i..<j] {
                while s < stored.count, compareBytes(stored[s].id, id) < 0 {
                    merged.append(stored[s])
                    s += 1
                }
                let present = s < stored.count && stored[s].id == id
                moved?(id, present ? stored[s].values : nil, values)
                if present { s += 1 }
                if let values {
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
                let key = prefix + chunk[chunk.startIndex].id
                if key == located?.0 { rewritten = true }
                put(key, VectorBlock.encode(chunk, dimensions: dimensions, storage: storage))
                start += capacity
            }
            if let (key, _) = located, !rewritten { delete(key) }
            i = j
        }
        return delta
    }

    // MARK: - Lists

    /// An index of fewer vectors keeps no lists: an approximate search scans every vector.
    package static let trainingThreshold = 1024

    /// The key of the centroids.
    package var centroidsKey: [UInt8] { subspace.pack(["c"]) }
    /// The prefix of every list's blocks.
    package var listsPrefix: [UInt8] { subspace.pack(["p"]) }
    /// The prefix of list `list`'s blocks (`("p", list, first id)`).
    package func listPrefix(_ list: Int) -> [UInt8] { subspace.pack(["p", .int(Int64(list))]) }

    /// The stored centroids, `nil` when the index has no lists.
    /// - Throws: `.corruption` naming the key for damaged centroids.
    package func centroids(_ reader: some KeyValueReader) throws -> VectorCentroids? {
        do {
            // Read in place without LevelDB's checksums (a get copies the value and checks the
            // CRC of its whole block: most of a small search's time); a fingerprint that does
            // not match the values is reported as damage when they are decoded.
            let cursor = try reader.scanWithoutChecksums(
                KeyRange(from: centroidsKey, through: centroidsKey), order: .forward)
            return try cursor.next { _, bytes -> VectorCentroids? in
                // The last decoded, while the stored ones have its fingerprint and length.
                let fingerprint = try VectorCentroids.fingerprint(bytes)
                if let cached = decoded.withLock({ $0 }), cached.fingerprint == fingerprint,
                    cached.length == bytes.count
                {
                    return cached.centroids
                }
                let centroids = try VectorCentroids(decoding: bytes, dimensions: dimensions, metric: metric)
                decoded.withLock { $0 = (fingerprint, bytes.count, centroids) }
                return centroids
            } ?? nil
        } catch let error as KVDocsError {
            throw KVDocsError(.corruption, "\(name): \(error.message)", key: centroidsKey)
        }
    }

    /// The centroids decoded last, with the fingerprint and length of their stored bytes:
    /// decoding them (a copy, the norms) costs more than a small approximate search.
    private let decoded = Locked<(fingerprint: UInt64, length: Int, centroids: VectorCentroids)?>(nil)

    func shouldTrain(_ total: Int, _ centroids: VectorCentroids?) -> Bool {
        guard let centroids else { return total >= Self.trainingThreshold }
        return total >= 4 * centroids.trainedOn
            && VectorTraining.listCount(for: total) > centroids.count
    }

    /// Whether a training's writes (every list's blocks, the old ones deleted) fit a batch.
    func fitsTraining(_ total: Int, _ before: Int, _ maximumOperations: Int?) -> Bool {
        guard let maximumOperations else { return true }
        let lists = VectorTraining.listCount(for: total)
        let estimate = 2 * (lists + (total + before) / listCapacity) + 16
        return estimate <= maximumOperations / 2
    }

    /// Trains the centroids on the vectors after the batch (the stored ones with `changes`
    /// applied) and rewrites every list.
    private func train(
        _ total: Int, _ changes: [(id: [UInt8], values: [Float]?)], reader: some KeyValueReader,
        put: ([UInt8], [UInt8]) -> Void, delete: ([UInt8]) -> Void
    ) throws {
        let lists = VectorTraining.listCount(for: total)
        let wanted = lists * VectorTraining.samplePerList
        let stride = max(1, total / max(1, wanted))
        var sample: [[Float]] = []
        sample.reserveCapacity(min(total, wanted + 1))
        var position = 0
        try forEachVector(after: changes, reader: reader) { _, values in
            if position % stride == 0, sample.count < wanted { sample.append(values) }
            position += 1
        }
        guard !sample.isEmpty else { return }
        let centroids = VectorTraining.train(
            sample, lists: lists, dimensions: dimensions, metric: metric, trainedOn: total)
        // Every vector to its list, in id order; a list's block written when full.
        var pending = [[VectorBlock.Entry]](repeating: [], count: centroids.count)
        var written = Set<ByteKey>()
        func write(_ list: Int) {
            guard let first = pending[list].first else { return }
            let key = listPrefix(list) + first.id
            put(key, VectorBlock.encode(pending[list], dimensions: dimensions, storage: storage))
            written.insert(ByteKey(key))
            pending[list].removeAll(keepingCapacity: true)
        }
        try forEachVector(after: changes, reader: reader) { id, values in
            let list = centroids.list(of: values)
            pending[list].append(VectorBlock.Entry(id: id, values: values))
            if pending[list].count == listCapacity { write(list) }
        }
        for list in pending.indices { write(list) }
        let old = try reader.scan(.prefix(listsPrefix), order: .forward)
        while let key = try old.next({ k, _ in Array(k) }) {
            if !written.contains(ByteKey(key)) { delete(key) }
        }
        put(centroidsKey, centroids.encoded())
    }

    /// Calls `body` with every vector the index holds once `changes` (ascending ids) are
    /// applied to the stored blocks, in id order.
    private func forEachVector(
        after changes: [(id: [UInt8], values: [Float]?)], reader: some KeyValueReader,
        _ body: ([UInt8], [Float]) throws -> Void
    ) throws {
        var c = 0
        let cursor = try reader.scanWithoutChecksums(blocks, order: .forward)
        while let (key, value) = try cursor.next({ k, v in (Array(k), Array(v)) }) {
            for entry in try entries(key, value) {
                while c < changes.count, compareBytes(changes[c].id, entry.id) < 0 {
                    if let values = changes[c].values { try body(changes[c].id, values) }
                    c += 1
                }
                if c < changes.count, changes[c].id == entry.id {
                    if let values = changes[c].values { try body(entry.id, values) }
                    c += 1
                } else {
                    try body(entry.id, entry.values)
                }
            }
        }
        while c < changes.count {
            if let values = changes[c].values { try body(changes[c].id, values) }
            c += 1
        }
    }
}

/// The vectors one batch sets or removes in a vector index, by document id
/// (tuple-encoded), applied together when the batch is finished (``VectorIndex/apply(_:reader:put:delete:)``).
package final class VectorChanges {
    /// The new vector of each document the batch changed; `nil`: it has none now.
    package var pending: [ByteKey: [Float]?] = [:]

    package init() {}
}
