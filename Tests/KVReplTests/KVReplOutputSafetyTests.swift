import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@testable import KVReplCore

/// Stored data cannot drive the terminal or the spreadsheet that shows kvrepl's output, and
/// `find` prints its rows as it reads them.
@Suite struct KVReplOutputSafetyTests {
    /// Retitles the window, rings, clears the screen and returns to the start of the line.
    static let attack = "x \u{1B}]0;PWNED\u{7}\u{1B}[2J\r pwned \u{9B}2J \u{7F} \u{2028}"

    /// A store whose ids, field names, values, text index (trigram) and change feed hold
    /// control characters.
    static func hostileStore(_ dir: TemporaryDirectory) throws -> String {
        let path = dir.child("db")
        let schema =
            #"{"collections": {"c": {"primaryKey": "id", "text": [{"name": "t", "fields": ["s"], "tokenizer": "trigram"}]}}}"#
        let db = try LevelDB(path: path)
        defer { db.close() }
        let store = try DocumentStore(database: db, schema: try DocumentSchema(json: Data(schema.utf8)))
        try store.collection("c").insert([
            "id": .string("a\u{1B}[2J"), "s": .string(attack), "\u{1B}[31mfield": .string("\r=cmd")
        ])
        try store.collection("c").insert(["id": "b", "s": "pwned plain"])
        return path
    }

    /// The scalars a terminal may act on (``ShellDisplay/isControl(_:)``), but line feeds, tabs
    /// and, in CSV, the CR of each CRLF record end.
    static func rawControls(_ text: String, csv: Bool = false) -> [String] {
        let scalars = Array(text.unicodeScalars)
        return scalars.indices.compactMap { i in
            let s = scalars[i]
            guard ShellDisplay.isControl(s), s != "\n", s != "\t" else { return nil }
            if csv, s == "\r", i + 1 < scalars.count, scalars[i + 1] == "\n" { return nil }
            return String(format: "U+%04X at %d", s.value, i)
        }
    }

