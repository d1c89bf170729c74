import Foundation
import KVDocs
import Testing

/// The repository's root directory.
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// The kvrepl binary built by `swift build`.
func kvreplBinary() throws -> String {
    let path = packageRoot.appendingPathComponent(".build/debug/kvrepl").path
    guard FileManager.default.isExecutableFile(atPath: path) else {
        throw KVDocsError(.notFound, "\(path) is missing: run swift build first (scripts/test does)")
    }
    return path
}

/// Runs a command with `input` on standard input.
@discardableResult
func run(_ executable: String, _ arguments: [String], input: String? = nil, environment: [String: String]? = nil) throws -> (status: Int32, out: String, err: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("kvrepl-stdin-\(UUID().uuidString)")
    try Data((input ?? "").utf8).write(to: dir)
    defer { try? FileManager.default.removeItem(at: dir) }
    process.standardInput = try FileHandle(forReadingFrom: dir)
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let o = out.fileHandleForReading.readDataToEndOfFile()
    let e = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
}

func kvrepl(_ arguments: [String], input: String? = nil) throws -> (status: Int32, out: String, err: String) {
    try run(try kvreplBinary(), arguments, input: input)
}

func referencePython() throws -> String {
    let python = packageRoot.appendingPathComponent(".venv/bin/python3").path
    guard FileManager.default.isExecutableFile(atPath: python) else { throw KVDocsError(.notFound, "\(python) is missing: run scripts/install-deps") }
    return python
}

final class TempDir {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("kvrepl-test-\(UUID().uuidString)").path
    init() { try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
    deinit { try? FileManager.default.removeItem(atPath: path) }
    func child(_ name: String) -> String { path + "/" + name }
}

func jsonLines(_ text: String) throws -> [JSONValue] {
    try text.split(separator: "\n").map { try JSONValue(parsing: String($0)) }
}

/// Every file of a directory with its bytes, to prove nothing changed.
func fingerprint(_ dir: String) throws -> [String: Data] {
    var result: [String: Data] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: dir) {
        result[name] = try Data(contentsOf: URL(fileURLWithPath: dir + "/" + name))
    }
    return result
}

@Suite struct KVReplEndToEndTests {
    @Test func commandsWithDashCRunInOrderAndSetTheExitStatus() throws {
        let dir = TempDir()
        let db = dir.child("db")
        var r = try kvrepl([db, "--create", "--json", "-c", "put a 1", "-c", "put b two words", "-c", "get b", "-c", "scan --count"])
        #expect(r.status == 0)
        #expect(try jsonLines(r.out) == [["ok": true], ["ok": true], ["key": "b", "key_hex": "62", "value": "two words", "value_hex": "74776f20776f726473"], ["count": 2]])
        // A failing command: error on stderr, later commands still run, exit 1.
        r = try kvrepl([db, "--json", "-c", "get missing", "-c", "get a", "-c", "bogus"])
        #expect(r.status == 1)
        #expect(try jsonLines(r.out) == [["key": "a", "key_hex": "61", "value": "1", "value_hex": "31"]])
        #expect(try jsonLines(r.err) == [["error": "key not found: \"missing\""], ["error": "column 1: unknown command \"bogus\"; try: help"]])
        // Text mode.
        r = try kvrepl([db, "-c", "scan", "-c", "get nope"])
        #expect(r.status == 1)
        #expect(r.out == "\"a\" = 1\n\"b\" = two words\n")
        #expect(r.err == "error: key not found: \"nope\"\n")
    }

    @Test func aPipedScriptRunsLineByLine() throws {
        let dir = TempDir()
        let r = try kvrepl([dir.child("db"), "--create", "--json"], input: """
        # a comment, then commands
        put ("dep", "Perth", 1700000000) "to Fremantle"
        put ("dep", "Perth", 1600000000) "to Midland"
        put ("dep", "Armadale", 1) x
        scan ("dep", "Perth") --reverse --keys-only
        scan --from ("dep", "Perth") --limit 1
        del ("dep", "Armadale", 1)
        scan --count
        quit
        get never-run
        """)
        #expect(r.status == 0, "\(r.err)")
        let lines = try jsonLines(r.out)
        #expect(lines.count == 8)
        #expect(lines[3] == ["key": #"("dep", "Perth", 1700000000)"#, "key_hex": .string(Tuple(["dep", "Perth", 1700000000]).encoded.map { String(format: "%02x", $0) }.joined())])
        #expect(lines[4]["key"] == #"("dep", "Perth", 1600000000)"#)
        #expect(lines[5]["value"] == "to Midland")
        #expect(lines[7] == ["count": 2])
    }

    @Test func usageErrorsExitWithTwo() throws {
        #expect(try kvrepl([]).status == 2)
        #expect(try kvrepl(["/tmp/x", "--no-such-flag"]).status == 2)
        let help = try kvrepl(["--help"])
        #expect(help.status == 0 && help.out.contains("--read-only"))
    }

