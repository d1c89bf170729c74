import Synchronization

/// How many writes a database has started and finished through this handle, so that a
/// reader can tell, without reading anything, that the data has not changed since a moment
/// it knows the state of (a document store's catalog, say).
///
/// A LevelDB database is written by one process at a time (its lock file keeps others out)
/// and, in that process, through one ``LevelDB`` handle: every write passes here. A reader
/// takes ``quiescentCount`` before it reads and ``startedCount`` after: when the count was
/// there (no write in progress) and no write started since, what it read is the state after
/// exactly that many writes. A write that starts or ends in between makes the counts differ,
/// and the reader then reads what it wanted to skip.
package final class WriteCounter: Sendable {
    private let started = Atomic<UInt64>(0)
    private let finished = Atomic<UInt64>(0)

    package init() {}

    /// Counts a write as started: call before it reaches LevelDB.
    package func begin() { started.add(1, ordering: .sequentiallyConsistent) }

    /// Counts a write as finished (committed or failed): call after LevelDB returns.
    package func end() { finished.add(1, ordering: .sequentiallyConsistent) }

    /// The number of writes finished, when none is in progress; `nil` while one is.
    package var quiescentCount: UInt64? {
        let done = finished.load(ordering: .sequentiallyConsistent)
        return started.load(ordering: .sequentiallyConsistent) == done ? done : nil
    }

    /// The number of writes started so far.
    package var startedCount: UInt64 { started.load(ordering: .sequentiallyConsistent) }

    /// Whether the state a reader saw between `quiescent` (its ``quiescentCount``) and now is
    /// the state after exactly `quiescent` writes: no write was in progress then, and none has
    /// started since.
    package func unchanged(since quiescent: UInt64?) -> UInt64? {
        guard let quiescent, startedCount == quiescent else { return nil }
        return quiescent
    }
}
