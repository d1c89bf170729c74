import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@Suite struct OptionsTests {
    /// An option set to a value LevelDB would clamp.
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let value: Int
        var testDescription: String { "\(name) = \(value)" }

        func apply(to o: inout LevelDBOptions) {
            switch name {
            case "writeBufferSize": o.writeBufferSize = value
            case "maxOpenFiles": o.maxOpenFiles = value
            case "blockSize": o.blockSize = value
            case "maxFileSize": o.maxFileSize = value
            case "blockRestartInterval": o.blockRestartInterval = value
            case "bloomFilterBitsPerKey": o.bloomFilterBitsPerKey = value
            default: o.blockCacheCapacity = value
            }
        }
    }

    /// Values LevelDB would silently clamp are refused, with the option's name in the message.
    @Test(arguments: [
        Case(name: "writeBufferSize", value: 64 * 1024 - 1),
        Case(name: "writeBufferSize", value: (1 << 30) + 1),
        Case(name: "maxOpenFiles", value: 73),
        Case(name: "maxOpenFiles", value: 50_001),
        Case(name: "blockSize", value: 1023),
        Case(name: "blockSize", value: (4 << 20) + 1),
        Case(name: "maxFileSize", value: (1 << 20) - 1),
        Case(name: "maxFileSize", value: (1 << 30) + 1),
        Case(name: "blockRestartInterval", value: 0),
        Case(name: "bloomFilterBitsPerKey", value: 0),
        Case(name: "blockCacheCapacity", value: -1)
    ])
    func outOfRangeOptionIsRejected(_ c: Case) throws {
        let dir = TemporaryDirectory()
        var options = LevelDBOptions()
        c.apply(to: &options)
        do {
            _ = try LevelDB(path: dir.child("db"), options: options)
            Issue.record("\(c.name) was accepted")
        } catch let error as KVDocsError {
            #expect(error.kind == .invalidArgument)
            #expect(error.message.contains(c.name))
        }
        // Nothing was created.
        #expect(!FileManager.default.fileExists(atPath: dir.child("db")))
    }

    /// Unlike LevelDB, a Bloom filter is on by default (point reads of missing keys are a
    /// document store's daily work); `nil` turns it off.
    @Test func aBloomFilterIsOnByDefaultAndCanBeTurnedOff() throws {
        #expect(LevelDBOptions().bloomFilterBitsPerKey == 10)
        var options = LevelDBOptions()
        options.bloomFilterBitsPerKey = nil
        try withTemporaryDatabase(options: options) { db, _ throws in
            try db.put("k", "v")
            #expect(db.options.bloomFilterBitsPerKey == nil)
            #expect(try db.get("k", as: String.self) == "v")
        }
    }

    @Test func boundaryValuesAndEveryKnobAreAccepted() throws {
        var options = LevelDBOptions()
        options.writeBufferSize = 64 * 1024
        options.maxOpenFiles = 74
        options.blockSize = 1024
        options.blockRestartInterval = 1
        options.maxFileSize = 1 << 20
        options.compression = .none
        options.bloomFilterBitsPerKey = 10
        options.blockCacheCapacity = 1 << 20
        options.paranoidChecks = false
        try withTemporaryDatabase(options: options) { db, _ throws in
            for i in 0..<2000 { try db.put("key\(i)", String(repeating: "v", count: 100)) }
            #expect(try db.get("key1999", as: String.self)?.count == 100)
            #expect(db.options.blockSize == 1024)
        }
        options.writeBufferSize = 1 << 30
        options.maxOpenFiles = 50_000
        options.blockSize = 4 << 20
        options.maxFileSize = 1 << 30
        try options.validate()
    }

    @Test func errorIfExistsRefusesAnExistingDatabase() throws {
        let dir = TemporaryDirectory()
        try LevelDB(path: dir.child("db")).close()
        var options = LevelDBOptions()
        options.errorIfExists = true
        let error = #expect(throws: KVDocsError.self) { _ = try LevelDB(path: dir.child("db"), options: options) }
        #expect(error?.kind == .invalidArgument)
        #expect(error?.message.contains("exists") == true)
    }
}
