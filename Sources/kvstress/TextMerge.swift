import Foundation
import KVDocs

#if canImport(Glibc)
import Glibc
#endif

/// Kills during text index merges: a child process writes small batches to a collection
/// with a text index (each batch a new segment; segments merge in tiers of 8, a bounded
/// step per write, the merge in progress recorded under `("m",)`) and now and then runs
/// `optimize` in small steps, acknowledging each write on stdout, and is killed with
/// SIGKILL. Rounds chain: each child opens what the last kill left, so kills also land
/// while an interrupted merge is resumed. After each kill the parent checks the store:
/// `verify` clean; the documents exactly those of the acknowledged writes (the write in
/// flight landed whole or not at all); search answers, statistics and document
/// frequencies equal to a brute-force count over the documents; and, on a copy, a write
/// and `optimize` work and finish any interrupted merge.
enum TextMergeScenario {
    static let ids = 1500
    static let collection = "notes"
    static let indexName = "body_text"
    static let schemaJSON = #"""
        {"collections": {"notes": {"primaryKey": "id", "text": [{"name": "body_text", "fields": ["title", "body"]}]}}}
        """#

    /// A small vocabulary (with shared prefixes), so terms repeat in every segment.
    static let vocabulary = [
        "river", "rivet", "rival", "road", "roam", "rock", "rocket", "stone", "storm", "story",
        "train", "trail", "trait", "night", "nine", "north", "note", "ocean", "open", "orbit",
        "paper", "park", "path", "quiet", "quick", "quill", "salt", "sand", "sail", "tide",
        "time", "tiger", "under", "urban", "valley", "vapor", "wind", "winter", "wire", "yard"
    ]

    /// The title and body words of `id` at `version`: a pure function of both.
    static func words(id: Int, version: Int) -> (title: [String], body: [String]) {
        var rng = SplitMix64(seed: UInt64(id) &* 1_000_003 &+ UInt64(version) &* 7 &+ 11)
        func pick() -> String { vocabulary[Int(rng.next() % UInt64(vocabulary.count))] }
        let title = (0..<(1 + Int(rng.next() % 3))).map { _ in pick() }
        let body = (0..<(3 + Int(rng.next() % 14))).map { _ in pick() }
        return (title, body)
    }

    static func document(id: Int, version: Int) -> JSONValue {
        let (title, body) = words(id: id, version: version)
        return .object([
            "id": .int(Int64(id)), "v": .int(Int64(version)),
            "title": .string(title.joined(separator: " ")), "body": .string(body.joined(separator: " "))
        ])
    }

    enum Operation {
        case upsert(id: Int, version: Int)
        case delete(id: Int)
    }

    enum Action {
        case batch([Operation])
        /// `optimize` in steps that read at most this many postings.
        case optimize(stepBudget: Int)
    }

    /// How a round's kill is aimed.
    enum Aim: Int, CaseIterable {
        /// Soon after the child acknowledges a write that left a merge in progress, or
        /// begins a write that continues one (alternate rounds).
        case merge
        /// A random delay after the child starts an `optimize`.
        case optimize
        /// A random delay after the child starts.
        case anywhere
    }

    /// The actions of one child, a pure function of the round's seed: batches of 1–16
    /// upserts and deletes; `optimize` (with a step budget of 1–64 postings, so that each
    /// step moves one to four terms and an optimize takes tens of steps)
    /// every 40 actions or so in rounds aimed at it, about one action in 300 otherwise.
    static func actions(seed: UInt64, aim: Aim) -> [Action] {
        var rng = SplitMix64(seed: seed ^ 0x7E47)
        var result: [Action] = []
        for index in 0..<20_000 {
            let optimizeEvery: UInt64 = aim == .optimize ? 40 : 300
            if index > 0, rng.next() % optimizeEvery == 0 {
                result.append(.optimize(stepBudget: 1 + Int(rng.next() % 64)))
                continue
            }
            let size = 1 + Int(rng.next() % 16)
            var touched = Set<Int>()
            var ops: [Operation] = []
            while ops.count < size {
                let id = Int(rng.next() % UInt64(ids))
                guard touched.insert(id).inserted else { continue }
                // A version seeds the document's words: from the round's seed and the place.
                let version =
                    Int(truncatingIfNeeded: (seed % 1_000_000) &* 200_000 &+ UInt64(index * 8 + ops.count))
                    & 0x3FFF_FFFF_FFFF
                ops.append(rng.next() % 4 == 0 ? .delete(id: id) : .upsert(id: id, version: version))
            }
            result.append(.batch(ops))
        }
        return result
    }

    static func apply(_ ops: [Operation], to model: inout [Int: Int]) {
        for op in ops {
            switch op {
            case .upsert(let id, let version): model[id] = version
            case .delete(let id): model[id] = nil
            }
        }
    }

    static var textSubspace: Subspace { Subspace(["t", .string(collection), .string(indexName)]) }

    /// The index's structure as stored: whether a merge is in progress, the segments, and
    /// whether the tiers call for a merge (a run of 8 adjacent segments of one level).
    struct Structure {
        var merging: Bool
        var segments: Int
        var mergeDue: Bool
    }

    static func structure(_ db: LevelDB) throws -> Structure {
        let text = textSubspace
        let merging = try db.get(text.pack(["m"])) != nil
        var segments: [(order: Int, level: Int)] = []
        for entry in try db.entries(text.subspace(["g"]).range).collect() {
            var values: [Int] = []
            var value = 0, shift = 0
            for byte in entry.value {
                value |= Int(byte & 0x7F) << shift
                shift += 7
                if byte & 0x80 == 0 {
                    values.append(value)
                    value = 0
                    shift = 0
                }
            }
            guard values.count == 5 else { throw Failure("a segment record that is not five varints: \(entry.value)") }
            segments.append((values[0], values[1]))
        }
        segments.sort { $0.order < $1.order }
        var due = false
        var start = 0
        while start < segments.count {
            var end = start + 1
            while end < segments.count && segments[end].level == segments[start].level { end += 1 }
            if end - start >= 8 { due = true }
            start = end
        }
        return Structure(merging: merging, segments: segments.count, mergeDue: due)
    }

    static func makeStore(_ path: String) throws {
        let db = try LevelDB(path: path)
        defer { db.close() }
        _ = try DocumentStore(
            database: db, schema: try DocumentSchema(json: Data(schemaJSON.utf8), file: "text-merge schema"))
    }

    /// The child: runs the actions until killed. Prints `ready m=M segments=S` after the
    /// open, `begin I batch merge=W` (W: `continue` when a merge is in progress, `start`
    /// when the tiers call for one, else `none`) or `begin I
    /// optimize` before action I, and `ack I m=M segments=S` after it (with `seconds=T`,
    /// the time it took, after an optimize).
    static func child(path: String, seed: UInt64, aim: Aim) throws {
        let db = try LevelDB(path: path)
        defer { db.close() }
        let store = try DocumentStore(database: db)
        if try store.schema.collections[collection] == nil {
            try store.apply(try DocumentSchema(json: Data(schemaJSON.utf8), file: "text-merge schema"))
        }
        func say(_ text: String) { FileHandle.standardOutput.write(Data((text + "\n").utf8)) }
        var state = try structure(db)
        say("ready m=\(state.merging ? 1 : 0) segments=\(state.segments)")
        var elapsed: Double?
        var steps = 0
        for (index, action) in actions(seed: seed, aim: aim).enumerated() {
            switch action {
            case .batch(let ops):
                say("begin \(index) batch merge=\(state.merging ? "continue" : state.mergeDue ? "start" : "none")")
                try store.write { b in
                    for op in ops {
                        switch op {
                        case .upsert(let id, let version):
                            _ = try b.upsert(collection, document(id: id, version: version))
                        case .delete(let id): _ = try b.delete(collection, id: .int(Int64(id)))
                        }
                    }
                }
            case .optimize(let budget):
                say("begin \(index) optimize")
                let start = Date()
                steps = try store.optimize(collection: collection, stepBudget: budget)
                elapsed = Date().timeIntervalSince(start)
            }
            state = try structure(db)
            say(
                "ack \(index) m=\(state.merging ? 1 : 0) segments=\(state.segments)"
                    + (elapsed.map { " steps=\(steps) seconds=\($0)" } ?? ""))
            elapsed = nil
            // Paced in rounds aimed at merges, so that the parent's kill lands near the
            // acknowledgement it aims at (a write takes about a millisecond).
            if aim == .merge { usleep(2000) }
        }
    }

    // MARK: - Brute force

    /// A query with its FTS5 text and its meaning over a document's two columns.
    struct Query {
        var text: String
        var matches: (_ title: [String], _ body: [String]) -> Bool
    }

    static func queries(seed: UInt64) -> [Query] {
        var rng = SplitMix64(seed: seed ^ 0x9E3779B9)
        func word() -> String { vocabulary[Int(rng.next() % UInt64(vocabulary.count))] }
        func has(_ w: String, _ title: [String], _ body: [String]) -> Bool { title.contains(w) || body.contains(w) }
        func phrase(_ a: String, _ b: String, _ column: [String]) -> Bool {
            zip(column, column.dropFirst()).contains { $0 == a && $1 == b }
        }
        var result: [Query] = []
        for _ in 0..<3 {
            let w = word()
            result.append(Query(text: w) { has(w, $0, $1) })
        }
        let (a, b, c, d, e, f, g, h) = (word(), word(), word(), word(), word(), word(), word(), word())
        result.append(Query(text: "\"\(a) \(b)\"") { phrase(a, b, $0) || phrase(a, b, $1) })
        result.append(Query(text: "\(c) OR \(d)") { has(c, $0, $1) || has(d, $0, $1) })
        result.append(Query(text: "\(e) NOT \(f)") { has(e, $0, $1) && !has(f, $0, $1) })
        result.append(Query(text: "\(g) \(h)") { has(g, $0, $1) && has(h, $0, $1) })
        let prefix = String(word().prefix(2 + Int(rng.next() % 2)))
        result.append(Query(text: "\(prefix)*") { title, body in (title + body).contains { $0.hasPrefix(prefix) } })
        let t = word()
        result.append(Query(text: "title: \(t)") { title, _ in title.contains(t) })
        return result
    }

    /// Checks the text index's answers and statistics against a brute-force count over
    /// `model` (id → version).
    static func checkText(_ store: DocumentStore, model: [Int: Int], seed: UInt64, _ what: String) throws {
        let docs = Dictionary(uniqueKeysWithValues: model.map { ($0.key, words(id: $0.key, version: $0.value)) })
        let stats = try store.read { try $0.textStatistics(collection) }
        let tokens = docs.values.reduce(0) { $0 + $1.title.count + $1.body.count }
        guard stats.documents == docs.count, stats.tokens == tokens else {
            throw Failure(
                "\(what): the statistics are \(stats.documents) rows and \(stats.tokens) tokens, the documents \(docs.count) and \(tokens)"
            )
        }
        var frequencies: [String: Int] = [:]
        for d in docs.values { for w in Set(d.title + d.body) { frequencies[w, default: 0] += 1 } }
        var stored: [String: Int] = [:]
        for info in try store.read({ try $0.textTerms(collection) }) { stored[info.term] = info.documents }
        guard stored == frequencies else {
            let wrong = Set(stored.keys).union(frequencies.keys).filter { stored[$0] != frequencies[$0] }.sorted()
                .prefix(5)
            throw Failure(
                "\(what): document frequencies differ from the documents' for \(wrong.map { "\($0): \(stored[$0] ?? 0) stored, \(frequencies[$0] ?? 0) counted" })"
            )
        }
        let notes = try store.collection(collection)
        for query in queries(seed: seed) {
            var found = Set<Int>()
            for hit in try notes.search(query.text, options: SearchOptions(includeDocuments: false)) {
                guard case .int(let id) = hit.id else {
                    throw Failure("\(what): a hit with id \(hit.id.compactDescription)")
                }
                found.insert(Int(id))
            }
            let expected = Set(docs.filter { query.matches($0.value.title, $0.value.body) }.keys)
            guard found == expected else {
                throw Failure(
                    "\(what): \(query.text) finds \(found.count) documents, brute force \(expected.count) (missing \(expected.subtracting(found).sorted().prefix(5)), extra \(found.subtracting(expected).sorted().prefix(5)))"
                )
            }
        }
    }

    /// The documents as id → version, each checked to be one that was written.
    static func read(_ store: DocumentStore) throws -> [Int: Int] {
        var state: [Int: Int] = [:]
        for d in try store.collection(collection).find() {
            guard case .int(let id)? = d["id"], case .int(let v)? = d["v"], id >= 0, v >= 0,
                d == document(id: Int(id), version: Int(v))
            else {
                throw Failure("a document that was never written: \(d.compactDescription.prefix(200))")
            }
            state[Int(id)] = Int(v)
        }
        return state
    }

    // MARK: - Rounds

    static func run(rounds: Int, seed: UInt64, maximumDelay: Double, verbose: Bool) throws -> Figures {
        let work = try makeWorkDirectory("text-merge")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let live = work + "/live", copy = work + "/check"
        try makeStore(live)
        var figures = Figures(scenario: "text-merge")
        var model: [Int: Int] = [:]
        var rng = SplitMix64(seed: seed)
        // The times optimizes took (those that merged anything): rounds aimed at optimize
        // kill within their median.
        var optimizeTimes: [Double] = []
        for round in 0..<rounds {
            let roundSeed = seed &+ UInt64(round) &* 7919
            let aim = Aim.allCases[round % Aim.allCases.count]
            let actions = actions(seed: roundSeed, aim: aim)
            let arguments = [
                "text-merge-child", "--path", live, "--seed", String(roundSeed), "--aim", String(aim.rawValue)
            ]
            let planned: String
            let child: ChildResult
            switch aim {
            case .merge:
                // Soon after the n-th acknowledgement that left a merge in progress (the
                // kill lands between writes or in the next one), or soon after the child
                // begins the n-th write that does merge work (it lands in that write).
                let n = 1 + Int(rng.next() % 4)
                let inWrite = (round / Aim.allCases.count) % 2 == 1
                let delay = rng.next() % 2 == 0 ? 0 : Double(rng.next() % (inWrite ? 1000 : 2000)) / 1_000_000
                planned =
                    "\(String(format: "%.4f", delay)) s after "
                    + (inWrite
                        ? "write #\(n) continuing a merge began"
                        : "the acknowledgement #\(n) that left a merge in progress")
                var seen = 0
                child = try runChild(
                    arguments, timeout: 30,
                    killWhen: { line in
                        if inWrite {
                            guard line.hasPrefix("begin "), line.hasSuffix(" merge=continue") else { return false }
                        } else {
                            guard line.hasPrefix("ack "), line.contains(" m=1 ") else { return false }
                        }
                        seen += 1
                        return seen == n
                    }, killDelay: delay)
            case .optimize:
                let delay =
                    Double(rng.next() % 10_000) / 10_000
                    * (optimizeTimes.isEmpty ? 0.05 : optimizeTimes.sorted()[optimizeTimes.count / 2])
                planned = "\(String(format: "%.4f", delay)) s after an optimize began"
                child = try runChild(
                    arguments, timeout: 30, killWhen: { $0.hasSuffix(" optimize") && $0.hasPrefix("begin ") },
                    killDelay: delay)
            case .anywhere:
                let delay = 0.02 + Double(rng.next() % 10_000) / 10_000 * maximumDelay
                planned = "after \(String(format: "%.3f", delay)) s"
                child = try runChild(arguments, timeout: delay)
            }
            figures.rounds += 1
            if case .exited(let status) = child.ending {
                figures.fail(
                    "round \(round) seed \(roundSeed): the child ended before the kill (exit \(status)): \(child.stderr.suffix(600))"
                )
                break
            }
            let lines = child.stdout.split(separator: "\n").map(String.init)
            // What the child acknowledged, and where the kill landed.
            var acked = -1
            var resumedMerge = false
            for line in lines {
                let fields = line.split(separator: " ")
                if line.hasPrefix("ready m=1") { resumedMerge = true }
                if fields.first == "ack", fields.count > 1, let i = Int(fields[1]), actions.indices.contains(i) {
                    acked = i
                    switch actions[i] {
                    case .batch: figures.count("acknowledged batches")
                    case .optimize: figures.count("acknowledged optimizes")
                    }
                    if line.contains(" m=1 ") { figures.count("acknowledged writes that left a merge in progress") }
                    if let steps = fields.first(where: { $0.hasPrefix("steps=") }).flatMap({ Int($0.dropFirst(6)) }) {
                        figures.add("merge steps written by acknowledged optimizes", steps)
                    }
                    if let seconds = fields.last.flatMap({ $0.hasPrefix("seconds=") ? Double($0.dropFirst(8)) : nil }) {
                        if seconds > 0.002 { optimizeTimes.append(seconds) }
                    }
                }
            }
            if resumedMerge {
                figures.count("rounds that began with an interrupted merge")
                if lines.contains(where: { $0.hasPrefix("ack ") && $0.contains(" m=0 ") }) {
                    figures.count("interrupted merges finished by the next child")
                }
            }
            let last = lines.last ?? ""
            let landed: String
            if !lines.contains(where: { $0.hasPrefix("ready") }) {
                landed = "the open"
            } else if last.hasPrefix("begin "), last.hasSuffix(" optimize") {
                landed = "an optimize"
            } else if last.hasPrefix("begin "), last.hasSuffix("merge=continue") {
                landed = "a batch continuing a merge"
            } else if last.hasPrefix("begin "), last.hasSuffix("merge=start") {
                landed = "a batch starting a merge"
            } else if last.hasPrefix("begin ") {
                landed = "a batch without merge work"
            } else {
                landed = "between writes"
            }
            figures.count("killed during: \(landed)")
            do {
                let outcome = try check(
                    live: live, copy: copy, seed: roundSeed, round: round, actions: actions, acked: acked,
                    before: model, figures: &figures)
                model = outcome.documents
                if outcome.merging {
                    figures.count("kills that left a merge in progress")
                    figures.count("kills that left a merge in progress, by where they landed: \(landed)")
                }
                if verbose {
                    note(
                        "round \(round) (\(aim), killed \(planned)): landed in \(landed), \(acked + 1) actions acknowledged, \(model.count) documents"
                    )
                }
            } catch {
                figures.fail(
                    "round \(round) seed \(roundSeed) (\(aim), killed \(planned), landed in \(landed), \(acked + 1) actions acknowledged): \(error)"
                )
                break
            }
        }
        return figures
    }

    /// Checks the store after a kill; returns the documents (the model for the next round)
    /// and whether the kill left a merge in progress.
    static func check(
        live: String, copy: String, seed: UInt64, round: Int, actions: [Action], acked: Int, before: [Int: Int],
        figures: inout Figures
    ) throws -> (documents: [Int: Int], merging: Bool) {
        // The documents after the acknowledged actions, and after the one in flight.
        var model = before
        for action in actions.prefix(acked + 1) { if case .batch(let ops) = action { apply(ops, to: &model) } }
        var inFlight: [Int: Int]?
        if acked + 1 < actions.count, case .batch(let ops) = actions[acked + 1] {
            var next = model
            apply(ops, to: &next)
            if next != model { inFlight = next }
        }
        let found: [Int: Int]
        let merging: Bool
        do {
            let db = try LevelDB(path: live)
            defer { db.close() }
            let store = try DocumentStore(database: db)
            let report = try store.verify()
            guard report.isClean else { throw Failure("verify after the kill: \(report)") }
            found = try read(store)
            if found == model {
                if inFlight != nil { figures.count("the write in flight did not land") }
            } else if let inFlight, found == inFlight {
                figures.count("the write in flight landed unacknowledged")
            } else {
                throw Failure(
                    "the documents (\(found.count)) are neither those of the acknowledged writes (\(model.count)) nor those after the write in flight: a lost acknowledged write or a torn batch"
                )
            }
            merging = try structure(db).merging
            try checkText(store, model: found, seed: seed, "after the kill")
        }
        // On a copy: a write works, and optimize finishes any interrupted merge.
        try? FileManager.default.removeItem(atPath: copy)
        try copyDirectory(live, copy)
        defer { try? FileManager.default.removeItem(atPath: copy) }
        let db = try LevelDB(path: copy)
        defer { db.close() }
        let store = try DocumentStore(database: db)
        let interrupted = try structure(db).merging
        var after = found
        let extra = [Operation.upsert(id: ids + round % 50, version: round), .delete(id: Int(seed % UInt64(ids)))]
        try store.write { b in
            for op in extra {
                switch op {
                case .upsert(let id, let version): _ = try b.upsert(collection, document(id: id, version: version))
                case .delete(let id): _ = try b.delete(collection, id: .int(Int64(id)))
                }
            }
        }
        apply(extra, to: &after)
        try store.optimize(collection: collection)
        let optimized = try structure(db)
        guard !optimized.merging, optimized.segments <= 1 else {
            throw Failure("after optimize: merge in progress \(optimized.merging), \(optimized.segments) segments")
        }
        if interrupted { figures.count("interrupted merges finished by optimize (on a copy)") }
        let report = try store.verify()
        guard report.isClean else { throw Failure("verify after a write and optimize: \(report)") }
        guard try read(store) == after else {
            throw Failure("the documents after a write and optimize are not the model's")
        }
        try checkText(store, model: after, seed: seed &+ 1, "after a write and optimize")
        return (found, merging)
    }
}
