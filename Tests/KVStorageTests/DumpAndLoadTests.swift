import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@Suite struct DumpAndLoadTests {
    static func write(_ text: String, _ dir: TemporaryDirectory, _ name: String = "dump.jsonl") throws -> String {
        let file = dir.child(name)
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        return file
    }

    static func contents(_ file: String) throws -> String {
        String(decoding: try Data(contentsOf: URL(fileURLWithPath: file)), as: UTF8.self)
    }

    // MARK: Edges

    @Test func anEmptyDatabaseDumpsAnEmptyFileThatLoadsNothing() throws {
        let dir = TemporaryDirectory()
        try withTemporaryDatabase { db, _ throws in
            #expect(try db.dump(to: dir.child("empty.jsonl")) == 0)
            #expect(try Self.contents(dir.child("empty.jsonl")) == "")
            #expect(try db.load(from: dir.child("empty.jsonl")) == 0)
            #expect(try db.entries().collect().isEmpty)
        }
    }

    @Test func dumpWritesOneCompactLinePerEntryInKeyOrderWithLowercaseHex() throws {
        let dir = TemporaryDirectory()
        try withTemporaryDatabase { db, _ throws in
            try db.put([UInt8]([0xAB, 0x00]), [UInt8]([0xFF]))
            try db.put([UInt8](), [UInt8]())
            try db.put("a", "value")
            let file = dir.child("dump.jsonl")
            #expect(try db.dump(to: file) == 3)
            #expect(
                try Self.contents(file) == """
                    {"key_hex":"","value_hex":""}
                    {"key_hex":"61","value_hex":"76616c7565"}
                    {"key_hex":"ab00","value_hex":"ff"}

                    """)
        }
    }

    @Test func dumpOfARangeOrThroughASnapshotWritesThoseEntriesOnly() throws {
        let dir = TemporaryDirectory()
        try withTemporaryDatabase { db, _ throws in
            for k in ["a", "b1", "b2", "c"] { try db.put(k, "1") }
            let snapshot = try db.snapshot()
            try db.put("b3", "later")
            try db.delete("b1")
            let file = dir.child("dump.jsonl")
            #expect(try db.dump(to: file, range: .prefix("b")) == 2)
            #expect(
                try Self.contents(file)
                    == "{\"key_hex\":\"6232\",\"value_hex\":\"31\"}\n{\"key_hex\":\"6233\",\"value_hex\":\"6c61746572\"}\n"
            )
            #expect(try db.dump(to: file, range: .prefix("b"), options: snapshot.readOptions()) == 2)
            #expect(
                try Self.contents(file)
                    == "{\"key_hex\":\"6231\",\"value_hex\":\"31\"}\n{\"key_hex\":\"6232\",\"value_hex\":\"31\"}\n")
        }
    }

    // MARK: Differential: dump, load, dump again

    /// Random binary databases (empty key, empty values, 0x00 and 0xFF bytes, values up to
    /// 200 KB) dumped and loaded into an empty database give byte-identical entries, and
    /// the second database dumps to a byte-identical file.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func dumpThenLoadRoundTripsRandomDatabasesByteForByte(seed: UInt64) throws {
        let dir = TemporaryDirectory()
        var rng = SplitMix64(seed: seed)
        let source = try LevelDB(path: dir.child("source"))
        defer { source.close() }
        let count = Int.random(in: 1...600, using: &rng)
        for i in 0..<count {
            let key = (0..<Int.random(in: 0...12, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let large = i % 97 == 0
            let value = (0..<Int.random(in: 0...(large ? 200_000 : 40), using: &rng)).map { _ in
                UInt8.random(in: 0...255, using: &rng)
            }
            try source.put(key, value)
            if i % 7 == 0 { try source.delete(key) }
        }
        let dump = dir.child("dump.jsonl")
        let dumped = try source.dump(to: dump)
        let target = try LevelDB(path: dir.child("target"))
        defer { target.close() }
        #expect(try target.load(from: dump, batchSize: Int.random(in: 1...50, using: &rng)) == dumped)
        #expect(try target.entries().collect() == source.entries().collect())
        let again = dir.child("again.jsonl")
        #expect(try target.dump(to: again) == dumped)
        #expect(try Data(contentsOf: URL(fileURLWithPath: again)) == Data(contentsOf: URL(fileURLWithPath: dump)))
    }

    // MARK: Load: what it accepts, what it refuses

    @Test func loadAcceptsEitherCaseOlderMemberNamesOtherMembersAndBlankLines() throws {
        let dir = TemporaryDirectory()
        let file = try Self.write(
            """
            {"value_hex": "FF00", "key_hex": "6B31", "note": "members in any order"}

              \t
            {"key": "6b32", "value": ""}
            {"key_hex": "6b33", "key": "ignored", "value_hex": "41", "value": "ignored"}
            """, dir)
        try withTemporaryDatabase { db, _ throws in
            try db.put("k3", "old")
            try db.put("other", "kept")
            #expect(try db.load(from: file) == 3)
            #expect(
                try db.entries().collect() == [
                    KeyValueEntry(key: Array("k1".utf8), value: [0xFF, 0x00]),
                    KeyValueEntry(key: Array("k2".utf8), value: []),
                    KeyValueEntry(key: Array("k3".utf8), value: Array("A".utf8)),
                    KeyValueEntry(key: Array("other".utf8), value: Array("kept".utf8))
                ])
        }
    }

    /// Every malformed line is reported with the file and its line number, and loads nothing:
    /// not even the valid lines before it.
    @Test(arguments: [
        #"not json"#, #"["6b", "00"]"#, #"{"key_hex": "6b"}"#, #"{"value_hex": "00"}"#,
        #"{"key_hex": 6, "value_hex": "00"}"#,
        #"{"key_hex": "6", "value_hex": "00"}"#, #"{"key_hex": "zz", "value_hex": "00"}"#,
        #"{"key_hex": "+f", "value_hex": "00"}"#,
        #"{"key_hex": "6b", "value_hex": "0x00"}"#, #"{"key_hex": "6b", "value_hex": null}"#,
        #"{"key_hex": "6b", "value_hex": "00""#
    ])
    func aMalformedLineLoadsNothingAndNamesTheFileAndLine(line: String) throws {
        let dir = TemporaryDirectory()
        let file = try Self.write(
            "{\"key_hex\": \"61\", \"value_hex\": \"31\"}\n\n\(line)\n{\"key_hex\": \"62\", \"value_hex\": \"32\"}\n",
            dir)
        try withTemporaryDatabase { db, path throws in
            let error = expectError(.invalidArgument) { try db.load(from: file, sync: true) }
            #expect(error?.message == "\(file):3: expected {\"key_hex\": HEX, \"value_hex\": HEX}; nothing was loaded")
            #expect(error?.path == path)
            #expect(try db.entries().collect().isEmpty)
            #expect(db.syncedWrites == 0)
        }
    }

    @Test func aLineLongerThanTheMaximumLoadsNothing() throws {
        let dir = TemporaryDirectory()
        let long = "{\"key_hex\": \"\(String(repeating: "ab", count: 100))\", \"value_hex\": \"\"}"
        let file = try Self.write("{\"key_hex\": \"61\", \"value_hex\": \"\"}\n\(long)\n", dir)
        try withTemporaryDatabase { db, _ throws in
            let error = expectError(.invalidArgument) { try db.load(from: file, maximumLineLength: 100) }
            #expect(error?.message == "\(file):2: line longer than the maximum of 100 bytes; nothing was loaded")
            #expect(try db.entries().collect().isEmpty)
            #expect(try db.load(from: file, maximumLineLength: long.utf8.count) == 2)
        }
    }

    @Test func loadWritesBatchesOfBatchSizeAndNoEmptyBatch() throws {
        let dir = TemporaryDirectory()
        func dump(_ n: Int) throws -> String {
            try Self.write(
                (0..<n).map {
                    "{\"key_hex\": \"\([UInt8](String(format: "k%03d", $0).utf8).hex)\", \"value_hex\": \"\"}\n"
                }.joined(), dir, "dump\(n).jsonl")
        }
        try withTemporaryDatabase { db, _ throws in
            for (entries, batchSize, writes) in [(25, 10, 3), (20, 10, 2), (1, 10, 1), (0, 10, 1), (7, .max, 1)] {
                let file = try dump(entries)
                let before = db.syncedWrites
                #expect(try db.load(from: file, batchSize: batchSize, sync: true) == entries)
                #expect(db.syncedWrites - before == writes, "\(entries) entries in batches of \(batchSize)")
            }
            let before = db.syncedWrites
            try db.load(from: try dump(30))
            #expect(db.syncedWrites == before)  // not synced unless asked
        }
    }

    @Test func loadRejectsABatchSizeBelowOne() throws {
        let dir = TemporaryDirectory()
        let file = try Self.write("", dir)
        try withTemporaryDatabase { db, _ throws in
            let error = expectError(.invalidArgument) { try db.load(from: file, batchSize: 0) }
            #expect(error?.message == "load: batchSize must be at least 1, not 0")
        }
    }

    // MARK: Files and databases that fail

    @Test func dumpToAPathThatCannotBeWrittenThrowsAnIOErrorNamingIt() throws {
        let dir = TemporaryDirectory()
        try withTemporaryDatabase { db, _ throws in
            try db.put("a", "1")
            let file = dir.child("missing/dump.jsonl")
            let error = expectError(.ioError) { try db.dump(to: file) }
            #expect(error?.message == "cannot open \(file) for writing: No such file or directory")
        }
    }

    @Test func loadOfAMissingFileThrowsAnIOErrorNamingIt() throws {
        let dir = TemporaryDirectory()
        try withTemporaryDatabase { db, _ throws in
            let error = expectError(.ioError) { try db.load(from: dir.child("none.jsonl")) }
            #expect(error?.message == "cannot open \(dir.child("none.jsonl")) for reading: No such file or directory")
        }
    }

    @Test func dumpAndLoadOfAClosedDatabaseThrowClosed() throws {
        let dir = TemporaryDirectory()
        let db = try LevelDB(path: dir.child("db"))
        try db.put("a", "1")
        try db.dump(to: dir.child("dump.jsonl"))
        db.close()
        expectError(.closed) { try db.dump(to: dir.child("other.jsonl")) }
        expectError(.closed) { try db.load(from: dir.child("dump.jsonl")) }
    }
}
