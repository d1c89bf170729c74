import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// What KVDocs does with damaged files: errors, never aborts or wrong answers; repairs that
/// keep batches whole; salvage of unreadable documents.
@Suite struct CorruptionHandlingTests {
    @Test func defaultsVerifyChecksumsOnReadsAndCheckParanoidly() {
        #expect(LevelDBOptions().paranoidChecks)
        #expect(LevelDBReadOptions().verifyChecksums)
        #expect(LevelDBReadOptions().isDefault)
    }

    /// LevelDB's own test vectors (`util/crc32c_test.cc`) and its mask.
    @Test func crc32cMatchesLevelDBsTestVectors() {
        #expect(CRC32C.checksum([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
        #expect(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
        #expect(CRC32C.checksum((0..<32).map { UInt8($0) }) == 0x46DD_794E)
        #expect(CRC32C.checksum((0..<32).reversed().map { UInt8($0) }) == 0x113F_DB5C)
        #expect(
            CRC32C.checksum(Array("hello world".utf8))
                == CRC32C.checksum(Array(" world".utf8), continuing: CRC32C.checksum(Array("hello".utf8))))
        #expect(CRC32C.mask(0) != 0)
    }

    /// Writes `batches` batches of three keys each to a fresh database, closes it, and
    /// returns the path of its one log file.
    private func databaseWithLog(_ path: String, batches: Int, valueSize: Int = 40) throws -> String {
        let db = try LevelDB(path: path)
        for b in 0..<batches {
            try db.write { batch in
                for k in 0..<3 {
                    batch.put("b\(String(format: "%04d", b))-\(k)", String(repeating: "v", count: valueSize))
                }
            }
        }
        db.close()
        let logs = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".log") }
        return path + "/" + (try #require(logs.max()))
    }

    @Test func theLogCheckFindsEveryRecordOfASoundLogAndCutsADamagedOneAtItsFirstBadRecord() throws {
        let dir = TemporaryDirectory()
        // Values of 20 KB make records that span blocks (first, middle, last fragments).
        let log = try databaseWithLog(dir.child("db"), batches: 30, valueSize: 20_000)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: log)))
        let sound = bytes.withUnsafeBytes { LogFileCheck($0) }
        #expect(sound.damage == nil)
        #expect(sound.records == 30)
        #expect(sound.intactLength == bytes.count)
        // A record cut short by the end of the file is what a writer that died leaves: sound.
        let cut = Array(bytes[0..<(bytes.count - 100)])
        let tail = cut.withUnsafeBytes { LogFileCheck($0) }
        #expect(tail.damage == nil)
        #expect(tail.records == 29)
        // A flipped byte in the middle: cut before the record that holds it.
        bytes[bytes.count / 2] ^= 0x40
        let damaged = bytes.withUnsafeBytes { LogFileCheck($0) }
        #expect(damaged.damage != nil)
        #expect(damaged.records < 30 && damaged.records > 0)
        #expect(damaged.intactLength <= bytes.count / 2)
    }

    @Test func repairCutsADamagedLogSoEveryBatchIsWholeAndTheWritesAreAPrefix() throws {
        let dir = TemporaryDirectory()
        let path = dir.child("db")
        let log = try databaseWithLog(path, batches: 200)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: log)))
        bytes[bytes.count * 2 / 3] ^= 0x01
        try Data(bytes).write(to: URL(fileURLWithPath: log))

        expectError(.corruption) { try LevelDB(path: path).close() }
        let report = try LevelDB.repair(path: path)
        #expect(report.truncatedLogs.count == 1)
        #expect(
            FileManager.default.fileExists(
                atPath: path + "/lost/" + URL(fileURLWithPath: log).lastPathComponent + ".damaged"))
        let db = try LevelDB(path: path)
        defer { db.close() }
        let keys = try db.entries().collect().map { String(decoding: $0.key, as: UTF8.self) }
        #expect(keys.count % 3 == 0, "a batch was torn")
        let batches = keys.count / 3
        #expect(batches > 50 && batches < 200)
        let expected = (0..<batches).flatMap { b in (0..<3).map { "b\(String(format: "%04d", b))-\($0)" } }
        #expect(keys == expected, "the repaired writes are not a prefix of the batches")
    }

    @Test func repairOfASoundDatabaseCutsNothing() throws {
        let dir = TemporaryDirectory()
        let path = dir.child("db")
        _ = try databaseWithLog(path, batches: 50)
        let report = try LevelDB.repair(path: path)
        #expect(report.truncatedLogs.isEmpty)
        let db = try LevelDB(path: path)
        defer { db.close() }
        #expect(try db.entries().collect().count == 150)
    }

    /// Without paranoid checks LevelDB compacts a damaged block into a new table and its
    /// table builder asserts (SIGABRT). With KVDocs' defaults the compaction verifies
    /// checksums, fails, and `compact()` says so.
    @Test func compactingADamagedTableThrowsCorruptionAndReadsFail() throws {
        let dir = TemporaryDirectory()
        let path = dir.child("db")
        var options = LevelDBOptions()
        options.compression = .none
        do {
            let db = try LevelDB(path: path, options: options)
            for i in 0..<3000 { try db.put(String(format: "key%05d", i), String(repeating: "x", count: 100)) }
            try db.compact()
            for i in 0..<3000 where i % 3 == 0 { try db.put(String(format: "key%05d", i), "new") }
            db.close()
        }
        let tables = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".ldb") }
        try #require(!tables.isEmpty)
        for table in tables {
            let handle = try #require(FileHandle(forUpdatingAtPath: path + "/" + table))
            try handle.seek(toOffset: 5000)
            handle.write(Data((0..<200).map { UInt8(truncatingIfNeeded: $0 &* 37) }))
            try handle.close()
        }
        let db = try LevelDB(path: path)
        defer { db.close() }
        expectError(.corruption) { try db.compact() }
        expectError(.corruption) { _ = try db.entries().collect() }
    }

    private func storeWithPeople(_ db: LevelDB) throws -> DocumentStore {
        let schema = try DocumentSchema(
            json: Data(
                #"""
                {"collections": {"people": {"primaryKey": "id",
                  "indexes": [{"name": "by_age", "fields": ["age"]}, {"name": "by_email", "fields": ["email"], "unique": true}],
                  "text": [{"name": "bio_text", "fields": ["bio"]}]}}}
                """#.utf8))
        let store = try DocumentStore(database: db, schema: schema)
        let people = try store.collection("people")
        for i in 0..<20 {
            try people.insert([
                "id": .int(Int64(i)), "age": .int(Int64(20 + i)), "email": .string("p\(i)@x.org"),
                "bio": .string("river station \(i)")
            ])
        }
        return store
    }

    @Test func salvageQuarantinesUnreadableDocumentsRebuildsIndexesAndReportsTheLoss() throws {
        try withTemporaryDatabase { db, _ in
            let store = try storeWithPeople(db)
            // Damage that passed every checksum: bytes that are not JSON under a document's
            // key, and a document stored under another id's key.
            let garbage: [UInt8] = [0x7B, 0x22, 0xFF, 0x00, 0x13]
            try db.put(Tuple(["d", "people", .int(5)]), garbage)
            try db.put(Tuple(["d", "people", .int(7)]), Array(#"{"id":8,"age":1}"#.utf8))
            let before = try store.verify()
            #expect(before.badDocuments == 2)
            expectError(.corruption) { try store.reindex(collection: "people") }
            let sequence = try store.lastSequence

            let report = try store.salvage()
            #expect(report.verification.isClean)
            #expect(report.kept["people"] == 18)
            #expect(report.quarantined.map(\.id) == [.int(5), .int(7)])
            #expect(report.rebuiltIndexes.contains("people.by_email"))
            #expect(report.rebuiltIndexes.contains("people.bio_text"))
            #expect(try store.verify().isClean)
            #expect(try store.collection("people").count() == 18)
            #expect(try store.read { try $0.search("people", "river") }.count == 18)
            // The raw bytes are kept, and the deletions are in the change feed.
            let quarantined = try store.collection("quarantine").find()
            #expect(quarantined.count == 2)
            #expect(quarantined.contains { $0["value_hex"] == .string("7b22ff0013") && $0["document_id"] == .int(5) })
            let changes = try store.changes(since: sequence)
            #expect(changes.filter { $0.collection == "people" }.map(\.operation) == [.delete, .delete])
            #expect(changes.filter { $0.collection == "people" }.map(\.id) == [.int(5), .int(7)])
            // The store is usable: id 5 can be written again; a second salvage finds nothing.
            try store.collection("people").insert(["id": 5, "age": 40, "email": "p5@x.org", "bio": "back"])
            let again = try store.salvage()
            #expect(again.quarantined.isEmpty)
            #expect(again.verification.isClean)
        }
    }

    /// A reindex that stops at a damaged document leaves its index unbuilt; opening the
    /// store then stops at the same document, and the static salvage opens it anyway.
    @Test func aStoreThatCannotOpenBecauseOfADamagedDocumentIsSalvagedFromTheDatabase() throws {
        try withTemporaryDatabase { db, _ in
            let store = try storeWithPeople(db)
            try db.put(Tuple(["d", "people", .int(3)]), Array("not json".utf8))
            expectError(.corruption) { try store.reindex(collection: "people") }
            let error = expectError(.corruption) { _ = try DocumentStore(database: db) }
            #expect(error?.message.contains("document 3") == true)
            let (salvaged, report) = try DocumentStore.salvage(database: db)
            #expect(report.quarantined.map(\.id) == [.int(3)])
            #expect(report.verification.isClean)
            #expect(
                try salvaged.collection("people").count(
                    DocumentQuery(conditions: [QueryCondition(field: "age", op: .greater(.int(30)))])) == 9)
            _ = try DocumentStore(database: db)
        }
    }

    @Test func salvageRefusesAQuarantineCollectionWithAnotherPrimaryKey() throws {
        try withTemporaryDatabase { db, _ in
            let store = try storeWithPeople(db)
            var schema = try store.schema
            schema.collections["q"] = CollectionSchema(primaryKey: "name")
            try store.apply(schema)
            expectError(.schema) { try store.salvage(quarantine: "q") }
        }
    }
}

/// Naming the damaged file: KVDocs' own reading of table and log framing.
@Suite struct DamageLocationTests {
    /// A compacted database of `count` keys, closed; returns its table files.
    private func tables(_ path: String, compression: LevelDBOptions.Compression, count: Int = 4000) throws -> [String] {
        var options = LevelDBOptions()
        options.compression = compression
        let db = try LevelDB(path: path, options: options)
        for i in 0..<count { try db.put(String(format: "key%06d", i), String(repeating: "value \(i) ", count: 8)) }
        try db.compact()
        db.close()
        return try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".ldb") }.map {
            path + "/" + $0
        }
    }

    /// Both compressions where the build has Snappy.
    static let compressions: [LevelDBOptions.Compression] =
        [.none] + (LevelDBOptions.Compression.snappyIsAvailable ? [.snappy] : [])

    @Test(arguments: compressions)
    func everyBlockOfASoundTableChecksOut(compression: LevelDBOptions.Compression) throws {
        let dir = TemporaryDirectory()
        let files = try tables(dir.child("db"), compression: compression)
        try #require(!files.isEmpty)
        for file in files {
            let check = try Data(contentsOf: URL(fileURLWithPath: file)).withUnsafeBytes { TableFileCheck($0) }
            #expect(check.damage == nil, "\(file): \(check.damage ?? "")")
            #expect(check.blocks > 10)
        }
    }

    /// Differential against LevelDB: whenever a full scan with checksums fails on a table
    /// with one flipped byte, the check names damage in it.
    @Test func aFlipThatLevelDBRejectsIsFoundAndTheErrorNamesTheTable() throws {
        var rng = SplitMix64(seed: 99)
        var rejected = 0
        for round in 0..<40 {
            let dir = TemporaryDirectory()
            let path = dir.child("db")
            let files = try tables(path, compression: round % 2 == 0 ? .preferred : .none, count: 1500)
            let file = files[Int(rng.next() % UInt64(files.count))]
            var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
            let offset = Int(rng.next() % UInt64(bytes.count))
            bytes[offset] ^= UInt8(1 + rng.next() % 255)
            try Data(bytes).write(to: URL(fileURLWithPath: file))
            let check = bytes.withUnsafeBytes { TableFileCheck($0) }
            do {
                let db = try LevelDB(path: path)
                defer { db.close() }
                _ = try db.entries().collect()
            } catch let error as KVDocsError where error.kind == .corruption {
                rejected += 1
                #expect(
                    check.damage != nil,
                    "LevelDB rejected a flip at \(offset) of \(file) that the check missed: \(error)")
                if error.message.contains("block") {
                    #expect(error.message.contains(URL(fileURLWithPath: file).lastPathComponent), "\(error)")
                }
            }
        }
        #expect(rejected > 10)
    }
}

@Suite struct OneLineErrorTests {
    /// Found by fuzzing kvrepl's parser: an error quoting input with a line break took two lines.
    @Test func errorsQuotingLineBreaksAndControlCharactersStayOnOneLine() {
        let error = KVDocsError(.invalidArgument, "unknown command \"re\nindex\u{1B}\r\"\tx\u{2028}")
        #expect(error.message == "unknown command \"re\\nindex\\u{1B}\\r\"\tx\\u{2028}")
        #expect(!error.description.contains("\n"))
        #expect(KVDocsError(.invalidArgument, "plain é ✓").message == "plain é ✓")
    }
}

/// A manifest cut short reads as a sound, older manifest; LevelDB alone would open it and
/// delete the tables written since.
@Suite struct TruncatedManifestTests {
    /// With large values the log's first record spans blocks (found by the long corruption
    /// run: the check read only whole records of the first block and missed the gap).
    @Test(arguments: [200, 3_000])
    func aManifestThatLostItsLatestEditsIsRefusedAndRepairRecoversEverything(valueSize: Int) throws {
        let dir = TemporaryDirectory()
        let path = dir.child("db")
        var options = LevelDBOptions()
        options.writeBufferSize = 64 << 10
        do {
            let db = try LevelDB(path: path, options: options)
            for b in 0..<60 {
                try db.write { batch in
                    for k in 0..<20 { batch.put("k\(b)-\(k)", String(repeating: "v", count: valueSize)) }
                }
            }
            db.close()
        }
        let manifest =
            path + "/"
            + (try String(contentsOfFile: path + "/CURRENT", encoding: .utf8)).trimmingCharacters(
                in: .whitespacesAndNewlines)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: manifest)))
        let check = bytes.withUnsafeBytes { LogFileCheck($0, keeping: .max) }
        try #require(check.payloads.count > 3, "the manifest has too few edits to cut")
        // Keep the first two records: the manifest of an earlier moment, sound on its own.
        var kept = 0
        var length = 0
        while kept < 2 {
            length += LogFileCheck.headerSize + check.payloads[kept].count
            kept += 1
        }
        try Data(bytes[0..<length]).write(to: URL(fileURLWithPath: manifest))
        #expect(ManifestCheck.lostEdits(in: path) != nil)
        let error = expectError(.corruption) { try LevelDB(path: path).close() }
        #expect(error?.message.contains("lost its latest edits") == true, "\(String(describing: error))")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".ldb") }.count > 1,
            "tables were deleted")

        try LevelDB.repair(path: path)
        let db = try LevelDB(path: path)
        defer { db.close() }
        #expect(try db.entries().collect().count == 60 * 20)
    }

    @Test func soundDatabasesPassTheCheck() throws {
        let dir = TemporaryDirectory()
        let path = dir.child("db")
        var options = LevelDBOptions()
        options.writeBufferSize = 64 << 10
        for round in 0..<3 {
            let db = try LevelDB(path: path, options: options)
            for b in 0..<30 {
                try db.write { batch in
                    for k in 0..<20 { batch.put("r\(round)-\(b)-\(k)", String(repeating: "v", count: 200)) }
                }
            }
            if round == 1 { try db.compact() }
            try db.write(WriteBatch())
            db.close()
            #expect(ManifestCheck.lostEdits(in: path) == nil)
        }
        for fixture in ["format1-db", "format2-db", "text1-db"] {
            #expect(
                ManifestCheck.lostEdits(in: packageRoot.appendingPathComponent("Tests/Fixtures/\(fixture)").path) == nil
            )
        }
    }
}

@Suite struct DeepIndexedValueTests {
    /// Found by fuzzing the importer: an indexed array nested 129 levels deep was accepted,
    /// and its entry then broke every query of the index while verify stayed clean.
    @Test func anIndexedValueNestedDeeperThanTheTupleLimitIsRefusedAndNothingIsWritten() throws {
        try withTemporaryDatabase { db, _ in
            let store = try DocumentStore(
                database: db,
                schema: try DocumentSchema(
                    json: Data(
                        #"{"collections": {"c": {"primaryKey": "id", "indexes": [{"name": "by_a", "fields": ["a"]}]}}}"#
                            .utf8)))
            func nested(_ levels: Int) -> JSONValue {
                (0..<levels).reduce(JSONValue.int(1)) { inner, _ in .array([inner]) }
            }
            let c = try store.collection("c")
            try c.insert(["id": 1, "a": nested(Tuple.maximumNestingDepth)])
            let error = expectError(.invalidArgument) {
                try c.insert(["id": 2, "a": nested(Tuple.maximumNestingDepth + 1)])
            }
            #expect(error?.message.contains("by_a") == true)
            #expect(try c.get(id: 2) == nil)
            #expect(
                try c.count(DocumentQuery(conditions: [QueryCondition(field: "a", op: .greaterOrEqual(.array([])))]))
                    == 1)
            #expect(try store.verify().isClean)
            // Unindexed fields may nest as deep as JSON allows.
            try c.insert(["id": 3, "b": nested(JSONValue.maximumDepth - 2)])
        }
    }
}
