import HeapModule
import KVKeys
import KVStorage
import KVSupport

/// The exact k nearest vectors of a ``VectorIndex`` to a query, read through one reader
/// (a snapshot): by a scan of every block, or by looking up a set of candidate ids.
///
/// A scan computes each vector's float32 lower bound over the block's bytes in place, then
/// exact double-precision distances in order of those bounds until the top k is settled
/// (``NearestSelection``); a filter on documents (`accept`) is asked in that order too, so
/// a scan with a filter reads only the documents that could be results.
package struct VectorSearch {
    package let index: VectorIndex
    package let kernel: VectorKernel
    /// Blocks read by the last search.
    package private(set) var blocksRead = 0
    /// Vectors whose lower bound the last search computed.
    package private(set) var vectorsScanned = 0
    /// Exact distances the last search computed.
    package private(set) var exactComputed = 0

    /// - Throws: `.invalidArgument` for a query of the wrong dimensions or with a value that
    ///   is not finite.
    package init(index: VectorIndex, query: [Float]) throws {
        guard query.count == index.dimensions else {
            throw KVDocsError(
                .invalidArgument,
                "\(index.name) holds vectors of \(index.dimensions) values; the query has \(query.count)")
        }
        if let bad = query.firstIndex(where: { !$0.isFinite }) {
            throw KVDocsError(
                .invalidArgument, "the query vector's element \(bad) is \(query[bad]), not a finite number")
        }
        self.index = index
        self.kernel = VectorKernel(metric: index.metric, query: query, storage: index.storage)
    }

    /// The k nearest vectors that `accept` takes, nearest first, ties by id.
    /// - Parameters:
    ///   - k: how many.
    ///   - accept: whether a vector's document is a result, asked with its id in order of
    ///     the vectors' lower bounds; `nil`: every one is.
    ///   - reader: the snapshot.
    /// - Throws: `.corruption` for a damaged block, naming its key; what `accept` throws.
    ///   - prefetch: called, before `accept` is asked about them, with the ids of the next
    ///     candidates in order (a reader whose reads are round trips fetches their documents
    ///     in one request).
    ///   - ranges: the blocks to read: every vector's (the default), or some lists'.
    package mutating func scan(
        k: Int, accept: (([UInt8]) throws -> Bool)? = nil,
        prefetch: (([[UInt8]]) throws -> Void)? = nil, ranges: [KeyRange]? = nil, reader: some KeyValueReader
    ) throws -> [NearestSelection.Result] {
        blocksRead = 0
        vectorsScanned = 0
        guard k > 0 else { return [] }
        var keys: [[UInt8]] = []
        var candidates: [NearestSelection.Candidate] = []
        let kernel = self.kernel
        let dimensions = index.dimensions
        let name = index.name
        var scanned = 0
        // The candidates of smallest bounds, with copies of their vectors and ids: those the
        // selection takes first, computed exactly without reading their blocks again. The
        // copies live in slots of one arena, reused as candidates are pushed out.
        // With a filter, the selection takes about k / (the share that passes) candidates.
        // Lists of quantized codes without a filter are rescored: the candidates of smallest
        // estimates (from the codes) get exact distances from their float32 values, and the
        // k nearest of them are the result (approximate within the lists read; with a filter
        // the codes give lower bounds instead, and the selection is exact).
        let rescore = ranges != nil && index.storage != .float32 && accept == nil
        let keptCount = rescore ? Self.rescored(k: k) : accept == nil ? k + 32 : 4 * k + 64
        var kept = Heap<NearestSelection.Candidate>()
        var copySlot: [Int64: Int] = [:]
        var arena = [Float](repeating: 0, count: keptCount * dimensions)
        var arenaIDs = [[UInt8]](repeating: [], count: keptCount)
        var freeSlots = Array((0..<keptCount).reversed())
        // The arena slots given to this block's candidates, in slot order: their ids are
        // copied in one walk of the block's ids once its bounds are computed.
        var idsWanted: [(slot: Int32, arenaSlot: Int)] = []
        func keep(_ c: NearestSelection.Candidate, _ view: VectorBlock.View) {
            if kept.count >= keptCount {
                guard let worst = kept.max, c < worst else { return }
                _ = kept.replaceMax(with: c)
                if let freed = copySlot.removeValue(forKey: Self.slotKey(worst)) { freeSlots.append(freed) }
            } else {
                kept.insert(c)
            }
            guard let slot = freeSlots.popLast() else { return }
            // Copied as bytes: a stored vector need not be aligned.
            arena.withUnsafeMutableBytes {
                ($0.baseAddress.unsafelyUnwrapped + slot * dimensions * 4).copyMemory(
                    from: view.vector(Int(c.slot)), byteCount: dimensions * 4)
            }
            idsWanted.append((c.slot, slot))
            copySlot[Self.slotKey(c)] = slot
        }
        func copy(_ c: NearestSelection.Candidate) -> Int? { copySlot[Self.slotKey(c)] }
        // Blocks are derived data read whole: see KeyValueReader.scanWithoutChecksums(_:order:).
        for range in ranges ?? [index.blocks] {
            let cursor = try reader.scanWithoutChecksums(range, order: .forward)
            while try cursor.step({ key, value in
                let ordinal = Int32(truncatingIfNeeded: keys.count)
                let view: VectorBlock.View
                do {
                    view = try VectorBlock.View(value, dimensions: dimensions)
                } catch let error as KVDocsError {
                    throw KVDocsError(.corruption, "\(name): \(error.message)", key: Array(key))
                }
                keys.append(Array(key))
                let coded = view.storage != .float32
                if coded, view.storage != index.storage {
                    throw KVDocsError(
                        .corruption,
                        "\(name): a block of \(view.storage.rawValue) codes in an index of \(index.storage.rawValue) ones",
                        key: Array(key))
                }
                for slot in 0..<view.count {
                    let lower =
                        !coded
                        ? kernel.lowerBound(view.vector(slot), norm: view.norm(slot))
                        : rescore ? kernel.codedEstimate(view, slot) : kernel.codedLowerBound(view, slot)
                    let c = NearestSelection.Candidate(lower: lower, block: ordinal, slot: Int32(slot))
                    candidates.append(c)
                    keep(c, view)
                }
                if !idsWanted.isEmpty {
                    // Only the copies still held (a later candidate of the block may have
                    // taken an earlier one's slot).
                    var w = 0
                    try view.forEachID { s, id in
                        while w < idsWanted.count, Int(idsWanted[w].slot) == s {
                            let (slot, arenaSlot) = idsWanted[w]
                            let c = NearestSelection.Candidate(lower: 0, block: ordinal, slot: slot)
                            if copySlot[Self.slotKey(c)] == arenaSlot {
                                arenaIDs[arenaSlot].replaceSubrange(arenaIDs[arenaSlot].indices, with: id)
                            }
                            w += 1
                        }
                        return w < idsWanted.count
                    }
                    idsWanted.removeAll(keepingCapacity: true)
                }
                scanned += view.count
            }) {}
        }
        blocksRead = keys.count
        vectorsScanned = scanned
        // The blocks read again for exact distances and ids, by ordinal: read a chunk of
        // candidates at a time (one request where reads are round trips), at most 256 kept.
        var cached: [Int32: [UInt8]] = [:]
        func load(_ chunk: [NearestSelection.Candidate]) throws {
            var wanted: [Int32] = []
            for c in chunk where copy(c) == nil && cached[c.block] == nil && !wanted.contains(c.block) {
                wanted.append(c.block)
            }
            guard !wanted.isEmpty else { return }
            if cached.count + wanted.count > 256 { cached.removeAll(keepingCapacity: true) }
            // Read as the scan read them, without LevelDB's checksums (a get would verify the
            // CRC of the whole block again).
            let values =
                reader.readsAreRoundTrips
                ? try reader.values(forKeys: wanted.map { keys[Int($0)] })
                : try wanted.map { ordinal in
                    let key = keys[Int(ordinal)]
                    return try reader.scanWithoutChecksums(KeyRange(from: key, through: key), order: .forward).next {
                        _, value in Array(value)
                    }
                }
            for (ordinal, value) in zip(wanted, values) {
                if let value { cached[ordinal] = value }
            }
        }
        func withBlock<R>(_ c: NearestSelection.Candidate, _ body: (VectorBlock.View) throws -> R) throws -> R? {
            if cached[c.block] == nil { try load([c]) }
            guard let bytes = cached[c.block] else { return nil }
            return try bytes.withUnsafeBytes { raw in
                do {
                    let view = try VectorBlock.View(raw, dimensions: dimensions)
                    guard Int(c.slot) < view.count else { return nil }
                    return try body(view)
                } catch let error as KVDocsError {
                    throw KVDocsError(.corruption, "\(name): \(error.message)", key: keys[Int(c.block)])
                }
            }
        }
        if rescore {
            let exact = kept.unordered.compactMap { c -> NearestSelection.Result? in
                guard let slot = copy(c) else { return nil }
                let score = arena.withUnsafeBytes {
                    kernel.exactScore($0.baseAddress.unsafelyUnwrapped + slot * dimensions * 4)
                }
                return NearestSelection.Result(score: score, id: arenaIDs[slot])
            }
            exactComputed = exact.count
            return NearestSelection.top(exact, k: k)
        }
        var selection = NearestSelection()
        let results = try selection.select(
            candidates, k: k,
            accept: accept.map { accept in
                { c in
                    if let slot = copy(c) { return try accept(arenaIDs[slot]) }
                    guard let id = try withBlock(c, { try $0.id(Int(c.slot)) }) else { return false }
                    return try accept(id)
                }
            },
            exact: { c in
                if let slot = copy(c) {
                    let score = arena.withUnsafeBytes {
                        kernel.exactScore($0.baseAddress.unsafelyUnwrapped + slot * dimensions * 4)
                    }
                    return NearestSelection.Result(score: score, id: arenaIDs[slot])
                }
                return try withBlock(c) { view in
                    NearestSelection.Result(
                        score: kernel.exactScore(view.vector(Int(c.slot))), id: try view.id(Int(c.slot)))
                }
            },
            prepare: { chunk in
                // Over a network, a chunk's blocks and documents in one request each; locally
                // a block is read when a candidate needs it (most chunks are cut short).
                guard reader.readsAreRoundTrips else { return }
                try load(chunk)
                guard let prefetch, accept != nil else { return }
                try prefetch(
                    chunk.compactMap { c in try copy(c).map { arenaIDs[$0] } ?? withBlock(c) { try $0.id(Int(c.slot)) }
                    }
                )
            })
        exactComputed = selection.exactComputed
        return results
    }

    /// How many candidates of quantized lists a search without a filter rescores with their
    /// float32 values, for k results.
    package static func rescored(k: Int) -> Int { max(4 * k, k + 64) }

    /// Lists read by the last approximate search (`nil`: it scanned every vector).
    package private(set) var listsRead: Int?

    /// The k nearest vectors that `accept` takes, approximately: those of the `probes` lists
    /// whose centroids are nearest the query, nearest first, ties by id, with exact
    /// distances. With a filter, a search that finds fewer than k reads 4× as many lists, up
    /// to every list (every vector is in one), so that it returns k whenever k match. An index without lists
    /// (fewer than ``VectorIndex/trainingThreshold`` vectors when last trained) is scanned
    /// whole: exact.
    /// - Throws: `.corruption` for damaged centroids or blocks, naming the key; what
    ///   `accept` throws.
    ///   - centroids: the index's, read through `reader` (``VectorIndex/centroids(_:)``).
    package mutating func approximate(
        k: Int, probes: Int, centroids: VectorCentroids?, accept: (([UInt8]) throws -> Bool)? = nil,
        prefetch: (([[UInt8]]) throws -> Void)? = nil, reader: some KeyValueReader
    ) throws -> [NearestSelection.Result] {
        listsRead = nil
        guard k > 0, let centroids else {
            return try scan(k: k, accept: accept, prefetch: prefetch, reader: reader)
        }
        // Every vector is in one list, so reading every list reads every vector (through the
        // lists, so that quantized ones are read as any probe reads them).
        var probes = min(max(1, probes), centroids.count)
        while true {
            let lists = centroids.nearestLists(kernel, probes: probes)
            let results = try scan(
                k: k, accept: accept, prefetch: prefetch, ranges: lists.map { .prefix(index.listPrefix($0)) },
                reader: reader)
            listsRead = lists.count
            if results.count >= k || accept == nil || probes == centroids.count { return results }
            probes = min(probes * 4, centroids.count)
        }
    }

    /// Bytewise order of an id and one read in place.
    static func compare(_ a: [UInt8], _ b: UnsafeRawBufferPointer) -> Int {
        a.withUnsafeBufferPointer { a in
            compareBytes(
                a, UnsafeBufferPointer(start: b.baseAddress?.assumingMemoryBound(to: UInt8.self), count: b.count))
        }
    }

    /// A candidate's block and slot as one key.
    static func slotKey(_ c: NearestSelection.Candidate) -> Int64 { Int64(c.block) << 32 | Int64(c.slot) }

    /// The k nearest of the vectors of `ids` (tuple-encoded, any order; ids without a vector
    /// are skipped), nearest first, ties by id: each looked up in its block, for a candidate
    /// set much smaller than the index.
    /// - Throws: `.corruption` for a damaged block, naming its key.
    package mutating func lookUp(_ ids: [[UInt8]], k: Int, reader: some KeyValueReader) throws
        -> [NearestSelection.Result]
    {
        blocksRead = 0
        vectorsScanned = 0
        exactComputed = 0
        guard k > 0 else { return [] }
        let sorted = ids.sorted { compareBytes($0, $1) < 0 }
        var results: [NearestSelection.Result] = []
        let kernel = self.kernel
        let dimensions = index.dimensions
        var i = 0
        var lastBlock: [UInt8]?
        while i < sorted.count {
            // The block holding sorted[i], if any, read in place; its ids walked beside the
            // sorted ones (both ascending), each match's distance computed in place.
            let range = KeyRange(lower: .included(index.blockPrefix), upper: .included(index.blockKey(sorted[i])))
            let cursor = try reader.scanWithoutChecksums(range, order: .reverse)
            let start = i
            let key = try cursor.next { key, value -> [UInt8] in
                let key = Array(key)
                let view: VectorBlock.View
                do {
                    view = try VectorBlock.View(value, dimensions: dimensions)
                } catch let error as KVDocsError {
                    throw KVDocsError(.corruption, "\(index.name): \(error.message)", key: key)
                }
                try view.forEachID { slot, id in
                    while i < sorted.count, Self.compare(sorted[i], id) < 0 { i += 1 }
                    guard i < sorted.count else { return false }
                    if Self.compare(sorted[i], id) == 0 {
                        results.append(
                            NearestSelection.Result(score: kernel.exactScore(view.vector(slot)), id: sorted[i]))
                        i += 1
                    }
                    return true
                }
                return key
            }
            guard let key else {
                i += 1
                continue
            }  // below every block: no vector
            // An id past the block's last one and before the next block's first has no
            // vector: the block found again, it is skipped.
            if i == start, key == lastBlock { i += 1 }
            if key != lastBlock { blocksRead += 1 }
            lastBlock = key
        }
        exactComputed = results.count
        vectorsScanned = results.count
        return NearestSelection.top(results, k: k)
    }
}
