import Foundation
import KVDocs

/// Migration rounds: a child process opens a store with two long data migrations and is
/// killed with SIGKILL at a random moment (while a migration writes its batches, while it
/// undoes one left by the previous kill, or after). Rounds chain: each child opens what
/// the last kill left. After each kill the parent checks copies of the database:
/// - opened without a migrator, the store holds exactly the documents before the
///   migrations, after the first, or after both (never a mix), and `verify` is clean;
/// - opened with the migrator, it holds exactly the documents after both, each migration
///   ran once (versions are incremented, so a second run would show), both are recorded,
///   the change feed has no gap, and `verify` is clean.
enum MigrationScenario {
    static let people = 1000

    /// The first migration: every person's version + 1 (its text, age and city change too).
    /// The second: every seventh person removed, 300 new ones at version 50.
    static func migrator() throws -> DocumentMigrator {
        var migrator = DocumentMigrator()
        migrator.batchSize = 100   // many batches, so kills land between them
        try migrator.register("bump versions") { migration in
            try migration.forEach("people") { person in
                guard case .int(let id)? = person["id"], case .int(let v)? = person["v"] else {
                    throw Failure("a person without id or version")
                }
                try migration.update("people", Workload.person(id: Int(id), version: Int(v) + 1))
            }
        }
        try migrator.register("prune and add") { migration in
            for id in stride(from: 0, to: people, by: 7) { try migration.delete("people", id: .int(Int64(id))) }
            for id in people..<(people + 100) { try migration.insert("people", Workload.person(id: id, version: 50)) }
        }
        return migrator
    }

    static let before: [Int: Int] = Dictionary(uniqueKeysWithValues: (0..<people).map { ($0, 0) })
    static let afterFirst: [Int: Int] = before.mapValues { $0 + 1 }
    static let afterBoth: [Int: Int] = {
        var state = afterFirst
        for id in stride(from: 0, to: people, by: 7) { state[id] = nil }
        for id in people..<(people + 100) { state[id] = 50 }
        return state
    }()

    static func makeDatabase(_ path: String) throws {
        let db = try Database(path: path)
        defer { db.close() }
        let store = try DocumentStore(database: db, schema: try Workload.schema())
        try store.write { batch in for id in 0..<people { try batch.insert("people", Workload.person(id: id, version: 0)) } }
    }

    /// The child: opens the store with the migrator (undoing what a kill left, then
    /// migrating), printing progress; `done` once both are recorded.
    static func child(path: String) throws {
        let db = try Database(path: path)
        defer { db.close() }
        func say(_ text: String) { FileHandle.standardOutput.write(Data((text + "\n").utf8)) }
        say("ready")
        _ = try DocumentStore(database: db, migrator: try migrator()) { _ in } migrationProgress: { p in
            say("\(p.phase.rawValue) \(p.name) \(p.documents)")
        }
        say("done")
    }

    static func run(rounds: Int, seed: UInt64, maximumDelay: Double, verbose: Bool) throws -> Figures {
        let work = try makeWorkDirectory("migrate")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let pristine = work + "/pristine", live = work + "/live"
        try makeDatabase(pristine)
        try copyDirectory(pristine, live)
        var figures = Figures(scenario: "migrate")
        var rng = SplitMix64(seed: seed)
        for round in 0..<rounds {
            let delay = 0.05 + Double(rng.next() % 10_000) / 10_000 * maximumDelay
            let child = try runChildKilled(["migrate-child", "--path", live], after: delay)
            figures.rounds += 1
            if case .exited(let status) = child.ending, status != 0 {
                figures.fail("round \(round): the child failed (exit \(status)): \(child.stderr.suffix(600))")
                break
            }
            let lines = child.stdout.split(separator: "\n")
            if lines.contains(where: { $0.hasPrefix("rollingBack") }) { figures.count("rounds that undid an interrupted migration") }
            if !lines.contains("done"), lines.last?.hasPrefix("rollingBack") == true { figures.count("killed while undoing a migration") }
            let finished = lines.contains("done")
            figures.count(finished ? "children that finished both migrations" : "children killed before finishing")
            do {
                let state = try checkWithoutMigrator(live, work: work)
                figures.count("state after the kill: \(state)")
                try checkWithMigrator(live, work: work)
                if verbose {
                    note("round \(round): killed after \(String(format: "%.3f", delay)) s, \(state); the child's first and last lines: \(lines.prefix(3).joined(separator: " | ")) … \(lines.suffix(2).joined(separator: " | "))")
                }
            } catch {
                figures.fail("round \(round) (killed after \(String(format: "%.3f", delay)) s): \(error)")
                break
            }
            if finished {
                // Start again from the documents before the migrations.
                try FileManager.default.removeItem(atPath: live)
                try copyDirectory(pristine, live)
            }
        }
        return figures
    }

