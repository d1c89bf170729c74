import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// Entries and the other cursors: errors met mid-iteration are thrown, never lost; the
/// operations of `ThrowingCursor` behave as their `Sequence` namesakes.
@Suite struct ThrowingCursorTests {
    static func fill(_ db: LevelDB, _ count: Int) throws {
        try db.write { batch in
            for i in 0..<count { batch.put(String(format: "k%03d", i), "v\(i)") }
        }
    }

    static func key(_ i: Int) -> [UInt8] { Array(String(format: "k%03d", i).utf8) }

    // MARK: Edges

    @Test func entriesAreNotASequence() throws {
        try withTemporaryDatabase { db, _ throws in
            let entries = try db.entries()
            // A `for`-`in` loop over entries does not compile; this is the same fact at run time.
            #expect(!((entries as Any) is any Sequence))
        }
    }

    @Test func anEmptyRangeEndsAtOnceAndStaysEnded() throws {
        try withTemporaryDatabase { db, _ throws in
            let entries = try db.entries()
            #expect(try entries.next() == nil)
            try db.put("a", "1")
            #expect(try entries.next() == nil)
            #expect(try entries.collect().isEmpty)
        }
    }

    // MARK: close() mid-iteration

    @Test func closingTheDatabaseMidIterationThrowsClosedFromNext() throws {
        let dir = TemporaryDirectory()
        let db = try LevelDB(path: dir.child("db"))
        try Self.fill(db, 10)
        let entries = try db.entries()
        var seen = 0
        do {
            while (try entries.next()) != nil {
                seen += 1
                if seen == 3 { db.close() }
            }
            Issue.record("the loop ended without an error after \(seen) entries")
        } catch let error as KVDocsError {
            #expect(error.kind == .closed)
            #expect(error.message == "the database at \(dir.child("db")) is closed")
        }
        #expect(seen == 3)
        // Every later call throws it again: the end is never mistaken for a complete scan.
        #expect(throws: KVDocsError(.closed, "the database at \(dir.child("db")) is closed", path: dir.child("db"))) {
            _ = try entries.next()
        }
        expectError(.closed) { _ = try entries.next { _, _ in 0 } }
    }

    @Test func closingTheDatabaseInsideForEachThrowsClosedFromForEach() throws {
        let dir = TemporaryDirectory()
        let db = try LevelDB(path: dir.child("db"))
        try Self.fill(db, 10)
        var seen: [[UInt8]] = []
        expectError(.closed) {
            try db.entries().forEach { entry in
                seen.append(entry.key)
                if seen.count == 4 { db.close() }
            }
        }
        #expect(seen == (0..<4).map(Self.key))
    }

    @Test func closingTheDatabaseMidIterationThrowsClosedFromCollectAndTheOtherOperations() throws {
        let dir = TemporaryDirectory()
        let db = try LevelDB(path: dir.child("db"))
        try Self.fill(db, 10)
        let cursors = try (0..<7).map { _ in try db.entries() }
        for cursor in cursors { _ = try cursor.next() }
        db.close()
        expectError(.closed) { _ = try cursors[0].collect() }
        expectError(.closed) { _ = try Array(cursors[1]) }
        expectError(.closed) { _ = try cursors[2].map(\.key).collect() }
        expectError(.closed) { _ = try cursors[3].reduce(0) { n, _ in n + 1 } }
        expectError(.closed) { _ = try cursors[4].contains { _ in false } }
        expectError(.closed) { _ = try cursors[5].first { _ in false } }
        expectError(.closed) { _ = try cursors[6].filter { _ in true }.next() }
    }

    @Test func closingTheDatabaseMidIterationOfSnapshotEntriesThrowsClosed() throws {
        let dir = TemporaryDirectory()
        let db = try LevelDB(path: dir.child("db"))
        try Self.fill(db, 5)
        let snapshot = try db.snapshot()
        try db.put("k999", "later")
        let entries = try snapshot.entries()
        #expect(try entries.next()?.key == Self.key(0))
        db.close()
        expectError(.closed) { _ = try entries.next() }
        expectError(.closed) { try entries.forEach { _ in } }
    }

    // MARK: Storage errors mid-iteration

    /// Ways to damage a table file of an open database.
    enum Damage: CaseIterable {
        /// Deleted: LevelDB reports `NotFound` (`ENOENT`).
        case deleted
        /// Replaced by a directory, which opens but cannot be mapped: an `IO error`.
        case unreadable
        /// Bytes overwritten in the middle: a `Corruption` (block checksum mismatch) when
        /// read with `verifyChecksums`.
        case corrupted
    }

    /// A database in several table files, reopened (so no table is open yet) with its
    /// last table file damaged: a forward scan reads the first tables, then fails.
    static func databaseWithItsLastTable(_ damage: Damage, in dir: TemporaryDirectory) throws -> LevelDB {
        let path = dir.child("db")
        var options = LevelDBOptions()
        options.compression = .none
        options.maxFileSize = 1 << 20
        options.writeBufferSize = 64 << 10  // many small tables, merged by compact() into 1 MiB files
        do {
            let db = try LevelDB(path: path, options: options)
            let value = [UInt8](repeating: 0x78, count: 100)
            for start in stride(from: 0, to: 30_000, by: 1000) {
                try db.write { batch in
                    for i in start..<start + 1000 { batch.put(String(format: "key%05d", i), value) }
                }
            }
            try db.compact()
            db.close()
        }
        let tables = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".ldb") }.sorted()
        try #require(tables.count >= 2, "expected several table files, found \(tables)")
        let db = try LevelDB(path: path, options: options)
        let last = path + "/" + tables.last!
        switch damage {
        case .deleted:
            try FileManager.default.removeItem(atPath: last)
        case .unreadable:
            try FileManager.default.removeItem(atPath: last)
            try FileManager.default.createDirectory(atPath: last, withIntermediateDirectories: false)
        case .corrupted:
            let handle = try #require(FileHandle(forUpdatingAtPath: last))
            try handle.seek(toOffset: 2000)
            handle.write(Data(repeating: 0x5A, count: 64))
            try handle.close()
        }
        return db
    }

    static func expectedKind(_ damage: Damage) -> KVDocsError.Kind {
        switch damage {
        case .deleted: return .notFound
        case .unreadable: return .ioError
        case .corrupted: return .corruption
        }
    }

    @Test(arguments: Damage.allCases)
    func aTableFileDamagedMidIterationThrowsFromNextAndEveryLaterNext(damage: Damage) throws {
        let dir = TemporaryDirectory()
        let db = try Self.databaseWithItsLastTable(damage, in: dir)
        defer { db.close() }
        let entries = try db.entries(options: LevelDBReadOptions(verifyChecksums: true))
        var seen = 0
        do {
            while try entries.next() != nil { seen += 1 }
            Issue.record("the scan ended without an error after \(seen) entries")
        } catch let error as KVDocsError {
            #expect(error.kind == Self.expectedKind(damage), "\(error)")
            #expect(error.path == dir.child("db"))
            switch damage {
            case .deleted:
                #expect(
                    error.message.hasPrefix("NotFound: ") && error.message.contains(".ldb: No such file or directory"))
            case .unreadable: #expect(error.message.hasPrefix("IO error: ") && error.message.contains(".ldb"))
            case .corrupted: #expect(error.message.contains("checksum mismatch"))
            }
        }
        #expect(seen > 0 && seen < 30_000)
        let again = expectError(Self.expectedKind(damage)) { _ = try entries.next() }
        #expect(again?.message.isEmpty == false)
    }

    @Test(arguments: Damage.allCases)
    func aTableFileDamagedMidIterationThrowsFromForEachAndCollect(damage: Damage) throws {
        let dir = TemporaryDirectory()
        let db = try Self.databaseWithItsLastTable(damage, in: dir)
        defer { db.close() }
        let kind = Self.expectedKind(damage)
        let options = LevelDBReadOptions(verifyChecksums: true)
        var seen = 0
        expectError(kind) { try db.entries(options: options).forEach { _ in seen += 1 } }
        #expect(seen > 0)
        expectError(kind) { _ = try db.entries(options: options).collect() }
        expectError(kind) { _ = try db.entries(options: options).map(\.key).collect() }
        expectError(kind) { try db.forEach(options: options) { _, _ in } }
        expectError(kind) { _ = try db.entries(order: .reverse, options: options).reduce(0) { n, _ in n + 1 } }
    }

    // MARK: The borrowing fast path

    @Test func anErrorThrownByTheBorrowingClosureIsRethrownAndTheScanGoesOn() throws {
        struct Refused: Error, Equatable {}
        try withTemporaryDatabase { db, _ throws in
            try Self.fill(db, 3)
            let entries = try db.entries()
            #expect(throws: Refused()) { _ = try entries.next { _, _ -> Int in throw Refused() } }
            #expect(try entries.next { key, _ in Array(key) } == Self.key(1))
            #expect(try entries.next()?.key == Self.key(2))
            #expect(try entries.next() == nil)
        }
    }

    // MARK: Operations, against Array's

    @Test func operationsGiveWhatTheSameOperationsGiveOnAnArray() throws {
        try withTemporaryDatabase { db, _ throws in
            try Self.fill(db, 50)
            let all = try db.entries().collect()
            #expect(all.count == 50)
            func number(_ e: KeyValueEntry) -> Int { Int(String(decoding: e.value.dropFirst(), as: UTF8.self))! }
            #expect(try Array(db.entries()) == all)
            #expect(try Set(db.entries().map(\.key)) == Set(all.map(\.key)))
            #expect(try db.entries().map(number).collect() == all.map(number))
            #expect(try db.entries().filter { number($0) % 7 == 0 }.collect() == all.filter { number($0) % 7 == 0 })
            #expect(
                try db.entries().compactMap { number($0) % 5 == 0 ? number($0) : nil }.collect()
                    == all.compactMap { number($0) % 5 == 0 ? number($0) : nil })
            #expect(try db.entries().prefix(3).collect() == Array(all.prefix(3)))
            #expect(try db.entries().prefix(0).collect().isEmpty)
            #expect(try db.entries().prefix(80).collect() == all)
            #expect(try db.entries().reduce(0) { $0 + number($1) } == all.reduce(0) { $0 + number($1) })
            #expect(try db.entries().reduce(into: [Int]()) { $0.append(number($1)) } == all.map(number))
            #expect(try db.entries().contains { number($0) == 42 })
            #expect(try !db.entries().contains { number($0) == 420 })
            #expect(try db.entries().contains(all[17]))
            #expect(try db.entries().first { number($0) > 30 } == all.first { number($0) > 30 })
            #expect(try db.entries().first { _ in false } == nil)
            #expect(try db.entries().allSatisfy { number($0) < 50 })
            #expect(try !db.entries().allSatisfy { number($0) < 49 })
            var visited: [KeyValueEntry] = []
            try db.entries().forEach { visited.append($0) }
            #expect(visited == all)
        }
    }

    @Test func searchingOperationsStopAtTheElementTheyFind() throws {
        try withTemporaryDatabase { db, _ throws in
            try Self.fill(db, 10)
            let entries = try db.entries()
            #expect(try entries.first { $0.key == Self.key(3) } != nil)
            #expect(try entries.next()?.key == Self.key(4))
            #expect(try entries.contains { $0.key == Self.key(6) })
            #expect(try entries.next()?.key == Self.key(7))
            let prefix = entries.prefix(1)
            #expect(try prefix.next()?.key == Self.key(8))
            #expect(try prefix.next() == nil)
            #expect(try entries.next()?.key == Self.key(9))  // the prefix read no further
        }
    }

    @Test func lazyOperationsReadNothingUntilAskedAndRethrowTheirClosuresErrors() throws {
        struct Bad: Error, Equatable {}
        try withTemporaryDatabase { db, _ throws in
            try Self.fill(db, 3)
            let entries = try db.entries()
            var calls = 0
            let mapped = entries.map { entry -> [UInt8] in
                calls += 1
                return entry.key
            }
            let filtered = mapped.filter { _ in
                calls += 1
                return true
            }
            #expect(calls == 0)
            #expect(try filtered.next() == Self.key(0))
            #expect(calls == 2)
            let failing = entries.compactMap { _ -> Int? in throw Bad() }
            #expect(throws: Bad()) { _ = try failing.next() }
            #expect(try entries.next()?.key == Self.key(2))
        }
    }
}
