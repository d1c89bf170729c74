import Foundation
import KVSupport

/// The writer lock of a store: reentrant, held by one thread of the process at a time, and
/// the rule that a write transaction does not start inside another holder of it on the same
/// thread (a read-modify-write sequence started inside another one would read state the
/// outer one is about to overwrite). ``LevelDB`` and the stores of other backends share it.
///
/// **Invariants.** `depth` counts the calling thread's holds; it is read and written only
/// under the lock.
package final class WriterLock: @unchecked Sendable {
    // @unchecked Sendable: `depth` is read and written only under `lock`.
    private let lock = NSRecursiveLock()
    private nonisolated(unsafe) var depth = 0

    package init() {}

    /// Runs `body` holding the lock (reentrant).
    package func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock.lock()
        depth += 1
        defer {
            depth -= 1
            lock.unlock()
        }
        return try body()
    }

    /// Runs `body` holding the lock, as a write transaction of the store at `path`.
    /// - Throws: `.invalidArgument` (`nested`, naming the store) when the calling thread
    ///   already holds the lock, or what `body` throws.
    package func withTransaction<R>(path: String, nested: String, _ body: () throws -> R) throws -> R {
        lock.lock()
        defer { lock.unlock() }
        guard depth == 0 else { throw KVDocsError(.invalidArgument, nested, path: path) }
        depth += 1
        defer { depth -= 1 }
        return try body()
    }
}
