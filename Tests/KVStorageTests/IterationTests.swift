import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@Suite struct IterationTests {
    /// The expected result of a scan, computed by brute force over a sorted model.
    static func modelScan(_ model: [[UInt8]: [UInt8]], _ range: KeyRange, _ order: ScanOrder, _ limit: Int?)
        -> [KeyValueEntry]
    {
        var keys = model.keys.filter { range.contains($0) }.sorted { $0.lexicographicallyPrecedes($1) }
        if order == .reverse { keys.reverse() }
        if let limit { keys = Array(keys.prefix(limit)) }
        return keys.map { KeyValueEntry(key: $0, value: model[$0]!) }
    }

    /// Keys from a small alphabet including 0x00 and 0xFF, so prefixes, successors and
    /// bounds collide often.
    static func randomKey(_ rng: inout SplitMix64, maxLength: Int = 4) -> [UInt8] {
        let alphabet: [UInt8] = [0x00, 0x01, 0x61, 0x62, 0xFE, 0xFF]
        return (0..<Int.random(in: 0...maxLength, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }
    }

    static func randomBound(_ rng: inout SplitMix64) -> KeyRange.Bound? {
        switch Int.random(in: 0..<3, using: &rng) {
        case 0: return nil
        case 1: return .included(randomKey(&rng))
        default: return .excluded(randomKey(&rng))
        }
    }

    static func randomRange(_ rng: inout SplitMix64) -> KeyRange {
        switch Int.random(in: 0..<5, using: &rng) {
        case 0: return .all
        case 1: return .prefix(randomKey(&rng, maxLength: 2))
        case 2: return KeyRange(lower: randomBound(&rng), upper: randomBound(&rng))
        case 3: return .prefix(randomKey(&rng, maxLength: 2)).starting(at: randomKey(&rng))
        default:
            // Prefix, start key and end key together.
            var r = KeyRange.prefix(randomKey(&rng, maxLength: 1))
            if Bool.random(using: &rng) { r = r.starting(after: randomKey(&rng)) }
            if Bool.random(using: &rng) {
                r = r.ending(before: randomKey(&rng))
            } else {
                r = r.ending(at: randomKey(&rng))
            }
            return r
        }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func rangeScansMatchASortedModel(seed: UInt64) throws {
        try withTemporaryDatabase { db, _ throws in
            var rng = SplitMix64(seed: seed)
            var model: [[UInt8]: [UInt8]] = [:]
            for _ in 0..<400 {
                let key = Self.randomKey(&rng)
                if Int.random(in: 0..<5, using: &rng) == 0 {
                    try db.delete(key)
                    model[key] = nil
                } else {
                    let value = Self.randomKey(&rng, maxLength: 8)
                    try db.put(key, value)
                    model[key] = value
                }
            }
            if seed == 2 { try db.compact() }  // one run reads from table files, not the memtable
            for _ in 0..<400 {
                let range = Self.randomRange(&rng)
                let order: ScanOrder = Bool.random(using: &rng) ? .forward : .reverse
                let limit: Int? = Bool.random(using: &rng) ? nil : Int.random(in: 0...10, using: &rng)
                let expected = Self.modelScan(model, range, order, limit)
                let actual = try db.entries(range, order: order, limit: limit).collect()
                #expect(actual == expected, "range \(range) \(order) limit \(String(describing: limit))")
                var borrowed: [[UInt8]] = []
                let visited = try db.forEach(in: range, order: order, limit: limit) { key, _ in
                    borrowed.append(Array(key))
                }
                #expect(visited == expected.count)
                #expect(borrowed == expected.map(\.key))
            }
        }
    }

    /// Increasing, disjoint ranges between sorted cut points, with every kind of bound:
    /// ranges that touch (one ends at a key the next starts after), gaps, empty ranges.
    static func randomIncreasingRanges(_ rng: inout SplitMix64) -> [KeyRange] {
        let cuts = Set((0..<Int.random(in: 0...12, using: &rng)).map { _ in randomKey(&rng) }).sorted {
            $0.lexicographicallyPrecedes($1)
        }
        var ranges: [KeyRange] = []
        var lastIncluded: [UInt8]?  // the key the last range ends at, included
        for (a, b) in zip(cuts, cuts.dropFirst()) where Int.random(in: 0..<3, using: &rng) > 0 {
            let lower: KeyRange.Bound = (lastIncluded == a || Bool.random(using: &rng)) ? .excluded(a) : .included(a)
            let upper: KeyRange.Bound = Bool.random(using: &rng) ? .included(b) : .excluded(b)
            ranges.append(KeyRange(lower: lower, upper: upper))
            lastIncluded = upper.isIncluded ? b : nil
        }
        if Int.random(in: 0..<4, using: &rng) == 0, let last = cuts.last {
            ranges.append(KeyRange(lower: lastIncluded == last ? .excluded(last) : .included(last), upper: nil))
        }
        return ranges
    }

    /// A scan of several ranges through one iterator (which starts a range without seeking
    /// when the entry past the last range is in it) gives the model's entries of each range
    /// in turn, on the latest state and on a snapshot taken before more writes.
    @Test(arguments: [4, 5] as [UInt64])
    func scansOfSeveralRangesMatchASortedModel(seed: UInt64) throws {
        try withTemporaryDatabase { db, _ throws in
            var rng = SplitMix64(seed: seed)
            var model: [[UInt8]: [UInt8]] = [:]
            func write(_ count: Int) throws {
                for _ in 0..<count {
                    let key = Self.randomKey(&rng)
                    if Int.random(in: 0..<5, using: &rng) == 0 {
                        try db.delete(key)
                        model[key] = nil
                    } else {
                        let value = Self.randomKey(&rng, maxLength: 8)
                        try db.put(key, value)
                        model[key] = value
                    }
                }
            }
            try write(300)
            if seed == 5 { try db.compact() }
            let before = model
            let snapshot = try db.snapshotReader()
            try write(100)
            for _ in 0..<300 {
                let ranges = Self.randomIncreasingRanges(&rng)
                for (reader, state) in [(db as any KeyValueReader, model), (snapshot, before)] {
                    let expected = ranges.flatMap { Self.modelScan(state, $0, .forward, nil) }
                    let cursor = try reader.scan(ranges: ranges)
                    var actual: [KeyValueEntry] = []
                    while let entry = try cursor.next({ k, v in KeyValueEntry(key: Array(k), value: Array(v)) }) {
                        actual.append(entry)
                    }
                    #expect(actual == expected, "ranges \(ranges)")
                }
            }
        }
    }

    /// Counting a range (LevelDB's readers step an iterator without handing out entries)
    /// gives the model's count, on the latest state and on a snapshot taken before more
    /// writes, for random bounds, and across the 4096-step chunks of one count.
    @Test func countingARangeMatchesTheModel() throws {
        try withTemporaryDatabase { db, _ throws in
            var rng = SplitMix64(seed: 9)
            var model: [[UInt8]: [UInt8]] = [:]
            let batch = WriteBatch()
            for n in 0..<9000 {
                let key = Array("k\(n)".utf8)
                batch.put(key, [1])
                model[key] = [1]
            }
            try db.write(batch)
            for _ in 0..<300 {
                let key = Self.randomKey(&rng)
                try db.put(key, [2])
                model[key] = [2]
            }
            let snapshot = try db.snapshotReader()
            defer { snapshot.release() }
            let frozen = model
            for _ in 0..<100 {
                let key = Self.randomKey(&rng)
                try db.delete(key)
                model[key] = nil
            }
            var ranges = (0..<300).map { _ in Self.randomRange(&rng) }
            ranges += [.all, .prefix(Array("k".utf8)), KeyRange(from: Array("k1".utf8), to: Array("k8".utf8))]
            for range in ranges {
                #expect(try db.count(range) == model.keys.filter { range.contains($0) }.count, "\(range)")
                #expect(
                    try LevelDBReader(db).count(range) == model.keys.filter { range.contains($0) }.count, "\(range)")
                #expect(
                    try snapshot.count(range) == frozen.keys.filter { range.contains($0) }.count, "snapshot \(range)")
            }
        }
    }

    /// The classic wrapper bug: a prefix scan in reverse from a start key.
    @Test func prefixWithStartKeyInReverseStaysInsideThePrefix() throws {
        try withTemporaryDatabase { db, _ throws in
            for k in ["a", "b:1", "b:2", "b:3", "b:4", "c"] { try db.put(k, "") }
            func keys(_ e: LevelDBEntries) throws -> [String] {
                try e.collect().map { String(decoding: $0.key, as: UTF8.self) }
            }
            #expect(try keys(db.entries(.prefix("b:"), order: .reverse)) == ["b:4", "b:3", "b:2", "b:1"])
            #expect(try keys(db.entries(.prefix("b:").ending(at: "b:3"), order: .reverse)) == ["b:3", "b:2", "b:1"])
            #expect(try keys(db.entries(.prefix("b:").ending(before: "b:3"), order: .reverse)) == ["b:2", "b:1"])
            #expect(try keys(db.entries(.prefix("b:").starting(at: "b:2"))) == ["b:2", "b:3", "b:4"])
            #expect(
                try keys(db.entries(.prefix("b:").starting(at: "b:2"), order: .reverse, limit: 2)) == ["b:4", "b:3"])
            // A start key outside the prefix does not leak keys from outside it.
            #expect(try keys(db.entries(.prefix("b:").starting(at: "a"))) == ["b:1", "b:2", "b:3", "b:4"])
            #expect(
                try keys(db.entries(.prefix("b:").ending(at: "z"), order: .reverse)) == ["b:4", "b:3", "b:2", "b:1"])
            #expect(try keys(db.entries(.prefix("d"), order: .reverse)).isEmpty)
            #expect(try keys(db.entries(.prefix("b:"), limit: 0)).isEmpty)
        }
    }

    @Test func prefixOfFFBytesHasNoUpperBoundAndScansToTheEnd() throws {
        try withTemporaryDatabase { db, _ throws in
            try db.put([0xFF, 0xFF], "x")
            try db.put([0xFF, 0xFF, 0x00], "y")
            try db.put([0xFF, 0xFE], "z")
            #expect(KeyRange.prefixSuccessor([0xFF, 0xFF]) == nil)
            #expect(KeyRange.prefixSuccessor([0x01, 0xFF]) == [0x02])
            #expect(
                try db.entries(.prefix([UInt8]([0xFF, 0xFF])), order: .reverse).collect().map(\.key) == [
                    [0xFF, 0xFF, 0x00], [0xFF, 0xFF]
                ])
        }
    }

    @Test func negativeLimitIsRejected() throws {
        try withTemporaryDatabase { db, _ throws in
            #expect(throws: KVDocsError.self) { _ = try db.entries(limit: -1) }
        }
    }

    @Test func cursorSeeksAndStepsBothWays() throws {
        try withTemporaryDatabase { db, _ throws in
            for k in ["a", "c", "e"] { try db.put(k, k.uppercased()) }
            let cursor = try db.makeCursor()
            #expect(try cursor.isValid == false)
            #expect(throws: KVDocsError.self) { try cursor.next() }  // not positioned: an error, not a crash
            #expect(throws: KVDocsError.self) { _ = try cursor.key() }
            try cursor.seek(to: "b")
            #expect(try cursor.key() == Array("c".utf8))
            #expect(try cursor.value() == Array("C".utf8))
            try cursor.previous()
            #expect(try cursor.key() == Array("a".utf8))
            try cursor.previous()
            #expect(try cursor.isValid == false)
            try cursor.seekToLast()
            #expect(try cursor.withKey { String(decoding: $0, as: UTF8.self) } == "e")
            try cursor.next()
            #expect(try cursor.isValid == false)
            try cursor.seekToFirst()
            #expect(try cursor.withValue { String(decoding: $0, as: UTF8.self) } == "A")
            try cursor.seek(to: "z")
            #expect(try cursor.isValid == false)
        }
    }

    @Test func iteratorSeesTheDatabaseAsOfItsCreation() throws {
        try withTemporaryDatabase { db, _ throws in
            try db.put("a", "1")
            let entries = try db.entries()
            try db.put("b", "2")
            #expect(try entries.collect().map(\.key) == [Array("a".utf8)])
        }
    }

    @Test func iteratorKeepsItsDatabaseAlive() throws {
        let dir = TemporaryDirectory()
        var entries: LevelDBEntries?
        weak var weakDB: LevelDB?
        do {
            let db = try LevelDB(path: dir.child("db"))
            weakDB = db
            for i in 0..<10 { try db.put("k\(i)", "v") }
            entries = try db.entries()
        }
        #expect(weakDB != nil)
        #expect(try entries?.collect().count == 10)
        entries = nil
        #expect(weakDB == nil)  // released with its last iterator, which closed it
        // The database was closed on deinit: it can be opened again.
        try LevelDB(path: dir.child("db")).close()
    }

    @Test func usingAnIteratorAfterCloseThrowsAndNeverCrashes() throws {
        let dir = TemporaryDirectory()
        let db = try LevelDB(path: dir.child("db"))
        for i in 0..<10 { try db.put("k\(i)", "v") }
        let cursor = try db.makeCursor()
        try cursor.seekToFirst()
        let entries = try db.entries()
        #expect(try entries.next() != nil)
        db.close()
        #expect(throws: KVDocsError.self) { try cursor.next() }
        #expect(throws: KVDocsError.self) { _ = try cursor.key() }
        #expect(throws: KVDocsError.self) { _ = try cursor.isValid }
        #expect(throws: KVDocsError.self) { _ = try entries.next() }
    }
}
