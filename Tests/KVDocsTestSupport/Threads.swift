import Foundation
import KVDocs

/// Something a test hands to another thread and reads back after joining it.
package final class ThreadOutcome<R>: @unchecked Sendable {
    package var result: Result<R, any Error>?
    package init() {}
}

/// A value handed to another thread whose use the test keeps to that thread.
struct UncheckedSendable<T>: @unchecked Sendable {
    let value: T
}

/// Runs `body` on a new thread with a `stackSize`-byte stack (512 KiB by default: the size
/// of a secondary thread on Apple platforms, where apps run queries off the main thread)
/// and returns its result. A recursion the stack cannot hold crashes the test process.
package func onThread<R>(stackSize: Int = 512 << 10, _ body: @escaping () throws -> R) throws -> R {
    let outcome = ThreadOutcome<R>()
    let work = UncheckedSendable(value: body)
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        outcome.result = Result { try work.value() }
        done.signal()
    }
    thread.stackSize = stackSize
    thread.start()
    done.wait()
    guard let result = outcome.result else { throw KVDocsError(.invalidArgument, "the thread returned nothing") }
    return try result.get()
}
