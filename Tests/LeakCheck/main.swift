// Exercises every storage API, including the error paths that hand back C strings, so that
// valgrind (scripts/leak-check) can show that every C allocation is freed.
import Foundation
import KVDocs

func run() throws {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("kvdocs-leakcheck-\(getpid())").path
    defer { try? FileManager.default.removeItem(atPath: root) }
    let path = root + "/db"

    var options = LevelDBOptions()
    options.bloomFilterBitsPerKey = 10
    options.blockCacheCapacity = 1 << 20
    options.comparator = LevelDBComparator(name: "kvdocs.leakcheck") { LevelDBComparator.bytewise($0, $1) }
    options.writeBufferSize = 64 << 10
    options.compression = .snappy

    for round in 0..<3 {
        let db = try LevelDB(path: path, options: options)
        // Reads and writes, including empty keys and values and a missing key.
        for i in 0..<2000 { try db.put("key\(i)", String(repeating: "v", count: i % 200)) }
        try db.put("", [UInt8]())
        _ = try db.get("key1")
        _ = try db.get("missing")
        _ = try db.get("key2", as: String.self)
        _ = try db.contains("key3")
        _ = try db.withValue(forKey: "key4") { $0?.count }
        try db.delete("key5", sync: true)

        // Batches.
        let batch = WriteBatch()
        batch.put("b1", "1")
        batch.delete("b2")
        let other = WriteBatch()
        other.put("b3", "3")
        batch.append(other)
        _ = batch.operations
        try db.write(batch, sync: round == 0)
        batch.clear()
        try db.write { $0.put("b4", "4") }

        // Iteration in every form.
        _ = try db.entries().collect()
        _ = try db.entries(.prefix("key1").starting(at: "key15"), order: .reverse, limit: 7).collect()
        _ = try db.entries(
            KeyRange(from: "key2", through: "key3"),
            options: LevelDBReadOptions(verifyChecksums: true, fillCache: false)
        ).collect()
        try db.forEach(in: .prefix("b")) { _, _ in }
        let entries = try db.entries(.prefix("key1"))
        while try entries.next() != nil {}
        _ = try db.entries().map(\.key).filter { !$0.isEmpty }.compactMap { $0.first }.prefix(10).collect()
        _ = try db.entries(.prefix("key")).contains { $0.value.isEmpty }

        // Dump and load.
        try db.dump(to: root + "/dump.jsonl")
        var plain = LevelDBOptions()
        plain.comparator = options.comparator
        let restored = try LevelDB(path: root + "/restored", options: plain)
        try restored.load(from: root + "/dump.jsonl", batchSize: 500, sync: true)
        restored.close()
        try LevelDB.destroy(path: root + "/restored", options: plain)
        let cursor = try db.makeCursor()
        try cursor.seek(to: "key3")
        _ = try cursor.key()
        _ = try cursor.value()
        try cursor.next()
        try cursor.previous()
        try cursor.seekToLast()
        try cursor.seekToFirst()
        _ = try? cursor.withKey { $0.count }

        // Snapshots.
        let snapshot = try db.snapshot()
        try db.put("key1", "changed")
        _ = try snapshot.get("key1")
        _ = try snapshot.entries(limit: 5).collect()
        snapshot.release()
        let kept = try db.snapshot()  // freed by close()
        let keptCursor = try db.makeCursor()  // freed by close()
        try keptCursor.seekToFirst()

        // Introspection and maintenance.
        _ = try db.property("leveldb.stats")
        _ = try db.property("leveldb.sstables")
        _ = try db.property("leveldb.nonexistent")
        _ = try db.numberOfFiles(atLevel: 0)
        _ = try db.approximateMemoryUsage()
        _ = try db.approximateSizes(of: [.all, .prefix("key1")])
        try db.compact(KeyRange(from: "key1", to: "key2"))
        try db.compact()

        // Error paths that return LevelDB error strings.
        _ = try? LevelDB(path: path, options: options)  // locked
        var exists = options
        exists.errorIfExists = true
        _ = try? LevelDB(path: path, options: exists)  // locked (error string freed)
        _ = try? LevelDB.destroy(path: path)  // locked

        db.close()
        let copy = try LevelDB.openPrivateCopy(of: path, options: options, under: root)
        _ = try copy.entries(limit: 10).collect()
        copy.close()
        _ = try? kept.get("x")  // closed: throws
        _ = try? keptCursor.next()  // closed: throws

        var mismatch = LevelDBOptions()
        mismatch.comparator = nil
        _ = try? LevelDB(path: path, options: mismatch)  // comparator mismatch error string
        var existsClosed = options
        existsClosed.errorIfExists = true
        _ = try? LevelDB(path: path, options: existsClosed)
    }
    try LevelDB.repair(path: path, options: options)
    try LevelDB.destroy(path: path, options: options)
    print("leakcheck: exercised every storage API")
}

do {
    try run()
} catch {
    print("leakcheck failed: \(error)")
    exit(1)
}
