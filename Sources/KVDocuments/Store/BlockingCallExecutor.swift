import Dispatch
import Foundation
import KVSupport

/// The threads that run a document store's async calls, so that an `await` never blocks
/// its caller's thread (the main thread, an actor's executor, the cooperative pool) on
/// LevelDB.
///
/// Reads run on a pool shared by every store, at most ``readWidth`` at a time (more wait
/// their turn, in order, without holding a thread), so a burst of reads or of observers
/// woken by one write never grows the process's threads without bound. Each store's writes
/// run one at a time on the store's own serial queue, so writers waiting for the database's
/// writer lock hold one thread per store, not one per task.
///
/// A task cancelled before its work starts gets `CancellationError` at once, even while
/// the work waits its turn behind other work, and nothing is read or written; work that has
/// started runs to its end (a LevelDB call cannot be interrupted), and its result is
/// returned.
package final class BlockingCallExecutor: Sendable {
    private static let marker = DispatchSpecificKey<Bool>()
    /// The most reads that run at once, process-wide.
    package static let readWidth = max(4, 2 * ProcessInfo.processInfo.activeProcessorCount)
    private static let readQueue: DispatchQueue = {
        let queue = DispatchQueue(label: "KVDocs.reads", attributes: .concurrent)
        queue.setSpecific(key: marker, value: true)
        return queue
    }()
    private static let reads = Throttle(width: readWidth, queue: readQueue)
    private let writes: DispatchQueue

    /// An executor whose write queue is labelled with `name` (the database's path).
    init(name: String) {
        writes = DispatchQueue(label: "KVDocs.writes " + name)
        writes.setSpecific(key: Self.marker, value: true)
    }

    /// Whether the calling code runs on a store executor's queue.
    package static var isCurrent: Bool { DispatchQueue.getSpecific(key: marker) == true }

    /// Reads running or waiting to run (for tests).
    static var pendingReads: (running: Int, waiting: Int) { reads.load }

    /// Runs `work` on the read pool.
    package func read<R: Sendable>(_ work: @escaping @Sendable () throws -> R) async throws -> R {
        try await Self.run({ Self.reads.submit($0) }, work)
    }

    /// Runs `work` on the store's write queue, after the writes submitted before it.
    package func write<R: Sendable>(_ work: @escaping @Sendable () throws -> R) async throws -> R {
        let queue = writes
        return try await Self.run({ queue.async(execute: $0) }, work)
    }

    /// The state of one call: the task's continuation until whichever comes first, the work
    /// starting or the task being cancelled, takes it.
    private struct Call<R: Sendable>: Sendable {
        var continuation: CheckedContinuation<R, any Error>?
        var cancelled = false
        var started = false
    }

    private static func run<R: Sendable>(
        _ submit: (@escaping @Sendable () -> Void) -> Void,
        _ work: @escaping @Sendable () throws -> R
    ) async throws -> R {
        try Task.checkCancellation()
        let call = Locked(Call<R>())
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<R, any Error>) in
                let cancelled = call.withLock { c in
                    if !c.cancelled { c.continuation = continuation }
                    return c.cancelled
                }
                if cancelled {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                submit {
                    // Cancelled while waiting its turn: the task has had its error already.
                    guard
                        call.withLock({ c -> Bool in
                            c.started = c.continuation != nil
                            return c.started
                        })
                    else { return }
                    let result = Result { try work() }
                    let continuation = call.withLock { c in
                        defer { c.continuation = nil }
                        return c.continuation
                    }
                    continuation?.resume(with: result)
                }
            }
        } onCancel: {
            let waiting = call.withLock { c -> CheckedContinuation<R, any Error>? in
                c.cancelled = true
                guard !c.started else { return nil }
                defer { c.continuation = nil }
                return c.continuation
            }
            waiting?.resume(throwing: CancellationError())
        }
    }
}

/// Runs blocks on a concurrent queue, at most `width` at a time, the others waiting in
/// order without holding a thread.
package final class Throttle: Sendable {
    private struct State {
        var running = 0
        var waiting: [@Sendable () -> Void] = []
        var head = 0
    }
    private let width: Int
    private let queue: DispatchQueue
    private let state = Locked(State())

    package init(width: Int, queue: DispatchQueue) {
        self.width = max(1, width)
        self.queue = queue
    }

    /// Work running, and waiting.
    package var load: (running: Int, waiting: Int) { state.withLock { ($0.running, $0.waiting.count - $0.head) } }

    package func submit(_ block: @escaping @Sendable () -> Void) {
        let start = state.withLock { s -> Bool in
            if s.running < width {
                s.running += 1
                return true
            }
            s.waiting.append(block)
            return false
        }
        if start { launch(block) }
    }

    private func launch(_ block: @escaping @Sendable () -> Void) {
        queue.async { [self] in
            block()
            // The next waiting block takes this one's place.
            let next = state.withLock { s -> (@Sendable () -> Void)? in
                guard s.head < s.waiting.count else {
                    s.running -= 1
                    s.waiting.removeAll(keepingCapacity: true)
                    s.head = 0
                    return nil
                }
                let block = s.waiting[s.head]
                s.head += 1
                if s.head > 64, s.head * 2 > s.waiting.count {
                    s.waiting.removeFirst(s.head)
                    s.head = 0
                }
                return block
            }
            if let next { launch(next) }
        }
    }
}
