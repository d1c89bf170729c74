import Foundation
import KVDocs

#if canImport(Glibc)
import Glibc
#endif

/// Crash rounds: a child process writes documents (batches, some synced), changes the
/// schema (building indexes), reindexes and imports, acknowledging each finished step on
/// a pipe, and is killed with SIGKILL at a random moment. The parent then opens the store
/// and checks every promise: acknowledged writes present, batches whole, the change feed
/// gap-free and matching the writes, imports whole per batch, `verify` clean.
enum CrashScenario {
    static let ids = 300
    static let importLines = 300
    static let importBatch = 100
    static let importBase = 10_000

    enum Action {
        case batch([Workload.Operation], sync: Bool)
        case toggleSchema
        case reindex
        case importFile(version: Int)
    }

    /// The actions of one child, a pure function of the round's seed.
    static func actions(seed: UInt64, round: Int) -> [Action] {
        var rng = SplitMix64(seed: seed ^ 0x5EED)
        let batches = Workload.batches(seed: seed, count: 4000, size: 8, ids: ids)
        var result: [Action] = []
        var next = 0
        for index in 0..<4000 {
            let r = rng.next() % 100
            switch r {
            case 0..<85:
                let size = 1 + Int(rng.next() % 8)
                result.append(.batch(Array(batches[next].prefix(size)), sync: rng.next() % 3 == 0))
                next += 1
            case 85..<91: result.append(.toggleSchema)
            case 91..<95: result.append(.reindex)
            default: result.append(.importFile(version: round * 100_000 + index))
            }
        }
        return result
    }

    /// The schema the child toggles to: one more secondary index and one more text index.
    static func extendedSchema() throws -> DocumentSchema {
        var schema = try Workload.schema()
        var people = try schema.collection("people")
        people.indexes.append(SecondaryIndexDefinition(name: "by_name", fields: [FieldPath("name")]))
        people.text.append(TextIndexDefinition(name: "city_text", fields: [FieldPath("city")]))
        schema.collections["people"] = people
        return schema
    }

