import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// A store that records every batch written through it, over a real database.
///
/// `@unchecked Sendable`: `batches` is only touched under `lock`; the database is Sendable.
final class RecordingStore: KeyValueStore, @unchecked Sendable {
    let base: LevelDB
    private let lock = NSLock()
    private var batches: [[WriteBatch.Operation]] = []

    init(_ base: LevelDB) { self.base = base }

    var written: [[WriteBatch.Operation]] { lock.withLock { batches } }
    var name: String { base.name }
    func value(forKey key: [UInt8]) throws -> [UInt8]? { try base.value(forKey: key) }
    func scan(_ range: KeyRange, order: ScanOrder) throws -> any KeyValueCursor { try base.scan(range, order: order) }
    func scan(ranges: [KeyRange]) throws -> any KeyValueCursor { try base.scan(ranges: ranges) }
    func write(_ batch: WriteBatch, sync: Bool) throws {
        let operations = batch.operations
        try base.write(batch, sync: sync)
        lock.withLock { batches.append(operations) }
    }
    func snapshotReader() throws -> any SnapshotReader { try base.snapshotReader() }
    func withWriterLock<R>(_ body: () throws -> R) rethrows -> R { try base.withWriterLock(body) }
    func withWriteTransaction<R>(_ body: () throws -> R) throws -> R { try base.withWriteTransaction(body) }
}

@Suite struct TextSegmentTests {
    static let schema =
        #"{"collections": {"notes": {"primaryKey": "id", "text": [{"name": "body_text", "fields": ["bio", "title"]}]}}}"#

    /// The first element after the text index's subspace of a key in it ("p", "x", "g", …).
    static func kind(_ key: [UInt8], _ layout: TextIndexLayout) -> String? {
        guard key.starts(with: layout.subspace.prefix),
            let t = try? Tuple(decoding: Array(key[layout.subspace.prefix.count...])),
            case .string(let kind)? = t.elements.first
        else { return nil }
        return kind
    }

