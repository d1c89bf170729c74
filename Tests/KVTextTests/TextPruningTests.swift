import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// Realistic text for ranking tests: a Zipf-distributed vocabulary (a few very common
/// words, a long tail of rare ones) and lengths that vary like titles and bodies.
enum ZipfCorpus {
    static func vocabulary(_ size: Int, seed: UInt64) -> [String] {
        var rng = SplitMix64(seed: seed)
        var seen = Set<String>()
        var words: [String] = []
        let letters = Array("abcdefghijklmnopqrstuvwxyz")
        while words.count < size {
            let w = String((0..<Int.random(in: 3...9, using: &rng)).map { _ in letters.randomElement(using: &rng)! })
            if seen.insert(w).inserted { words.append(w) }
        }
        return words
    }

    /// Cumulative weights 1/r^s of ranks 1...n.
    static func cumulative(_ n: Int, s: Double = 1.07) -> [Double] {
        var total = 0.0
        return (1...n).map { r in
            total += 1 / pow(Double(r), s)
            return total
        }
    }

    static func word(_ words: [String], _ cumulative: [Double], _ rng: inout SplitMix64) -> String {
        let u = Double.random(in: 0..<cumulative[cumulative.count - 1], using: &rng)
        var lo = 0, hi = cumulative.count - 1
        while lo < hi {
            let mid = (lo + hi) / 2
            if cumulative[mid] <= u { lo = mid + 1 } else { hi = mid }
        }
        return words[lo]
    }

    static func text(_ words: [String], _ cumulative: [Double], _ rng: inout SplitMix64, length: ClosedRange<Int>)
        -> String
    {
        (0..<Int.random(in: length, using: &rng)).map { _ in word(words, cumulative, &rng) }.joined(separator: " ")
    }

    static func documents(_ count: Int, seed: UInt64, words: [String]) -> [JSONValue] {
        var rng = SplitMix64(seed: seed)
        let c = cumulative(words.count)
        return (0..<count).map { i in
            // Bodies from a few words to a few hundred, most of them short.
            let long = Int.random(in: 0..<10, using: &rng) == 0
            return [
                "id": .string(String(format: "r%06d", i)),
                "title": .string(text(words, c, &rng, length: 2...12)),
                "body": .string(text(words, c, &rng, length: long ? 100...400 : 5...60))
            ]
        }
    }
}

@Suite struct TextPruningTests {
    static let schema =
        #"{"collections": {"docs": {"primaryKey": "id", "text": [{"name": "t", "fields": ["title", "body"]}]}}}"#

    /// The text index of a store and a reader at its current state.
    static func rank(_ store: DocumentStore, _ query: String, limit: Int?, exhaustive: Bool) throws -> TextRanking {
        try store.read { tx in
            guard let maintainer = tx.catalog.maintainer(IndexIdentity("docs", "t", .text)) as? TextIndexMaintainer
            else {
                throw KVDocsError(.schema, "no text index")
            }
            return try maintainer.index.rank(query, limit: limit, exhaustive: exhaustive, reader: tx.reader)
        }
    }

    static func queries(_ words: [String], _ rng: inout SplitMix64) -> [String] {
        let c = ZipfCorpus.cumulative(words.count)
        func w() -> String { ZipfCorpus.word(words, c, &rng) }
        func common() -> String { words[Int.random(in: 0..<8, using: &rng)] }
        func rare() -> String { words[Int.random(in: 200..<words.count, using: &rng)] }
        var result: [String] = []
        for _ in 0..<120 {
            switch Int.random(in: 0..<12, using: &rng) {
            case 0: result.append(common())
            case 1: result.append(rare())
            case 2: result.append(w())
            case 3: result.append("\(w()) OR \(w())")
            case 4: result.append("\(common()) OR \(w()) OR \(rare())")
            case 5: result.append("\(w()) \(w())")
            case 6: result.append("\(common()) AND \(common()) AND \(w())")
            case 7: result.append("\"\(common()) \(w())\"")
            case 8: result.append("\(String(w().prefix(2)))*")
            case 9: result.append("title: \(w()) OR \(common())")
            case 10: result.append("\(common()) NOT \(w())")
            default: result.append("(\(w()) OR \(common())) AND \(w())")
            }
        }
        return result
    }

