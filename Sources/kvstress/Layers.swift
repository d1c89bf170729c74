import Foundation
import KVDocs

/// Layer rounds: a user database over one of two shipped bases. Between rounds the parent
/// writes the user's documents and deletes (the model); in each round a child process swaps
/// the base back and forth, tries bases that must be refused (one whose emails conflict with
/// the user's, one with a damaged table, one with no document store), changes a shipped base
/// in place (`cp` over its files, good or conflicting) and reopens over it, and writes
/// backups, acknowledging each step, and is killed with SIGKILL at a random moment. The
/// parent then checks every promise: the store opens over the base the record names, the
/// base in force is one of the two good ones (never a refused one), the documents are
/// exactly the merged ones and `verify` is clean, every finished backup opens over a base
/// with the user's documents and `verify` clean, and neither good base changed by a byte.
enum LayersScenario {
    static let firstIDs = 0..<240
    static let secondIDs = 120..<360

    static func bases(_ work: String) -> (String, String) { (work + "/base-1", work + "/base-2") }
    /// Bases every replacement must refuse, and the base changed in place.
    static func refused(_ work: String) -> (conflicting: String, damaged: String, empty: String) {
        (work + "/base-conflicting", work + "/base-damaged", work + "/base-empty")
    }
    static func shipped(_ work: String) -> String { work + "/base-shipped" }
    /// Ids of the conflicting base: 5000 + k holds the email of person k.
    static let conflictingIDs = 5000..<5400

    /// The documents of a base: person(id, 0) for the first, person(id, 1) for the second.
    static func baseDocuments(_ base: String, work: String) -> [Int: Int] {
        let (first, _) = bases(work)
        var docs: [Int: Int] = [:]
        for id in base == first ? firstIDs : secondIDs { docs[id] = base == first ? 0 : 1 }
        return docs
    }

    /// The user's writes over the base: id → version, or `nil` for a delete of a base document.
    typealias UserModel = [Int: Int?]

    static func merged(base: [Int: Int], user: UserModel) -> [Int: Int] {
        var docs = base
        for (id, version) in user {
            if let version { docs[id] = version } else { docs[id] = nil }
        }
        return docs
    }

    static func makeBase(_ path: String, ids: Range<Int>, version: Int) throws {
        let db = try LevelDB(path: path)
        defer { db.close() }
        let store = try DocumentStore(database: db, schema: try Workload.schema())
        try store.write { batch in
            for id in ids { try batch.insert("people", Workload.person(id: id, version: version)) }
        }
    }

    /// A base whose documents take the emails of persons 0..<400 under other ids: every user
    /// layer holding a person conflicts with it.
    static func makeConflictingBase(_ path: String) throws {
        let db = try LevelDB(path: path)
        defer { db.close() }
        let store = try DocumentStore(database: db, schema: try Workload.schema())
        try store.write { batch in
            for id in conflictingIDs {
                guard case .object(var person) = Workload.person(id: id - conflictingIDs.lowerBound, version: 0) else {
                    continue
                }
                person["id"] = .int(Int64(id))
                try batch.insert("people", .object(person))
            }
        }
    }

