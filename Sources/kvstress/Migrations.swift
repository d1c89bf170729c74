import Foundation
import KVDocs

/// Migration rounds: a child process opens a store with two long data migrations and is
/// killed with SIGKILL (on a progress line of a migration writing its batches, on one of a
/// migration being undone after the previous kill, or after a random delay). Rounds chain:
/// each child opens what the last kill left. After each kill the parent checks copies of
/// the database:
/// - opened without a migrator, the store holds exactly the documents before the
///   migrations, after the first, or after both (never a mix), every other key (indexes,
///   change feed, catalog) is that of the same state made without kills, the text index
///   answers alike, and `verify` is clean;
/// - opened with the migrator, the same holds of the state after both: each migration ran
///   once (versions are incremented, so a second run would show), both are recorded, and
///   the change feed is exactly the writes made.
enum MigrationScenario {
    static let people = 1000

    /// The first migration: every person's version + 1 (its text, age and city change too).
    /// The second: every seventh person removed, 300 new ones at version 50.
    static func migrator(first count: Int = 2) throws -> DocumentMigrator {
        var migrator = DocumentMigrator()
        migrator.batchSize = 100  // many batches, so kills land between them
        try migrator.register("bump versions") { migration in
            try migration.forEach("people") { person in
                guard case .int(let id)? = person["id"], case .int(let v)? = person["v"] else {
                    throw Failure("a person without id or version")
                }
                try migration.update("people", Workload.person(id: Int(id), version: Int(v) + 1))
            }
        }
        guard count >= 2 else { return migrator }
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
        let db = try LevelDB(path: path)
        defer { db.close() }
        let store = try DocumentStore(database: db, schema: try Workload.schema())
        try store.write { batch in
            for id in 0..<people { try batch.insert("people", Workload.person(id: id, version: 0)) }
        }
    }

    /// The child: opens the store with the migrator (undoing what a kill left, then
    /// migrating), printing progress; `done` once both are recorded.
    static func child(path: String) throws {
        let db = try LevelDB(path: path)
        defer { db.close() }
        func say(_ text: String) { FileHandle.standardOutput.write(Data((text + "\n").utf8)) }
        say("ready")
        _ = try DocumentStore(database: db, migrator: try migrator()) { _ in
        } migrationProgress: { p in
            say("\(p.phase.rawValue) \(p.name) \(p.documents)")
        }
        say("done")
    }

