import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// The short mode of `kvstress fuzz-grammar`: 3,000 seeded random and mutated inputs for each of
/// the tuple decoder, the kvrepl command parser, the FTS5 query parser, the schema and
/// keyspace loaders, the JSON-lines importer and the JSON parser (a few seconds in a debug
/// build). Each input must be accepted (and pass its round trip) or rejected with a
/// one-line error; a crash or a hang (exit status 2) fails the test. The fuzzer runs as a
/// child process, so a crash is reported here instead of ending the test run.
@Suite struct FuzzTests {
    @Test func everyFuzzedInputIsAcceptedOrRejectedWithAOneLineErrorNeverACrashOrAHang() throws {
        let binary = packageRoot.appendingPathComponent(".build/debug/kvstress").path
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw KVDocsError(.notFound, "\(binary) is missing: run swift build first (scripts/test does)")
        }
        let run = try runProcess(binary, ["fuzz-grammar", "--target", "all", "--inputs", "3000", "--seed", "1"])
        let output = run.stdout + run.stderr
        #expect(run.status == 0, "kvstress fuzz-grammar exited with \(run.status):\n\(output.suffix(4000))")
        // The last line of standard output is the JSON figures.
        let last = run.stdout.split(separator: "\n").last.map(String.init) ?? ""
        let figures = try? JSONValue(parsing: last)
        #expect(figures?["failures"] == .int(0), "\(output.suffix(4000))")
        #expect(figures?["rounds"] == .int(6 * 3000))
    }
}