    /// A copy of `from` whose largest table has garbled bytes in its middle.
    static func makeDamagedBase(_ path: String, from: String) throws {
        let fm = FileManager.default
        try fm.copyItem(atPath: from, toPath: path)
        // Tables first: reopen until the log is in a table.
        for _ in 0..<2 {
            let db = try LevelDB(path: path)
            try db.compact()
            db.close()
        }
        let tables = try fm.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".ldb") }
        guard
            let table = try tables.max(by: {
                try (fm.attributesOfItem(atPath: path + "/" + $0)[.size] as? Int ?? 0)
                    < (fm.attributesOfItem(atPath: path + "/" + $1)[.size] as? Int ?? 0)
            })
        else {
            throw Failure("the damaged base has no table")
        }
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path + "/" + table)))
        for i in stride(from: bytes.count / 4, to: bytes.count / 2, by: 7) { bytes[i] ^= 0x5A }
        try Data(bytes).write(to: URL(fileURLWithPath: path + "/" + table))
    }

    /// Makes `path` hold `from`'s files as `cp from/* path/` does: the same names overwritten in
    /// place, the others removed.
    static func copyInPlace(_ from: String, to path: String) throws {
        let fm = FileManager.default
        let names = try fm.contentsOfDirectory(atPath: from).filter { $0 != "LOCK" }
        for name in try fm.contentsOfDirectory(atPath: path) where !names.contains(name) {
            try fm.removeItem(atPath: path + "/" + name)
        }
        for name in names {
            let data = try Data(contentsOf: URL(fileURLWithPath: from + "/" + name))
            if let handle = FileHandle(forWritingAtPath: path + "/" + name) {
                try handle.truncate(atOffset: 0)
                try handle.write(contentsOf: data)
                try handle.close()
            } else {
                try data.write(to: URL(fileURLWithPath: path + "/" + name))
            }
        }
    }

    /// The child: swaps the base and writes backups until killed, printing an `ack` after each.
    static func child(work: String, seed: UInt64) throws {
        let (first, second) = bases(work)
        let record = try? JSONValue(parsing: Data(contentsOf: URL(fileURLWithPath: work + "/user.layers/LAYERS.json")))
        var current: String
        if case .string(let base)? = record?["pending"]?["base"] {
            current = base
        } else if case .string(let base)? = record?["base"] {
            current = base
        } else {
            current = first
        }
        var layers = try LayeredDocumentStore(user: work + "/user", base: current)
        defer { layers.close() }
        var rng = SplitMix64(seed: seed)
        func ack(_ text: String) { FileHandle.standardOutput.write(Data((text + "\n").utf8)) }
        ack("ready")
        let bad = refused(work)
        // Every other round only writes backups, so that kills land in them as well (a
        // replacement takes far longer than a backup).
        let backupsOnly = seed % 4 == 0
        for step in 0..<10_000 {
            let action = backupsOnly ? 0 : rng.next() % 6
            if action == 0 {
                ack("begin backup")
                try layers.backup(to: work + "/backup-\(seed)-\(step)")
                ack("ack backup \(step)")
                // The parent checks the last few (each the same promise); older ones go.
                // Renamed first, so a kill mid-removal leaves a leftover, not a torn backup.
                let old = work + "/backup-\(seed)-\(step - 3)", doomed = old + ".removed"
                if step >= 3, (try? FileManager.default.moveItem(atPath: old, toPath: doomed)) != nil {
                    try? FileManager.default.removeItem(atPath: doomed)
                }
            } else if action == 1 || action == 2 {
                ack("begin replace")
                current = current == first ? second : first
                try layers.replaceBase(with: current)
                ack("ack replace \(current)")
            } else if action == 3 {
                // Bases that must be refused, the old base staying in force.
                let (path, kind): (String, KVDocsError.Kind) = [
                    (bad.conflicting, .uniqueViolation), (bad.damaged, .corruption), (bad.empty, .invalidArgument)
                ][Int(rng.next() % 3)]
                ack(
                    "begin refused replacement \(path == bad.conflicting ? "conflicting" : path == bad.damaged ? "damaged" : "hiding")"
                )
                do {
                    try layers.replaceBase(with: path)
                    throw Failure("the base \(path) was accepted")
                } catch let e as KVDocsError where e.kind == kind {
                    ack("ack refused \(path)")
                }
            } else {
                // An app update overwrites the shipped base in place, then the app reopens.
                let from = [first, second, bad.conflicting][Int(rng.next() % 3)]
                ack("begin in-place change \(from == bad.conflicting ? "conflicting" : "good")")
                layers.close()
                try copyInPlace(from, to: shipped(work))
                layers = try LayeredDocumentStore(user: work + "/user", base: shipped(work))
                current = layers.basePath
                ack(layers.baseChangeFailure == nil ? "ack in place \(from)" : "ack in place refused \(from)")
            }
        }
    }

    static func run(rounds: Int, seed: UInt64, maximumDelay: Double, verbose: Bool) throws -> Figures {
        let work = try makeWorkDirectory("layers")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let (first, second) = bases(work)
        try makeBase(first, ids: firstIDs, version: 0)
        try makeBase(second, ids: secondIDs, version: 1)
        let bad = refused(work)
        try makeConflictingBase(bad.conflicting)
        try makeDamagedBase(bad.damaged, from: second)
        try LevelDB(path: bad.empty).close()
        try FileManager.default.copyItem(atPath: first, toPath: shipped(work))
        let fingerprints = (try directoryBytes(first), try directoryBytes(second))
        var figures = Figures(scenario: "layers")
        var user: UserModel = [:]
        var rng = SplitMix64(seed: seed)
        var basePath = first, baseContent = first
        for round in 0..<rounds {
            // The user's writes, between rounds.
            do {
                let layers = try LayeredDocumentStore(user: work + "/user", base: basePath, create: true)
                let people = try layers.store.collection("people")
                for _ in 0..<20 {
                    let id = Int(rng.next() % 400)
                    if rng.next() % 4 == 0 {
                        // A delete of a document the base holds hides it in every later base; one
                        // of a document only the user wrote just removes it.
                        if try people.delete(id: .int(Int64(id))) {
                            if baseDocuments(baseContent, work: work)[id] != nil {
                                user[id] = .some(nil)
                            } else {
                                user.removeValue(forKey: id)
                            }
                        }
                    } else {
                        let version = 100 + round * 20 + Int(rng.next() % 20)
                        try people.upsert(Workload.person(id: id, version: version))
                        user[id] = .some(version)
                    }
                }
                layers.close()
            }
            let roundSeed = seed &+ UInt64(round) &* 7919
            let delay = 0.05 + Double(rng.next() % 10_000) / 10_000 * maximumDelay
            let child = try runChildKilled(["layers-child", "--work", work, "--seed", String(roundSeed)], after: delay)
            figures.rounds += 1
            if case .exited(let status) = child.ending, status != 0 {
                figures.fail(
                    "round \(round): the child failed before the kill (exit \(status)): \(child.stderr.suffix(600))")
                break
            }
            let lines = child.stdout.split(separator: "\n")
            // The step the kill landed in: the last one begun and not acknowledged.
            if let last = lines.last, last.hasPrefix("begin ") {
                figures.count("killed during: " + last.dropFirst("begin ".count))
            }
            figures.add("acknowledged replacements", lines.filter { $0.hasPrefix("ack replace") }.count)
            figures.add("acknowledged backups", lines.filter { $0.hasPrefix("ack backup") }.count)
            figures.add("refused replacements", lines.filter { $0.hasPrefix("ack refused") }.count)
            figures.add("bases changed in place, replaced", lines.filter { $0.hasPrefix("ack in place /") }.count)
            figures.add("bases changed in place, refused", lines.filter { $0.hasPrefix("ack in place refused") }.count)
            do {
                (basePath, baseContent) = try check(
                    work: work, user: user, fingerprints: fingerprints, figures: &figures)
                if verbose { note("round \(round): base \(basePath), \(user.count) user writes") }
            } catch {
                figures.fail(
                    "round \(round) seed \(roundSeed) (killed after \(String(format: "%.3f", delay)) s): \(error)")
                break
            }
        }
        return figures
    }

    /// Checks the user database and the backups after a kill; returns the base to open with
    /// (the record's) and the good base whose documents are in force.
    static func check(
        work: String, user: UserModel, fingerprints: ([String: Data], [String: Data]), figures: inout Figures
    ) throws -> (String, String) {
        let (first, second) = bases(work)
        let recordData = try Data(contentsOf: URL(fileURLWithPath: work + "/user.layers/LAYERS.json"))
        let record = try JSONValue(parsing: recordData)
        let base: String
        if case .string(let pending)? = record["pending"]?["base"] {
            base = pending
            figures.count("killed during a replacement (finished on open)")
        } else if case .string(let recorded)? = record["base"] {
            base = recorded
        } else {
            throw Failure("the layers record names no base: \(String(decoding: recordData, as: UTF8.self))")
        }
        guard base == first || base == second || base == shipped(work) else {
            throw Failure("the layers record names an unknown base \(base)")
        }
        let layers = try LayeredDocumentStore(user: work + "/user", base: base)
        defer { layers.close() }
        if layers.baseChangeFailure != nil { figures.count("opened with the old base kept (the changed base refused)") }
        // Which good base is in force: the refused ones never are.
        let inForce = try content(of: layers.storage.base, work: work)
        try expect(layers, base: inForce, user: user, work: work, what: "the user database")
        // Backups: each finished one opens over either base with the user's documents.
        for name in try FileManager.default.contentsOfDirectory(atPath: work) where name.hasPrefix("backup-") {
            let path = work + "/" + name
            if name.hasSuffix(".removed") {
                try FileManager.default.removeItem(atPath: path)
                continue
            }
            if name.contains(".partial-") {
                figures.count("killed during a backup (partial directory left)")
                try FileManager.default.removeItem(atPath: path)
                continue
            }
            let over = [first, second][name.count % 2]
            let restored = try LayeredDocumentStore(user: path, base: over)
            try expect(restored, base: over, user: user, work: work, what: "backup \(name)")
            restored.close()
            figures.count("backups opened and verified")
            try FileManager.default.removeItem(atPath: path)
            try? FileManager.default.removeItem(atPath: path + ".layers")
        }
        guard try directoryBytes(first) == fingerprints.0, try directoryBytes(second) == fingerprints.1 else {
            throw Failure("a base directory changed")
        }
        return (base, inForce)
    }

    /// The good base whose documents the base copy `db` holds: base 1 holds person 0, base 2
    /// person 300; anything else (a refused base) is a failure.
    static func content(of db: LevelDB, work: String) throws -> String {
        let (first, second) = bases(work)
        let layout = Subspace(["d", "people"])
        let holds = { (id: Int) in try db.get(layout.pack([.int(Int64(id))])) != nil }
        if try holds(conflictingIDs.lowerBound) { throw Failure("the conflicting base is in force") }
        if try holds(0), try !holds(300) { return first }
        if try holds(300), try !holds(0) { return second }
        throw Failure("the base in force is neither good base")
    }

    static func expect(_ layers: LayeredDocumentStore, base: String, user: UserModel, work: String, what: String) throws
    {
        let report = try layers.store.verify()
        guard report.isClean else { throw Failure("\(what): verify: \(report)") }
        let found = try Workload.read(layers.store)
        let expected = merged(base: baseDocuments(base, work: work), user: user)
        guard found == expected else {
            let missing = expected.filter { found[$0.key] != $0.value }.prefix(5)
            let extra = found.filter { expected[$0.key] != $0.value }.prefix(5)
            throw Failure(
                "\(what) over \(base): \(found.count) documents, expected \(expected.count) (wrong or missing: \(Array(missing)); unexpected: \(Array(extra)))"
            )
        }
        let text = try layers.store.collection("people").search("river").count
        let reference = expected.filter { id, version in
            guard case .string(let bio)? = Workload.person(id: id, version: version)["bio"],
                case .string(let name)? = Workload.person(id: id, version: version)["name"]
            else { return false }
            return (bio + " " + name).split(separator: " ").contains("river")
        }.count
        guard text == reference else {
            throw Failure("\(what): a search for river finds \(text) documents, expected \(reference)")
        }
    }

    /// Every file of a directory with its bytes (LOCK aside).
    static func directoryBytes(_ dir: String) throws -> [String: Data] {
        var result: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: dir) where name != "LOCK" {
            result[name] = try Data(contentsOf: URL(fileURLWithPath: dir + "/" + name))
        }
        return result
    }
}