    /// Random queries at k = 1, 10 and 100 give exactly (ids, order, score bits) what an
    /// exhaustive evaluation gives, over a collection built by a batched import and then
    /// changed by single inserts, updates and deletes (so blocks split, merge and hold
    /// loose impacts); and pruning really skips work.
    @Test func pruningNeverChangesATopKAnswer() throws {
        try withTemporaryDatabase { db, _ throws in
            let store = try DocumentStore(database: db, schema: try DocumentSchema(json: Data(Self.schema.utf8)))
            let docs = try store.collection("docs")
            let words = ZipfCorpus.vocabulary(1500, seed: 91)
            let corpus = ZipfCorpus.documents(3000, seed: 92, words: words)
            try store.write { batch in for d in corpus.prefix(2400) { try batch.insert("docs", d) } }
            var rng = SplitMix64(seed: 93)
            for d in corpus.dropFirst(2400) { try docs.insert(d) }
            let c = ZipfCorpus.cumulative(words.count)
            for _ in 0..<300 {
                let id = JSONValue.string(String(format: "r%06d", Int.random(in: 0..<3000, using: &rng)))
                if Bool.random(using: &rng) {
                    try docs.delete(id: id)
                } else {
                    try docs.upsert([
                        "id": id, "title": .string(ZipfCorpus.text(words, c, &rng, length: 1...5)),
                        "body": .string(ZipfCorpus.text(words, c, &rng, length: 1...80))
                    ])
                }
            }
            #expect(try store.verify().isClean)
            var pruned = TextSearcher.Work(), full = TextSearcher.Work()
            var nonEmpty = 0
            for query in Self.queries(words, &rng) {
                let all = try Self.rank(store, query, limit: nil, exhaustive: true).hits
                if !all.isEmpty { nonEmpty += 1 }
                for k in [1, 10, 100] {
                    let fast = try Self.rank(store, query, limit: k, exhaustive: false)
                    let slow = try Self.rank(store, query, limit: k, exhaustive: true)
                    pruned.scored += fast.work.scored
                    full.scored += slow.work.scored
                    pruned.skippedRuns += fast.work.skippedRuns
                    let expected = all.prefix(k)
                    #expect(fast.hits.map { $0.id } == expected.map { $0.id }, "\(query) k=\(k): ids differ")
                    #expect(
                        fast.hits.map { $0.score.bitPattern } == expected.map { $0.score.bitPattern },
                        "\(query) k=\(k): scores differ")
                    #expect(
                        slow.hits.map { $0.id } == expected.map { $0.id },
                        "\(query) k=\(k): exhaustive top-k differs from the full ranking")
                }
            }
            #expect(nonEmpty > 80)
            // Pruning is not vacuous: it skips runs of rows and scores far fewer of them.
            #expect(pruned.skippedRuns > 100, "\(pruned)")
            #expect(pruned.scored * 2 < full.scored, "pruned \(pruned.scored), exhaustive \(full.scored)")
        }
    }

    /// A term that every single insert adds to: each write adds a segment, merges keep the
    /// segments few (so the blocks stay about rows / 128 plus one per segment), and
    /// `optimize` leaves full blocks, rows / 128 however the rows arrived.
    @Test func singleWritesThenOptimizeGiveFullBlocks() throws {
        try withTemporaryDatabase { db, _ throws in
            let store = try DocumentStore(database: db, schema: try DocumentSchema(json: Data(Self.schema.utf8)))
            let docs = try store.collection("docs")
            for i in 0..<1000 { try docs.insert(["id": .int(Int64(i)), "body": .string("common word\(i % 7)")]) }
            let layout = store.textLayout("docs", "t")
            let segments = try db.count(layout.allSegments.range)
            // Fewer than mergeFactor per level (1000 rows: levels 0 to 3), plus the inputs of
            // a merge in progress.
            #expect(segments <= 3 * TextStructure.mergeFactor, "\(segments) segments after 1000 writes")
            let blocks = try db.count(layout.postings("common"))
            #expect(blocks <= 8 + segments, "1000 rows in \(blocks) blocks")
            #expect(try db.count(layout.allLengths.range) == 8)
            #expect(try store.optimize(collection: "docs") > 0)
            #expect(try db.count(layout.postings("common")) == 8)
            #expect(try db.count(layout.allSegments.range) == 1)
            #expect(try store.verify().isClean)
            // Deleting most rows one by one leaves tombstones; optimize drops them and the
            // postings they cancel, leaving no more blocks than rows need.
            for i in 0..<1000 where i % 10 != 0 { try docs.delete(id: .int(Int64(i))) }
            #expect(try store.verify().isClean)
            #expect(try docs.search("common").count == 100)
            try store.optimize(collection: "docs")
            #expect(try db.count(layout.postings("common")) == 1)
            #expect(try store.verify().isClean)
            #expect(try docs.search("common").count == 100)
        }
    }
}

