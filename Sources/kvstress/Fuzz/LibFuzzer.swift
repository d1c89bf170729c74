import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// libFuzzer, when kvstress is built with `-sanitize=fuzzer` (scripts/libfuzzer): its
/// `LLVMFuzzerRunDriver` runs coverage-guided fuzzing of one target with the same checks as
/// the seeded loop. In a normal build the symbol is absent and `available` is false.
enum LibFuzzer {
    typealias Callback = @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
    typealias Driver =
        @convention(c) (
            UnsafeMutablePointer<Int32>, UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
            Callback
        ) -> Int32

    static var driver: Driver? {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "LLVMFuzzerRunDriver") else { return nil }
        return unsafeBitCast(symbol, to: Driver.self)
    }

    /// The target the callback runs (set once, before the driver starts).
    nonisolated(unsafe) static var target: ((_ bytes: [UInt8]) -> String?)?

    /// Runs libFuzzer on `target` with libFuzzer's own `arguments` (`-runs=N`, `-max_total_time=S`, a corpus directory…).
    static func run(target name: String, arguments: [String]) throws -> Int32 {
        guard let driver else {
            throw Failure("this kvstress was not built with -sanitize=fuzzer: run scripts/libfuzzer")
        }
        target = try FuzzHarness.single(name)
        var argv: [UnsafeMutablePointer<CChar>?] = (["kvstress-libfuzzer"] + arguments).map { strdup($0) } + [nil]
        var argc = Int32(arguments.count + 1)
        return argv.withUnsafeMutableBufferPointer { buffer in
            var base = buffer.baseAddress
            return driver(&argc, &base) { data, size in
                let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
                if let problem = LibFuzzer.target?(bytes) {
                    note("FAILURE: \(problem)")
                    abort()  // libFuzzer saves the input as a crash artifact
                }
                return 0
            }
        }
    }
}
