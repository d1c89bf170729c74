import HeapModule
import KVSupport

/// The exact top k of a scan's candidates: each candidate comes with a lower bound of its
/// score (``VectorKernel/lowerBound(_:norm:)``), and exact scores are computed in order of
/// those bounds until no candidate left could enter the top k.
///
/// **Exactness.** Candidates are taken by ascending lower bound. Once k results are held and
/// the next candidate's lower bound exceeds the k-th exact score, every candidate left has an
/// exact score above it, so the held results are the k smallest exact scores; ties of exact
/// scores go to the smaller id (bytewise, which is the ids' tuple order).
package struct NearestSelection {
    /// A candidate of a scan: where its vector is (a block's ordinal in the scan, a slot in
    /// it) and the lower bound of its score.
    package struct Candidate: Comparable {
        package var lower: Float
        package var block: Int32
        package var slot: Int32

        package init(lower: Float, block: Int32, slot: Int32) {
            self.lower = lower
            self.block = block
            self.slot = slot
        }

        package static func < (a: Candidate, b: Candidate) -> Bool {
            if a.lower != b.lower { return a.lower < b.lower }
            if a.block != b.block { return a.block < b.block }
            return a.slot < b.slot
        }
    }

    /// A result: the exact score and the id (tuple-encoded) of its document.
    package struct Result: Equatable {
        package let score: Double
        package let id: [UInt8]

        package init(score: Double, id: [UInt8]) {
            self.score = score
            self.id = id
        }

        /// Nearer first; ties by id.
        package static func precedes(_ a: Result, _ b: Result) -> Bool {
            if a.score != b.score { return a.score < b.score }
            return compareBytes(a.id, b.id) < 0
        }
    }

    /// How many exact scores the last ``select(_:k:accept:exact:)`` computed.
    package private(set) var exactComputed = 0

    package init() {}

    /// The k nearest of `candidates` that `accept` takes, nearest first.
    /// - Parameters:
    ///   - candidates: every candidate of the scan.
    ///   - k: how many results (at most).
    ///   - accept: whether a candidate is a result at all (a filter checked on its
    ///     document), asked in order of lower bounds; `nil` takes every one.
    ///   - exact: the exact score and id of a candidate (`nil`: it vanished).
    ///   - prepare: called with each chunk of candidates, in order, before any of them is
    ///     taken (to read their blocks and documents in one request); the chunks grow from
    ///     k + 16 candidates, doubling, to at most 1024.
    package mutating func select(
        _ candidates: [Candidate], k: Int,
        accept: ((Candidate) throws -> Bool)?,
        exact: (Candidate) throws -> Result?,
        prepare: (([Candidate]) throws -> Void)? = nil
    ) throws -> [Result] {
        exactComputed = 0
        guard k > 0, !candidates.isEmpty else { return [] }
        var heap = Heap(candidates)
        var best: [Result] = []  // sorted, nearest first, at most k
        best.reserveCapacity(k + 1)
        var chunk: [Candidate] = []
        var position = 0
        var chunkSize = k + 16
        while true {
            if position == chunk.count {
                chunk.removeAll(keepingCapacity: true)
                while chunk.count < chunkSize, let c = heap.popMin() { chunk.append(c) }
                position = 0
                chunkSize = min(1024, chunkSize * 2)
                if chunk.isEmpty { break }
                try prepare?(chunk)
            }
            let next = chunk[position]
            position += 1
            if best.count == k, let worst = best.last, Double(next.lower) > worst.score { break }
            if let accept, try !accept(next) { continue }
            guard let result = try exact(next) else { continue }
            exactComputed += 1
            if best.count == k, let worst = best.last, !Result.precedes(result, worst) { continue }
            var i = best.count
            while i > 0 && Result.precedes(result, best[i - 1]) { i -= 1 }
            best.insert(result, at: i)
            if best.count > k { best.removeLast() }
        }
        return best
    }

    /// The k nearest of `results` (exact already), nearest first.
    package static func top(_ results: [Result], k: Int) -> [Result] {
        guard k > 0 else { return [] }
        if results.count <= k { return results.sorted(by: Result.precedes) }
        var heap = Heap<RankedResult>()
        for r in results {
            let ranked = RankedResult(result: r)
            if heap.count < k {
                heap.insert(ranked)
            } else if let max = heap.max, ranked < max {
                _ = heap.replaceMax(with: ranked)
            }
        }
        return heap.unordered.map(\.result).sorted(by: Result.precedes)
    }

    struct RankedResult: Comparable {
        let result: Result
        static func < (a: RankedResult, b: RankedResult) -> Bool { Result.precedes(a.result, b.result) }
        static func == (a: RankedResult, b: RankedResult) -> Bool { a.result == b.result }
    }
}
