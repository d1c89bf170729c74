import Foundation
import KVKeys
import KVStorage
import KVSupport

/// Everything in the process waiting for the writes under one store root of one database:
/// change streams (``DocumentStore/changeStream()``) and observations
/// (``DocumentObservation``). Shared by every ``DocumentStore`` open on that database and root, so
/// a write through any of them reaches all of their observers.
package final class ChangeHub: Sendable {
    private struct State {
        var streams: [UUID: AsyncStream<DocumentChange>.Continuation] = [:]
        var observers: [UUID: ObservationRegistration] = [:]
        /// The database closed: streams end as they are added, observers wake.
        var closed = false
        /// Over a store that other processes write, the last sequence delivered: a change
        /// reaches the hub both from the write that made it and from the store's watch, and
        /// is delivered once. `nil`: every change published is delivered.
        var delivered: Int64?
    }
    private let state = Locked(State())
    /// Held while delivering, so that deliveries from writers and from the watch keep order;
    /// it counts the deliveries (a lock of an empty value shares its address with the mutex's
    /// pointer, which ThreadSanitizer reports as a race).
    private let delivering = Locked(0)

    /// From now on, delivers only changes after `sequence`, each once (see `State.delivered`).
    func deliverOnlyAfter(_ sequence: Int64) {
        state.withLock { s in if s.delivered == nil { s.delivered = sequence } }
    }

    /// The last sequence delivered, when the hub delivers each change once.
    var deliveredSequence: Int64? { state.withLock { $0.delivered } }

    /// The hub of `root` on `database`, made on first use (``ChangeHubRegistry``).
    static func of(_ database: LevelDB, root: Subspace) -> ChangeHub {
        ChangeHubRegistry.shared.hub(of: database, root: root)
    }

    /// The hub of `root` on `storage`: its database's when it is one (or a layered store's
    /// user database), else one shared by the stores opened on the same store object.
    static func of(_ storage: any KeyValueStore, database: LevelDB?, root: Subspace) -> ChangeHub {
        if let database { return of(database, root: root) }
        return ChangeHubRegistry.shared.hub(of: storage as AnyObject, root: root)
    }

    func add(stream continuation: AsyncStream<DocumentChange>.Continuation, id: UUID) {
        let closed = state.withLock { s in
            if !s.closed { s.streams[id] = continuation }
            return s.closed
        }
        if closed { continuation.finish() }
    }

    func removeStream(_ id: UUID) {
        state.withLock { _ = $0.streams.removeValue(forKey: id) }
    }

    func add(_ registration: ObservationRegistration, id: UUID) {
        let closed = state.withLock { s in
            s.observers[id] = registration
            return s.closed
        }
        if closed { registration.notify() }
    }

    func removeObserver(_ id: UUID) {
        _ = state.withLock { $0.observers.removeValue(forKey: id) }
    }

    /// Observations registered and not yet ended (for tests: ending one must release it).
    package var observerCount: Int { state.withLock { $0.observers.count } }

    /// The registrations of the observations not yet ended (for tests).
    package var registrations: [ObservationRegistration] { state.withLock { $0.observers.values.map { $0 } } }

    /// Delivers committed changes, in order, to the streams, and wakes the observers of
    /// the collections written (only those).
    /// REQUIRES: called after the write is committed, under the exclusive writer lock (so
    /// deliveries keep the order of the writes).
    func publish(_ changes: [DocumentChange]) {
        delivering.withLock { deliveries in
            deliveries &+= 1
            let (fresh, streams) = state.withLock {
                s -> ([DocumentChange], [AsyncStream<DocumentChange>.Continuation]) in
                var fresh = changes
                if let delivered = s.delivered {
                    fresh = changes.filter { $0.sequence > delivered }
                    s.delivered = fresh.map(\.sequence).max().map { max($0, delivered) } ?? delivered
                }
                return (fresh, s.streams.values.map { $0 })
            }
            for stream in streams { for change in fresh { stream.yield(change) } }
            wake(Set(fresh.map { Array($0.collection.utf8) }))
        }
    }

    /// Whether any change stream is open.
    var hasStreams: Bool { state.withLock { !$0.streams.isEmpty } }

    /// Wakes the observers of `collections` (UTF-8 names), and those of every write.
    func wake(_ collections: Set<[UInt8]>) {
        guard !collections.isEmpty else { return }
        let observers = state.withLock { $0.observers.values.map { $0 } }
        for observer in observers { observer.written(collections) }
    }

    /// Ends every change stream and wakes every observer, whose next read then fails with
    /// `.closed` and ends its sequence with that error.
    func databaseDidClose() {
        let (streams, observers) = state.withLock { s in
            s.closed = true
            defer { s.streams.removeAll() }
            return (s.streams.values.map { $0 }, s.observers.values.map { $0 })
        }
        for stream in streams { stream.finish() }
        for observer in observers { observer.notify() }
    }

    /// Wakes every observer: a change that may touch any collection (a schema applied, a
    /// base replaced, a migration) was committed.
    func publishToAll() {
        let observers = state.withLock { $0.observers.values.map { $0 } }
        for observer in observers { observer.notify() }
    }
}