    /// Opens a copy without a migrator: any interrupted migration is undone; the documents
    /// are exactly one of the three states. Returns which.
    static func checkWithoutMigrator(_ live: String, work: String) throws -> String {
        let copy = work + "/check-plain"
        try? FileManager.default.removeItem(atPath: copy)
        try copyDirectory(live, copy)
        defer { try? FileManager.default.removeItem(atPath: copy) }
        let db = try Database(path: copy)
        defer { db.close() }
        let store = try DocumentStore(database: db)
        let report = try store.verify()
        guard report.isClean else { throw Failure("without a migrator: verify: \(report)") }
        let found = try Workload.read(store)
        let applied = try store.appliedMigrations()
        let expected: (String, [Int: Int])
        switch applied {
        case []: expected = ("before the migrations", before)
        case ["bump versions"]: expected = ("after the first migration", afterFirst)
        case ["bump versions", "prune and add"]: expected = ("after both migrations", afterBoth)
        default: throw Failure("unexpected migrations recorded: \(applied)")
        }
        guard found == expected.1 else {
            throw Failure("recorded \(applied), but the documents are not \(expected.0): \(describe(found, expected.1))")
        }
        try checkFeed(store)
        return expected.0
    }

    /// Opens a copy with the migrator: both migrations done, exactly once each.
    static func checkWithMigrator(_ live: String, work: String) throws {
        let copy = work + "/check-migrated"
        try? FileManager.default.removeItem(atPath: copy)
        try copyDirectory(live, copy)
        defer { try? FileManager.default.removeItem(atPath: copy) }
        let db = try Database(path: copy)
        defer { db.close() }
        let store = try DocumentStore(database: db, migrator: try migrator())
        let report = try store.verify()
        guard report.isClean else { throw Failure("with the migrator: verify: \(report)") }
        guard try store.appliedMigrations() == ["bump versions", "prune and add"] else {
            throw Failure("with the migrator: recorded \(try store.appliedMigrations())")
        }
        let found = try Workload.read(store)
        guard found == afterBoth else { throw Failure("with the migrator: \(describe(found, afterBoth))") }
        try checkFeed(store)
    }

    /// The change feed runs 1…lastSequence without a gap.
    static func checkFeed(_ store: DocumentStore) throws {
        let changes = try store.changes()
        guard changes.map(\.sequence) == Array((0..<Int64(changes.count)).map { $0 + 1 }), changes.last?.sequence ?? 0 == store.lastSequence else {
            throw Failure("the change feed has \(changes.count) records, last \(changes.last?.sequence ?? 0), and the store's last sequence is \(store.lastSequence)")
        }
    }

    static func describe(_ found: [Int: Int], _ expected: [Int: Int]) -> String {
        let wrong = expected.filter { found[$0.key] != $0.value }.prefix(5)
        let extra = found.filter { expected[$0.key] == nil }.prefix(5)
        return "\(found.count) documents, expected \(expected.count) (wrong or missing: \(Array(wrong)); unexpected: \(Array(extra)))"
    }
}
