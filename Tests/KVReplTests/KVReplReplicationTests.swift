import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@testable import KVReplCore

/// The shell's commands for replicated collections: `conflicts`, `revs`, `resolve`.
@Suite struct KVReplReplicationTests {
    /// A store whose replicated `notes` has a document "d" with two conflicting leaves,
    /// 2-bbb and 2-ccc (the winner), made as two replicas would.
    static func conflictedStore(_ dir: TemporaryDirectory) throws -> String {
        let path = dir.child("db")
        let db = try LevelDB(path: path)
        let schema = try DocumentSchema(
            json: Data(#"{"collections": {"notes": {"replicated": true}, "people": {}}}"#.utf8))
        let store = try DocumentStore(database: db, schema: schema)
        let notes = try store.collection("notes")
        let r1 = try DocumentRevision.parse("1-aaa"), r2b = try DocumentRevision.parse("2-bbb"),
            r2c = try DocumentRevision.parse("2-ccc")
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
        #expect(try ShellCommand.parse("conflicts notes") == .conflicts("notes"))
        #expect(try ShellCommand.parse(#"revs notes "d""#) == .revs("notes", "d"))
        #expect(try ShellCommand.parse(#"resolve notes "d" 2-abc"#) == .resolve("notes", "d", "2-abc"))
        #expect(ShellCommand.resolve("notes", "d", "2-abc").isWrite)
        #expect(!ShellCommand.conflicts("notes").isWrite)
        #expect(throws: Error.self) { try ShellCommand.parse("resolve notes") }
        #expect(try CommandTable.helpText("resolve").contains("tombstone"))
    }
}

/// `replicate`, run by the kvrepl binary between two databases on disk.
@Suite struct KVReplReplicateCommandTests {
    static let schema =
        #"{"collections": {"notes": {"replicated": true, "indexes": [{"name": "by_tag", "fields": ["tag"]}]}}}"#

    static func json(_ result: ProcessResult) throws -> [JSONValue] { try jsonLines(result.stdout) }

    @Test func replicatingBothWaysMakesShowsAndResolvesAConflict() throws {
        let dir = TemporaryDirectory("kvrepl-replicate")
        let schema = dir.child("schema.json")
        try Data(Self.schema.utf8).write(to: URL(fileURLWithPath: schema))
        let a = dir.child("a"), b = dir.child("b")
        for (path, tag) in [(a, "from-a"), (b, "from-b")] {
            let r = try kvrepl([
                path, "--create", "--schema", schema, "-c", #"insert notes {"_id": "shared", "tag": "\#(tag)"}"#, "-c",
                #"insert notes {"_id": "\#(tag)", "tag": "\#(tag)"}"#
            ])
            #expect(r.status == 0, "\(r.stderr)")
        }
        // "shared" was created on both sides with other bodies: two revisions 1-…, a conflict
        // once replicated.
        var r = try kvrepl([a, "--json", "-c", "replicate notes \(b):notes", "-c", "replicate \(b):notes notes"])
        #expect(r.status == 0, "\(r.stderr)")
        var reports = try Self.json(r)
        #expect(reports.count == 2)
        #expect(reports.allSatisfy { $0["state"] == "completed" })
        #expect(reports.map { $0["docs_written"] } == [2, 2])
        r = try kvrepl([a, "--json", "-c", "conflicts notes"])
        let onA = try Self.json(r)
        r = try kvrepl([b, "--json", "-c", "conflicts notes"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try Self.json(r) == onA)
        #expect(onA.count == 1 && onA.first?["id"] == "shared")
        guard case .array(let losers)? = onA.first?["conflicts"], case .string(let loser)? = losers.first else {
            Issue.record("no conflict in \(onA)")
            return
        }
        // Resolve on a, keeping the loser; replicate both ways; both agree, no conflict left.
        r = try kvrepl([
            a, "--json", "-c", #"resolve notes "shared" \#(loser)"#, "-c", "replicate notes \(b):notes", "-c",
            "replicate \(b):notes notes"
        ])
        #expect(r.status == 0, "\(r.stderr)")
        for path in [a, b] {
            r = try kvrepl([path, "--json", "-c", "conflicts notes", "-c", #"doc notes "shared""#])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(try Self.json(r).map { $0["_rev"] } == [.string(loser)])
        }
        // Replicating again copies nothing.
        r = try kvrepl([a, "--json", "-c", "replicate notes \(b):notes", "-c", "replicate \(b):notes notes"])
        reports = try Self.json(r)
        #expect(reports.map { $0["docs_written"] } == [0, 0])
    }

    @Test func badEndpointsAreRefusedWithTheReason() throws {
        let dir = TemporaryDirectory("kvrepl-replicate")
        let schema = dir.child("schema.json")
        try Data(Self.schema.utf8).write(to: URL(fileURLWithPath: schema))
        let a = dir.child("a")
        #expect(try kvrepl([a, "--create", "--schema", schema, "-c", "count notes"]).status == 0)
        for (command, message) in [
            ("replicate nope \(dir.child("b")):notes", "nope is not a collection of this store"),
            ("replicate notes \(dir.child("missing")):notes", "is not a LevelDB database"),
            ("replicate notes notes", "are the same collection"),
            ("replicate notes", "expected TARGET"),
            ("replicate notes \(a):notes", "in use")
        ] {
            let r = try kvrepl([a, "-c", command])
            #expect(r.status == 1, "\(command)")
            #expect(r.stderr.contains(message), "\(command): \(r.stderr)")
        }
        let r = try kvrepl([a, "--read-only", "-c", "replicate \(dir.child("x")):notes notes"])
        #expect(r.status == 1)
    }

    @Test func aContinuousReplicationStopsCleanlyOnCtrlC() throws {
        let dir = TemporaryDirectory("kvrepl-replicate")
        let schema = dir.child("schema.json")
        try Data(Self.schema.utf8).write(to: URL(fileURLWithPath: schema))
        let a = dir.child("a"), b = dir.child("b")
        #expect(
            try kvrepl([a, "--create", "--schema", schema, "-c", #"insert notes {"_id": "n", "tag": "t"}"#]).status == 0
        )
        #expect(try kvrepl([b, "--create", "--schema", schema, "-c", "count notes"]).status == 0)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try kvreplBinary())
        process.arguments = [a, "--json", "-c", "replicate notes \(b):notes --continuous"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // A bound so that a kvrepl that never reports cannot hang the tests (not a time
        // assertion: the expectations below fail then).
        let watchdog = DispatchWorkItem { [process] in
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + 120, execute: watchdog)
        defer { watchdog.cancel() }
        // Wait for the report that it caught up and went idle.
        var seen = Data()
        while !String(decoding: seen, as: UTF8.self).contains(#""state":"idle""#) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen.append(chunk)
        }
        kill(process.processIdentifier, SIGINT)
        seen.append(output.fileHandleForReading.readDataToEndOfFile())
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let lines = try jsonLines(String(decoding: seen, as: UTF8.self))
        #expect(lines.last?["docs_written"] == 1, "\(lines)")
        let r = try kvrepl([b, "--json", "-c", #"doc notes "n""#])
        #expect(try jsonLines(r.stdout).first?["tag"] == "t")
    }
}

/// The README's sync story: two kvrepl processes on loopback, one serving, the other
/// replicating both ways; a conflict is made, shown on both and resolved.
@Suite struct KVReplServeStoryTests {
    /// `kvrepl PATH --json -c "serve --port 0"`, running until stopped.
    final class Serving {
        let server: ServerProcess
        let port: Int

        init(_ path: String) throws {
            server = try ServerProcess(try kvreplBinary(), [path, "--json", "-c", "serve --port 0"])
            guard case .int(let port)? = try? JSONValue(parsing: Data(server.firstLine.utf8))["port"] else {
                throw KVDocsError(.ioError, "kvrepl serve did not report its port: \(server.firstLine)")
            }
            self.port = Int(port)
        }

        /// Ctrl-C, and the exit status.
        func stop() -> Int32 { server.stop(SIGINT) }
    }

    @Test func twoShellsReplicateBothWaysOverLoopbackAndSettleAConflict() throws {
        let dir = TemporaryDirectory("kvrepl-serve")
        let schema = dir.child("schema.json")
        try Data(KVReplReplicateCommandTests.schema.utf8).write(to: URL(fileURLWithPath: schema))
        let laptop = dir.child("laptop"), phone = dir.child("phone")
        for (path, tag) in [(laptop, "laptop"), (phone, "phone")] {
            let r = try kvrepl([
                path, "--create", "--schema", schema, "-c", #"insert notes {"_id": "todo", "tag": "\#(tag)"}"#
            ])
            #expect(r.status == 0, "\(r.stderr)")
        }
        var server = try Serving(laptop)
        let url = "http://127.0.0.1:\(server.port)/notes"
        var r = try kvrepl([
            phone, "--json", "-c", "replicate notes \(url)", "-c", "replicate \(url) notes", "-c", "conflicts notes"
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = try jsonLines(r.stdout)
        #expect(lines.count == 3 && lines[2]["id"] == "todo", "\(lines)")
        guard case .array(let losers)? = lines.last?["conflicts"], case .string(let loser)? = losers.first else {
            _ = server.stop()
            return
        }
        r = try kvrepl([phone, "--json", "-c", #"resolve notes "todo" \#(loser)"#, "-c", "replicate notes \(url)"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(server.stop() == 0)
        for path in [laptop, phone] {
            r = try kvrepl([path, "--json", "-c", "conflicts notes", "-c", #"doc notes "todo""#])
            #expect(try jsonLines(r.stdout).map { $0["_rev"] } == [.string(loser)], "\(path): \(r.stdout)")
        }
        // Replicating again copies nothing.
        server = try Serving(laptop)
        r = try kvrepl([
            phone, "--json", "-c", "replicate notes http://127.0.0.1:\(server.port)/notes", "-c",
            "replicate http://127.0.0.1:\(server.port)/notes notes"
        ])
        #expect(try jsonLines(r.stdout).map { $0["docs_written"] } == [0, 0])
        #expect(server.stop() == 0)
    }
}
