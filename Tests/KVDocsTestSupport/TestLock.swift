import Foundation

/// A value guarded by a lock, for tests that share state between threads and tasks.
///
/// The tests use it instead of `Synchronization.Mutex`, which on Linux waits with raw
/// `futex` calls that ThreadSanitizer does not see: every access made under a `Mutex` is
/// then reported as a race (`scripts/sanitize` runs these suites under ThreadSanitizer).
/// `NSLock` is a pthread mutex, which the sanitizer understands.
package final class TestLock<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value` is only touched while `lock` is held.
    private var value: Value
    private let lock = NSLock()

    package init(_ value: Value) { self.value = value }

    /// Runs `body` with the value while holding the lock.
    package func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
