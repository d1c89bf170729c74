import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// Limits, offsets, sequence numbers and distances at and past the 64-bit bounds: each
/// saturates or is a clear error, never an overflow trap.
@Suite struct NumericBoundsTests {
    func expectInvalidArgument(_ fragment: String, _ body: () throws -> Void) {
        do {
            try body()
            Issue.record("accepted; expected an error containing \"\(fragment)\"")
        } catch let error as KVDocsError {
            #expect(error.kind == .invalidArgument)
            #expect(error.message.contains(fragment), "\(error.message)")
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test func changesSinceTheLargestSequenceNumberAreNone() throws {
        try withPeopleStore { store, people throws in
            try people.insert(["id": "a"])
            try people.insert(["id": "b"])
            #expect(try store.changes(since: .max).isEmpty)
            #expect(try store.changes(since: .max, limit: .max).isEmpty)
            #expect(try store.changes(since: .max - 1).isEmpty)
            #expect(try store.changes(since: .min).map(\.sequence) == [1, 2])
            #expect(try store.changes(since: -5, limit: .max).map(\.sequence) == [1, 2])
            expectInvalidArgument("changes: limit must not be negative (got -1)") { _ = try store.changes(limit: -1) }
        }
    }

    @Test func aLimitOfIntMaxAfterAnOffsetMeansEveryRemainingDocument() throws {
        try withPeopleStore { store, people throws in
            for i in 0..<4 {
                try people.insert(["id": .string("p\(i)"), "age": .int(Int64(30 + i)), "x": ["y": .int(Int64(i))]])
            }
            let queries = [
                DocumentQuery(),  // full scan in key order
                DocumentQuery().orderBy("age"),  // index scan in order
                DocumentQuery().where("age", .greater(1)),  // index range
                DocumentQuery().where("x.y", .greaterOrEqual(0)),  // full scan with a filter
                DocumentQuery().where("x.y", .greaterOrEqual(0)).orderBy("x.y", descending: true)  // sorted in memory
            ]
            for query in queries {
                #expect(try people.find(query.limit(.max).offset(1)).count == 3, "\(query)")
                #expect(try people.find(query.limit(.max).offset(.max)).isEmpty, "\(query)")
                #expect(try people.find(query.limit(1).offset(.max)).isEmpty, "\(query)")
                #expect(try people.find(query.limit(.max)).count == 4, "\(query)")
                #expect(try people.count(query.limit(.max).offset(.max)) == 4, "\(query)")
            }
            #expect(try people.find(DocumentQuery().orderBy("age").limit(.max).offset(3)).map { $0["id"] } == ["p3"])
            try store.read { tx throws in
                #expect(try tx.find("people", DocumentQuery().where("age", .greater(1)).limit(1).offset(.max)).isEmpty)
            }
        }
    }

    @Test func negativeLimitsAndOffsetsAreClearErrors() throws {
        try withPeopleStore { _, people throws in
            try people.insert(["id": "a", "bio": "night train"])
            expectInvalidArgument("limit must not be negative (got -1)") {
                _ = try people.find(DocumentQuery().limit(-1))
            }
            expectInvalidArgument("offset must not be negative (got -2)") {
                _ = try people.find(DocumentQuery().offset(-2))
            }
            expectInvalidArgument("offset must not be negative (got \(Int.min))") {
                _ = try people.find(DocumentQuery().limit(.max).offset(.min))
            }
            expectInvalidArgument("search limit must not be negative (got -1)") {
                _ = try people.search("night", options: SearchOptions(limit: -1))
            }
            expectInvalidArgument("search offset must not be negative (got -1)") {
                _ = try people.search("night", options: SearchOptions(offset: -1))
            }
        }
    }

    @Test func searchWithALimitOfIntMaxAfterAnOffsetReturnsTheRemainingHits() throws {
        try withPeopleStore { _, people throws in
            for i in 0..<3 { try people.insert(["id": .string("p\(i)"), "bio": .string("night train \(i)")]) }
            #expect(try people.search("night", options: SearchOptions(limit: .max, offset: 1)).count == 2)
            #expect(try people.search("night", options: SearchOptions(limit: .max, offset: .max)).isEmpty)
            #expect(try people.search("night", options: SearchOptions(limit: 1, offset: .max)).isEmpty)
            #expect(try people.search("night", options: SearchOptions(limit: .max)).count == 3)
            let snippet = SearchOptions.SnippetOptions(tokens: .max)
            #expect(
                try people.search("night", options: SearchOptions(limit: .max, offset: 2, snippet: snippet)).first?
                    .snippet == "[night] train 2")
            let tiny = SearchOptions.SnippetOptions(tokens: .min)
            #expect(
                try people.search("train", options: SearchOptions(limit: 1, snippet: tiny)).first?.snippet
                    == "…[train]…")
        }
    }

    @Test func aNearDistancePastIntMaxMeansNoBound() throws {
        try withPeopleStore { _, people throws in
            try people.insert(["id": "a", "bio": .string("night " + String(repeating: "x ", count: 50) + "train")])
            #expect(try people.search("NEAR(night train, 99999999999999999999999)").map(\.id) == ["a"])
            #expect(try people.search("NEAR(night train, 9223372036854775807)").map(\.id) == ["a"])
            #expect(try people.search("NEAR(night train, 49)").isEmpty)
            expectInvalidArgument("expected a number after \",\" in NEAR") {
                _ = try people.search("NEAR(night train, 1x)")
            }
        }
    }

    @Test func damagedPostingsAndLengthsAreCorruptionErrorsInsteadOfTraps() throws {
        try withPeopleStore { store, people throws in
            try people.insert(["id": "a", "bio": "night train"])
            let layout = store.textLayout("people", "bio_text")
            func expectCorruption(_ query: String, _ fragment: String) {
                do {
                    _ = try people.search(query)
                    Issue.record("damage was accepted (\(query))")
                } catch let error as KVDocsError {
                    #expect(error.kind == .corruption)
                    #expect(error.message.contains(fragment), "\(error.message)")
                } catch {
                    Issue.record("\(error)")
                }
            }
            // A token count past any real row.
            var lengths: [UInt8] = []
            Varint.append(Int.max, to: &lengths)
            try store.leveldb.put(layout.lengths(0), lengths)
            expectCorruption("night", "length block")
            // A posting block whose document deltas overflow when summed.
            var block: [UInt8] = []
            for v in [2, Int.max, 1, 1, 1, 0, 1, Int.max, 1] { Varint.append(v, to: &block) }
            try store.leveldb.put(layout.block("ghost", 0, 5), block)
            expectCorruption("ghost", "posting block")
            // Positions whose deltas overflow when summed.
            try store.leveldb.put(layout.lengths(0), [2])
            var posting: [UInt8] = []
            for v in [0, 2, Int.max, Int.max] { Varint.append(v, to: &posting) }
            let occurrences = OccurrenceBlock(entries: [posting[...]]).encoded()
            try store.leveldb.put(layout.occurrences("night", 0, 0), occurrences)
            expectCorruption("\"night train\"", "token position")
        }
    }
}
