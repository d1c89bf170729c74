import Foundation
import KVDocs

/// Power-loss rounds: each round opens the store, writes batches of document upserts and
/// deletes (about a quarter of them with `sync`), recording where each batch's record ends
/// in the log, and closes. It then leaves the log as a power loss could: everything up to
/// the end of the last synced batch intact, and from a random offset past it the rest cut
/// off, zeroed or garbled (sometimes with zeroes or garbage past the old end, as a file
/// system that grew the file before writing its data leaves it). The next open must keep
/// every synced batch, hold exactly the batches whose records were whole (a prefix of the
/// writes), report the torn tail it cut, and `verify` clean, with a gap-free change feed.
enum PowerLossScenario {
    static let ids = 200
    static let batchesPerRound = 24

    enum Damage: String, CaseIterable {
        case truncated, zeroed, garbled
    }

    /// One batch of the round: its operations, whether it was synced, and where its record
    /// ends in the log.
    struct Written {
        var operations: [Workload.Operation]
        var sync: Bool
        var end: Int
    }

    /// The newest log of `path` by number, and its size.
    static func newestLog(_ path: String) throws -> (name: String, size: Int) {
        let logs = try FileManager.default.contentsOfDirectory(atPath: path).compactMap { name -> (UInt64, String)? in
            guard name.hasSuffix(".log"), let n = UInt64(name.dropLast(4)) else { return nil }
            return (n, name)
        }
        guard let newest = logs.max(by: { $0.0 < $1.0 })?.1 else { throw Failure("\(path) has no log file") }
        return (newest, try size(path + "/" + newest))
    }

    static func size(_ file: String) throws -> Int {
        guard let size = try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int else {
            throw Failure("cannot read the size of \(file)")
        }
        return size
    }

    /// The changes `batch` makes to `model`: one per upsert, one per delete of a present id.
    static func apply(_ batch: [Workload.Operation], to model: inout [Int: Int]) -> Int {
        var changes = 0
        for op in batch {
            switch op {
            case .upsert(let id, let version):
                model[id] = version
                changes += 1
            case .delete(let id):
                if model.removeValue(forKey: id) != nil { changes += 1 }
            }
        }
        return changes
    }

    static func run(rounds: Int, seed: UInt64, verbose: Bool) throws -> Figures {
        let work = try makeWorkDirectory("power-loss")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let path = work + "/db"
        var figures = Figures(scenario: "power-loss")
        // The schema, applied once; the next open turns its log into a table.
        do {
            let db = try LevelDB(path: path)
            _ = try DocumentStore(database: db, schema: try Workload.schema())
            db.close()
        }
        var model: [Int: Int] = [:]
        var sequence: Int64 = 0
        var version = 0
        var rng = SplitMix64(seed: seed)
        for round in 0..<rounds {
            figures.rounds += 1
            do {
                try self.round(
                    path: path, model: &model, sequence: &sequence, version: &version, rng: &rng, figures: &figures,
                    verbose: verbose, round: round)
            } catch {
                figures.fail("round \(round) (seed \(seed)): \(error)")
                break
            }
        }
        return figures
    }