    /// The rounds cycle through three kinds of kill: on a progress line of a migration
    /// writing its batches (which batch, and which migration, drawn from the seed), on a
    /// progress line of one being undone (the previous kill left one), and after a random
    /// delay (which may land anywhere: opening, between migrations, after both).
    static func run(rounds: Int, seed: UInt64, maximumDelay: Double, verbose: Bool) throws -> Figures {
        let work = try makeWorkDirectory("migrate")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let pristine = work + "/pristine", live = work + "/live"
        try makeDatabase(pristine)
        let references = try References(pristine: pristine, work: work)
        try copyDirectory(pristine, live)
        var figures = Figures(scenario: "migrate")
        var rng = SplitMix64(seed: seed)
        for round in 0..<rounds {
            let delay = 0.05 + Double(rng.next() % 10_000) / 10_000 * maximumDelay
            let trigger: (String) -> Bool
            let planned: String
            switch round % 3 {
            case 0:
                // The first migration reports every 100 of its 1,000 writes, the second
                // every 100 of its 243.
                let first = rng.next() % 3 != 0
                let name = first ? "bump versions" : "prune and add"
                let after = 100 * (1 + Int(rng.next() % (first ? 9 : 2)))
                planned = "on \"\(name)\" writing its batches, after \(after) documents"
                trigger = { line in Self.progress(line, phase: "running", name: name).map { $0 >= after } ?? false }
            case 1:
                let after = 100 * (1 + Int(rng.next() % 8))
                planned = "while undoing, after \(after) documents"
                trigger = { line in Self.progress(line, phase: "rollingBack", name: nil).map { $0 >= after } ?? false }
            default:
                planned = "after \(String(format: "%.3f", delay)) s"
                trigger = { _ in false }
            }
            let child = try runChildKilled(
                ["migrate-child", "--path", live], whenLine: trigger, orAfter: round % 3 == 2 ? delay : 60)
            figures.rounds += 1
            if case .exited(let status) = child.ending, status != 0 {
                figures.fail("round \(round): the child failed (exit \(status)): \(child.stderr.suffix(600))")
                break
            }
            let lines = child.stdout.split(separator: "\n")
            if lines.contains(where: { $0.hasPrefix("rollingBack") }) {
                figures.count("rounds that undid an interrupted migration")
            }
            if !lines.contains("done"), lines.last?.hasPrefix("rollingBack") == true {
                figures.count("killed while undoing a migration")
            }
            if !lines.contains("done"), lines.last?.hasPrefix("running") == true {
                figures.count("killed while a migration wrote")
            }
            let finished = lines.contains("done")
            figures.count(finished ? "children that finished both migrations" : "children killed before finishing")
            do {
                let state = try checkWithoutMigrator(live, work: work, references: references)
                figures.count("state after the kill: \(state)")
                try checkWithMigrator(live, work: work, references: references)
                if verbose {
                    note(
                        "round \(round): killed \(planned), \(state); the child's first and last lines: \(lines.prefix(3).joined(separator: " | ")) … \(lines.suffix(2).joined(separator: " | "))"
                    )
                }
            } catch {
                figures.fail("round \(round) (killed \(planned)): \(error)")
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

    /// The document count of a progress line `PHASE NAME COUNT` (any name when `nil`).
    static func progress(_ line: String, phase: String, name: String?) -> Int? {
        guard line.hasPrefix(phase + " "), let last = line.split(separator: " ").last, let count = Int(last) else {
            return nil
        }
        if let name, !line.hasPrefix(phase + " " + name + " ") { return nil }
        return count
    }

    /// The three states a kill may leave, made without kills: the pristine database, and
    /// copies of it migrated once and twice in this process. Compared with what a kill
    /// left, key by key (the text index's postings aside, which may be segmented
    /// differently: its statistics and answers are compared instead).
    struct References {
        let before: Snapshot, afterFirst: Snapshot, afterBoth: Snapshot

        struct Snapshot {
            let entries: [KeyValueEntry]
            let answers: String
        }

        init(pristine: String, work: String) throws {
            before = try Self.snapshot(pristine)
            let once = work + "/reference-first", twice = work + "/reference-both"
            try copyDirectory(pristine, once)
            try copyDirectory(pristine, twice)
            defer {
                try? FileManager.default.removeItem(atPath: once)
                try? FileManager.default.removeItem(atPath: twice)
            }
            let first = try migrator(first: 1)
            do {
                let db = try LevelDB(path: once)
                defer { db.close() }
                _ = try DocumentStore(database: db, migrator: first)
            }
            do {
                let db = try LevelDB(path: twice)
                defer { db.close() }
                _ = try DocumentStore(database: db, migrator: try migrator())
            }
            afterFirst = try Self.snapshot(once)
            afterBoth = try Self.snapshot(twice)
        }

        static func snapshot(_ path: String) throws -> Snapshot {
            let db = try LevelDB(path: path)
            defer { db.close() }
            return Snapshot(entries: try entries(db), answers: try answers(try DocumentStore(database: db)))
        }

        static func entries(_ db: LevelDB) throws -> [KeyValueEntry] {
            let text = Subspace(["t"]).prefix
            return try db.entries().collect().filter { !$0.key.starts(with: text) }
        }

        static func answers(_ store: DocumentStore) throws -> String {
            let people = try store.collection("people")
            var text = "\(try store.read { try $0.textStatistics("people") })\n"
            for word in ["river", "station", "quiet", "journey OR island", "\"morning coffee\""] {
                text +=
                    "\(word): \(try people.search(word, options: SearchOptions(limit: 50, includeDocuments: false)).map { "\($0.id)=\($0.score)" })\n"
            }
            return text
        }

        /// Which reference the database matches; throws naming the first difference.
        func check(_ db: LevelDB, _ store: DocumentStore, against reference: Snapshot, _ what: String) throws {
            let found = try Self.entries(db)
            if found != reference.entries {
                let index =
                    (0..<min(found.count, reference.entries.count)).first { found[$0] != reference.entries[$0] }
                    ?? min(found.count, reference.entries.count)
                let key =
                    index < found.count
                    ? found[index].key : (index < reference.entries.count ? reference.entries[index].key : [])
                throw Failure(
                    "\(what): the database differs from the reference (\(found.count) keys, reference \(reference.entries.count); first difference at key \(key.map { String(format: "%02x", $0) }.joined()))"
                )
            }
            let answers = try Self.answers(store)
            if answers != reference.answers {
                throw Failure(
                    "\(what): the text index answers differently from the reference:\n\(answers)\nreference:\n\(reference.answers)"
                )
            }
        }
    }

    /// Opens a copy without a migrator: any interrupted migration is undone; the documents
    /// are exactly one of the three states, and so is every other key. Returns which.
    static func checkWithoutMigrator(_ live: String, work: String, references: References) throws -> String {
        let copy = work + "/check-plain"
        try? FileManager.default.removeItem(atPath: copy)
        try copyDirectory(live, copy)
        defer { try? FileManager.default.removeItem(atPath: copy) }
        let db = try LevelDB(path: copy)
        defer { db.close() }
        let store = try DocumentStore(database: db)
        let report = try store.verify()
        guard report.isClean else { throw Failure("without a migrator: verify: \(report)") }
        let found = try Workload.read(store)
        let applied = try store.appliedMigrations()
        let expected: (String, [Int: Int], References.Snapshot)
        switch applied {
        case []: expected = ("before the migrations", before, references.before)
        case ["bump versions"]: expected = ("after the first migration", afterFirst, references.afterFirst)
        case ["bump versions", "prune and add"]: expected = ("after both migrations", afterBoth, references.afterBoth)
        default: throw Failure("unexpected migrations recorded: \(applied)")
        }
        guard found == expected.1 else {
            throw Failure(
                "recorded \(applied), but the documents are not \(expected.0): \(describe(found, expected.1))")
        }
        try checkFeed(store, applied: applied)
        try references.check(db, store, against: expected.2, "without a migrator, \(expected.0)")
        return expected.0
    }

    /// Opens a copy with the migrator: both migrations done, exactly once each, every key
    /// as in the reference.
    static func checkWithMigrator(_ live: String, work: String, references: References) throws {
        let copy = work + "/check-migrated"
        try? FileManager.default.removeItem(atPath: copy)
        try copyDirectory(live, copy)
        defer { try? FileManager.default.removeItem(atPath: copy) }
        let db = try LevelDB(path: copy)
        defer { db.close() }
        let store = try DocumentStore(database: db, migrator: try migrator())
        let report = try store.verify()
        guard report.isClean else { throw Failure("with the migrator: verify: \(report)") }
        guard try store.appliedMigrations() == ["bump versions", "prune and add"] else {
            throw Failure("with the migrator: recorded \(try store.appliedMigrations())")
        }
        let found = try Workload.read(store)
        guard found == afterBoth else { throw Failure("with the migrator: \(describe(found, afterBoth))") }
        try checkFeed(store, applied: ["bump versions", "prune and add"])
        try references.check(db, store, against: references.afterBoth, "with the migrator")
    }

    /// The change feed is exactly the writes of the setup and of the migrations recorded:
    /// 1…lastSequence without a gap, each record the write it stands for.
    static func checkFeed(_ store: DocumentStore, applied: [String]) throws {
        var expected: [(Int, DocumentChange.Operation)] = (0..<people).map { ($0, .insert) }
        if applied.count >= 1 { expected += (0..<people).map { ($0, .update) } }
        if applied.count >= 2 {
            expected += stride(from: 0, to: people, by: 7).map { ($0, .delete) }
            expected += (people..<(people + 100)).map { ($0, .insert) }
        }
        let changes = try store.changes()
        let lastSequence = try store.lastSequence
        guard changes.map(\.sequence) == Array((0..<Int64(changes.count)).map { $0 + 1 }),
            changes.last?.sequence ?? 0 == lastSequence
        else {
            throw Failure(
                "the change feed has \(changes.count) records, last \(changes.last?.sequence ?? 0), and the store's last sequence is \(lastSequence)"
            )
        }
        guard changes.count == expected.count else {
            throw Failure("the change feed has \(changes.count) records, expected \(expected.count) for \(applied)")
        }
        for (change, (id, operation)) in zip(changes, expected)
        where change.collection != "people" || change.id != .int(Int64(id)) || change.operation != operation {
            throw Failure(
                "change \(change.sequence) is \(change.operation) \(change.collection) \(change.id.compactDescription), expected \(operation) people \(id)"
            )
        }
    }

    static func describe(_ found: [Int: Int], _ expected: [Int: Int]) -> String {
        let wrong = expected.filter { found[$0.key] != $0.value }.prefix(5)
        let extra = found.filter { expected[$0.key] == nil }.prefix(5)
        return
            "\(found.count) documents, expected \(expected.count) (wrong or missing: \(Array(wrong)); unexpected: \(Array(extra)))"
    }
}
