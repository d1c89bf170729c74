import Foundation
import KVDocs

/// A LevelDB database behind the storage seam whose commits inside ``transact(attempts:_:)``
/// give way to "other writers" on a plan, as the commits of a store that several processes
/// write do: a conflicting commit writes nothing and throws a retryable `.conflict`. Between
/// attempts, `between` may write to the database as another process would (through a
/// store of its own), so that the attempt run again meets a changed state.
package final class ConflictInjectingStore: KeyValueStore, @unchecked Sendable {
    // @unchecked Sendable: the mutable state is in `state`, a lock.
    package let database: LevelDB
    private struct State {
        var random: SplitMix64
        var plan: Plan
        /// Conflicts left for the transaction running now.
        var left = 0
        var inTransaction = false
        var attempts = 0
        var conflicts = 0
        var transactions = 0
    }
    /// How many times each transaction's commit conflicts.
    package enum Plan {
        /// A random number from 0 through this.
        case random(maximum: Int)
        /// This many times.
        case exactly(Int)
        /// Every time.
        case always
    }
    private let state: TestLock<State>
    /// Runs after each conflict, outside the transaction, before the next attempt.
    package var between: (@Sendable (_ conflict: Int) throws -> Void)?
    /// The most operations a batch may have, as an etcd transaction's; larger batches are
    /// refused with `.limitExceeded`, writing nothing.
    package var maximumBatch: Int?
    /// The bound the store advertises (``maximumBatch``), as ``EtcdKeyValueStore`` does its own.
    package var maximumBatchCount: Int? { maximumBatch }

    package init(_ database: LevelDB, seed: UInt64 = 1, plan: Plan) {
        self.database = database
        state = TestLock(State(random: SplitMix64(seed: seed), plan: plan))
    }

    package var attempts: Int { state.withLock { $0.attempts } }
    package var conflicts: Int { state.withLock { $0.conflicts } }
    package var transactions: Int { state.withLock { $0.transactions } }

    package var name: String { database.name }
    package func value(forKey key: [UInt8]) throws -> [UInt8]? { try database.value(forKey: key) }
    package func scan(_ range: KeyRange, order: ScanOrder) throws -> any KeyValueCursor {
        try database.scan(range, order: order)
    }
    package func snapshotReader() throws -> any SnapshotReader { try database.snapshotReader() }
    package func withWriterLock<R>(_ body: () throws -> R) rethrows -> R { try database.withWriterLock(body) }
    package func withWriteTransaction<R>(_ body: () throws -> R) throws -> R { try database.withWriteTransaction(body) }

    package func write(_ batch: WriteBatch, sync: Bool) throws {
        if let maximumBatch, batch.count > maximumBatch {
            throw KVDocsError(
                .limitExceeded, "the write needs \(batch.count) operations; the store allows \(maximumBatch)")
        }
        let conflict = state.withLock { s -> Bool in
            guard s.inTransaction, s.left > 0 else { return false }
            s.left -= 1
            s.conflicts += 1
            return true
        }
        if conflict { throw KVDocsError.writeConflict("injected: another writer changed what this write read") }
        try database.write(batch, sync: sync)
    }

    package func transact<R>(attempts: Int, _ body: () throws -> R) throws -> R {
        state.withLock { s in
            s.transactions += 1
            switch s.plan {
            case .random(let maximum): s.left = Int(s.random.next() % UInt64(maximum + 1))
            case .exactly(let n): s.left = n
            case .always: s.left = .max
            }
        }
        defer { state.withLock { $0.left = 0 } }
        var conflictsSeen = 0
        return try ConflictRetry(initialDelayMicroseconds: 0, maximumDelayMicroseconds: 0).run(attempts: attempts) {
            if conflictsSeen > 0, let between { try between(conflictsSeen) }
            do {
                return try database.withWriteTransaction {
                    state.withLock {
                        $0.inTransaction = true
                        $0.attempts += 1
                    }
                    defer { state.withLock { $0.inTransaction = false } }
                    return try body()
                }
            } catch let error as KVDocsError where error.isRetryable {
                conflictsSeen += 1
                throw error
            }
        }
    }
}
