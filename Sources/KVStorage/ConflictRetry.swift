import KVSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How a store whose write transactions are checked optimistically runs one again after it
/// gave way to another writer: the loop behind such a store's
/// ``KeyValueStore/transact(attempts:_:)``.
///
/// An attempt that throws a ``KVDocsError`` that ``KVDocsError/isRetryable`` (a
/// ``KVDocsError/writeConflict(_:path:key:)``) is run again after a pause that starts at
/// ``initialDelayMicroseconds`` and doubles up to ``maximumDelayMicroseconds``, each pause a random part of it (so
/// that writers that collided do not collide again in step). Every other error ends the loop
/// at once.
///
/// **Invariants.** An attempt runs at most `attempts` times. When the last one conflicts too,
/// the error thrown is a retryable ``KVDocsError/Kind/conflict`` that says how many attempts
/// gave way and carries the last conflict's message, path and key.
public struct ConflictRetry: Sendable {
    /// The longest first pause, in microseconds.
    public var initialDelayMicroseconds: Int
    /// The longest pause, in microseconds.
    public var maximumDelayMicroseconds: Int

    /// A retry policy pausing up to `initialDelayMicroseconds` after the first conflict,
    /// doubling up to `maximumDelayMicroseconds` (1 ms and 64 ms by default; 0 and 0 never pause).
    public init(initialDelayMicroseconds: Int = 1_000, maximumDelayMicroseconds: Int = 64_000) {
        self.initialDelayMicroseconds = max(0, initialDelayMicroseconds)
        self.maximumDelayMicroseconds = max(0, maximumDelayMicroseconds)
    }

    /// Runs `attempt` until it returns, throws an error that is not retryable, or has
    /// conflicted `attempts` times.
    /// - Throws: `.invalidArgument` for `attempts` below 1; what `attempt` throws; after
    ///   `attempts` conflicts, a retryable `.conflict` naming the count.
    public func run<R>(attempts: Int, _ attempt: () throws -> R) throws -> R {
        guard attempts >= 1 else {
            throw KVDocsError(.invalidArgument, "a write transaction needs at least 1 attempt, not \(attempts)")
        }
        var delay = initialDelayMicroseconds
        var generator = SystemRandomNumberGenerator()
        var made = 0
        while true {
            made += 1
            do {
                return try attempt()
            } catch let error as KVDocsError where error.isRetryable {
                guard made < attempts else {
                    throw KVDocsError.writeConflict(
                        "the write gave way to other writers \(made) time\(made == 1 ? "" : "s") (last: \(error.message)); try again",
                        path: error.path, key: error.key)
                }
                if delay > 0 {
                    usleep(UInt32(clamping: Int.random(in: 0...delay, using: &generator)))
                    delay = min(maximumDelayMicroseconds, delay * 2)
                }
            }
        }
    }
}
