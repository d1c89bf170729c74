import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@Suite struct DatabaseReadWriteTests {
    @Test func emptyDatabaseHasNoKeys() throws {
        try withTemporaryDatabase { db, _ throws in
            #expect(try db.get("missing") == nil)
            #expect(try db.entries().collect().isEmpty)
            #expect(try db.contains("missing") == false)
        }
    }

    @Test func emptyKeyIsAnOrdinaryKey() throws {
        try withTemporaryDatabase { db, _ throws in
            try db.put([UInt8](), "value of the empty key")
            #expect(try db.get("", as: String.self) == "value of the empty key")
            #expect(try db.entries().collect().map(\.key) == [[]])
            try db.delete("")
            #expect(try db.get([UInt8]()) == nil)
        }
    }

    @Test func emptyValueIsNotAMissingKey() throws {
        try withTemporaryDatabase { db, _ throws in
            try db.put("k", [UInt8]())
            #expect(try db.get("k") == [])
            #expect(try db.contains("k"))
            try db.withValue(forKey: "k") { #expect($0?.count == 0) }
            try db.withValue(forKey: "absent") { #expect($0 == nil) }
        }
    }

    @Test func keysAndValuesWithNulBytesRoundTrip() throws {
        try withTemporaryDatabase { db, _ throws in
            let key: [UInt8] = [0, 1, 0, 0xFF, 0]
            let value: [UInt8] = [0, 0, 0]
            try db.put(key, value)
            try db.put([0, 1], "shorter")
            #expect(try db.get(key) == value)
            #expect(try db.get([0, 1, 0]) == nil)
            #expect(try db.entries().collect().map(\.key) == [[0, 1], key])
        }
    }

    @Test func stringDataAndByteArrayKeysAreInterchangeable() throws {
        try withTemporaryDatabase { db, _ throws in
            try db.put("héllo", Data([1, 2, 3]))
            #expect(try db.get(Array("héllo".utf8)) == [1, 2, 3])
            #expect(try db.get(Data("héllo".utf8), as: Data.self) == Data([1, 2, 3]))
            #expect(try db.get(Substring("xhéllo").dropFirst()) == [1, 2, 3])
        }
    }

    @Test func putOverwritesAndDeleteOfMissingKeyIsNotAnError() throws {
        try withTemporaryDatabase { db, _ throws in
            try db.put("k", "1")
            try db.put("k", "2", sync: true)
            #expect(try db.get("k", as: String.self) == "2")
            try db.delete("k", sync: true)
            try db.delete("k")
            #expect(try db.get("k") == nil)
        }
    }

    @Test func invalidUTF8ValueFailsToDecodeAsString() throws {
        try withTemporaryDatabase { db, _ throws in
            try db.put("bad", [0xC3, 0x28])
            let error = #expect(throws: KVDocsError.self) { try db.get("bad", as: String.self) }
            #expect(error?.kind == .decoding)
        }
    }

    @Test func hugeValuesRoundTrip() throws {
        try withTemporaryDatabase { db, _ throws in
            var rng = SplitMix64(seed: 7)
            let big = (0..<(8 << 20)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            try db.put("big", big)
            #expect(try db.get("big") == big)
            try db.compact()
            #expect(try db.get("big") == big)
        }
    }

    /// A lent value is the call's own copy, not LevelDB's memory under the handle's lock:
    /// the database can be used, and even closed from another thread, while `body` holds it.
    @Test func aLentValueOutlivesTheHandlesLock() throws {
        try withTemporaryDatabase { db, _ throws in
            try db.put("k", [1, 2, 3])
            let seen = try db.withValue(forKey: "k") { bytes throws -> [UInt8]? in
                #expect(try db.get("k") == [1, 2, 3])
                let closed = DispatchSemaphore(value: 0)
                Thread {
                    db.close()
                    closed.signal()
                }.start()
                // A deadlock guard, not a timing: close() waits for every call holding the lock.
                #expect(closed.wait(timeout: .now() + 30) == .success)
                return bytes.map { Array($0) }
            }
            #expect(seen == [1, 2, 3])
            #expect(throws: KVDocsError.self) { try db.get("k") }
        }
    }

    @Test func borrowingAccessorSeesTheStoredBytes() throws {
        try withTemporaryDatabase { db, _ throws in
            try db.put("k", [9, 8, 7])
            let sum = try db.withValue(forKey: "k") { $0.map { $0.reduce(0) { $0 + Int($1) } } }
            #expect(sum == 24)
        }
    }

    @Test func everyOperationAfterCloseThrowsClosed() throws {
        let dir = TemporaryDirectory()
        let db = try LevelDB(path: dir.child("db"))
        try db.put("k", "v")
        db.close()
        db.close()  // a second close does nothing
        #expect(db.isClosed)
        func expectClosed(_ body: () throws -> Void) {
            do {
                try body()
                Issue.record("expected a closed error")
            } catch let error as KVDocsError {
                #expect(error.kind == .closed)
                #expect(error.path == dir.child("db"))
            } catch {
                Issue.record("unexpected \(error)")
            }
        }
        expectClosed { _ = try db.get("k") }
        expectClosed { try db.put("k", "v") }
        expectClosed { try db.delete("k") }
        expectClosed { try db.write(WriteBatch()) }
        expectClosed { _ = try db.entries() }
        expectClosed { _ = try db.snapshot() }
        expectClosed { _ = try db.property("leveldb.stats") }
        expectClosed { _ = try db.approximateSize() }
        expectClosed { try db.compact() }
    }
}
