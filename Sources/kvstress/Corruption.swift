import Foundation
import KVDocs

/// Corruption rounds: damage a copy of a document store's files, then use it with KVDocs'
/// defaults. Every round must end in a clear error (`.corruption` or `.ioError`) or in a
/// database that answers exactly; then `repair` and `salvage` must give a store that
/// `verify` finds clean, holding only documents that were written.
enum CorruptionScenario {
    static let batchCount = 40
    static let batchSize = 20
    static let ids = 500
    static let workloadSeed: UInt64 = 7

    static var batches: [[Workload.Operation]] {
        Workload.batches(seed: workloadSeed, count: batchCount, size: batchSize, ids: ids)
    }

    /// The states the store passes through: after 0, 1, … `batchCount` batches.
    static var states: [[Int: Int]] {
        var model: [Int: Int] = [:]
        var result = [model]
        for batch in batches {
            Workload.apply(batch, to: &model)
            result.append(model)
        }
        return result
    }

    /// Writes the template database: several table files on two levels, a manifest, and a
    /// log holding the last writes.
    static func buildTemplate(at path: String) throws {
        var options = LevelDBOptions()
        options.writeBufferSize = 64 << 10
        let db = try LevelDB(path: path, options: options)
        defer { db.close() }
        let store = try DocumentStore(database: db, schema: try Workload.schema())
        for (i, batch) in batches.enumerated() {
            try Workload.write(batch, to: store, sync: false)
            if i == batchCount / 2 { try db.compact() }
        }
    }

