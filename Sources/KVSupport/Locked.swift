#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a POSIX mutex, with the interface of `Synchronization.Mutex`.
///
/// KVDocs uses it instead of `Mutex` because on Linux `Mutex` waits with raw `futex`
/// system calls, which ThreadSanitizer does not see: every access made under it is reported
/// as a race, and the suite could not run under `--sanitize=thread`. A pthread mutex is
/// intercepted by the sanitizer, and costs the same when uncontended.
package final class Locked<Value> {
    // The value is read and written only while `mutex` is held. Both live at stable heap
    // addresses for the object's whole life; the value behind a pointer (not a stored
    // `var`) is accessed without the dynamic exclusivity checks a class's stored property
    // costs on every access (callgrind: about 115 instructions per `withLock`), which the
    // mutex makes redundant.
    private let value: UnsafeMutablePointer<Value>
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    package init(_ value: Value) {
        self.value = .allocate(capacity: 1)
        self.value.initialize(to: value)
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
        value.deinitialize(count: 1)
        value.deallocate()
    }

    /// Runs `body` with the value while holding the lock.
    @inline(__always)
    package func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}

// @unchecked Sendable only for a Sendable value: the lock makes access exclusive, but a
// value that is not Sendable could still escape `withLock` to another thread.
extension Locked: @unchecked Sendable where Value: Sendable {}