@Suite struct TextIndexBuildTests {
    /// A build that writes its postings part-way (every few hundred postings here) gives
    /// the same index as one that writes them at the end: verify is clean and searches
    /// agree; each flush writes a segment, and `optimize` merges them into full blocks.
    @Test func aBuildThatFlushesPartWayGivesTheSameIndex() throws {
        let words = ZipfCorpus.vocabulary(300, seed: 5)
        let corpus = ZipfCorpus.documents(1500, seed: 6, words: words)
        var answers: [[String]] = []
        for threshold in [TextIndexMaintainer.flushThreshold, 500] {
            try withTemporaryDatabase { db, _ throws in
                let plain = #"{"collections": {"docs": {"primaryKey": "id"}}}"#
                let store = try DocumentStore(database: db, schema: try DocumentSchema(json: Data(plain.utf8)))
                try store.write { batch in for d in corpus { try batch.insert("docs", d) } }
                store.state.withLock { $0.buildFlushThreshold = threshold }
                try store.apply(try DocumentSchema(json: Data(TextPruningTests.schema.utf8)))
                #expect(try store.verify().isClean)
                let docs = try store.collection("docs")
                var results: [String] = []
                for q in words.prefix(40) + [
                    "\(words[0]) \(words[1])", "\"\(words[0]) \(words[2])\"", "\(words[3].prefix(2))*"
                ] {
                    results.append(
                        try docs.search(q, options: SearchOptions(limit: 20, includeDocuments: false)).map {
                            "\($0.id.compactDescription) \($0.score)"
                        }.joined(separator: ","))
                }
                answers.append(results)
                try store.optimize(collection: "docs")
                #expect(try store.verify().isClean)
                #expect(
                    try db.count(store.textLayout("docs", "t").postings(words[0])) <= 1500 / PostingBlock.capacity + 1)
            }
        }
        #expect(answers[0] == answers[1])
    }
}

@Suite struct TextNormTests {
    /// A norm rounds a length down, by at most an eighth, and keeps the order of lengths
    /// (the bound it gives a row's score is safe and close).
    @Test func normsRoundLengthsDownByAtMostAnEighth() {
        var previous = 0
        for length in Array(0..<5000) + [1 << 20, (1 << 23) - 1, 1 << 23, 1 << 30, Int(UInt32.max)] {
            let norm = TextLengths.norm(length)
            let back = TextLengths.length(ofNorm: norm)
            #expect(norm >= 0 && norm <= 255)
            #expect(back <= length, "\(length) → \(norm) → \(back)")
            if length < (1 << 23) { #expect(length - back <= length / 8, "\(length) → \(back)") }
            #expect(norm >= previous)
            previous = norm
        }
    }
}
