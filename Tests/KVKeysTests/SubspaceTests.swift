import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@Suite struct SubspaceTests {
    @Test func packUnpackContainsAndNesting() throws {
        let users = Subspace(["app", "users"])
        #expect(users.prefix == Tuple(["app", "users"]).encoded)
        let key = users.pack([42, "name"])
        #expect(key == Tuple(["app", "users", 42, "name"]).encoded)
        #expect(try users.unpack(key) == [42, "name"])
        #expect(users.contains(key))
        #expect(!users.contains(Tuple(["app", "groups", 1])))
        let nested = users["by_id"]
        #expect(nested.prefix == Tuple(["app", "users", "by_id"]).encoded)
        #expect(nested == users.subspace(["by_id"]))
        #expect(users.description == #"Subspace("app", "users")"#)
        #expect(Subspace(["x"]).description == #"Subspace("x")"#)
        #expect(Subspace(rawPrefix: [0xFF]).description == "Subspace(0xff)")
        do {
            _ = try users.unpack(Tuple(["app", "groups"]))
            Issue.record("unpacked a key outside the subspace")
        } catch let error as KVDocsError {
            #expect(error.kind == .invalidArgument)
            #expect(error.message.contains(#"is not in subspace Subspace("app", "users")"#))
        }
    }

    @Test func rangeHoldsExactlyTheSubspacesTupleKeys() throws {
        try withTemporaryDatabase { db, _ throws in
            let users = Subspace(["users"])
            let inside: [Tuple] = [["users", nil], ["users", 1], ["users", "a"], ["users", .tuple([])], ["users", true]]
            let outside: [Tuple] = [["users"], ["user"], ["usersx"], ["v"], [1]]
            for t in inside + outside { try db.put(t, "") }
            let keys = try db.entries(users.range).collect().map { try Tuple(decoding: $0.key) }
            #expect(keys == inside.sorted())
            #expect(
                try db.entries(users.range, order: .reverse).collect().map { try Tuple(decoding: $0.key) }
                    == inside.sorted().reversed())
        }
    }

    @Test func tupleKeysWorkWithEveryStorageAPI() throws {
        try withTemporaryDatabase { db, _ throws in
            let key: Tuple = ["dep", "Perth", 1700000000]
            try db.put(key, Tuple(["value", 1.5]))
            #expect(try db.get(key, as: Tuple.self) == ["value", 1.5])
            #expect(try db.contains(Tuple(["dep", "Perth", 1700000000])))
            let batch = WriteBatch()
            for t in [-10, 5, 300] { batch.put(Tuple(["dep", "Perth", .int(Int64(t))]), "") }
            batch.put(Tuple(["dep", "Perthshire", 1]), "")
            batch.put(Tuple(["dep", "Armadale", 1]), "")
            try db.write(batch)
            // Prefix iteration over a tuple prefix: exactly Perth, in numeric order.
            let perth = try db.entries(.prefix(Tuple(["dep", "Perth"]))).collect().map {
                try Tuple(decoding: $0.key).int(at: 2)
            }
            #expect(perth == [-10, 5, 300, 1700000000])
            let perthReverse = try db.entries(
                Tuple(["dep", "Perth"]).range.starting(at: Tuple(["dep", "Perth", 5])), order: .reverse, limit: 2
            )
            .collect().map { try Tuple(decoding: $0.key).int(at: 2) }
            #expect(perthReverse == [1700000000, 300])
            try db.delete(key)
            #expect(try db.get(key) == nil)
            let cursor = try db.makeCursor()
            try cursor.seek(to: Tuple(["dep", "Perth", 0]))
            #expect(try Tuple(decoding: cursor.key()) == ["dep", "Perth", 5])
        }
    }
}
