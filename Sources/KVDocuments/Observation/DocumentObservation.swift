import Foundation

/// The results of a query, kept current: an `AsyncSequence` that yields the results now,
/// then new results after each committed write that could change them.
///
/// <!-- doc-code: preamble=examples -->
/// ```swift
/// for try await departures in store.observe(.find("departures", DocumentQuery().where("station", .equal("PERTH")).limit(10))) {
///     show(departures)   // the current results first, then after each relevant write
/// }
/// ```
///
/// Make one with ``DocumentStore/observe(_:)`` for any request (see
/// ``DocumentRequest``), ``DocumentStore/observe(tracking:)`` for any
/// reads across collections, or ``DocumentStore/observe(collections:_:)`` to name the
/// collections whose writes wake it.
///
/// **Invariants.**
/// - The observed collections are those the last value's reads touched (tracked anew for
///   every value), or those named with `observe(collections:_:)`.
/// - The first value is the results when iteration starts. After it, a value is computed
///   only when a write to one of the observed collections has been committed (through any
///   ``DocumentStore`` open on the same database and root), or the schema changed, or a
///   layered store's base was replaced. A write to other collections wakes nobody. Raw
///   writes through ``LevelDB`` under the store's keys bypass the store, and wake nobody.
/// - Every value is computed from one snapshot (one ``ReadTransaction``).
/// - Two values in a row are never equal: results that a write left unchanged are not
///   yielded again.
/// - Bursts are coalesced. A consumer slow to ask for the next value gets the results as
///   of its request, never a backlog of intermediate states.
/// - Values are computed on the store's read executor, never on the consumer's thread.
/// - Ending the loop (`break`, `return`, a thrown error) or cancelling the task ends the
///   observation and releases its registration and snapshot; the sequence then ends (`nil`).
/// - A read that fails (the collection was removed from the schema, the database was
///   closed) ends the sequence with that error; closing the database wakes every
///   observation for that. A read that fails while an index of an observed collection is
///   being built (a search during a reindex) is not an end: the observation waits for the
///   next write or schema change, as the end of the build is one.
///
/// Each iteration is an observation of its own: iterating the sequence twice observes
/// twice.
public struct DocumentObservation<Element: Sendable>: AsyncSequence, Sendable {
    /// Reads that fail end the sequence with their error.
    public typealias Failure = any Error

    let store: DocumentStore
    /// The collections whose writes can change the value.
    let region: ObservedRegion
    /// Reads the value from one transaction, with what two values are compared by (a
    /// decoded `T` need not be `Equatable`; its documents are).
    let fetch: @Sendable (ReadTransaction) throws -> (value: Element, identity: any Equatable & Sendable)

    init(
        store: DocumentStore, region: ObservedRegion,
        fetch: @escaping @Sendable (ReadTransaction) throws -> (value: Element, identity: any Equatable & Sendable)
    ) {
        self.store = store
        self.region = region
        self.fetch = fetch
    }

    /// Starts observing: from this moment no relevant write is missed.
    public func makeAsyncIterator() -> Iterator {
        Iterator(cursor: ObservationCursor(self))
    }

    /// Yields the observation's values; see ``DocumentObservation``.
    public struct Iterator: AsyncIteratorProtocol {
        package let cursor: ObservationCursor<Element>

        /// The next value that differs from the last one, or `nil` once the task is cancelled.
        public mutating func next() async throws -> Element? {
            try await cursor.next(isolation: nil)
        }

        /// The next value, awaited in the caller's isolation (the values are computed on
        /// the store's executor either way).
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(any Error) -> Element? {
            try await cursor.next(isolation: actor)
        }
    }
}

/// The state of one iteration of an ``DocumentObservation``: its registration with the store's
/// hub (removed when the iteration ends or the iterator is dropped) and the last value.
package final class ObservationCursor<Element: Sendable> {
    private let observation: DocumentObservation<Element>
    package let registration: ObservationRegistration
    private let id = UUID()
    private var last: (any Equatable & Sendable)?
    private var started = false
    private var ended = false

    init(_ observation: DocumentObservation<Element>) {
        self.observation = observation
        registration = ObservationRegistration(region: observation.region)
        observation.store.hub.add(registration, id: id)
    }

    deinit { end() }

    /// Unregisters; the iteration yields nothing more.
    private func end() {
        guard !ended else { return }
        ended = true
        registration.cancel()
        observation.store.hub.removeObserver(id)
    }

    func next(isolation actor: isolated (any Actor)?) async throws -> Element? {
        while !ended {
            if started {
                guard await registration.waitForChange() else {
                    end()
                    return nil
                }
            }
            started = true
            if Task.isCancelled {
                end()
                return nil
            }
            let (store, registration, fetch) = (observation.store, registration, observation.fetch)
            let fetched: (value: Element, identity: any Equatable & Sendable)
            do {
                let outcome = try await store.executor.read { () throws -> Evaluation in
                    // Before the snapshot: a commit after this point is in it or wakes the next wait.
                    registration.startEvaluation()
                    return try store.read { tx in
                        // What this run read is what the next wait watches (tracked anew
                        // on every run, so a branch that reads another collection is seen).
                        defer { if registration.tracking { registration.track(tx.collectionsRead) } }
                        do {
                            return .value(try fetch(tx))
                        } catch {
                            let observed = registration.tracking ? tx.collectionsRead : registration.collections
                            if Self.isBuilding(tx.catalog, observed) { return .indexBeingBuilt }
                            throw error
                        }
                    }
                }
                guard case .value(let value) = outcome else { continue }
                fetched = value
            } catch is CancellationError {
                end()
                return nil
            } catch {
                end()
                throw error
            }
            if let last, Self.equal(last, fetched.identity) { continue }
            last = fetched.identity
            return fetched.value
        }
        return nil
    }

    /// What one evaluation gave.
    private enum Evaluation: Sendable {
        case value((value: Element, identity: any Equatable & Sendable))
        /// The read failed while an index of an observed collection was not ready.
        case indexBeingBuilt
    }

    /// Whether an index of `collections` (all when `nil`) is being built in `catalog`.
    private static func isBuilding(_ catalog: CompiledCatalog, _ collections: Set<[UInt8]>?) -> Bool {
        func observed(_ collection: String) -> Bool { collections.map { $0.contains(Array(collection.utf8)) } ?? true }
        return catalog.unready.contains { observed($0.identity.collection) }
            || catalog.states.contains { $0.value.phase == .building && observed($0.key.collection) }
    }

    private static func equal(_ a: any Equatable & Sendable, _ b: any Equatable & Sendable) -> Bool {
        func compare<A: Equatable>(_ a: A) -> Bool { (b as? A).map { $0 == a } ?? false }
        return compare(a)
    }
}

// An iteration belongs to the task iterating it.
@available(*, unavailable)
extension ObservationCursor: Sendable {}
