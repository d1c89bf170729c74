import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// Runs the kvrepl binary with `arguments`, and `input` on its standard input.
func kvrepl(_ arguments: [String], input: String? = nil) throws -> ProcessResult {
    try runProcess(try kvreplBinary(), arguments, input: input)
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
        let dir = TemporaryDirectory("kvrepl-test")
        let db = dir.child("db")
        var r = try kvrepl([
            db, "--create", "--json", "-c", "put a 1", "-c", "put b two words", "-c", "get b", "-c", "scan --count"
        ])
        #expect(r.status == 0)
        #expect(
            try jsonLines(r.stdout) == [
                ["ok": true], ["ok": true],
                ["key": "b", "key_hex": "62", "value": "two words", "value_hex": "74776f20776f726473"], ["count": 2]
            ])
        // A failing command: error on stderr, later commands still run, exit 1.
        r = try kvrepl([db, "--json", "-c", "get missing", "-c", "get a", "-c", "bogus"])
        #expect(r.status == 1)
        #expect(try jsonLines(r.stdout) == [["key": "a", "key_hex": "61", "value": "1", "value_hex": "31"]])
        #expect(
            try jsonLines(r.stderr) == [
                ["error": "key not found: \"missing\""], ["error": "column 1: unknown command \"bogus\"; try: help"]
            ])
        // Text mode.
        r = try kvrepl([db, "-c", "scan", "-c", "get nope"])
        #expect(r.status == 1)
        #expect(r.stdout == "\"a\" = 1\n\"b\" = two words\n")
        #expect(r.stderr == "error: key not found: \"nope\"\n")
    }

    @Test func aPipedScriptRunsLineByLine() throws {
        let dir = TemporaryDirectory("kvrepl-test")
        let r = try kvrepl(
            [dir.child("db"), "--create", "--json"],
            input: """
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
        #expect(r.status == 0, "\(r.stderr)")
        let lines = try jsonLines(r.stdout)
        try #require(lines.count == 8)
        #expect(
            lines[3] == [
                "key": #"("dep", "Perth", 1700000000)"#,
                "key_hex": .string(
                    Tuple(["dep", "Perth", 1700000000]).encoded.map { String(format: "%02x", $0) }.joined())
            ])
        #expect(lines[4]["key"] == #"("dep", "Perth", 1600000000)"#)
        #expect(lines[5]["value"] == "to Midland")
        #expect(lines[7] == ["count": 2])
    }

    /// `terms` lists a text index's terms with their document frequencies, as FTS5's
    /// fts5vocab 'row' table counts them, after the statistics line in text mode.
    @Test(.requires(.sqliteFTS5))
    func termsListsDocumentFrequenciesAsFTS5VocabCountsThem() throws {
        let dir = TemporaryDirectory("kvrepl-test")
        let db = dir.child("db")
        try FileManager.default.copyItem(
            atPath: packageRoot.appendingPathComponent("Tests/Fixtures/text1-db").path, toPath: db)
        var r = try kvrepl([db, "--json", "-c", "terms notes body_text"])
        #expect(r.status == 0, "\(r.stderr)")
        let ours = try jsonLines(r.stdout)
        // The same four documents in FTS5 (porter), counted by fts5vocab.
        let script = """
            import sqlite3, json
            c = sqlite3.connect(":memory:")
            c.execute("create virtual table t using fts5(title, body, tokenize='porter')")
            c.execute("create virtual table v using fts5vocab(t, 'row')")
            for row in [("Night trains", "The night express leaves Perth at ten and runs to Fremantle"),
                        ("Morning trains", "Quiet morning trains; the CAFÉ opens early at the station"),
                        ("Zürich lines", "Lines and stations of Zürich, running express"),
                        (None, "running runners run; the station is busy")]:
                c.execute("insert into t values (?, ?)", row)
            for term, doc in c.execute("select term, doc from v order by term"):
                print(json.dumps({"term": term, "documents": doc}, ensure_ascii=False))
            """
        let python = try runProcess(try referencePython(), ["-c", script])
        #expect(python.status == 0, "\(python.stderr)")
        let reference = try jsonLines(python.stdout)
        #expect(ours.count == 24 && ours == reference)
        r = try kvrepl([db, "-c", "terms notes body_text st limit 1"])
        #expect(r.stdout == "4 documents, 41 tokens (10.2 per document)\nstation  3\n")
        r = try kvrepl([db, "-c", "terms notes nope"])
        #expect(r.status == 1 && r.stderr.contains("no text index \"nope\""))
    }

    /// `optimize` merges a text index's segments (one per write) into one: the text index's
    /// segment records go from one per insert (less what merges took) to one, searches and
    /// terms answer the same, verify stays clean, and an unknown index or `--read-only`
    /// is refused.
    @Test func optimizeMergesATextIndexIntoOneSegment() throws {
        let dir = TemporaryDirectory("kvrepl-test")
        let db = dir.child("db")
        let schema = dir.child("schema.json")
        try Data(
            #"{"collections": {"notes": {"primaryKey": "id", "text": [{"name": "body_text", "fields": ["body"]}]}}}"#
                .utf8
        )
        .write(to: URL(fileURLWithPath: schema))
        let inserts = (0..<9).map {
            #"insert notes {"id": \#($0), "body": "night train \#($0 % 3 == 0 ? "express" : "local") \#($0)"}"#
        }
        var r = try kvrepl(
            [db, "--create", "--schema", schema], input: (inserts + ["remove notes 4"]).joined(separator: "\n") + "\n")
        #expect(r.status == 0, "\(r.stderr)")
        // The text index's segment records, ("t", collection, index, "g", id).
        let segments = { () throws -> Int in
            let out = try kvrepl([db, "--read-only", "-c", #"scan ("t", "notes", "body_text", "g") --count"#]).stdout
            return Int(out.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        }
        #expect(try segments() > 1)
        let before = try kvrepl([db, "--json", "-c", #"search notes "express OR night""#, "-c", "terms notes"]).stdout
        r = try kvrepl([db, "--read-only", "-c", "optimize notes"])
        #expect(r.status == 1)
        r = try kvrepl([db, "-c", "optimize notes body_text"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix("optimized notes.body_text ("), "\(r.stdout)")
        #expect(try segments() == 1)
        #expect(
            try kvrepl([db, "--json", "-c", #"search notes "express OR night""#, "-c", "terms notes"]).stdout == before)
        r = try kvrepl([db, "--json", "-c", "optimize notes", "-c", "verify"])
        #expect(r.status == 0 && r.stdout.contains(#""steps":0"#), "\(r.stdout)")
        #expect(r.stdout.contains("\"danglingEntries\":0") || r.stdout.contains("ok"), "\(r.stdout)")
        r = try kvrepl([db, "-c", "optimize notes nope"])
        #expect(r.status == 1 && r.stderr.contains("no text index \"nope\""), "\(r.stderr)")
    }

    /// Raw `get` and `scan` show a stored document (binary form) as its JSON, in text and
    /// `--json` output alike.
    @Test func rawReadsShowStoredDocumentsAsJSON() throws {
        let dir = TemporaryDirectory("kvrepl-test")
        let db = dir.child("db")
        let schema = dir.child("schema.json")
        try Data(#"{"collections": {"people": {"primaryKey": "id"}}}"#.utf8).write(to: URL(fileURLWithPath: schema))
        var r = try kvrepl([
            db, "--create", "--schema", schema, "-c", #"insert people {"id": 1, "name": "Åse", "n": -0.0}"#
        ])
        #expect(r.status == 0, "\(r.stderr)")
        r = try kvrepl([db, "--json", "-c", #"scan ("d", "people")"#])
        let line = try #require(r.stdout.split(separator: "\n").first)
        let entry = try JSONValue(parsing: String(line))
        #expect(entry["value"] == ["id": 1, "name": "Åse", "n": .double(-0.0)])
        #expect(entry["value_hex"].map { if case .string(let hex) = $0 { hex.hasPrefix("f5") } else { false } } == true)
        r = try kvrepl([db, "-c", #"get ("d", "people", 1)"#])
        #expect(r.stdout.contains(#""name":"Åse""#), "\(r.stdout)")
    }

    @Test func usageErrorsExitWithTwo() throws {
        #expect(try kvrepl([]).status == 2)
        #expect(try kvrepl(["/tmp/x", "--no-such-flag"]).status == 2)
        let help = try kvrepl(["--help"])
        #expect(help.status == 0 && help.stdout.contains("--read-only"))
    }

    @Test func aMissingOrForeignDirectoryIsNotCreatedOrAlteredWithoutCreate() throws {
        let dir = TemporaryDirectory("kvrepl-test")
        var r = try kvrepl([dir.child("missing"), "-c", "stats"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("is not a LevelDB database (use --create to create one)"))
        #expect(!FileManager.default.fileExists(atPath: dir.child("missing")))
        let foreign = dir.child("foreign")
        try FileManager.default.createDirectory(atPath: foreign, withIntermediateDirectories: true)
        try Data("notes".utf8).write(to: URL(fileURLWithPath: foreign + "/notes.txt"))
        let before = try fingerprint(foreign)
        r = try kvrepl([foreign, "-c", "scan"])
        #expect(r.status == 1)
        #expect(try fingerprint(foreign) == before)
        r = try kvrepl([foreign, "--read-only", "-c", "scan"])
        #expect(r.status == 1 && r.stderr.contains("not a LevelDB database"))
        #expect(try fingerprint(foreign) == before)
    }

    @Test func readOnlyRefusesWritesAndLeavesTheDirectoryByteIdentical() throws {
        let dir = TemporaryDirectory("kvrepl-test")
        let db = dir.child("db")
        var r = try kvrepl([db, "--create", "-c", "put a 1", "-c", "put b 2"])
        #expect(r.status == 0)
        let before = try fingerprint(db)
        r = try kvrepl([
            db, "--read-only", "--json", "-c", "scan", "-c", "put c 3", "-c", "del a", "-c", "compact", "-c", "stats",
            "-c", "snapshot", "-c", "get a"
        ])
        #expect(r.status == 1)
        #expect(
            try jsonLines(r.stderr) == [
                ["error": "read-only session: put would modify the database"],
                ["error": "read-only session: del would modify the database"],
                ["error": "read-only session: compact would modify the database"]
            ])
        #expect(try jsonLines(r.stdout).first == ["key": "a", "key_hex": "61", "value": "1", "value_hex": "31"])
        #expect(try fingerprint(db) == before)
    }

    /// Python's plyvel, another LevelDB client, holds the database.
    @Test(.requires(.plyvel))
    func aDatabaseHeldByAnotherProcessGivesAClearMessageAndExitOne() throws {
        let dir = TemporaryDirectory("kvrepl-test")
        let db = dir.child("db")
        #expect(try kvrepl([db, "--create", "-c", "put a 1"]).status == 0)
        let holder = try PlyvelHolder(path: db)
        defer { holder.close() }
        for flags in [[String](), ["--read-only"]] {
            let r = try kvrepl([db] + flags + ["-c", "get a"])
            #expect(r.status == 1)
            #expect(r.stderr.contains("in use by another process"), "\(r.stderr)")
        }
    }

    /// Random binary entries written by another LevelDB client (Python's plyvel) are
    /// read back exactly, in order, with both scan directions.
    @Test(.requires(.plyvel))
    func aDatabaseWrittenByPlyvelIsReadBackExactly() throws {
        let dir = TemporaryDirectory("kvrepl-test")
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
        let python = try runProcess(try referencePython(), ["-c", script])
        try #require(python.status == 0, "\(python.stderr)")
        let expected = try JSONDecoder().decode([[String]].self, from: Data(python.stdout.utf8))
        var r = try kvrepl([db, "--json", "-c", "scan"])
        #expect(r.status == 0)
        let scanned = try jsonLines(r.stdout).map { [$0["key_hex"] ?? .null, $0["value_hex"] ?? .null] }
        #expect(scanned == expected.map { $0.map { JSONValue.string($0) } })
        r = try kvrepl([db, "--json", "-c", "scan --reverse --keys-only"])
        #expect(try jsonLines(r.stdout).map { $0["key_hex"] ?? .null } == expected.reversed().map { .string($0[0]) })
        // get with a hex literal finds binary keys.
        if let binary = expected.first(where: { $0[0].count > 2 }) {
            r = try kvrepl([db, "--json", "-c", "get 0x\(binary[0])"])
            #expect(try jsonLines(r.stdout).first?["value_hex"] == .string(binary[1]))
        }
    }

    @Test func dumpAndLoadRoundTripAnyDatabaseExactly() throws {
        let dir = TemporaryDirectory("kvrepl-test")
        let source = dir.child("source")
        do {
            let db = try LevelDB(path: source)
            var rng = SystemRandomNumberGenerator()
            for i in 0..<500 {
                let key =
                    (0..<(i % 9)).map { _ in UInt8.random(in: 0...255, using: &rng) } + [UInt8(i % 256), UInt8(i / 256)]
                try db.put(key, (0..<(i % 40)).map { _ in UInt8.random(in: 0...255, using: &rng) })
            }
            try db.put([UInt8](), [UInt8]())
            db.close()
        }
        let file = dir.child("dump.jsonl")
        var r = try kvrepl([source, "--json", "-c", "dump \(file)"])
        #expect(r.status == 0)
        #expect(try jsonLines(r.stdout).first?["entries"] == 501)
        r = try kvrepl([dir.child("copy"), "--create", "--json", "-c", "load \(file)"])
        #expect(r.status == 0, "\(r.stderr)")
        let a = try LevelDB(path: source), b = try LevelDB(path: dir.child("copy"))
        defer {
            a.close()
            b.close()
        }
        #expect(try a.entries().collect() == b.entries().collect())
        // A malformed dump line changes nothing.
        try Data("{\"key_hex\": \"00\", \"value_hex\": \"00\"}\n{\"key_hex\": \"zz\"}\n".utf8).write(
            to: URL(fileURLWithPath: dir.child("bad.jsonl")))
        r = try kvrepl([dir.child("empty"), "--create", "-c", "load \(dir.child("bad.jsonl"))", "-c", "scan --count"])
        #expect(r.status == 1 && r.stderr.contains("bad.jsonl:2:"))
        #expect(r.stdout == "0\n")
    }

    /// `export` writes what `find` prints in --json mode, line for line, and reports the
    /// count; an export read-only (through the private copy) writes the same.
    @Test func exportWritesWhatFindPrints() throws {
        let dir = TemporaryDirectory("kvrepl-test")
        let db = dir.child("demo")
        let file = dir.child("stations.jsonl")
        var r = try kvrepl(["--demo", db, "--json", "-c", "export stations \(file)", "-c", "find stations"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let found = Array(lines.dropFirst().dropLast())
        #expect(
            try JSONValue(parsing: lines[0]) == [
                "ok": true, "documents": .int(Int64(found.count)), "file": .string(file)
            ])
        #expect(found.count > 10)
        #expect(try String(contentsOfFile: file, encoding: .utf8) == found.map { $0 + "\n" }.joined())
        let exported = try String(contentsOfFile: file, encoding: .utf8)
        r = try kvrepl([db, "--read-only", "-c", "export stations \(dir.child("again.jsonl"))"])
        #expect(
            r.status == 0 && r.stdout == "exported \(found.count) documents to \(dir.child("again.jsonl"))\n",
            "\(r.stderr)")
        #expect(try String(contentsOfFile: dir.child("again.jsonl"), encoding: .utf8) == exported)
    }

    @Test func theSampleDatabaseAnswersDocumentCommands() throws {
        let dir = TemporaryDirectory("kvrepl-test")
        let db = dir.child("demo")
        let r = try kvrepl([
            "--demo", db, "--json",
            "-c", "collections",
            "-c", #"find stations where lines[] = "Mandurah" and zone >= 2 order by name desc limit 3"#,
            "-c", #"count departures where station = "PERTH""#,
            "-c", #"explain find departures where station = "PERTH" and time > 1700001000"#,
            "-c", #"search stations "interchange OR parking" limit 2"#,
            "-c", #"doc stations "PERTH""#,
            "-c", "verify",
            "-c", #"scan ("dep", "Perth") --limit 1"#,
            "-c", "keyspaces",
            "-c", "changes since 750 limit 2"
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = try jsonLines(r.stdout)
        #expect(lines[0]["name"] == "departures" && lines[1]["name"] == "stations")
        let found = lines[2...4].map { $0["name"] ?? .null }
        #expect(found.count == 3)
        let explain = try #require(lines.first { $0["plan"] != nil })
        #expect(explain["index"] == "by_station_time")
        // Both conditions are guaranteed by the key range: nothing is left to re-check.
        #expect(explain["filter"] == [] && explain["covering"] == false)
        let hits = lines.filter { $0["score"] != nil }
        #expect(hits.count == 2 && hits.allSatisfy { if case .double(let s)? = $0["score"] { s < 0 } else { false } })
        #expect(lines.contains { $0["ok"] == true && $0["missing_entries"] == 0 })
        #expect(lines.contains { ($0["key"]).map { "\($0)".hasPrefix("\"departure(station: \\\"Perth\\\"") } ?? false })
        // The same database is reused, not rebuilt.
        let again = try kvrepl(["--demo", db, "--json", "-c", "count stations"])
        #expect(try jsonLines(again.stdout) == [["count": 60]])
    }

    /// Driven by Tests/python/interactive_kvrepl.py, which needs Python's `pty` module.
    @Test(.requires(.python))
    func anInteractiveSessionThroughAPseudoTerminal() throws {
        let dir = TemporaryDirectory("kvrepl-test")
        let r = try runPython(
            "Tests/python/interactive_kvrepl.py", [try kvreplBinary(), dir.child("db"), dir.child("history")])
        #expect(r.contains("interactive session ok"), "\(r)")
    }
}

@Suite struct KVReplExplainScanTests {
    @Test func explainMarksAFullScanWithItsDocumentsAndASuggestion() throws {
        let dir = TemporaryDirectory("kvrepl-explain")
        let demo = dir.child("demo")
        var r = try kvrepl(["--demo", demo, "-c", #"explain find stations where description = "x""#])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(
            r.stdout.contains("SCAN, a full scan of every document (no usable index), reads 60 documents"),
            "\(r.stdout)")
        #expect(
            r.stdout.contains(
                #"suggestion: declare an index on (description): {"name": "by_description", "fields": ["description"]}"#
            ), "\(r.stdout)")
        r = try kvrepl([
            demo, "--json", "-c", #"explain find stations where description = "x""#, "-c",
            "explain find stations where zone = 1"
        ])
        let lines = try jsonLines(r.stdout)
        #expect(lines.count == 2)
        #expect(lines.first?["scanned_documents"] == 60)
        #expect(lines.first?["index"] == .null)
        #expect(lines.last?["scanned_documents"] == .null)
        #expect(lines.last?["suggestion"] == .null)
    }
}