    /// What one round did to the files.
    static func damage(_ path: String, seed: UInt64) throws -> String {
        var rng = SplitMix64(seed: seed)
        let fm = FileManager.default
        let names = try fm.contentsOfDirectory(atPath: path).sorted()
        let tables = names.filter { $0.hasSuffix(".ldb") || $0.hasSuffix(".sst") }
        let files = tables + names.filter { $0.hasSuffix(".log") || $0.hasPrefix("MANIFEST-") }
        func pick(_ list: [String]) -> String { list[Int(rng.next() % UInt64(list.count))] }
        let kind = rng.next() % 20
        switch kind {
        case 0..<12:
            let flips = [1, 10, 100][Int(kind % 3)]
            let name = pick(files)
            var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path + "/" + name)))
            guard !bytes.isEmpty else { return "\(name) is empty: nothing flipped" }
            var offsets: [Int] = []
            for _ in 0..<flips {
                let offset = Int(rng.next() % UInt64(bytes.count))
                bytes[offset] ^= UInt8(1 + rng.next() % 255)
                offsets.append(offset)
            }
            try Data(bytes).write(to: URL(fileURLWithPath: path + "/" + name))
            return
                "flipped \(flips) byte\(flips == 1 ? "" : "s") of \(name) (\(bytes.count) bytes) at \(offsets.prefix(5).map(String.init).joined(separator: ","))\(flips > 5 ? ",…" : "")"
        case 12..<15:
            let name = pick(files)
            let file = path + "/" + name
            let size = (try fm.attributesOfItem(atPath: file)[.size] as? Int) ?? 0
            let length = size == 0 ? 0 : Int(rng.next() % UInt64(size))
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: file))
            try handle.truncate(atOffset: UInt64(length))
            try handle.close()
            return "truncated \(name) from \(size) to \(length) bytes"
        case 15..<17:
            let name = pick(tables)
            try fm.removeItem(atPath: path + "/" + name)
            return "deleted \(name)"
        default:
            let current = path + "/CURRENT"
            switch rng.next() % 4 {
            case 0:
                try Data().write(to: URL(fileURLWithPath: current))
                return "emptied CURRENT"
            case 1:
                try Data("MANIFEST-999999\n".utf8).write(to: URL(fileURLWithPath: current))
                return "pointed CURRENT at a missing manifest"
            case 2:
                try Data((0..<40).map { _ in UInt8(truncatingIfNeeded: rng.next()) }).write(
                    to: URL(fileURLWithPath: current))
                return "filled CURRENT with random bytes"
            default:
                try fm.removeItem(atPath: current)
                return "deleted CURRENT"
            }
        }
    }

    /// An error a damaged database may give: damage or I/O, never anything else.
    static func checkKind(_ error: Error, _ phase: String) throws -> String {
        guard let e = error as? KVDocsError else {
            if let failure = error as? Failure { throw failure }
            throw Failure("\(phase): an error that is not a KVDocsError: \(error)")
        }
        guard e.kind == .corruption || e.kind == .ioError else {
            throw Failure("\(phase): an error of kind \(e.kind), not corruption or I/O: \(e.message)")
        }
        guard !e.message.contains("\n") else { throw Failure("\(phase): a multi-line error: \(e.message)") }
        return "\(e.kind): \(e.message)"
    }

    /// One round, in a child process: damage, use, repair, salvage. Returns what happened.
    static func round(template: String, directory: String, seed: UInt64) throws -> JSONValue {
        let path = directory + "/db"
        try copyDirectory(template, path)
        let damage = try self.damage(path, seed: seed)
        note("damage: \(damage)")  // in the parent's report if the round fails
        var result: [String: JSONValue] = ["seed": .uint(seed), "damage": .string(damage)]
        let allStates = states
        let final = allStates[allStates.count - 1]

        // 1. Use it as found, as an app would: open with its schema, read, query, search,
        //    verify, compact, reindex.
        do {
            let db = try LevelDB(path: path)
            defer { db.close() }
            let store = try DocumentStore(database: db, schema: try Workload.schema())
            let state = try Workload.read(store)
            let people = try store.collection("people")
            // Raw reads too: a full scan, a reverse scan, and a get of every id written.
            _ = try db.forEach { _, _ in }
            _ = try db.forEach(order: .reverse) { _, _ in }
            for id in 0..<ids where try people.get(id: .int(Int64(id))).map(Workload.isWritten) == false {
                throw Failure("get of \(id) returned a document that was never written")
            }
            let adults = try people.count(
                DocumentQuery(conditions: [QueryCondition(field: "age", op: .greaterOrEqual(.int(40)))]))
            let expectedAdults = try people.find().filter {
                ($0["age"].flatMap { if case .int(let a) = $0 { a } else { nil } } ?? 0) >= 40
            }.count
            _ = try store.read { try $0.search("people", "river OR station", options: SearchOptions(limit: 10)) }
            if let tail = db.recoveredTornTail { result["torn_tail"] = .string(tail.description) }
            let report = try store.verify()
            if report.isClean {
                // Verify says the store is sound: then it must hold exactly what was written,
                // or, when a log lost its tail, exactly the state after some batch.
                let exact = state == final
                if !exact {
                    // A log cut short, or one whose damaged end the open cut as a torn tail.
                    let logTailLost =
                        damage.contains(".log") && (damage.hasPrefix("truncated") || db.recoveredTornTail != nil)
                    guard logTailLost, allStates.contains(state) else {
                        throw Failure(
                            "verify is clean but the documents are not what was written (\(state.count) documents, \(final.count) expected)"
                        )
                    }
                }
                guard adults == expectedAdults else {
                    throw Failure("count by index \(adults) ≠ \(expectedAdults) by scan, with verify clean")
                }
                result["as_found"] = .string(
                    exact ? "verified exact" : "verified, a consistent earlier state (log tail lost)")
            } else {
                result["as_found"] = .string(
                    "verify reported \(report.missingEntries + report.danglingEntries + report.badDocuments) problems")
            }
            try db.compact()
            try store.reindex(collection: "people")
            guard try store.verify().isClean else { throw Failure("verify is not clean after reindex") }
        } catch {
            result["as_found"] = .string("error: " + (try checkKind(error, "as found")))
        }

        // 2. Repair and salvage: the store must then be usable and verify clean.
        do {
            let report = try LevelDB.repair(path: path)
            result["repair"] = .string(
                "\(report.tablesBefore) → \(report.tablesAfter) tables, \(report.damagedTables.count) damaged, \(report.truncatedLogs.count) logs cut"
            )
            var options = LevelDBOptions()
            options.createIfMissing = false
            let db = try LevelDB(path: path, options: options)
            defer { db.close() }
            let store = try DocumentStore(database: db, schema: try Workload.schema())
            let salvage = try store.salvage()
            guard salvage.verification.isClean else { throw Failure("verify after salvage: \(salvage.verification)") }
            let state = try Workload.read(store)
            try Workload.write([.upsert(id: ids + 1, version: 0)], to: store, sync: true)
            guard try store.verify().isClean else {
                throw Failure("verify after a write following salvage is not clean")
            }
            result["kept"] = .int(Int64(state.count))
            result["lost"] = .int(Int64(final.keys.filter { state[$0] == nil }.count))
            result["quarantined"] = .int(Int64(salvage.quarantined.count))
            result["salvaged"] = true
        } catch let failure as Failure {
            throw failure
        } catch {
            result["salvaged"] = false
            result["repair_error"] = .string(try checkKind(error, "repair"))
        }
        return .object(JSONObject(result))
    }

    /// Runs `rounds` rounds, each in a child process, and reports the figures.
    static func run(rounds: Int, seed: UInt64, timeout: Double, verbose: Bool, keep: Bool = false) throws -> Figures {
        let work = try makeWorkDirectory("corrupt")
        defer { if !keep { try? FileManager.default.removeItem(atPath: work) } else { note("kept \(work)") } }
        let template = work + "/template"
        try buildTemplate(at: template)
        var figures = Figures(scenario: "corruption")
        for r in 0..<rounds {
            let roundSeed = seed &+ UInt64(r)
            let directory = work + "/round-\(r)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { if !keep { try? FileManager.default.removeItem(atPath: directory) } }
            let child = try runChild(
                ["corrupt-round", "--template", template, "--directory", directory, "--seed", String(roundSeed)],
                timeout: timeout)
            figures.rounds += 1
            switch child.ending {
            case .exited(0):
                let line = child.stdout.split(separator: "\n").last.map(String.init) ?? ""
                let value = try? JSONValue(parsing: Array(line.utf8))
                let asFound = value?["as_found"].flatMap { if case .string(let s) = $0 { s } else { nil } } ?? "?"
                figures.count(
                    asFound.hasPrefix("error")
                        ? "as found: clear error"
                        : asFound.hasPrefix("verified")
                            ? "as found: verified exact or consistent" : "as found: verify reported the damage")
                if asFound.hasPrefix("error") && asFound.contains(directory + "/db/") {
                    figures.count("as found: clear error naming the file")
                }
                if value?["torn_tail"] != nil { figures.count("as found: a damaged log end cut as a torn tail") }
                if case .bool(true)? = value?["salvaged"] {
                    figures.count("repaired and salvaged, verify clean")
                    if case .int(let lost)? = value?["lost"] {
                        figures.add("documents lost in salvaged rounds", Int(lost))
                    }
                } else {
                    figures.count("repair ended in a clear error")
                }
                if verbose { note("round \(r) seed \(roundSeed): \(line)") }
            case .exited(let status):
                figures.fail("seed \(roundSeed): exit \(status): \(child.stderr.suffix(600))")
            case .signaled(let signal):
                figures.fail("seed \(roundSeed): CRASH, signal \(signal): \(child.stderr.suffix(600))")
            case .timedOut:
                figures.fail("seed \(roundSeed): HANG, killed after \(Int(timeout)) s")
            }
        }
        return figures
    }
}
