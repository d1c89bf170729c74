import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@Suite struct ComparatorTests {
    static let reverse = LevelDBComparator(name: "kvdocs.test.reverse") { a, b in LevelDBComparator.bytewise(b, a) }

    @Test func customComparatorOrdersIterationAndRanges() throws {
        var options = LevelDBOptions()
        options.comparator = Self.reverse
        try withTemporaryDatabase(options: options) { db, _ throws in
            for k in ["a", "b", "c", "d"] { try db.put(k, k) }
            #expect(try db.entries().collect().map { String(decoding: $0.key, as: UTF8.self) } == ["d", "c", "b", "a"])
            // In this order "c" comes before "a": the range [c, a) is c, b.
            let range = KeyRange(lower: .included(Array("c".utf8)), upper: .excluded(Array("a".utf8)))
            #expect(try db.entries(range).collect().map { String(decoding: $0.key, as: UTF8.self) } == ["c", "b"])
            #expect(
                try db.entries(range, order: .reverse).collect().map { String(decoding: $0.key, as: UTF8.self) } == [
                    "b", "c"
                ])
        }
    }

    @Test func reopeningWithADifferentComparatorFailsWithLevelDBsMessage() throws {
        let dir = TemporaryDirectory()
        var options = LevelDBOptions()
        options.comparator = Self.reverse
        try LevelDB(path: dir.child("db"), options: options).close()
        for other in [nil, LevelDBComparator(name: "kvdocs.test.other") { LevelDBComparator.bytewise($0, $1) }] {
            var reopen = LevelDBOptions()
            reopen.comparator = other
            do {
                _ = try LevelDB(path: dir.child("db"), options: reopen)
                Issue.record("opened with a different comparator")
            } catch let error as KVDocsError {
                #expect(error.kind == .invalidArgument)
                #expect(error.message.contains("kvdocs.test.reverse does not match existing comparator"))
            }
        }
        // The right comparator still opens it.
        try LevelDB(path: dir.child("db"), options: options).close()
    }

    @Test func reservedComparatorNameIsRejected() throws {
        let dir = TemporaryDirectory()
        var options = LevelDBOptions()
        options.comparator = LevelDBComparator(name: "leveldb.mine") { LevelDBComparator.bytewise($0, $1) }
        #expect(throws: KVDocsError.self) { _ = try LevelDB(path: dir.child("db"), options: options) }
    }
}
