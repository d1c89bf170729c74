import Foundation

extension Bench {
    /// Two app workloads, typed KVDocs against SQLite's C API as its expert writes them, in
    /// the same run; each side's answers are checked equal before timing.
    func runApps() throws {
        try runAthletes()
        try runStations()
    }

    /// Runs `pass` (one batch of queries, returning how many it ran) until `budget` seconds
    /// have gone or `maximum` passes have run (at least one): queries that full-scan cost
    /// a bounded time, fast ones are timed over enough operations.
    func timedPasses(maximum: Int, budget: Double, _ pass: () throws -> Int) rethrows -> (
        seconds: Double, operations: Int
    ) {
        var operations = 0, passes = 0
        let start = now()
        repeat {
            operations += try pass()
            passes += 1
        } while passes < maximum && now() - start < budget
        return (now() - start, operations)
    }

    /// SQLite's EXPLAIN QUERY PLAN through a C function that fills a buffer.
    func sqlitePlan(
        _ body: (UnsafeMutablePointer<CChar>, Int, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32
    ) throws -> String {
        var buffer = [CChar](repeating: 0, count: 1024)
        var error: UnsafeMutablePointer<CChar>?
        let rc = buffer.withUnsafeMutableBufferPointer { b in b.baseAddress.map { body($0, b.count, &error) } ?? -1 }
        if rc < 0 {
            defer { free(error) }
            throw BenchError("sqlite-c: " + (error.map { String(cString: $0) } ?? "cannot explain"))
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
