import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// The short modes of kvstress's scenarios (RELIABILITY.md has the long ones). Each runs in
/// child processes, so a crash or a hang is reported as a failed round, not a dead test run.
@Suite struct ReliabilityScenarioTests {
    static func kvstress(_ arguments: [String]) throws -> (status: Int32, figures: JSONValue?, output: String) {
        let binary = packageRoot.appendingPathComponent(".build/debug/kvstress").path
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw KVDocsError(.notFound, "\(binary) is missing: run swift build first (scripts/test does)")
        }
        let result = try runProcess(binary, arguments)
        let last = result.stdout.split(separator: "\n").last.map(String.init) ?? ""
        return (result.status, try? JSONValue(parsing: last), result.stdout + result.stderr)
    }

    @Test func damagedFilesGiveClearErrorsOrExactAnswersAndRepairWithSalvageGivesACleanStore() throws {
        let run = try Self.kvstress(["corrupt", "--rounds", "24", "--seed", "1000"])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.figures?["rounds"] == .int(24))
        #expect(run.figures?["failures"] == .int(0))
    }

    @Test func killedWritersLoseNoAcknowledgedWriteTearNoBatchAndLeaveVerifyClean() throws {
        let run = try Self.kvstress(["crash", "--rounds", "16", "--seed", "2000"])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.figures?["rounds"] == .int(16))
        #expect(run.figures?["failures"] == .int(0))
    }

    /// Power losses emulated on the log (its end past the last synced batch cut off,
    /// zeroed or garbled): every synced batch is kept, the batches kept are exactly those
    /// whose records were whole, the torn tail is reported, verify is clean.
    @Test func powerLossesKeepEverySyncedWriteAndAPrefixOfTheRestAndReportTheTornTail() throws {
        let run = try Self.kvstress(["power-loss", "--rounds", "12", "--seed", "5000"])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.figures?["rounds"] == .int(12))
        #expect(run.figures?["failures"] == .int(0))
        if case .object(let outcomes)? = run.figures?["outcomes"] {
            #expect(outcomes["torn tail reported and cut"] != nil)
        }
    }

    /// kill -9 while a layered store's base is replaced and while backups are written: the
    /// store opens over one base with exactly the merged documents, backups open, verify is
    /// clean, the bases never change.
    @Test func killedBaseReplacementsAndBackupsLeaveAUsableDatabase() throws {
        let run = try Self.kvstress(["layers", "--rounds", "10", "--seed", "4000"])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.figures?["rounds"] == .int(10))
        #expect(run.figures?["failures"] == .int(0))
        if case .object(let outcomes)? = run.figures?["outcomes"] {
            #expect(outcomes["acknowledged replacements"] != nil)
            #expect(outcomes["backups opened and verified"] != nil)
        }
    }

    /// kill -9 during data migrations (while they write, while an interrupted one is
    /// undone): every open finds the documents before, between or after the migrations,
    /// never a mix; with the migrator, both ran exactly once; verify is clean.
    @Test func killedMigrationsAreUndoneOrFinishedExactly() throws {
        let run = try Self.kvstress(["migrate", "--rounds", "8", "--seed", "6000"])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.figures?["rounds"] == .int(8))
        #expect(run.figures?["failures"] == .int(0))
        if case .object(let outcomes)? = run.figures?["outcomes"] {
            #expect(outcomes["rounds that undid an interrupted migration"] != nil)
        }
    }

    /// kill -9 while a text index merges its segments (a write's merge step, optimize,
    /// the resumption of a merge an earlier kill interrupted): verify is clean, the
    /// documents are the acknowledged writes, answers and term statistics equal a
    /// brute-force count, and optimize finishes an interrupted merge.
    @Test func killsDuringTextMergesLeaveAConsistentIndexThatOptimizeFinishes() throws {
        let run = try Self.kvstress(["text-merge", "--rounds", "10", "--seed", "7000"])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.figures?["rounds"] == .int(10))
        #expect(run.figures?["failures"] == .int(0))
        if case .object(let outcomes)? = run.figures?["outcomes"] {
            #expect(outcomes["acknowledged batches"] != nil)
        }
    }

    /// The tuple decoder, the kvrepl command parser, the FTS5 query parser, the schema and
    /// keyspace loaders, the importer and the JSON parser: 3,000 inputs each.
    @Test func fuzzedInputsAreAcceptedOrRejectedWithOneLineErrorsNeverACrashOrAHang() throws {
        let run = try Self.kvstress(["fuzz", "--target", "all", "--inputs", "3000", "--seed", "3000"])
        #expect(run.status == 0, "\(run.output.suffix(3000))")
        #expect(run.figures?["rounds"] == .int(18_000))
        #expect(run.figures?["failures"] == .int(0))
    }
}
