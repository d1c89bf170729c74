import Foundation

/// A flag set by one thread and read by another.
package final class ManagedAtomicFlag: @unchecked Sendable {
    // @unchecked Sendable: `value` is read and written under `lock` only.
    private let lock = NSLock()
    private var value = false
    package init() {}
    package var isSet: Bool { lock.withLock { value } }
    package func set() { lock.withLock { value = true } }
}