    /// The child: runs the actions until killed, printing `ack N` after action N finishes.
    static func child(path: String, seed: UInt64, round: Int) throws {
        let db = try LevelDB(path: path)
        let store = try DocumentStore(database: db)
        let base = try Workload.schema()
        if try store.schema.collections["people"] == nil { try store.apply(base) }
        let extended = try extendedSchema()
        let importFile = path + "-import-\(round).jsonl"
        func ack(_ text: String) { FileHandle.standardOutput.write(Data((text + "\n").utf8)) }
        ack("ready \(try store.lastSequence)")
        for (index, action) in actions(seed: seed, round: round).enumerated() {
            switch action {
            case .batch(let ops, let sync):
                try Workload.write(ops, to: store, sync: sync)
            case .toggleSchema:
                try store.apply(try store.schema == base ? extended : base)
            case .reindex:
                try store.reindex(collection: "people")
            case .importFile(let version):
                let lines = (0..<importLines).map { i in
                    String(
                        decoding: (try? Workload.person(id: importBase + i, version: version).canonicalData())
                            ?? Data(), as: UTF8.self)
                }
                try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: importFile))
                try store.importJSONLines(into: "people", path: importFile, batchSize: importBatch)
            }
            ack("ack \(index)")
        }
    }

    /// What the parent knows before a round: the batch model and the change feed's end.
    struct Model {
        var people: [Int: Int] = [:]  // ids below importBase → version
        var sequence: Int64 = 0
    }

    /// Checks the store after a kill against the model; returns the new model.
    static func check(path: String, seed: UInt64, round: Int, acked: Int, before: Model, figures: inout Figures) throws
        -> Model
    {
        let db = try LevelDB(path: path)
        defer { db.close() }
        let store = try DocumentStore(database: db)  // finishes an interrupted index build
        if try store.schema.collections["people"] == nil {
            guard acked < 0, before.people.isEmpty else {
                throw Failure("the schema is gone after acknowledged writes")
            }
            figures.count("killed before the schema was stored")
            return before
        }
        let report = try store.verify()
        guard report.isClean else { throw Failure("verify after the kill: \(report)") }

        let actions = self.actions(seed: seed, round: round)
        // The batch writes' model after the acknowledged actions, and after one more.
        var model = before.people
        var expectedChanges: [(Int, DocumentChange.Operation)] = []
        var states: [(people: [Int: Int], changes: Int)] = []
        func record() { states.append((model, expectedChanges.count)) }
        var lastImport: (version: Int, acked: Bool)?
        if acked < 0 { record() }  // nothing acknowledged: the state before the round
        for (index, action) in actions.enumerated() where index <= acked + 1 {
            switch action {
            case .batch(let ops, _):
                for op in ops {
                    switch op {
                    case .upsert(let id, let version):
                        expectedChanges.append((id, model[id] == nil ? .insert : .update))
                        model[id] = version
                    case .delete(let id):
                        if model[id] != nil { expectedChanges.append((id, .delete)) }
                        model[id] = nil
                    }
                }
            case .importFile(let version):
                lastImport = (version, index <= acked)
            default: break
            }
            // The state after the acknowledged actions, then after the one in flight.
            if index == acked || index == acked + 1 { record() }
        }
        // Read back.
        var people: [Int: Int] = [:]
        var imported: [Int: Int] = [:]
        for document in try store.collection("people").find() {
            guard Workload.isWritten(document), case .int(let id)? = document["id"], case .int(let v)? = document["v"]
            else {
                throw Failure("a document that was never written: \(document.compactDescription.prefix(200))")
            }
            if id >= importBase { imported[Int(id)] = Int(v) } else { people[Int(id)] = Int(v) }
        }
        // The states the documents match (an upsert that rewrites a document as it was
        // leaves two states with the same documents and different change feeds).
        let matching = states.indices.filter { states[$0].people == people }
        guard !matching.isEmpty else {
            throw Failure(
                "the documents match no state after the acknowledged writes (a lost acknowledged write or a torn batch): \(people.count) documents, \(states.map { $0.people.count }) expected"
            )
        }
        // The change feed: gap-free from the start, and, for the batch writes, exactly their changes.
        let changes = try store.changes(since: before.sequence)
        var sequence = before.sequence
        for change in changes {
            guard change.sequence == sequence + 1 else {
                throw Failure("change feed gap or disorder: \(change.sequence) after \(sequence)")
            }
            sequence = change.sequence
        }
        let last = try store.lastSequence
        guard sequence == last else {
            throw Failure("the change feed ends at \(sequence), the store's last sequence is \(last)")
        }
        let batchChanges = changes.compactMap { change -> (Int, DocumentChange.Operation)? in
            guard case .int(let id) = change.id, id < importBase else { return nil }
            return (Int(id), change.operation)
        }
        let landed = matching.first { index in
            let expected = expectedChanges.prefix(states[index].changes)
            return batchChanges.count == expected.count
                && zip(batchChanges, expected).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        }
        guard let landed else {
            throw Failure(
                "the change feed holds \(batchChanges.count) changes of the batch writes, \(matching.map { states[$0].changes }) expected, or they differ"
            )
        }
        // Imports: a finished import is whole; one cut by the kill holds a prefix of its batches.
        if let lastImport {
            let fresh = (0..<importLines).filter { imported[importBase + $0] == lastImport.version }
            if lastImport.acked {
                guard fresh.count == importLines else {
                    throw Failure("an acknowledged import holds \(fresh.count) of \(importLines) documents")
                }
            } else {
                guard fresh.count % importBatch == 0, fresh == Array(0..<fresh.count) else {
                    throw Failure("an interrupted import holds \(fresh.count) documents, not a prefix of whole batches")
                }
                figures.count("import cut by the kill (batches kept: \(fresh.count / importBatch))")
            }
        }
        figures.count(
            landed == 0
                ? "kill landed after the acknowledged action" : "kill landed after the action in flight finished")
        return Model(people: people, sequence: sequence)
    }

    static func run(rounds: Int, seed: UInt64, maximumDelay: Double, verbose: Bool) throws -> Figures {
        let work = try makeWorkDirectory("crash")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let path = work + "/db"
        var figures = Figures(scenario: "crash")
        var model = Model()
        var rng = SplitMix64(seed: seed)
        for round in 0..<rounds {
            let roundSeed = seed &+ UInt64(round) &* 7919
            let delay = 0.02 + Double(rng.next() % 10_000) / 10_000 * maximumDelay
            let child = try runChildKilled(
                ["crash-child", "--path", path, "--seed", String(roundSeed), "--round", String(round)], after: delay)
            figures.rounds += 1
            let lines = child.stdout.split(separator: "\n")
            let acks = lines.compactMap { $0.hasPrefix("ack ") ? Int($0.dropFirst(4)) : nil }
            let acked = acks.last ?? -1
            if case .exited(let status) = child.ending, status != 0 {
                figures.fail(
                    "round \(round) seed \(roundSeed): the child failed before the kill (exit \(status)): \(child.stderr.suffix(600))"
                )
                break
            }
            if !lines.contains(where: { $0.hasPrefix("ready") }) { figures.count("killed while opening") }
            let actions = actions(seed: roundSeed, round: round)
            for index in 0...max(0, acked) where acked >= 0 {
                switch actions[index] {
                case .batch(_, let sync):
                    figures.count(sync ? "acknowledged synced batches" : "acknowledged batches without sync")
                case .toggleSchema: figures.count("acknowledged schema changes (index builds)")
                case .reindex: figures.count("acknowledged reindexes")
                case .importFile: figures.count("acknowledged imports")
                }
            }
            if acked + 1 < actions.count {
                switch actions[acked + 1] {
                case .batch: figures.count("killed during: batch")
                case .toggleSchema: figures.count("killed during: schema change")
                case .reindex: figures.count("killed during: reindex")
                case .importFile: figures.count("killed during: import")
                }
            }
            do {
                model = try check(
                    path: path, seed: roundSeed, round: round, acked: acked, before: model, figures: &figures)
                if verbose {
                    note(
                        "round \(round): \(acked + 1) actions acknowledged, \(model.people.count) documents, sequence \(model.sequence)"
                    )
                }
            } catch {
                figures.fail(
                    "round \(round) seed \(roundSeed) (killed after \(String(format: "%.3f", delay)) s, \(acked + 1) actions acknowledged): \(error)"
                )
                break
            }
        }
        return figures
    }
}

/// Runs this executable with `arguments` and kills it with SIGKILL after `delay` seconds
/// (``runChild(_:timeout:)``'s timeout, here the expected ending).
/// Runs this executable with `arguments`, killing it with SIGKILL as soon as it prints a
/// line on which `trigger` holds, or after `timeout` seconds. A child that ends first is
/// not killed.
func runChildKilled(_ arguments: [String], whenLine trigger: @escaping (String) -> Bool, orAfter timeout: Double) throws
    -> ChildResult
{
    var result = try runChild(arguments, timeout: timeout, killWhen: trigger)
    if result.ending == .timedOut { result.ending = .signaled(SIGKILL) }
    return result
}

func runChildKilled(_ arguments: [String], after delay: Double) throws -> ChildResult {
    var result = try runChild(arguments, timeout: delay)
    if result.ending == .timedOut { result.ending = .signaled(SIGKILL) }
    return result
}
