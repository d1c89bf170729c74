import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@Suite struct DeleteRangeTests {
    /// Random ranges, orders, limits and batch sizes against a sorted model of the keys.
    @Test func deletesExactlyTheKeysAScanWouldVisit() throws {
        var rng = SplitMix64(seed: 41)
        for round in 0..<40 {
            try withTemporaryDatabase { db, _ throws in
                var model: [[UInt8]] = []
                try db.write { batch in
                    for _ in 0..<Int.random(in: 0...300, using: &rng) {
                        let key = (0..<Int.random(in: 1...3, using: &rng)).map { _ in
                            UInt8.random(in: 0...5, using: &rng)
                        }
                        batch.put(key, [UInt8(round & 0xFF)])
                        model.append(key)
                    }
                }
                model = Array(Set(model)).sorted { $0.lexicographicallyPrecedes($1) }
                func randomKey() -> [UInt8] {
                    (0..<Int.random(in: 0...2, using: &rng)).map { _ in UInt8.random(in: 0...5, using: &rng) }
                }
                let range: KeyRange
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: range = .all
                case 1: range = .prefix(randomKey())
                case 2: range = KeyRange(from: randomKey(), to: randomKey())
                default: range = KeyRange(from: randomKey(), through: randomKey())
                }
                let order: ScanOrder = Bool.random(using: &rng) ? .forward : .reverse
                let limit: Int? = Bool.random(using: &rng) ? Int.random(in: 0...50, using: &rng) : nil
                let batchSize = [1, 3, 7, 10_000, .max][Int.random(in: 0..<5, using: &rng)]
                var inRange = model.filter { range.contains($0) }
                if order == .reverse { inRange.reverse() }
                if let limit { inRange = Array(inRange.prefix(limit)) }
                let deleted = try db.deleteRange(range, order: order, limit: limit, batchSize: batchSize)
                #expect(deleted == inRange.count)
                let gone = Set(inRange)
                #expect(try db.entries().collect().map(\.key) == model.filter { !gone.contains($0) })
            }
        }
    }

    @Test func invalidArgumentsAreRejectedAndDeleteNothing() throws {
        try withTemporaryDatabase { db, _ throws in
            try db.put("a", "1")
            #expect(throws: KVDocsError.self) { try db.deleteRange(.all, batchSize: 0) }
            #expect(throws: KVDocsError.self) { try db.deleteRange(.all, limit: -1) }
            #expect(try db.deleteRange(.all, limit: 0) == 0)
            #expect(try db.get("a") != nil)
        }
    }
}

@Suite struct ErrorMatchingTests {
    @Test func aKindMatchesInACatchClause() throws {
        let dir = TemporaryDirectory()
        let db = try LevelDB(path: dir.child("db"))
        defer { db.close() }
        var matched = false
        do {
            _ = try LevelDB(path: dir.child("db"))
        } catch KVDocsError.corruption {
            Issue.record("matched the wrong kind")
        } catch KVDocsError.locked {
            matched = true
        }
        #expect(matched)
        switch KVDocsError(.conflict, "x") as any Error {
        case KVDocsError.uniqueViolation: Issue.record("matched the wrong kind")
        case KVDocsError.conflict: break
        default: Issue.record("no kind matched")
        }
    }

    @Test func documentErrorsCarryTheDocumentKey() throws {
        try withPeopleStore { store, people throws in
            try people.insert(["id": "p1", "email": "a@x"])
            let conflict = #expect(throws: KVDocsError.self) { try people.insert(["id": "p1"]) }
            #expect(conflict?.key == store.root.pack(["d", "people", "p1"]))
            let unique = #expect(throws: KVDocsError.self) { try people.insert(["id": "p2", "email": "a@x"]) }
            #expect(unique?.kind == .uniqueViolation)
            #expect(unique?.key == store.root.pack(["d", "people", "p2"]))
            // A damaged stored document names its key.
            try store.leveldb.put(store.root.pack(["d", "people", "bad"]), "{not json")
            let damaged = #expect(throws: KVDocsError.self) { try people.get(id: "bad") }
            #expect(damaged?.kind == .corruption)
            #expect(damaged?.key == store.root.pack(["d", "people", "bad"]))
            #expect(damaged?.message.contains("line 1, column 2") == true)
        }
    }
}
