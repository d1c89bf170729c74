import Foundation
import Testing
@testable import KVDocs
@testable import KVReplCore

let peopleSchema = #"{"collections": {"people": {"primaryKey": "id", "indexes": [{"name": "by_age", "fields": ["age"]}]}}}"#

/// A temporary directory with a schema file for the people collection.
func schemaFile(in dir: TempDir) throws -> String {
    let file = dir.child("schema.json")
    try Data(peopleSchema.utf8).write(to: URL(fileURLWithPath: file))
    return file
}

/// Opens a session whose output is collected into `lines`.
final class CapturedSession {
    let session: Session
    var out: [String] = []
    var err: [String] = []

    init(path: String, create: Bool = true, schemaFile: String? = nil) throws {
        session = try Session.open(path: path, create: create, schemaFile: schemaFile)
        session.out = { [unowned self] in out.append($0) }
        session.err = { [unowned self] in err.append($0) }
    }

    deinit { session.close() }
}

@Suite struct SessionSyncTests {
    /// With sync on, every write command of the shell is one or more synced LevelDB writes;
    /// with it off, none is.
    @Test func withSyncOnEveryShellWriteIsSynced() throws {
        let dir = TempDir()
        let dump = dir.child("dump.jsonl"), lines = dir.child("people.jsonl")
        try Data(#"{"key_hex": "6c31", "value_hex": "00"}"#.utf8).write(to: URL(fileURLWithPath: dump))
        try Data("{\"id\": \"i1\", \"age\": 1}\n{\"id\": \"i2\", \"age\": 2}\n".utf8).write(to: URL(fileURLWithPath: lines))
        let s = try CapturedSession(path: dir.child("db"), schemaFile: try schemaFile(in: dir))
        func synced(_ line: String) -> Int {
            let before = s.session.database.syncedWrites
            #expect(s.session.run(line) == .ok, "\(line): \(s.err)")
            return s.session.database.syncedWrites - before
        }
        #expect(synced("put a 1") == 0)
        #expect(synced(#"insert people {"id": "p0", "age": 9}"#) == 0)
        #expect(synced("sync on") == 0)
        #expect(s.session.sync)
        for line in ["put a 2", "del a", "put b 1", "delrange b", "load \(dump)",
                     #"insert people {"id": "p1", "age": 3}"#, #"upsert people {"id": "p1", "age": 4}"#, #"remove people "p1""#,
                     "import people \(lines)"] {
            #expect(synced(line) == 1, "\(line)")
        }
        #expect(synced("sync off") == 0)
        #expect(synced("put c 1") == 0)
        #expect(s.out.suffix(2) == ["sync off: writes survive a crash of kvrepl, not of the machine", "OK"])
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
        let dir = TempDir()
        let db = dir.child("db")
        let repl = try RunningKVRepl([db, "--create", "--json", "--schema", try schemaFile(in: dir)] + (sync ? ["--sync"] : []))
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

        let database = try Database(path: db)
        defer { database.close() }
        let store = try DocumentStore(database: database)
        let people = try store.collection("people")
        for i in 0..<acknowledged { #expect(try people.get(id: .int(Int64(i)))?["age"] == .int(Int64(i % 7))) }
        #expect(try database.get("raw", as: String.self) == "acknowledged")
        #expect(try store.verify().isClean)
    }

    @Test func theSyncFlagAndCommandAreReportedAndListedInHelp() throws {
        let dir = TempDir()
        var r = try kvrepl([dir.child("db"), "--create", "--sync", "--json", "-c", "sync", "-c", "put a 1", "-c", "sync off", "-c", "sync", "-c", "sync on"])
        #expect(r.status == 0, "\(r.err)")
        #expect(try jsonLines(r.out) == [["sync": true], ["ok": true], ["sync": false], ["sync": false], ["sync": true]])
        r = try kvrepl([dir.child("db"), "-c", "sync", "-c", "help"])
        #expect(r.out.hasPrefix("sync off: "))
        #expect(r.out.contains("sync [on|off]"))
        r = try kvrepl(["--help"])
        #expect(r.out.contains("--sync"))
    }
}
