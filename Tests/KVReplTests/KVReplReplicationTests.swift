import Foundation
import KVDocsTestSupport
import Testing

@testable import KVDocs
@testable import KVReplCore

/// The shell's commands for replicated collections: `conflicts`, `revs`, `resolve`.
@Suite struct KVReplReplicationTests {
    /// A store whose replicated `notes` has a document "d" with two conflicting leaves,
    /// 2-bbb and 2-ccc (the winner), made as two replicas would.
    static func conflictedStore(_ dir: TemporaryDirectory) throws -> String {
        let path = dir.child("db")
        let db = try Database(path: path)
        let schema = try Schema(json: Data(#"{"collections": {"notes": {"replicated": true}, "people": {}}}"#.utf8))
        let store = try DocumentStore(database: db, schema: schema)
        let notes = try store.collection("notes")
        let r1 = try Revision.parse("1-aaa"), r2b = try Revision.parse("2-bbb"), r2c = try Revision.parse("2-ccc")
        try notes.writeReplicated(id: "d", revision: r1, body: ["v": 1])
        try notes.writeReplicated(id: "d", revision: r2b, history: [r2b.id, r1.id], body: ["v": 2])
        try notes.writeReplicated(id: "d", revision: r2c, history: [r2c.id, r1.id], body: ["v": 3])
        try notes.insert(["_id": "plain"])
        db.close()
        return path
    }

    @Test func conflictsRevsAndResolvePrintWhatTheLibrarySays() throws {
        let dir = TemporaryDirectory("kvrepl-test")
        let s = try CapturedSession(path: try Self.conflictedStore(dir), create: false)
        s.session.json = true
        #expect(s.session.run("conflicts notes") == .ok, "\(s.err)")
        #expect(
            try s.out.map { try JSONValue(parsing: Data($0.utf8)) } == [
                ["id": "d", "winner": "2-ccc", "conflicts": ["2-bbb"], "deleted_conflicts": []]
            ])
        s.out = []
        #expect(s.session.run(#"revs notes "d""#) == .ok, "\(s.err)")
        #expect(
            try s.out.map { try JSONValue(parsing: Data($0.utf8)) } == [
                ["rev": "2-ccc", "winner": true, "deleted": false, "history": ["2-ccc", "1-aaa"]],
                ["rev": "2-bbb", "winner": false, "deleted": false, "history": ["2-bbb", "1-aaa"]]
            ])
        s.out = []
        #expect(s.session.run(#"resolve notes "d" 2-bbb"#) == .ok, "\(s.err)")
        let resolved = try JSONValue(parsing: Data((s.out.first ?? "").utf8))
        #expect(resolved["ok"] == true && resolved["kept"] == "2-bbb")
        #expect(resolved["tombstones"].map { if case .array(let a) = $0 { a.count } else { 0 } } == 1)
        s.out = []
        #expect(s.session.run("conflicts notes") == .ok)
        #expect(s.out.isEmpty)
        #expect(s.session.run(#"doc notes "d""#) == .ok)
        #expect(try JSONValue(parsing: Data((s.out.first ?? "").utf8)) == ["_id": "d", "_rev": "2-bbb", "v": 2])
        // Errors name what is wrong.
        s.err = []
        #expect(s.session.run(#"resolve notes "d" 9-zzz"#) != .ok)
        #expect(s.err.joined().contains("9-zzz"))
        #expect(s.session.run("conflicts people") != .ok)
        #expect(s.session.run(#"revs notes "nope""#) != .ok)
    }

    @Test func theCommandsParseAndResolveIsAWrite() throws {
        #expect(try Command.parse("conflicts notes") == .conflicts("notes"))
        #expect(try Command.parse(#"revs notes "d""#) == .revs("notes", "d"))
        #expect(try Command.parse(#"resolve notes "d" 2-abc"#) == .resolve("notes", "d", "2-abc"))
        #expect(Command.resolve("notes", "d", "2-abc").isWrite)
        #expect(!Command.conflicts("notes").isWrite)
        #expect(throws: Error.self) { try Command.parse("resolve notes") }
        #expect(try Help.text("resolve").contains("tombstone"))
    }
}
