import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// A size-limited tmpfs, mounted for the test and unmounted on deinit.
final class SmallFileSystem {
    let path: String
    private let directory: TemporaryDirectory

    /// Mounts a tmpfs of `megabytes` MiB; `nil` when this machine does not let the test
    /// mount (not root, or no mount privilege in a container).
    init?(megabytes: Int) throws {
        directory = TemporaryDirectory("small-fs")
        path = directory.child("fs")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let result = try runProcess("/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", path])
        guard result.status == 0 else { return nil }
    }

    deinit { _ = try? runProcess("/bin/umount", ["-l", path]) }

    /// Whether this machine lets tests mount a tmpfs.
    static let available: Bool = { (try? SmallFileSystem(megabytes: 1)).flatMap { $0 } != nil }()
}

@Suite(.serialized) struct DiskFullTests {
    static let schema = #"""
        {"collections": {"notes": {"primaryKey": "id",
          "indexes": [{"name": "by_n", "fields": ["n"]}, {"name": "by_code", "fields": ["code"], "unique": true}],
          "text": [{"name": "body_text", "fields": ["body"]}]}}}
        """#

    static func note(_ i: Int) -> JSONValue {
        var rng = SplitMix64(seed: UInt64(i))
        let words = ["full", "disk", "space", "left", "device", "write", "batch", "table", "log", "river"]
        let body = (0..<200).map { _ in words[Int(rng.next() % 10)] + String(rng.next() % 1000) }.joined(separator: " ")
        return ["id": .int(Int64(i)), "n": .int(Int64(i % 97)), "code": .string("c\(i)"), "body": .string(body)]
    }

    /// On an 8 MiB file system (half of it taken by a ballast file, removed later), writes until the disk is full: the failing write is an
    /// `.ioError`, later writes of that handle are refused, reads go on; after reopening
    /// (with space freed) exactly the acknowledged documents are there, `verify` is clean,
    /// and the store takes writes again.
    @Test(.enabled(if: SmallFileSystem.available || Reference.isCI, "this machine does not let tests mount a tmpfs"))
    func aFullDiskFailsWritesWithAnIOErrorLosesNoAcknowledgedWriteAndRecoversWhenSpaceIsFreed() throws {
        let fs = try #require(try SmallFileSystem(megabytes: 8), "cannot mount a tmpfs")
        let ballast = fs.path + "/ballast"
        try Data(repeating: 0xAB, count: 4 << 20).write(to: URL(fileURLWithPath: ballast))
        let path = fs.path + "/db"
        var acknowledged = 0
        var options = LevelDBOptions()
        options.writeBufferSize = 256 << 10  // table files and compactions while filling
        do {
            let db = try LevelDB(path: path, options: options)
            defer { db.close() }
            let store = try DocumentStore(database: db, schema: try DocumentSchema(json: Data(Self.schema.utf8)))
            var failure: KVDocsError?
            while failure == nil && acknowledged < 100_000 {
                do {
                    try store.write { batch in
                        for i in acknowledged..<(acknowledged + 5) { _ = try batch.insert("notes", Self.note(i)) }
                    }
                    acknowledged += 5
                } catch let error as KVDocsError {
                    failure = error
                }
            }
            let error = try #require(failure)
            #expect(error.kind == .ioError, "\(error)")
            #expect(error.message.contains("No space left"), "\(error)")
            // Enough writes for table files and compactions first: about 95 documents in a
            // build without Snappy (tables uncompressed), more with it.
            #expect(acknowledged > 50)
            // The handle refuses writes now; reads still answer.
            let next = expectError(.ioError) { try store.collection("notes").insert(Self.note(acknowledged)) }
            #expect(next?.message.contains("reopen") == true)
            #expect(try store.collection("notes").count() == acknowledged)
        }
        try FileManager.default.removeItem(atPath: ballast)

        let db = try LevelDB(path: path)
        defer { db.close() }
        let store = try DocumentStore(database: db)
        let notes = try store.collection("notes")
        #expect(try notes.count() == acknowledged)
        for i in stride(from: 0, to: acknowledged, by: 37) {
            #expect(try notes.get(id: .int(Int64(i))) == Self.note(i))
        }
        #expect(try notes.get(id: .int(Int64(acknowledged))) == nil, "the failed batch is visible")
        #expect(try store.verify().isClean)
        for i in acknowledged..<(acknowledged + 20) { try notes.insert(Self.note(i)) }
        #expect(try notes.count() == acknowledged + 20)
        #expect(try store.verify().isClean)
    }
}

@Suite(.serialized) struct ReadOnlyFileSystemTests {
    /// A database on a file system remounted read-only: opening it for writing is an
    /// `.ioError` that says so (not `.locked`), and a private copy reads it.
    @Test(.enabled(if: SmallFileSystem.available || Reference.isCI, "this machine does not let tests mount a tmpfs"))
    func openingADatabaseOnAReadOnlyFileSystemForWritingIsAClearIOError() throws {
        let fs = try #require(try SmallFileSystem(megabytes: 4), "cannot mount a tmpfs")
        let path = fs.path + "/db"
        do {
            let db = try LevelDB(path: path)
            try db.put("k", "v")
            db.close()
        }
        let remount = try runProcess("/bin/mount", ["-o", "remount,ro", fs.path])
        try #require(remount.status == 0, "\(remount.stderr)")
        let error = expectError(.ioError) { try LevelDB(path: path).close() }
        #expect(error?.message.contains("read-only") == true, "\(String(describing: error))")
        #expect(error?.message.contains(path) == true)
        let copy = try LevelDB.openPrivateCopy(of: path)
        defer { copy.close() }
        #expect(try copy.get("k", as: String.self) == "v")
    }
}