    @Test func aMissingOrForeignDirectoryIsNotCreatedOrAlteredWithoutCreate() throws {
        let dir = TempDir()
        var r = try kvrepl([dir.child("missing"), "-c", "stats"])
        #expect(r.status == 1)
        #expect(r.err.contains("is not a LevelDB database (use --create to create one)"))
        #expect(!FileManager.default.fileExists(atPath: dir.child("missing")))
        let foreign = dir.child("foreign")
        try FileManager.default.createDirectory(atPath: foreign, withIntermediateDirectories: true)
        try Data("notes".utf8).write(to: URL(fileURLWithPath: foreign + "/notes.txt"))
        let before = try fingerprint(foreign)
        r = try kvrepl([foreign, "-c", "scan"])
        #expect(r.status == 1)
        #expect(try fingerprint(foreign) == before)
        r = try kvrepl([foreign, "--read-only", "-c", "scan"])
        #expect(r.status == 1 && r.err.contains("not a LevelDB database"))
        #expect(try fingerprint(foreign) == before)
    }

    @Test func readOnlyRefusesWritesAndLeavesTheDirectoryByteIdentical() throws {
        let dir = TempDir()
        let db = dir.child("db")
        var r = try kvrepl([db, "--create", "-c", "put a 1", "-c", "put b 2"])
        #expect(r.status == 0)
        let before = try fingerprint(db)
        r = try kvrepl([db, "--read-only", "--json", "-c", "scan", "-c", "put c 3", "-c", "del a", "-c", "compact", "-c", "stats", "-c", "snapshot", "-c", "get a"])
        #expect(r.status == 1)
        #expect(try jsonLines(r.err) == [["error": "read-only session: put would modify the database"],
                                         ["error": "read-only session: del would modify the database"],
                                         ["error": "read-only session: compact would modify the database"]])
        #expect(try jsonLines(r.out).first == ["key": "a", "key_hex": "61", "value": "1", "value_hex": "31"])
        #expect(try fingerprint(db) == before)
    }

    @Test func aDatabaseHeldByAnotherProcessGivesAClearMessageAndExitOne() throws {
        let dir = TempDir()
        let db = dir.child("db")
        #expect(try kvrepl([db, "--create", "-c", "put a 1"]).status == 0)
        let ready = dir.child("ready")
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: try referencePython())
        holder.arguments = ["-c", "import plyvel, sys, pathlib; d = plyvel.DB('\(db)'); pathlib.Path('\(ready)').touch(); sys.stdin.read()"]
        let stdin = Pipe()
        holder.standardInput = stdin
        try holder.run()
        defer { try? stdin.fileHandleForWriting.close(); holder.waitUntilExit() }
        let deadline = Date().addingTimeInterval(20)
        while !FileManager.default.fileExists(atPath: ready) && Date() < deadline { usleep(20_000) }
        for flags in [[String](), ["--read-only"]] {
            let r = try kvrepl([db] + flags + ["-c", "get a"])
            #expect(r.status == 1)
            #expect(r.err.contains("in use by another process"), "\(r.err)")
        }
    }

    /// Random binary entries written by another LevelDB client (Python's plyvel) are
    /// read back exactly, in order, with both scan directions.
    @Test func aDatabaseWrittenByPlyvelIsReadBackExactly() throws {
        let dir = TempDir()
        let db = dir.child("db")
        let script = """
        import plyvel, random, json
        rng = random.Random(5)
        db = plyvel.DB('\(db)', create_if_missing=True)
        entries = {}
        for i in range(300):
            k = bytes(rng.choice([0, 1, 0x7f, 0x80, 0xff, 0x61, 0x22, 0x5c]) for _ in range(rng.randrange(0, 6)))
            v = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 20)))
            db.put(k, v); entries[k] = v
        db.close()
        print(json.dumps([[k.hex(), entries[k].hex()] for k in sorted(entries)]))
        """
        let python = try run(try referencePython(), ["-c", script])
        try #require(python.status == 0, "\(python.err)")
        let expected = try JSONDecoder().decode([[String]].self, from: Data(python.out.utf8))
        var r = try kvrepl([db, "--json", "-c", "scan"])
        #expect(r.status == 0)
        let scanned = try jsonLines(r.out).map { [$0["key_hex"] ?? .null, $0["value_hex"] ?? .null] }
        #expect(scanned == expected.map { $0.map { JSONValue.string($0) } })
        r = try kvrepl([db, "--json", "-c", "scan --reverse --keys-only"])
        #expect(try jsonLines(r.out).map { $0["key_hex"] ?? .null } == expected.reversed().map { .string($0[0]) })
        // get with a hex literal finds binary keys.
        if let binary = expected.first(where: { $0[0].count > 2 }) {
            r = try kvrepl([db, "--json", "-c", "get 0x\(binary[0])"])
            #expect(try jsonLines(r.out).first?["value_hex"] == .string(binary[1]))
        }
    }

    @Test func dumpAndLoadRoundTripAnyDatabaseExactly() throws {
        let dir = TempDir()
        let source = dir.child("source")
        do {
            let db = try Database(path: source)
            var rng = SystemRandomNumberGenerator()
            for i in 0..<500 {
                let key = (0..<(i % 9)).map { _ in UInt8.random(in: 0...255, using: &rng) } + [UInt8(i % 256), UInt8(i / 256)]
                try db.put(key, (0..<(i % 40)).map { _ in UInt8.random(in: 0...255, using: &rng) })
            }
            try db.put([UInt8](), [UInt8]())
            db.close()
        }
        let file = dir.child("dump.jsonl")
        var r = try kvrepl([source, "--json", "-c", "dump \(file)"])
        #expect(r.status == 0)
        #expect(try jsonLines(r.out).first?["entries"] == 501)
        r = try kvrepl([dir.child("copy"), "--create", "--json", "-c", "load \(file)"])
        #expect(r.status == 0, "\(r.err)")
        let a = try Database(path: source), b = try Database(path: dir.child("copy"))
        defer { a.close(); b.close() }
        #expect(try a.entries().collect() == b.entries().collect())
        // A malformed dump line changes nothing.
        try Data("{\"key_hex\": \"00\", \"value_hex\": \"00\"}\n{\"key_hex\": \"zz\"}\n".utf8).write(to: URL(fileURLWithPath: dir.child("bad.jsonl")))
        r = try kvrepl([dir.child("empty"), "--create", "-c", "load \(dir.child("bad.jsonl"))", "-c", "scan --count"])
        #expect(r.status == 1 && r.err.contains("bad.jsonl:2:"))
        #expect(r.out == "0\n")
    }

    /// `export` writes what `find` prints in --json mode, line for line, and reports the
    /// count; an export read-only (through the private copy) writes the same.
    @Test func exportWritesWhatFindPrints() throws {
        let dir = TempDir()
        let db = dir.child("demo")
        let file = dir.child("stations.jsonl")
        var r = try kvrepl(["--demo", db, "--json", "-c", "export stations \(file)", "-c", "find stations"])
        #expect(r.status == 0, "\(r.err)")
        let lines = r.out.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let found = Array(lines.dropFirst().dropLast())
        #expect(try JSONValue(parsing: lines[0]) == ["ok": true, "documents": .int(Int64(found.count)), "file": .string(file)])
        #expect(found.count > 10)
        #expect(try String(contentsOfFile: file, encoding: .utf8) == found.map { $0 + "\n" }.joined())
        let exported = try String(contentsOfFile: file, encoding: .utf8)
        r = try kvrepl([db, "--read-only", "-c", "export stations \(dir.child("again.jsonl"))"])
        #expect(r.status == 0 && r.out == "exported \(found.count) documents to \(dir.child("again.jsonl"))\n", "\(r.err)")
        #expect(try String(contentsOfFile: dir.child("again.jsonl"), encoding: .utf8) == exported)
    }

    @Test func theSampleDatabaseAnswersDocumentCommands() throws {
        let dir = TempDir()
        let db = dir.child("demo")
        let r = try kvrepl(["--demo", db, "--json",
                            "-c", "collections",
                            "-c", #"find stations where lines[] = "Mandurah" and zone >= 2 order by name desc limit 3"#,
                            "-c", #"count departures where station = "PERTH""#,
                            "-c", #"explain find departures where station = "PERTH" and time > 1700001000"#,
                            "-c", #"search stations "interchange OR parking" limit 2"#,
                            "-c", #"doc stations "PERTH""#,
                            "-c", "verify",
                            "-c", #"scan ("dep", "Perth") --limit 1"#,
                            "-c", "keyspaces",
                            "-c", "changes since 750 limit 2"])
        #expect(r.status == 0, "\(r.err)")
        let lines = try jsonLines(r.out)
        #expect(lines[0]["name"] == "departures" && lines[1]["name"] == "stations")
        let found = lines[2...4].map { $0["name"] ?? .null }
        #expect(found.count == 3)
        let explain = try #require(lines.first { $0["plan"] != nil })
        #expect(explain["index"] == "by_station_time")
        let hits = lines.filter { $0["score"] != nil }
        #expect(hits.count == 2 && hits.allSatisfy { if case .double(let s)? = $0["score"] { s < 0 } else { false } })
        #expect(lines.contains { $0["ok"] == true && $0["missing_entries"] == 0 })
        #expect(lines.contains { ($0["key"]).map { "\($0)".hasPrefix("\"departure(station: \\\"Perth\\\"") } ?? false })
        // The same database is reused, not rebuilt.
        let again = try kvrepl(["--demo", db, "--json", "-c", "count stations"])
        #expect(try jsonLines(again.out) == [["count": 60]])
    }

    @Test func anInteractiveSessionThroughAPseudoTerminal() throws {
        let dir = TempDir()
        let r = try run(try referencePython(), [packageRoot.appendingPathComponent("Tests/python/interactive_kvrepl.py").path,
                                                try kvreplBinary(), dir.child("db"), dir.child("history")])
        #expect(r.status == 0, "\(r.out)\n\(r.err)")
        #expect(r.out.contains("interactive session ok"))
    }
}
