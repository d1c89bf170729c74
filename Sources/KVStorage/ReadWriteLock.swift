#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A POSIX readers-writer lock.
///
/// It lives in this module, its only user, so that its `@inline(__always)` methods are
/// inlined into every database call: a `package` generic method of another module is
/// called unspecialized (there is no cross-module optimization for `package` code).
///
/// `LevelDB` holds it for reading around every use of its LevelDB handle and for
/// writing while it closes, so `close()` waits for in-flight operations and no
/// operation ever sees a freed handle.
package final class ReadWriteLock: @unchecked Sendable {
    // @unchecked Sendable: the pthread lock is the synchronization primitive itself;
    // it lives at a stable heap address for the lock's whole life.
    private let lock: UnsafeMutablePointer<pthread_rwlock_t>

    package init() {
        lock = .allocate(capacity: 1)
        lock.initialize(to: pthread_rwlock_t())
        pthread_rwlock_init(lock, nil)
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deinitialize(count: 1)
        lock.deallocate()
    }

    @inline(__always)
    package func withReadLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }

    @inline(__always)
    package func withWriteLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }
}
