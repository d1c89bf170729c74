import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@testable import KVReplCore

let peopleSchema =
    #"{"collections": {"people": {"primaryKey": "id", "indexes": [{"name": "by_age", "fields": ["age"]}]}}}"#

/// A temporary directory with a schema file for the people collection.
func schemaFile(in dir: TemporaryDirectory) throws -> String {
    let file = dir.child("schema.json")
    try Data(peopleSchema.utf8).write(to: URL(fileURLWithPath: file))
    return file
}

/// Opens a session whose output is collected into `lines`.
final class CapturedSession {
    let session: ShellSession
    var out: [String] = []
    var err: [String] = []

    init(path: String, create: Bool = true, schemaFile: String? = nil) throws {
        session = try ShellSession.open(path: path, create: create, schemaFile: schemaFile)
        session.out = { [unowned self] in out.append($0) }
        session.err = { [unowned self] in err.append($0) }
    }

    deinit { session.close() }
}

@Suite struct SessionSyncAndRepairTests {
    /// With sync on, every write command of the shell is one or more synced LevelDB writes;
    /// with it off, none is.
    @Test func withSyncOnEveryShellWriteIsSynced() throws {
        let dir = TemporaryDirectory("kvrepl-test")
        let dump = dir.child("dump.jsonl"), lines = dir.child("people.jsonl")
        try Data(#"{"key_hex": "6c31", "value_hex": "00"}"#.utf8).write(to: URL(fileURLWithPath: dump))
        try Data("{\"id\": \"i1\", \"age\": 1}\n{\"id\": \"i2\", \"age\": 2}\n".utf8).write(
            to: URL(fileURLWithPath: lines))
        let s = try CapturedSession(path: dir.child("db"), schemaFile: try schemaFile(in: dir))
        func synced(_ line: String) -> Int {
            let before = (s.session.leveldb?.syncedWrites ?? -1)
            #expect(s.session.run(line) == .ok, "\(line): \(s.err)")
            return (s.session.leveldb?.syncedWrites ?? -1) - before
        }
        #expect(synced("put a 1") == 0)
        #expect(synced(#"insert people {"id": "p0", "age": 9}"#) == 0)
        #expect(synced("sync on") == 0)
        #expect(s.session.sync)
        for line in [
            "put a 2", "del a", "put b 1", "delrange b", "load \(dump)",
            #"insert people {"id": "p1", "age": 3}"#, #"upsert people {"id": "p1", "age": 4}"#, #"remove people "p1""#,
            "import people \(lines)"
        ] {
            #expect(synced(line) == 1, "\(line)")
        }
        #expect(synced("sync off") == 0)
        #expect(synced("put c 1") == 0)
        #expect(s.out.suffix(2) == ["sync off: writes survive a crash of kvrepl, not of the machine", "OK"])
    }

    @Test func repairAsksFirstInteractivelyAndANoChangesNothing() throws {
        let dir = TemporaryDirectory("kvrepl-test")
        let db = dir.child("db")
        let s = try CapturedSession(path: db)
        #expect(s.session.run("put a 1") == .ok)
        s.session.interactive = true
        var questions: [String] = []
        s.session.confirm = {
            questions.append($0)
            return false
        }
        #expect(s.session.run("repair") == .ok)
        #expect(questions.count == 1 && questions[0].hasPrefix("repair \(db)? ") && questions[0].hasSuffix("[y/N] "))
        #expect(s.out.last == "nothing repaired")
        #expect(!FileManager.default.fileExists(atPath: db + "/lost"))
        s.session.confirm = { _ in true }
        #expect(s.session.run("repair") == .ok, "\(s.err)")
        #expect(s.out.last?.hasPrefix("repaired \(db): ") == true)
        #expect(s.session.run("get a") == .ok)
        #expect(s.out.last == "1")
    }

    /// The snapshot belonged to the closed handle: repair releases it, and the session reads
    /// the repaired database.
    @Test func repairReleasesASnapshotAndReopensTheDocumentLayer() throws {
        let dir = TemporaryDirectory("kvrepl-test")
        let s = try CapturedSession(path: dir.child("db"), schemaFile: try schemaFile(in: dir))
        for line in [
            #"insert people {"id": "p1", "age": 30}"#, "snapshot", "repair", #"find people where age = 30"#,
            "put after 1"
        ] {
            #expect(s.session.run(line) == .ok, "\(line): \(s.err)")
        }
        #expect(s.session.snapshot == nil)
        #expect(s.session.prompt == "kvrepl> ")
        #expect(s.out.contains(#"{"age":30,"id":"p1"}"#))
        #expect(s.out.contains { $0.hasSuffix("run verify to check the indexes against the documents") })
        #expect(try s.session.documents().database === s.session.leveldb)
        #expect(s.session.leveldb?.isClosed == false)
    }
}

/// Writes lines to a running kvrepl's standard input and reads its answers (standard
/// output and error on one pipe: every command answers one line with --json).
final class RunningKVRepl {
    let process = Process()
    let input = Pipe(), output = Pipe()
    private var buffer = Data()