    @Test(arguments: [
        [], ["--json"], ["--format", "line"], ["--format", "csv"], ["--format", "table"], ["--format", "json"],
        ["--format", "jsonl"]
    ])
    func storedControlCharactersReachNoOutputFormatRaw(mode: [String]) throws {
        let dir = TemporaryDirectory("kvrepl-safety")
        let db = try Self.hostileStore(dir)
        let r = try kvrepl(
            [db] + mode + [
                "-c", "find c", "-c", #"doc c "a\u001b[2J""#, "-c", #"search c "pwned" highlight"#,
                "-c", "changes", "-c", "terms c t limit 100", "-c", "scan --limit 5"
            ])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("pwned"), "\(r.stdout)")
        #expect(Self.rawControls(r.stdout, csv: mode.last == "csv") == [], "\(mode):\n\(r.stdout)")
        #expect(Self.rawControls(r.stderr) == [])
    }

    /// JSON output stays JSON: the escapes read back as the stored strings.
    @Test func jsonOutputEscapesTheControlsJSONLeavesAsTheyAre() throws {
        let row: JSONValue = ["s": .string(Self.attack)]
        for text in [OutputFormat.jsonl.render([row]), OutputFormat.json.render([row]), ShellDisplay.compactJSON(row)] {
            #expect(Self.rawControls(text) == [], "\(text)")
            #expect(try JSONValue(parsing: text) == row)
        }
        #expect(OutputFormat.jsonl.render([["s": "\u{9B}\u{7F}\u{2028}"]]) == #"{"s":"\u009b\u007f\u2028"}"#)
    }

    @Test func lineAndTableShowControlCharactersAsEscapes() {
        let row: JSONValue = ["id": "a\u{1B}[2J", "\r=x": "1\n2\t3"]
        #expect(OutputFormat.line.render([row], leading: ["id"]) == "  id = a\\u{1b}[2J\n\\r=x = 1\\n2\\t3")
        let table = OutputFormat.table.render([row], leading: ["id"])
        #expect(table.contains("| a\\u{1b}[2J | 1\\n2\\t3 |"), "\(table)")
        #expect(Self.rawControls(table) == [])
    }

    /// OWASP's advice against formula injection: a text cell starting with `=`, `+`, `-`,
    /// `@`, a tab or a carriage return gets a `'`; a JSON number does not (`-5` is a number
    /// to a spreadsheet, not a formula), but the text "-5" does.
    @Test func csvPrefixesTextCellsThatStartLikeAFormulaButNotNumbers() {
        let row: JSONValue = [
            "a": "=1+1", "b": "+x", "c": "-x", "d": "@SUM(A1)", "e": "\tx", "f": "\rx", "g": -5, "h": "-5", "i": -1.5,
            "j": "ok=", "k": "x@y",
            "=head": "plain"
        ]
        let csv = OutputFormat.csv.render([row])
        let lines = csv.components(separatedBy: "\r\n")
        #expect(lines.count == 3 && lines[2] == "", "\(csv)")
        #expect(lines[0] == "'=head,a,b,c,d,e,f,g,h,i,j,k")
        #expect(lines[1] == "plain,'=1+1,'+x,'-x,'@SUM(A1),'\tx,'\\rx,-5,'-5,-1.5,ok=,x@y", "\(csv)")
    }

    /// Interactively, search shows its matches in bold: the only escape sequences are the
    /// bold it adds.
    @Test func anInteractiveSearchAddsBoldAroundMatchesAndNoStoredEscape() throws {
        let dir = TemporaryDirectory("kvrepl-safety")
        let s = try CapturedSession(path: try Self.hostileStore(dir), create: false)
        s.session.interactive = true
        #expect(s.session.run(#"search c "pwned" highlight"#) == .ok, "\(s.err)")
        let text = s.out.joined(separator: "\n")
        #expect(text.contains("\u{1B}[1mpwned\u{1B}[0m"), "\(text)")
        let stripped = text.replacingOccurrences(of: "\u{1B}[1m", with: "").replacingOccurrences(
            of: "\u{1B}[0m", with: "")
        #expect(Self.rawControls(stripped) == [], "\(text)")
        #expect(stripped.contains("\\u{1b}]0;"))
    }

    // MARK: - Streaming find

    /// A store of `count` documents whose last one (by primary key) is damaged: a `find`
    /// that gathered its rows would print none of them before failing on it.
    static func storeWithDamagedLastDocument(_ dir: TemporaryDirectory, count: Int) throws -> String {
        let path = dir.child("db")
        let db = try LevelDB(path: path)
        defer { db.close() }
        let store = try DocumentStore(
            database: db, schema: try DocumentSchema(json: Data(#"{"collections": {"c": {"primaryKey": "id"}}}"#.utf8)))
        for i in 0..<count { try store.collection("c").insert(["id": .int(Int64(i)), "n": .int(Int64(i * 10))]) }
        try db.put(Tuple(["d", "c", .int(Int64(count - 1))]), Array("{broken".utf8))
        return path
    }

    /// Each row is printed as the scan reaches it: the rows before a damaged document are
    /// out before the error is met.
    @Test(arguments: [[], ["--json"], ["--format", "line"], ["--format", "json"], ["--format", "jsonl"]])
    func findPrintsEachRowBeforeReadingTheNext(mode: [String]) throws {
        let dir = TemporaryDirectory("kvrepl-stream")
        let db = try Self.storeWithDamagedLastDocument(dir, count: 5)
        let r = try kvrepl([db] + mode + ["-c", "find c"])
        #expect(r.status == 1)
        #expect(
            r.stderr.contains("{broken") || r.stderr.contains("not valid JSON") || r.stderr.contains("corrupt"),
            "\(r.stderr)")
        for i in 0..<4 { #expect(r.stdout.contains("\(i * 10)"), "row \(i) of \(mode):\n\(r.stdout)") }
    }

    /// `table` and `csv` read the snapshot twice (the first time for the columns and widths)
    /// and print each row on its own: the output is the one the rows rendered together give.
    @Test(arguments: [OutputFormat.table, .csv, .line, .jsonl])
    func findPrintsRowByRowInEveryFormatAndAsTheWholeWouldRender(format: OutputFormat) throws {
        let dir = TemporaryDirectory("kvrepl-stream")
        let s = try CapturedSession(path: dir.child("db"), schemaFile: try schemaFile(in: dir))
        for i in 0..<6 {
            let row: JSONValue =
                i == 3
                ? ["id": .string("p\(i)"), "age": .int(Int64(i)), "late": "a longer field"]
                : ["id": .string("p\(i)"), "age": .int(Int64(i))]
            #expect(s.session.run("insert people \(row.compactDescription)") == .ok, "\(s.err)")
        }
        let rows = try #require(s.session.store).read { try $0.find("people") }
        s.out.removeAll()
        s.session.format = format
        #expect(s.session.run("find people") == .ok, "\(s.err)")
        let framing = format == .table ? 2 : format == .csv ? 1 : 0
        #expect(s.out.count == rows.count + framing, "\(s.out)")
        // Each piece goes out as a line (`out` adds its LF; CSV's records carry their CR).
        let rendered = format.render(rows, leading: ["id"])
        let expected = format == .csv ? String(String.UnicodeScalarView(rendered.unicodeScalars.dropLast())) : rendered
        #expect(s.out.joined(separator: "\n") == expected)
    }
}
