import Dispatch

/// The threads that run a document store's async calls, so that an `await` never blocks
/// its caller's thread (the main thread, an actor's executor, the cooperative pool) on
/// LevelDB.
///
/// Reads run on one concurrent dispatch queue shared by every store; each store's writes
/// run in order on the store's own serial queue, so writers waiting for the database's
/// writer lock hold one thread per store, not one per task.
///
/// A task cancelled before its work starts gets `CancellationError` and nothing is read
/// or written; work that has started runs to its end (a LevelDB call cannot be
/// interrupted), and its result is returned.
final class StoreExecutor: Sendable {
    private static let marker = DispatchSpecificKey<Bool>()
    private static let reads: DispatchQueue = {
        let queue = DispatchQueue(label: "KVDocs.reads", attributes: .concurrent)
        queue.setSpecific(key: marker, value: true)
        return queue
    }()
    private let writes: DispatchQueue

    init(name: String) {
        writes = DispatchQueue(label: "KVDocs.writes")
        writes.setSpecific(key: Self.marker, value: true)
    }

    /// Whether the calling code runs on a store executor's queue.
    static var isCurrent: Bool { DispatchQueue.getSpecific(key: marker) == true }

    /// Runs `work` on the read queue.
    func read<R: Sendable>(_ work: @escaping @Sendable () throws -> R) async throws -> R {
        try await run(on: Self.reads, work)
    }

    /// Runs `work` on the store's write queue, after the writes submitted before it.
    func write<R: Sendable>(_ work: @escaping @Sendable () throws -> R) async throws -> R {
        try await run(on: writes, work)
    }

    private func run<R: Sendable>(on queue: DispatchQueue, _ work: @escaping @Sendable () throws -> R) async throws -> R {
        try Task.checkCancellation()
        let cancelled = Locked(false)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<R, any Error>) in
                queue.async {
                    if cancelled.withLock({ $0 }) {
                        continuation.resume(throwing: CancellationError())
                    } else {
                        continuation.resume(with: Result { try work() })
                    }
                }
            }
        } onCancel: {
            cancelled.withLock { $0 = true }
        }
    }
}
