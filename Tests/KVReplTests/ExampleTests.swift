import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// The README's library examples (`Examples/QuickStart`) run, twice on the same path (the
/// second run finds its migration done and its documents there), and print what the
/// README says they print.
@Suite struct ExampleTests {
    @Test func theQuickStartExampleRunsTwiceAndPrintsTheBoardTheReadmeShows() throws {
        let binary = packageRoot.appendingPathComponent(".build/debug/kvdocs-example").path
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            Issue.record("\(binary) is missing: run swift build first (scripts/test does)")
            return
        }
        let dir = TemporaryDirectory("kvdocs-example")
        let path = dir.child("db")
        for run in 1...2 {
            let r = try runProcess(binary, [path])
            #expect(r.status == 0, "run \(run): \(r.stderr)")
            let lines = r.stdout.split(separator: "\n").map(String.init)
            #expect(lines.contains("board: [\"P-1000\"]"), "run \(run): \(r.stdout)")
            #expect(lines.contains("board: [\"P-0900\", \"P-1000\"]"), "run \(run): \(r.stdout)")
            #expect(lines.contains("migration default platform: completed 0") == (run == 1), "run \(run): \(r.stdout)")
        }
    }

    /// An app's model file (`Examples/ObservableModel`): an `@Observable` class in a file that
    /// imports KVDocs, Foundation and Observation, kept current by an observed query.
    @Test func anObservableModelBesideKVDocsFollowsAnObservedQuery() throws {
        let binary = packageRoot.appendingPathComponent(".build/debug/example-observable").path
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            Issue.record("\(binary) is missing: run swift build first (scripts/test does)")
            return
        }
        let dir = TemporaryDirectory("kvdocs-observable")
        let r = try runProcess(binary, [dir.path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "board: [\"P-1000\"]\nboard: [\"P-0900\", \"P-1000\"]\nupdates: 2\n", "\(r.stdout)")
    }
}