    init(_ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: try kvreplBinary())
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
    }

    func send(_ line: String) throws { try input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8)) }

    /// The next line of output, or `nil` when kvrepl has exited.
    func readLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer = Data(buffer[(newline + 1)...])
                return line
            }
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { return nil }
            buffer.append(chunk)
        }
    }

    func kill() {
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

@Suite struct KVReplSyncAndRepairEndToEndTests {
    /// A kvrepl killed with SIGKILL (no close, no flush of its own) loses no write it
    /// acknowledged, synced or not, and leaves indexes consistent even when killed in the
    /// middle of more writes. (A power loss keeps only synced writes; that cannot be tested here.)
    @Test(arguments: [true, false])
    func acknowledgedWritesSurviveSIGKILL(sync: Bool) throws {
        let dir = TemporaryDirectory("kvrepl-test")
        let db = dir.child("db")
        let repl = try RunningKVRepl(
            [db, "--create", "--json", "--schema", try schemaFile(in: dir)] + (sync ? ["--sync"] : []))
        var acknowledged = 0
        for i in 0..<40 {
            try repl.send(#"insert people {"id": \#(i), "age": \#(i % 7)}"#)
            let answer = try #require(repl.readLine())
            #expect(try JSONValue(parsing: answer)["ok"] == true, "\(answer)")
            acknowledged += 1
        }
        try repl.send("put raw acknowledged")
        #expect(repl.readLine() == #"{"ok":true}"#)
        try repl.send("sync")
        #expect(repl.readLine() == (sync ? #"{"sync":true}"# : #"{"sync":false}"#))
        // More writes, not waited for: killed somewhere in the middle of them (or after).
        for i in 1000..<1200 { try repl.send(#"upsert people {"id": \#(i), "age": 1}"#) }
        repl.kill()
        #expect(repl.process.terminationReason == .uncaughtSignal)

        let database = try LevelDB(path: db)
        defer { database.close() }
        let store = try DocumentStore(database: database)
        let people = try store.collection("people")
        for i in 0..<acknowledged { #expect(try people.get(id: .int(Int64(i)))?["age"] == .int(Int64(i % 7))) }
        #expect(try database.get("raw", as: String.self) == "acknowledged")
        #expect(try store.verify().isClean)
    }

    @Test func theSyncFlagAndCommandAreReportedAndListedInHelp() throws {
        let dir = TemporaryDirectory("kvrepl-test")
        var r = try kvrepl([
            dir.child("db"), "--create", "--sync", "--json", "-c", "sync", "-c", "put a 1", "-c", "sync off", "-c",
            "sync", "-c", "sync on"
        ])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(
            try jsonLines(r.stdout) == [["sync": true], ["ok": true], ["sync": false], ["sync": false], ["sync": true]])
        r = try kvrepl([dir.child("db"), "-c", "sync", "-c", "help"])
        #expect(r.stdout.hasPrefix("sync off: "))
        #expect(r.stdout.contains("sync [on|off]") && r.stdout.contains("\nrepair "))
        r = try kvrepl(["--help"])
        #expect(r.stdout.contains("--sync"))
    }

    @Test func repairKeepsTheDataAndSaysWhatItDid() throws {
        let dir = TemporaryDirectory("kvrepl-test")
        let db = dir.child("db")
        var r = try kvrepl([
            db, "--create", "--schema", try schemaFile(in: dir),
            "-c", #"insert people {"id": "p1", "age": 30}"#, "-c", #"insert people {"id": "p2", "age": 40}"#,
            "-c", "put a 1", "-c", "compact", "-c", "put b 2"
        ])  // some data in a table, some in the log
        #expect(r.status == 0, "\(r.stderr)")
        // Piped: no question asked, as for delrange.
        r = try kvrepl(
            [db, "--json"], input: "repair\nget a\nget b\ndoc people \"p2\"\nfind people where age = 30\nverify\n")
        #expect(r.status == 0, "\(r.stderr)")
        let lines = try jsonLines(r.stdout)
        let report = try #require(lines.first)
        #expect(report["ok"] == true)
        #expect(report["damaged_tables"] == [])
        guard case .array(let moved)? = report["moved_to_lost"] else {
            Issue.record("no moved_to_lost in \(report)")
            return
        }
        #expect(moved.contains { if case .string(let n) = $0 { n.hasPrefix("MANIFEST-") } else { false } })
        #expect(moved.contains { if case .string(let n) = $0 { n.hasSuffix(".log") } else { false } })
        #expect(lines[1]["value"] == "1" && lines[2]["value"] == "2")
        #expect(lines[3] == ["age": 40, "id": "p2"])
        #expect(lines[4] == ["age": 30, "id": "p1"])
        #expect(lines[5]["ok"] == true)
        // Text mode names the database and what happened to the log.
        r = try kvrepl([db, "-c", "put c 3", "-c", "repair", "-c", "get c"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("repaired \(db): rebuilt its manifest from "))
        #expect(r.stdout.contains("log files converted to tables, moved to lost/: "))
        #expect(r.stdout.hasSuffix("\n3\n"))
    }

    @Test func theRepairFlagRecoversADatabaseTooDamagedToOpen() throws {
        let dir = TemporaryDirectory("kvrepl-test")
        let db = dir.child("db")
        #expect(try kvrepl([db, "--create", "-c", "put early 1", "-c", "compact", "-c", "put late 2"]).status == 0)
        let tables = try FileManager.default.contentsOfDirectory(atPath: db).filter { $0.hasSuffix(".ldb") }
        try #require(!tables.isEmpty)
        for table in tables { try Data("garbage".utf8).write(to: URL(fileURLWithPath: db + "/" + table)) }
        var r = try kvrepl([db, "-c", "get early"])
        #expect(r.status == 1)
        #expect(
            r.stderr.hasSuffix("(if the database is damaged, the repair command rebuilds it from what it can read)\n"),
            "\(r.stderr)")
        r = try kvrepl([db, "--repair", "--json", "-c", "get late", "-c", "scan --count"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = try jsonLines(r.stdout)
        #expect(lines.first?["damaged_tables"] == .array(tables.sorted().map { .string($0) }))
        #expect(lines.dropFirst().first?["value"] == "2")
        #expect(lines.last == ["count": 1])  // "early" was only in the damaged table
        #expect(FileManager.default.fileExists(atPath: db + "/lost/" + tables[0]))
        // A database that cannot even be opened (its CURRENT file is gone): the error says how to repair it.
        try FileManager.default.removeItem(atPath: db + "/CURRENT")
        r = try kvrepl([db, "-c", "get late"])
        #expect(r.status == 1)
        #expect(
            r.stderr.contains("no CURRENT file")
                && r.stderr.contains(
                    "(if the database is damaged, kvrepl --repair \(db) rebuilds it from what it can read)"),
            "\(r.stderr)")
        r = try kvrepl([db, "--repair", "-c", "get late"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix("repaired \(db): ") && r.stdout.hasSuffix("\n2\n"))
        // Nothing to repair: an error, and nothing is created.
        r = try kvrepl([dir.child("none"), "--repair"])
        #expect(r.status == 1 && r.stderr.contains("is not a LevelDB database"))
        #expect(!FileManager.default.fileExists(atPath: dir.child("none")))
        #expect(try kvrepl([db, "--repair", "--read-only"]).status == 2)
    }

    /// A power loss tore the end of the log after the last synced write: kvrepl opens,
    /// says in one line what was dropped, and has every synced write. Read-only, it says so
    /// and the original stays as it was.
    @Test func aTornLogTailIsCutWithAOneLineNoticeAndReadOnlyLeavesTheOriginal() throws {
        let dir = TemporaryDirectory("kvrepl-test")
        let db = dir.child("db")
        #expect(
            try kvrepl([db, "--create", "-c", "sync on", "-c", "put a 1", "-c", "sync off", "-c", "put b 2"]).status
                == 0)
        let log =
            db + "/"
            + (try #require(
                try FileManager.default.contentsOfDirectory(atPath: db).filter { $0.hasSuffix(".log") }.max()))
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: log)))
        for i in (bytes.count - 3)..<bytes.count { bytes[i] ^= 0xA5 }  // the payload of "put b 2"
        try Data(bytes).write(to: URL(fileURLWithPath: log))
        let before = try fingerprint(db)

        var r = try kvrepl([db, "--read-only", "-c", "scan --count"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "1\n")
        let notice = r.stderr.split(separator: "\n")
        #expect(
            notice.count == 1
                && notice[0].hasPrefix(
                    "kvrepl: notice: the open dropped a torn tail of \(URL(fileURLWithPath: log).lastPathComponent): "),
            "\(r.stderr)")
        #expect(notice.first?.hasSuffix(" (in the private copy; \(db) itself is unchanged)") == true, "\(r.stderr)")
        #expect(try fingerprint(db) == before)

        r = try kvrepl([db, "--json", "-c", "get a", "-c", "scan --count"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(
            try jsonLines(r.stdout) == [["key": "a", "key_hex": "61", "value": "1", "value_hex": "31"], ["count": 1]])
        let line = try #require(try jsonLines(r.stderr).first)
        guard case .string(let text)? = line["notice"] else {
            Issue.record("no notice: \(r.stderr)")
            return
        }
        #expect(text.contains("kept in \(db)/lost/"))
        // Cut once: the next open has nothing to say.
        r = try kvrepl([db, "-c", "scan --count"])
        #expect(r.stderr.isEmpty && r.stdout == "1\n", "\(r.stderr)")
    }

    @Test func repairIsRefusedReadOnly() throws {
        let dir = TemporaryDirectory("kvrepl-test")
        let db = dir.child("db")
        #expect(try kvrepl([db, "--create", "-c", "put a 1"]).status == 0)
        let before = try fingerprint(db)
        let r = try kvrepl([db, "--read-only", "--json", "-c", "repair", "-c", "get a"])
        #expect(r.status == 1)
        #expect(try jsonLines(r.stderr) == [["error": "read-only session: repair would modify the database"]])
        #expect(try jsonLines(r.stdout) == [["key": "a", "key_hex": "61", "value": "1", "value_hex": "31"]])
        #expect(try fingerprint(db) == before)
    }
}

/// kvrepl's salvage, on a store that kvrepl cannot open because an index build meets a
/// damaged document.
@Suite struct KVReplSalvageEndToEndTests {
    @Test func salvageOpensADamagedStoreQuarantinesTheDocumentAndReportsIt() throws {
        let dir = TemporaryDirectory("kvrepl-salvage")
        let path = dir.child("db")
        do {
            let db = try LevelDB(path: path)
            defer { db.close() }
            let store = try DocumentStore(
                database: db,
                schema: try DocumentSchema(
                    json: Data(
                        #"{"collections": {"c": {"primaryKey": "id", "indexes": [{"name": "by_a", "fields": ["a"]}]}}}"#
                            .utf8)))
            for i in 0..<5 { try store.collection("c").insert(["id": .int(Int64(i)), "a": .int(Int64(i))]) }
            try db.put(Tuple(["d", "c", .int(2)]), Array("{broken".utf8))
            #expect(throws: KVDocsError.self) { try store.reindex(collection: "c") }
        }
        let r = try kvrepl([path, "--json", "-c", "salvage", "-c", "count c", "-c", "verify"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("run salvage"))
        let lines = try jsonLines(r.stdout)
        try #require(lines.count == 3)
        #expect(lines[0]["ok"] == .bool(true))
        #expect(lines[0]["kept"] == .int(4))
        guard case .array(let quarantined)? = lines[0]["quarantined"] else {
            Issue.record("no quarantined list: \(lines[0])")
            return
        }
        #expect(quarantined.count == 1)
        #expect(quarantined.first?["collection"] == .string("c"))
        #expect(quarantined.first?["id"] == .int(2))
        #expect(lines[1]["count"] == .int(4))
        #expect(lines[2]["ok"] == .bool(true))
    }
}

@Suite struct KVReplLockMessageTests {
    /// A database another process holds: kvrepl names the process and suggests no repair.
    @Test(.requires(.python))
    func aDatabaseHeldByAnotherProcessIsNamedWithItsPid() throws {
        let dir = TemporaryDirectory("kvrepl-lock")
        let path = dir.child("db")
        var r = try kvrepl([path, "--create", "-c", "put a b"])
        #expect(r.status == 0, "\(r.stderr)")
        let holder = try PlyvelHolder(path: path)
        defer { holder.close() }
        r = try kvrepl([path, "-c", "get a"])
        #expect(r.status == 1)
        #expect(
            r.stderr.contains("the database at \(path) is in use by another process (pid \(holder.processIdentifier))"),
            "\(r.stderr)")
        #expect(!r.stderr.contains("repair"), "\(r.stderr)")
    }
}