/// The collections whose writes wake an observation.
enum ObservedRegion: Sendable {
    /// Every write.
    case everyWrite
    /// The collections named (as UTF-8 bytes, so names that differ only in Unicode
    /// normalisation stay distinct).
    case collections(Set<[UInt8]>)
    /// The collections the last evaluation read (``ReadTransaction/collectionsRead``),
    /// tracked anew on every evaluation.
    case tracked
}

/// One observation's registration with the hub: whether a write it cares about was
/// committed since it last read, and the task waiting for one.
package final class ObservationRegistration: Sendable {
    /// Whether the collections that matter are those the last evaluation read.
    let tracking: Bool

    private struct State {
        /// The collections whose writes matter (UTF-8), or `nil` for every write.
        var collections: Set<[UInt8]>?
        var changed = false
        var cancelled = false
        var waiter: CheckedContinuation<Void, Never>?
        /// While a tracking evaluation runs: every collection written since it started,
        /// checked against what it turns out to have read when it ends.
        var evaluating = false
        var writtenDuringEvaluation: Set<[UInt8]> = []
        /// Writes that woke this observation, and values it computed (for tests).
        var wakes = 0
        var evaluations = 0
    }
    private let state: Locked<State>

    init(region: ObservedRegion) {
        switch region {
        case .everyWrite:
            tracking = false
            state = Locked(State(collections: nil))
        case .collections(let names):
            tracking = false
            state = Locked(State(collections: names))
        case .tracked:
            // Nothing read yet: the first evaluation runs without waiting for a write.
            tracking = true
            state = Locked(State(collections: []))
        }
    }

    /// The collections whose writes wake this observation now (`nil`: every write).
    package var collections: Set<[UInt8]>? { state.withLock { $0.collections } }

    /// A commit wrote `written`: records a relevant one, and resumes the waiting task.
    func written(_ written: Set<[UInt8]>) {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            if s.evaluating { s.writtenDuringEvaluation.formUnion(written) }
            guard s.collections.map({ !$0.isDisjoint(with: written) }) ?? true else { return nil }
            s.changed = true
            s.wakes += 1
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume()
    }

    /// Ends a tracking evaluation that read `read`: its writes matter from now on. A commit
    /// to one of them after the evaluation's snapshot was taken (while it ran, when the
    /// collections it would read were not known yet) counts as a relevant commit, so it is
    /// not missed.
    func track(_ read: Set<[UInt8]>) {
        state.withLock { s in
            s.collections = read
            if s.evaluating && !s.changed && !s.writtenDuringEvaluation.isDisjoint(with: read) {
                s.changed = true
                s.wakes += 1
            }
            s.evaluating = false
            s.writtenDuringEvaluation = []
        }
    }

    /// Records a relevant commit, and resumes the waiting task.
    func notify() {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            s.changed = true
            s.wakes += 1
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume()
    }

    /// Ends the wait for good (the observing task was cancelled).
    func cancel() {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            s.cancelled = true
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume()
    }

    /// Forgets the commits seen so far: called just before a new snapshot is taken, so a
    /// commit after this point is either in that snapshot or wakes the next wait.
    func startEvaluation() {
        state.withLock { s in
            s.changed = false
            s.evaluations += 1
            if tracking {
                s.evaluating = true
                s.writtenDuringEvaluation = []
            }
        }
    }

    /// Returns when a relevant commit happened since ``startEvaluation()`` (at once if one
    /// did), or when the task is cancelled; `false` means cancelled.
    func waitForChange() async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { s -> Bool in
                    if s.changed || s.cancelled { return true }
                    s.waiter = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            cancel()
        }
        return !state.withLock { $0.cancelled }
    }

    /// How many commits woke this observation, and how many values it computed.
    package var counts: (wakes: Int, evaluations: Int) { state.withLock { ($0.wakes, $0.evaluations) } }
}
