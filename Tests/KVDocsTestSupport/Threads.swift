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
///
/// Under ThreadSanitizer or AddressSanitizer the stack is 8 times larger: their
/// instrumentation makes every frame several times bigger, and the limits these tests check
/// are those of a normal build.
package func onThread<R>(stackSize: Int = 512 << 10, _ body: @escaping () throws -> R) throws -> R {
    let outcome = ThreadOutcome<R>()
    let work = UncheckedSendable(value: body)
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        outcome.result = Result { try work.value() }
        done.signal()
    }
    thread.stackSize = stackSize * sanitizerStackFactor
    thread.start()
    done.wait()
    guard let result = outcome.result else { throw KVDocsError(.invalidArgument, "the thread returned nothing") }
    return try result.get()
}

/// 8 in a build instrumented by ThreadSanitizer or AddressSanitizer (their runtimes are
/// linked into the process), else 1.
private let sanitizerStackFactor: Int = {
    let process = dlopen(nil, RTLD_NOW)
    defer { if let process { dlclose(process) } }
    return dlsym(process, "__tsan_init") != nil || dlsym(process, "__asan_init") != nil ? 8 : 1
}()