    static func round(
        path: String, model: inout [Int: Int], sequence: inout Int64, version: inout Int,
        rng: inout SplitMix64, figures: inout Figures, verbose: Bool, round: Int
    ) throws {
        // 1. Write: batches over the model, some synced, each one's end in the log recorded.
        let before = model
        var written: [Written] = []
        let log: String
        let start: Int
        do {
            let db = try LevelDB(path: path)
            defer { db.close() }
            if let tail = db.recoveredTornTail { throw Failure("an open after a clean close cut a tail: \(tail)") }
            let store = try DocumentStore(database: db)
            (log, start) = try newestLog(path)
            var planned = model
            for _ in 0..<batchesPerRound {
                var ops: [Workload.Operation] = []
                var touched = Set<Int>()
                for _ in 0..<(1 + Int(rng.next() % 4)) {
                    let id = Int(rng.next() % UInt64(ids))
                    guard touched.insert(id).inserted else { continue }
                    if planned[id] != nil && rng.next() % 4 == 0 {
                        ops.append(.delete(id: id))
                        planned[id] = nil
                    } else {
                        version += 1
                        ops.append(.upsert(id: id, version: version))
                        planned[id] = version
                    }
                }
                let sync = rng.next() % 4 == 0
                try Workload.write(ops, to: store, sync: sync)
                let now = try newestLog(path)
                guard now.name == log else { throw Failure("the writes switched from \(log) to \(now.name)") }
                written.append(Written(operations: ops, sync: sync, end: now.size))
            }
        }
        let file = path + "/" + log
        let size = try self.size(file)
        guard size == written.last?.end else {
            throw Failure("closing changed \(log) from \(written.last?.end ?? -1) to \(size) bytes")
        }

        // 2. The power loss: intact up to the last synced batch's end, damaged from a random
        //    offset past it.
        let lastSynced = written.lastIndex { $0.sync }
        let floor = lastSynced.map { written[$0].end } ?? start
        let cut = floor + Int(rng.next() % UInt64(size - floor + 1))
        let damage = Damage.allCases[Int(rng.next() % 3)]
        let extra = rng.next() % 2 == 0 ? 0 : Int(rng.next() % 10_000)
        guard var bytes = readBytes(file) else { throw Failure("cannot read \(file)") }
        switch damage {
        case .truncated:
            bytes.removeSubrange(cut...)
        case .zeroed:
            bytes.replaceSubrange(cut..., with: [UInt8](repeating: 0, count: size - cut + extra))
        case .garbled:
            bytes.replaceSubrange(
                cut..., with: (0..<(size - cut + extra)).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
        }
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        let kept = written.filter { $0.end <= cut }.count  // ends grow: the batches kept are a prefix
        let keptEnd = kept == 0 ? start : written[kept - 1].end
        figures.count("damage: \(damage)" + (damage != .truncated && extra > 0 ? ", past the old end" : ""))
        figures.add("batches written with sync", written.filter(\.sync).count)
        figures.add("batches written without sync", written.filter { !$0.sync }.count)
        figures.add("batches without sync lost", written.count - kept)
        figures.add("batches without sync kept", written.prefix(kept).filter { !$0.sync }.count)
        if floor == size { figures.count("rounds whose last batch was synced (no bytes past it to tear)") }

        // 3. Open as an app would after the power loss, and check.
        let db = try LevelDB(path: path)
        defer { db.close() }
        let store = try DocumentStore(database: db)
        if bytes.count > keptEnd {
            guard let tail = db.recoveredTornTail else {
                throw Failure(
                    "\(damage) at \(cut) of \(size) bytes (+\(extra)): nothing reported, \(bytes.count - keptEnd) bytes after the last whole record at \(keptEnd)"
                )
            }
            guard tail.logFile == log, tail.offset == keptEnd, tail.droppedBytes == bytes.count - keptEnd,
                (try? self.size(tail.savedAs)) == tail.droppedBytes
            else {
                throw Failure(
                    "\(damage) at \(cut): the report \(tail) does not match: \(log), offset \(keptEnd), \(bytes.count - keptEnd) bytes"
                )
            }
            figures.count("torn tail reported and cut")
        } else {
            guard db.recoveredTornTail == nil else {
                throw Failure("cut on a record boundary, yet reported: \(String(describing: db.recoveredTornTail))")
            }
            figures.count("log ended on a record boundary: nothing to report")
        }
        guard kept > (lastSynced ?? -1) else {
            throw Failure("a synced batch is gone (\(kept) kept, batch \(lastSynced ?? -1) synced)")
        }
        var expected = before
        var expectedChanges = 0
        for batch in written.prefix(kept) { expectedChanges += apply(batch.operations, to: &expected) }
        let found = try Workload.read(store)
        guard found == expected else {
            let batches = (0...written.count).filter { n in
                var state = before
                for batch in written.prefix(n) { _ = apply(batch.operations, to: &state) }
                return state == found
            }
            throw Failure(
                "\(damage) at \(cut) of \(size): the documents are not those of the \(kept) batches whose records were whole (they match \(batches.isEmpty ? "no prefix" : "the first \(batches) batches"))"
            )
        }
        let report = try store.verify()
        guard report.isClean else { throw Failure("verify after the power loss: \(report)") }
        let changes = try store.changes(since: sequence)
        var last = sequence
        for change in changes {
            guard change.sequence == last + 1 else {
                throw Failure("change feed gap or disorder: \(change.sequence) after \(last)")
            }
            last = change.sequence
        }
        let lastSequence = try store.lastSequence
        guard last == lastSequence, changes.count == expectedChanges else {
            throw Failure(
                "the change feed has \(changes.count) new changes ending at \(last), \(expectedChanges) expected ending at \(lastSequence)"
            )
        }
        model = expected
        sequence = last
        if verbose {
            note(
                "round \(round): \(damage) at \(cut) of \(size) (+\(extra)); \(kept) of \(written.count) batches kept, last synced \(lastSynced.map(String.init) ?? "none"); \(model.count) documents"
            )
        }
    }

    /// The bytes of `file`.
    static func readBytes(_ file: String) -> [UInt8]? {
        (try? Data(contentsOf: URL(fileURLWithPath: file))).map { [UInt8]($0) }
    }
}