    /// Many batches of inserts: every posting, occurrence, segment-record and term-list key
    /// is written once (merges write new segments and delete old ones; they never rewrite a
    /// key); only the statistics, the merge state and the length blocks a batch shares with
    /// the one before are written again.
    @Test func buildingInBatchesWritesNoKeyTwiceOutsideMerges() throws {
        try withTemporaryDatabase { db, _ throws in
            let recording = RecordingStore(db)
            let store = try DocumentStore(
                storage: recording, database: db, schema: try DocumentSchema(json: Data(Self.schema.utf8)),
                root: Subspace(),
                finishingBuilds: true, progress: nil)
            let docs = TextCorpus.documents(3000, seed: 81)
            let batches = stride(from: 0, to: docs.count, by: 50).map { Array(docs[$0..<min($0 + 50, docs.count)]) }
            for batch in batches { try store.write { tx in for d in batch { try tx.insert("notes", d) } } }
            let layout = store.textLayout("notes", "body_text")
            var puts: [ByteKey: Int] = [:]
            var deletedPostings = 0
            for batch in recording.written {
                for operation in batch {
                    switch operation {
                    case .put(let key, _): if Self.kind(key, layout) != nil { puts[ByteKey(key), default: 0] += 1 }
                    case .delete(let key): if Self.kind(key, layout) == "p" { deletedPostings += 1 }
                    }
                }
            }
            var rewritten: [String: Int] = [:]
            for (key, count) in puts where count > 1 { rewritten[Self.kind(key.bytes, layout) ?? "?", default: 0] += 1 }
            // Segments and merges happened (the test is not vacuous): more segments were
            // written than remain, and merges deleted posting keys.
            let segmentsWritten = puts.keys.filter { Self.kind($0.bytes, layout) == "g" }.count
            let segmentsLeft = try db.count(layout.allSegments.range)
            #expect(
                segmentsWritten >= batches.count && segmentsLeft < batches.count / 4,
                "\(segmentsWritten) written, \(segmentsLeft) left")
            #expect(deletedPostings > 1000)
            #expect(Set(rewritten.keys).isSubset(of: ["s", "m", "n"]), "rewritten keys: \(rewritten)")
            // A length block is shared by at most two batches of 50 rows (128 rows a block).
            let lengthBlocks = try db.count(layout.allLengths.range)
            #expect((rewritten["n"] ?? 0) <= lengthBlocks)
            #expect(try store.verify().isClean)
        }
    }

    /// The fixture written by the format-2 text layout (blocks rewritten in place) opens
    /// with both its text indexes rebuilt as segments, with progress, and answers as the old
    /// code did; writes and `optimize` work on the result.
    @Test func theFormatTwoTextFixtureIsRebuiltAsSegmentsOnOpen() throws {
        let dir = TemporaryDirectory()
        let path = dir.child("db")
        try FileManager.default.copyItem(
            atPath: packageRoot.appendingPathComponent("Tests/Fixtures/text2-db").path, toPath: path)
        let db = try LevelDB(path: path)
        defer { db.close() }
        let body = IndexIdentity("notes", "body_text", .text), tags = IndexIdentity("notes", "tags_text", .text)
        #expect(try DocumentCatalog().indexStates(.text, in: db)[body]?.format == 2)
        #expect(try DocumentCatalog().indexStates(.text, in: db)[tags]?.format == 2)
        var progress: [DocumentStore.IndexBuildProgress] = []
        let store = try DocumentStore(database: db) { progress.append($0) }
        #expect(Set(progress.map(\.index)).isSuperset(of: ["body_text", "tags_text"]))
        let last = try #require(progress.last { $0.index == "body_text" })
        #expect(last.done == 5 && last.total == 5)
        #expect(try DocumentCatalog().indexStates(.text, in: db)[body]?.format == 3)
        #expect(try DocumentCatalog().indexStates(.text, in: db)[tags]?.format == 3)
        #expect(try store.verify().isClean)
        let layout = store.textLayout("notes", "body_text")
        #expect(try db.count(layout.allSegments.range) == 1)
        #expect(try db.get(layout.merge) == nil)
        let notes = try store.collection("notes")
        // As the format-2 code answered (Tests/Fixtures/text2-README.md).
        let ids = { (query: String) throws -> [JSONValue] in try notes.search(query).map { $0.id } }
        #expect(try ids("train*") == [1, "b", "a", 2])
        #expect(try ids("station") == [2, "b", "a"])
        #expect(try ids("express OR station") == [5, 1, 2, "b", "a"])
        #expect(try ids("run") == ["a"])
        #expect(try ids("\"night express\"") == [1])
        #expect(
            Set(try notes.search("rail", options: SearchOptions(index: "tags_text")).map { $0.id.compactDescription })
                == ["1", "2", "\"b\""])
        #expect(try notes.search("deleted").isEmpty)
        try notes.upsert(["id": 5, "title": "Local", "body": "a local stopping train", "tags": []])
        try notes.delete(id: "a")
        #expect(try ids("express OR station") == [1, 2, "b"])
        #expect(try store.verify().isClean)
        try store.optimize(collection: "notes")
        #expect(try ids("express OR station") == [1, 2, "b"])
        #expect(try ids("train*").count == 4)
        #expect(try store.verify().isClean)
    }

    /// Compares every query's answer with FTS5's on the same rows: hit sets, scores, top-10
    /// order (except among FTS5's ties); queries FTS5 refuses must fail here too. Also
    /// checks each term's document frequency against the rows' own tokens.
    ///
    /// The rows go to FTS5 in the order of their document numbers (a row takes a new number
    /// when it changes): FTS5's NEAR keeps state from one row to the next in rowid order,
    /// which the search reproduces in document-number order.
    static func compareWithFTS5(
        _ store: DocumentStore, _ live: [String: JSONValue], tokenizer: String, detail: String, seed: UInt64
    ) throws {
        let layout = store.textLayout("notes", "body_text")
        let text = TextIndex(subspace: layout.subspace, tokenizer: TextTokenizer(), columns: [])
        let numbered = try live.keys.map { id in (id, try text.documentNumber(of: .string(id), store.leveldb) ?? -1) }
        let docs = numbered.sorted { ($0.1, $0.0) < ($1.1, $1.0) }.compactMap { live[$0.0] }
        var rng = SplitMix64(seed: seed)
        let queries = Array(TextCorpus.queries(&rng, docs).prefix(160))
        let spec: JSONValue = [
            "tokenizer": .string(tokenizer), "detail": .string(detail), "columns": ["bio", "title"],
            "docs": .array(docs), "queries": .array(queries.map { .string($0) })
        ]
        let output = try runPython(
            "Tests/python/fts5_tool.py", ["search"], input: String(decoding: try spec.canonicalData(), as: UTF8.self))
        let references = try output.split(separator: "\n").map {
            try JSONDecoder().decode(TextSearchTests.Reference.self, from: Data($0.utf8))
        }
        try #require(references.count == queries.count)
        let notes = try store.collection("notes")
        var nonEmpty = 0
        for (query, reference) in zip(queries, references) {
            let hits: [SearchHit]
            do {
                hits = try notes.search(query, options: SearchOptions(includeDocuments: false))
            } catch {
                #expect(reference.error != nil, "\(query): we failed (\(error)), FTS5 did not")
                continue
            }
            guard let ids = reference.ids, let scores = reference.scores else {
                Issue.record("\(query): FTS5 failed (\(reference.error ?? "?")), we did not")
                continue
            }
            if !ids.isEmpty { nonEmpty += 1 }
            let ours = hits.map { $0.id.compactDescription.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
            #expect(Set(ours) == Set(ids), "\(query): hit sets differ (\(ours.count) vs \(ids.count))")
            let theirScore = Dictionary(zip(ids, scores), uniquingKeysWith: { a, _ in a })
            for (hit, id) in zip(hits, ours) {
                guard let s = theirScore[id] else { continue }
                #expect(abs(hit.score - s) <= 1e-9 * max(1, abs(s)), "\(query): \(id) scores \(hit.score), FTS5 \(s)")
            }
            for (k, id) in ours.prefix(10).enumerated() where k < ids.count && id != ids[k] {
                let tie = abs((theirScore[id] ?? .nan) - scores[k]) <= 1e-9 * max(1, abs(scores[k]))
                #expect(tie, "\(query): rank \(k) is \(id), FTS5 has \(ids[k])")
            }
        }
        #expect(nonEmpty > 40, "\(nonEmpty) queries with hits")
        // Document frequencies and statistics, from the rows' own tokens.
        guard
            let maintainer = try store.catalog().maintainers(of: "notes").compactMap({ $0 as? TextIndexMaintainer })
                .first
        else {
            Issue.record("no text index")
            return
        }
        var frequencies: [String: Int] = [:]
        var rows = 0, tokens = 0
        for doc in docs {
            let contribution = maintainer.index.contribution(
                TextIndexMaintainer.columnTexts(maintainer.definition, doc))
            rows += 1
            tokens += contribution.totalTokens
            for term in contribution.terms { frequencies[term.text, default: 0] += 1 }
        }
        let terms = try store.read { tx in try tx.textTerms("notes") }
        #expect(terms.count == frequencies.count)
        #expect(terms.allSatisfy { frequencies[$0.term] == $0.documents }, "document frequencies differ")
        #expect(
            try store.read { tx in try tx.textStatistics("notes") }
                == TextIndexStatistics(documents: rows, tokens: tokens))
    }

    /// Random interleavings of batches of inserts, updates and deletes (merges running a
    /// bounded step per write), with `optimize` now and then: at a checkpoint with
    /// tombstones and several segments, and after a final `optimize`, every answer, score
    /// and top-10 order equals FTS5's on the same rows, document frequencies and statistics
    /// are exact, and verify is clean.
    @Test(.requires(.sqliteFTS5), arguments: [("unicode61", "full"), ("porter", "column"), ("trigram", "full")])
    func interleavedWritesMergesAndOptimizeAgreeWithSQLiteFTS5(tokenizer: String, detail: String) throws {
        try withTemporaryDatabase { db, _ throws in
            let store = try TextSearchTests.store(db, tokenizer: tokenizer, detail: detail)
            let layout = store.textLayout("notes", "body_text")
            let corpus = TextCorpus.documents(1500, seed: 91)
            var live: [String: JSONValue] = [:]
            var rng = SplitMix64(seed: 92)
            var sawTombstones = false, sawMerge = false
            for round in 0..<70 {
                let count = Int.random(in: 1...60, using: &rng)
                try store.write { tx in
                    for _ in 0..<count {
                        var doc = corpus.randomElement(using: &rng)!
                        guard case .string(let id)? = doc["id"] else { continue }
                        switch Int.random(in: 0..<10, using: &rng) {
                        case 0..<2 where live[id] != nil:
                            _ = try tx.delete("notes", id: .string(id))
                            live[id] = nil
                        default:
                            if live[id] != nil, case .object(var o) = doc {
                                o["bio"] = .string(TextCorpus.text(&rng, words: 0...30))
                                doc = .object(o)
                            }
                            _ = try tx.upsert("notes", doc)
                            live[id] = doc
                        }
                    }
                }
                let merging = try db.get(layout.merge) != nil
                sawMerge = sawMerge || merging
                if round == 40 {
                    sawTombstones = try TextStructure.load(layout, db).segments.values.contains { $0.tombstones > 0 }
                    #expect(try db.count(layout.allSegments.range) > 1)
                    #expect(try store.verify().isClean)
                    try Self.compareWithFTS5(store, live, tokenizer: tokenizer, detail: detail, seed: 93)
                }
                if round % 23 == 22 { try store.optimize(collection: "notes") }
            }
            #expect(sawTombstones && sawMerge, "tombstones \(sawTombstones), merge in progress seen \(sawMerge)")
            #expect(try store.verify().isClean)
            try store.optimize(collection: "notes")
            #expect(try db.count(layout.allSegments.range) == 1)
            #expect(try TextStructure.load(layout, db).segments.values.allSatisfy { $0.tombstones == 0 })
            #expect(try store.verify().isClean)
            try Self.compareWithFTS5(store, live, tokenizer: tokenizer, detail: detail, seed: 94)
        }
    }

    /// A merge interrupted after any step (each step one atomic batch, so this is what a
    /// crash can leave): verify is clean, every answer is the same as before the merge
    /// began, and a reopened store carries on (writes continue the merge; `optimize`
    /// finishes it).
    @Test func aMergeInterruptedAfterAnyStepLeavesAConsistentIndex() throws {
        let dir = TemporaryDirectory()
        let path = dir.child("db")
        let corpus = TextCorpus.documents(600, seed: 95)
        let queries = [
            "station", "train OR night", "\"the train\"", "caf*", "bio: express", "title: zone NOT city",
            "NEAR(night express, 4)", "perth zurich"
        ]
        var expected: [[String]] = []
        let text = TextIndex(
            subspace: Subspace().subspace(["t", "notes", "body_text"]), tokenizer: TextTokenizer(),
            columns: ["bio", "title"])
        func answers(_ store: DocumentStore) throws -> [[String]] {
            let notes = try store.collection("notes")
            return try queries.map { q in
                try notes.search(q, options: SearchOptions(limit: 20, includeDocuments: false)).map {
                    "\($0.id.compactDescription) \($0.score)"
                }
            }
        }
        do {
            let db = try LevelDB(path: path)
            defer { db.close() }
            let store = try DocumentStore(database: db, schema: try DocumentSchema(json: Data(Self.schema.utf8)))
            #expect(text.layout.subspace.prefix == store.textLayout("notes", "body_text").subspace.prefix)
            // Segments of single writes and small batches, with deletes and updates among them.
            var rng = SplitMix64(seed: 96)
            for (i, doc) in corpus.enumerated() {
                try store.write { tx in
                    _ = try tx.upsert("notes", doc)
                    if i % 7 == 3, let victim = corpus[0..<i].randomElement(using: &rng), let id = victim["id"] {
                        _ = try tx.delete("notes", id: id)
                    }
                }
            }
            expected = try answers(store)
            // A full merge, one small step a batch; after each, the index is consistent.
            var steps = 0
            while true {
                let batch = WriteBatch()
                let changes = TextIndexChanges(try text.statistics(db))
                let more = try text.mergeStep(
                    changes, budget: 40, full: true, reader: db, put: { batch.put($0, $1) },
                    delete: { batch.delete($0) })
                if changes.statisticsChanged {
                    batch.put(text.layout.statistics, text.statisticsValue(changes.statistics))
                }
                try db.write(batch)
                steps += 1
                if steps % 5 == 1 {
                    #expect(try db.get(text.layout.merge) != nil || !more)
                    #expect(try store.verify().isClean, "after step \(steps)")
                    #expect(try answers(store) == expected, "after step \(steps)")
                }
                if steps == 23 { break }  // interrupted: the merge is left half done
                if !more {
                    Issue.record("the merge ended after \(steps) steps; too few to interrupt")
                    break
                }
            }
            #expect(try db.get(text.layout.merge) != nil)
        }
        // Reopened: the half-done merge is read back, writes carry on with it.
        let db = try LevelDB(path: path)
        defer { db.close() }
        let store = try DocumentStore(database: db)
        #expect(try store.verify().isClean)
        #expect(try answers(store) == expected)
        let notes = try store.collection("notes")
        try notes.insert(["id": "new", "bio": "the station train"])
        _ = try notes.delete(id: "new")
        #expect(try store.verify().isClean)
        #expect(try answers(store) == expected)
        try store.optimize(collection: "notes")
        #expect(try db.get(text.layout.merge) == nil)
        #expect(try db.count(text.layout.allSegments.range) == 1)
        #expect(try store.verify().isClean)
        #expect(try answers(store) == expected)
    }

    /// `optimize` with a small step budget writes many steps (each one atomic batch) and
    /// ends where one big step does: one segment, no merge in progress, the same answers.
    @Test func optimizeInSmallStepsEndsWithOneSegmentAndTheSameAnswers() throws {
        let dir = TemporaryDirectory()
        let db = try LevelDB(path: dir.child("db"))
        defer { db.close() }
        let store = try DocumentStore(database: db, schema: try DocumentSchema(json: Data(Self.schema.utf8)))
        for (i, doc) in TextCorpus.documents(300, seed: 97).enumerated() {
            try store.write { tx in
                _ = try tx.upsert("notes", doc)
                if i % 5 == 4 { _ = try tx.delete("notes", id: .string(String(format: "d%05d", i / 2))) }
            }
        }
        let layout = store.textLayout("notes", "body_text")
        let notes = try store.collection("notes")
        let queries = ["station", "train OR night", "\"the train\"", "caf*"]
        let before = try queries.map { q in
            try notes.search(q, options: SearchOptions(includeDocuments: false)).map(\.id)
        }
        #expect(try db.count(layout.allSegments.range) > 1)
        #expect(throws: KVDocsError.self) { try store.optimize(collection: "notes", stepBudget: 0) }
        #expect(try store.optimize(collection: "notes", stepBudget: 50) > 3)
        #expect(try db.get(layout.merge) == nil)
        #expect(try db.count(layout.allSegments.range) == 1)
        #expect(try store.verify().isClean)
        #expect(
            try queries.map { q in try notes.search(q, options: SearchOptions(includeDocuments: false)).map(\.id) }
                == before)
    }
}
