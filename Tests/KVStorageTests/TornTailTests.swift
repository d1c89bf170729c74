import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// A power loss after unsynced writes leaves the end of the newest log zeroed, garbled or
/// cut short (a torn tail). The open drops it, reports it and keeps every synced write;
/// damage followed by intact records is still refused.
@Suite struct TornTailTests {
    /// A closed database whose newest log holds `synced` writes made with `sync: true`, then
    /// `unsynced` writes without, and the log's size after each write.
    struct LoggedWrites {
        let path: String
        let logName: String
        /// `ends[i]`: the log's size once write `i` returned (where its record ends).
        let ends: [Int]
        let synced: Int
        var log: String { path + "/" + logName }
        /// The log's size after the last synced write.
        var syncedEnd: Int { ends[synced - 1] }
    }

    static func key(_ i: Int) -> String { String(format: "k%05d", i) }
    static func value(_ i: Int, size: Int) -> String { "v\(i)-" + String(repeating: "x", count: size) }

    static func newestLog(_ path: String) throws -> String {
        let logs = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".log") }
        return try #require(logs.max())
    }

    static func size(_ file: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int)
    }

    static func write(_ path: String, synced: Int, unsynced: Int, valueSize: Int = 100) throws -> LoggedWrites {
        let db = try LevelDB(path: path)
        let name = try newestLog(path)
        var ends: [Int] = []
        for i in 0..<(synced + unsynced) {
            try db.put(key(i), value(i, size: valueSize), sync: i < synced)
            ends.append(try size(path + "/" + name))
        }
        db.close()
        #expect(try newestLog(path) == name, "the writes switched logs")
        return LoggedWrites(path: path, logName: name, ends: ends, synced: synced)
    }

    /// The keys of `db`, which must be the first keys written, in order; returns how many.
    static func prefixLength(_ db: LevelDB, valueSize: Int = 100, sourceLocation: SourceLocation = #_sourceLocation)
        throws -> Int
    {
        let entries = try db.entries().collect()
        for (i, entry) in entries.enumerated() {
            #expect(
                String(decoding: entry.key, as: UTF8.self) == key(i), "not a prefix of the writes",
                sourceLocation: sourceLocation)
            #expect(
                String(decoding: entry.value, as: UTF8.self) == value(i, size: valueSize),
                sourceLocation: sourceLocation)
        }
        return entries.count
    }

    enum Damage: String, CaseIterable, CustomTestStringConvertible {
        case zeroed, garbled, garbledPastTheEnd
        var testDescription: String { rawValue }

        /// The log's bytes with everything from `offset` on damaged.
        func apply(to bytes: [UInt8], from offset: Int, seed: UInt64) -> [UInt8] {
            var rng = SplitMix64(seed: seed)
            var damaged = Array(bytes[..<offset])
            switch self {
            case .zeroed:
                damaged += [UInt8](repeating: 0, count: bytes.count - offset)
            case .garbled:
                damaged += (offset..<bytes.count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            case .garbledPastTheEnd:
                damaged += (offset..<(bytes.count + 5000)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            }
            return damaged
        }
    }

    /// Values of 100 bytes make one fragment per write; values of 20,000 make records that
    /// cross blocks, so the damage can start in a write's second fragment.
    @Test(arguments: Damage.allCases, [100, 20_000])
    func aDamagedTailAfterTheLastSyncedWriteOpensKeepsEverySyncedWriteAndIsReported(damage: Damage, valueSize: Int)
        throws
    {
        let dir = TemporaryDirectory()
        let logged = try Self.write(dir.child("db"), synced: 10, unsynced: 10, valueSize: valueSize)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: logged.log)))
        // The damage starts inside the fourth unsynced write (its second fragment, for
        // large values): the first three survive.
        let kept = logged.synced + 3
        let start = logged.ends[kept - 1] + (logged.ends[kept] - logged.ends[kept - 1]) * 3 / 4
        let damaged = damage.apply(to: bytes, from: start, seed: UInt64(valueSize))
        try Data(damaged).write(to: URL(fileURLWithPath: logged.log))

        let db = try LevelDB(path: logged.path)
        defer { db.close() }
        #expect(try Self.prefixLength(db, valueSize: valueSize) == kept)
        let tail = try #require(db.recoveredTornTail)
        #expect(tail.logFile == logged.logName)
        #expect(tail.offset == logged.ends[kept - 1])
        #expect(tail.droppedBytes == damaged.count - logged.ends[kept - 1])
        #expect(tail.savedAs == logged.path + "/lost/\(logged.logName).torn-at-\(tail.offset)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: tail.savedAs)) == Data(damaged[tail.offset...]))
        #expect(
            tail.description.contains(logged.logName)
                && tail.description.contains("\(tail.droppedBytes) bytes from offset \(tail.offset)"))
        // The database takes writes, and the next open finds nothing torn.
        try db.put("after", "power loss", sync: true)
        db.close()
        let again = try LevelDB(path: logged.path)
        defer { again.close() }
        #expect(again.recoveredTornTail == nil)
        #expect(try again.get("after", as: String.self) == "power loss")
        #expect(try again.entries().collect().count == kept + 1)
    }

    /// Damage that starts right after the last synced write loses every unsynced write.
    @Test func aTailGarbledFromTheLastSyncedRecordLosesExactlyTheUnsyncedWrites() throws {
        let dir = TemporaryDirectory()
        let logged = try Self.write(dir.child("db"), synced: 7, unsynced: 30)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: logged.log)))
        var rng = SplitMix64(seed: 5)
        for i in logged.syncedEnd..<bytes.count { bytes[i] = UInt8(truncatingIfNeeded: rng.next()) }
        // A garbled header whose length fits its block: LevelDB reports a checksum mismatch.
        bytes[logged.syncedEnd + 4] = 40
        bytes[logged.syncedEnd + 5] = 0
        try Data(bytes).write(to: URL(fileURLWithPath: logged.log))
        let db = try LevelDB(path: logged.path)
        defer { db.close() }
        #expect(try Self.prefixLength(db) == 7)
        #expect(db.recoveredTornTail?.offset == logged.syncedEnd)
        #expect(db.recoveredTornTail?.damage == "checksum mismatch at offset \(logged.syncedEnd)")
    }

    /// A log cut short inside a record opened before too (LevelDB ignores the partial
    /// record, and drops it when it turns the log into a table); now the loss is reported
    /// and the bytes kept.
    @Test func aTailCutShortInsideARecordOpensAndIsReported() throws {
        let dir = TemporaryDirectory()
        let logged = try Self.write(dir.child("db"), synced: 5, unsynced: 5)
        let cut = logged.ends[6] + 30
        try FileHandle(forWritingTo: URL(fileURLWithPath: logged.log)).truncate(atOffset: UInt64(cut))
        let db = try LevelDB(path: logged.path)
        defer { db.close() }
        #expect(try Self.prefixLength(db) == 7)
        let tail = try #require(db.recoveredTornTail)
        #expect(tail.offset == logged.ends[6] && tail.droppedBytes == 30)
        #expect(tail.damage == "a record cut short, or bytes that are no record, at offset \(logged.ends[6])")
    }

    /// A log that ends with whole records is not touched and nothing is reported.
    @Test func aLogThatEndsWithAWholeRecordIsLeftAloneAndNothingIsReported() throws {
        let dir = TemporaryDirectory()
        let logged = try Self.write(dir.child("db"), synced: 5, unsynced: 5)
        try FileHandle(forWritingTo: URL(fileURLWithPath: logged.log)).truncate(atOffset: UInt64(logged.ends[6]))
        let db = try LevelDB(path: logged.path)
        defer { db.close() }
        #expect(try Self.prefixLength(db) == 7)
        #expect(db.recoveredTornTail == nil)
        #expect(!FileManager.default.fileExists(atPath: logged.path + "/lost"))
    }

    /// A file system that keeps whole pages can cut the log on a 32 KiB block boundary
    /// inside a record that crosses it: the record's first fragment is whole, the rest is
    /// missing. The record is dropped and the loss reported.
    @Test func aTailCutShortOnABlockBoundaryInsideARecordOpensAndIsReported() throws {
        let dir = TemporaryDirectory()
        let logged = try Self.write(dir.child("db"), synced: 10, unsynced: 90, valueSize: 1000)
        let boundary = try #require(
            stride(from: LogFileCheck.blockSize, to: logged.ends.last ?? 0, by: LogFileCheck.blockSize)
                .first { b in b > logged.syncedEnd && !logged.ends.contains(b) })
        let kept = logged.ends.filter { $0 <= boundary }.count
        try FileHandle(forWritingTo: URL(fileURLWithPath: logged.log)).truncate(atOffset: UInt64(boundary))
        let db = try LevelDB(path: logged.path)
        defer { db.close() }
        #expect(try Self.prefixLength(db, valueSize: 1000) == kept)
        #expect(kept >= logged.synced)
        #expect(db.recoveredTornTail?.offset == logged.ends[kept - 1])
        #expect(db.recoveredTornTail?.droppedBytes == boundary - logged.ends[kept - 1])
    }

    /// A damaged record followed by intact ones is not a torn tail: the open refuses, names
    /// the log and changes nothing.
    @Test(arguments: [3, 18])
    func damageFollowedByAnIntactRecordIsStillRefusedAndChangesNothing(damagedWrite: Int) throws {
        let dir = TemporaryDirectory()
        let logged = try Self.write(dir.child("db"), synced: 10, unsynced: 10)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: logged.log)))
        // A byte in the middle of the payload of write 3 (synced) or 18 (the second to last):
        // the records after it are intact.
        bytes[logged.ends[damagedWrite] - 20] ^= 0x55
        try Data(bytes).write(to: URL(fileURLWithPath: logged.log))
        let before = try Self.fingerprint(logged.path)
        let error = expectError(.corruption) { try LevelDB(path: logged.path).close() }
        #expect(
            error?.message.contains("\(logged.log): checksum mismatch at offset \(logged.ends[damagedWrite - 1])")
                == true, "\(String(describing: error))")
        #expect(try Self.fingerprint(logged.path) == before)
    }

    /// A whole garbled block with intact blocks after it: the fragments at the start of the
    /// later blocks show that the damage is in the middle.
    @Test func aGarbledBlockFollowedByIntactBlocksIsStillRefused() throws {
        let dir = TemporaryDirectory()
        let logged = try Self.write(dir.child("db"), synced: 100, unsynced: 0, valueSize: 1000)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: logged.log)))
        try #require(bytes.count > 3 * LogFileCheck.blockSize)
        var rng = SplitMix64(seed: 12)
        for i in LogFileCheck.blockSize..<(2 * LogFileCheck.blockSize) {
            bytes[i] = UInt8(truncatingIfNeeded: rng.next())
        }
        try Data(bytes).write(to: URL(fileURLWithPath: logged.log))
        guard
            case .damagedInTheMiddle(_, let at, let intact, _) = bytes.withUnsafeBytes({ TornTailRecovery.verdict($0) })
        else {
            Issue.record("a garbled block with intact blocks after it was not judged damage in the middle")
            return
        }
        #expect(at == LogFileCheck.blockSize)
        #expect(intact == 2 * LogFileCheck.blockSize)
        let error = expectError(.corruption) { try LevelDB(path: logged.path).close() }
        #expect(error?.message.contains(logged.log) == true, "\(String(describing: error))")
        #expect(!FileManager.default.fileExists(atPath: logged.path + "/lost"))
    }

    /// A garbled region in the middle of the last block whose first header runs past the
    /// end of the file: LevelDB alone takes it for the end of the log and drops the intact
    /// records after it without an error. The open refuses, naming the log and both offsets.
    @Test func garbageBeforeAnIntactRecordInTheLastBlockIsRefusedNotTakenForTheEnd() throws {
        let dir = TemporaryDirectory()
        let logged = try Self.write(dir.child("db"), synced: 10, unsynced: 10)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: logged.log)))
        var rng = SplitMix64(seed: 11)
        // Writes 12 to 17 garbled, headers included; 18 and 19 intact. The first garbled
        // header claims a length past the end of the file.
        for i in logged.ends[11]..<logged.ends[17] { bytes[i] = UInt8(truncatingIfNeeded: rng.next()) }
        bytes[logged.ends[11] + 4] = 0xFF
        bytes[logged.ends[11] + 5] = 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: logged.log))
        let found = bytes.withUnsafeBytes { TornTailRecovery.firstIntactFragment(in: $0, from: logged.ends[11]) }
        #expect(found == logged.ends[17])
        let before = try Self.fingerprint(logged.path)
        let error = expectError(.corruption) { try LevelDB(path: logged.path).close() }
        #expect(
            error?.message.contains(
                "\(logged.log): a record cut short, or bytes that are no record, at offset \(logged.ends[11]), followed by an intact record at offset \(logged.ends[17])"
            ) == true, "\(String(describing: error))")
        #expect(try Self.fingerprint(logged.path) == before)
    }

    /// The private copy that a read-only open makes is cut; the original is not touched.
    @Test func aPrivateCopyOfADatabaseWithATornTailOpensAndTheOriginalIsUnchanged() throws {
        let dir = TemporaryDirectory()
        let logged = try Self.write(dir.child("db"), synced: 10, unsynced: 10)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: logged.log)))
        let damaged = Damage.zeroed.apply(to: bytes, from: logged.syncedEnd + 12, seed: 1)
        try Data(damaged).write(to: URL(fileURLWithPath: logged.log))
        let before = try Self.fingerprint(logged.path)
        let db = try LevelDB.openPrivateCopy(of: logged.path, under: dir.path)
        #expect(try Self.prefixLength(db) == 10)
        let tail = try #require(db.recoveredTornTail)
        #expect(tail.offset == logged.syncedEnd)
        #expect(tail.savedAs.hasPrefix(db.path + "/lost/"))
        db.close()
        #expect(try Self.fingerprint(logged.path) == before)
    }

    /// Documents: the synced ones are there, the store is consistent (`verify` clean) and
    /// the documents are those of a prefix of the writes.
    @Test func aDocumentStoreWithATornTailOpensWithItsSyncedDocumentsAndVerifiesClean() throws {
        let dir = TemporaryDirectory()
        let path = dir.child("db")
        let schema = try DocumentSchema(
            json: Data(
                #"{"collections": {"people": {"primaryKey": "id", "indexes": [{"name": "by_age", "fields": ["age"]}]}}}"#
                    .utf8))
        var ends: [Int] = []
        let name: String
        do {
            let db = try LevelDB(path: path)
            _ = try DocumentStore(database: db, schema: schema)
            db.close()
        }
        do {
            let db = try LevelDB(path: path)
            let store = try DocumentStore(database: db)
            name = try Self.newestLog(path)
            for i in 0..<20 {
                try store.write(sync: i < 8) { batch in
                    _ = try batch.upsert("people", ["id": .int(Int64(i)), "age": .int(Int64(20 + i))])
                }
                ends.append(try Self.size(path + "/" + name))
            }
            db.close()
        }
        let log = path + "/" + name
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: log)))
        try Data(Damage.garbled.apply(to: bytes, from: ends[11] + 9, seed: 3)).write(to: URL(fileURLWithPath: log))
        let db = try LevelDB(path: path)
        defer { db.close() }
        #expect(db.recoveredTornTail?.offset == ends[11])
        let store = try DocumentStore(database: db)
        #expect(try store.verify().isClean)
        let ids = try store.collection("people").find().compactMap { doc -> Int? in
            if case .int(let id)? = doc["id"] { Int(id) } else { nil }
        }
        #expect(ids == Array(0..<12))
    }

    /// Every file of a directory (recursively) with its bytes, except LevelDB's own
    /// `LOG`, `LOG.old` and `LOCK`, which even a failed open writes.
    static func fingerprint(_ dir: String) throws -> [String: Data] {
        var result: [String: Data] = [:]
        let fm = FileManager.default
        for name in try fm.subpathsOfDirectory(atPath: dir) {
            var isDirectory: ObjCBool = false
            guard !["LOG", "LOG.old", "LOCK"].contains(name),
                fm.fileExists(atPath: dir + "/" + name, isDirectory: &isDirectory), !isDirectory.boolValue
            else { continue }
            result[name] = try Data(contentsOf: URL(fileURLWithPath: dir + "/" + name))
        }
        return result
    }
}
