import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@testable import KVReplCore

/// Output formats like sqlite3's `.mode` (table, line, json, jsonl, csv), `timer`, and the
/// "did you mean" suggestion for a mistyped command; `--json` unchanged.
@Suite struct KVReplFormatTests {
    static let rows: [JSONValue] = [
        ["name": "Ada", "id": 1, "tags": ["a", "b"], "note": .null],
        ["id": 2, "name": "a long name that is much longer than forty characters, surely", "extra": true],
        ["id": 3, "name": "two\nlines"]
    ]

    @Test func aTableAlignsColumnsLeadsWithTheGivenOnesAndCutsLongValues() {
        let table = OutputFormat.table.render(Self.rows, leading: ["id"])
        let rule = "+----+" + String(repeating: "-", count: 42) + "+------+-----------+-------+"
        let expected = [
            rule,
            "| id | name" + String(repeating: " ", count: 36) + " | note | tags      | extra |",
            rule,
            "| 1  | Ada" + String(repeating: " ", count: 37) + " |      | [\"a\",\"b\"] |       |",
            "| 2  | a long name that is much longer than fo… |      |           | true  |",
            "| 3  | two\\nlines" + String(repeating: " ", count: 30) + " |      |           |       |",
            rule
        ]
        #expect(table == expected.joined(separator: "\n"), "\n\(table)")
        let lines = table.split(separator: "\n").map(String.init)
        #expect(lines.count == 7)
        #expect(Set(lines.map(\.count)).count == 1, "every line has the same width:\n\(table)")
        #expect(lines[1].hasPrefix("| id | name "))
        #expect(lines[4].contains("a long name that is much longer than fo…"))
        #expect(lines[5].contains("two\\nlines"))
        #expect(lines[3].contains("[\"a\",\"b\"]"))
        #expect(!lines[3].contains("null"))
    }

    @Test func lineModePrintsOneFieldPerLineWithABlankLineBetweenResults() {
        let text = OutputFormat.line.render([["id": 1, "name": "Ada"], ["id": 2, "score": 1.5]], leading: ["id"])
        #expect(text == "  id = 1\nname = Ada\n\n   id = 2\nscore = 1.5")
    }

    @Test func jsonIsPrettyAndJSONLinesIsCompact() throws {
        let rows: [JSONValue] = [["id": 1, "a": ["b": 2]], ["id": 2]]
        #expect(OutputFormat.jsonl.render(rows) == "{\"a\":{\"b\":2},\"id\":1}\n{\"id\":2}")
        let pretty = OutputFormat.json.render(rows)
        #expect(pretty == ShellDisplay.prettyJSON(rows[0]) + "\n" + ShellDisplay.prettyJSON(rows[1]))
        #expect(try JSONValue(parsing: ShellDisplay.prettyJSON(rows[0])) == rows[0])
        #expect(ShellDisplay.prettyJSON(rows[0]).contains("\n"))
    }

    /// Random rows of awkward strings (commas, quotes, CR, LF, CRLF, Unicode, empty), read
    /// back by Python's csv module: the same header and cells.
    @Test(.requires(.python))
    func csvReadsBackThroughPythonsCSVModuleCellForCell() throws {
        var rng = SystemRandomNumberGenerator()
        let pieces = ["a", ",", "\"", "\n", "\r\n", "\r", " ", "é", "e\u{301}", "💡", "x,y", "\"q\"", ""]
        var rows: [JSONValue] = []
        for i in 0..<60 {
            var o: JSONObject = ["id": .int(Int64(i))]
            for field in ["f1", "f,2", "f\"3"] where Bool.random(using: &rng) {
                o[field] = .string(
                    (0..<Int.random(in: 0...5, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined())
            }
            if i % 7 == 0 { o["n"] = .double(Double(i) / 3) }
            rows.append(.object(o))
        }
        let csv = OutputFormat.csv.render(rows, leading: ["id"])
        let columns = OutputFormat.columns(rows, leading: ["id"])
        // Cells as written: control characters but LF and tab escaped (a CR too), a `'`
        // before a text that starts like a formula (a CR piece does).
        func shown(_ text: String, guarded: Bool) -> String {
            let escaped = ShellDisplay.escaped(text, keeping: ["\n", "\t"])
            return guarded && (text.first == "\r" || text.first == "\r\n") ? "'" + escaped : escaped
        }
        let expected =
            [columns]
            + rows.map { row in
                columns.map {
                    shown(OutputFormat.cell(row, $0), guarded: !OutputFormat.isNumber(OutputFormat.value(row, $0)))
                }
            }
        let script = """
            import csv, io, json, sys
            data = sys.stdin.buffer.read().decode("utf-8")
            print(json.dumps(list(csv.reader(io.StringIO(data, newline="")))))
            """
        let parsed = try JSONValue(parsing: try runProcess(try referencePython(), ["-c", script], input: csv).stdout)
        guard case .array(let records) = parsed else {
            Issue.record("not an array: \(parsed)")
            return
        }
        #expect(records.count == expected.count)
        for (record, cells) in zip(records, expected) {
            #expect(record == .array(cells.map { .string($0) }), "\(record) vs \(cells)")
        }
        #expect(csv.hasSuffix("\r\n"))
    }

    @Test func theFormatAndTimerCommandsParse() throws {
        #expect(try ShellCommand.parse("format table") == .format(.some(.table)))
        #expect(try ShellCommand.parse("mode CSV") == .format(.some(.csv)))
        #expect(try ShellCommand.parse(".mode line") == .format(.some(.line)))
        #expect(try ShellCommand.parse("format text") == .format(.some(nil)))
        #expect(try ShellCommand.parse("format") == .format(nil))
        #expect(try ShellCommand.parse("timer on") == .timer(true))
        #expect(try ShellCommand.parse("timer") == .timer(nil))
        #expect(throws: ShellCommandError.self) { try ShellCommand.parse("format grid") }
        #expect(throws: ShellCommandError.self) { try ShellCommand.parse("timer maybe") }
    }

    @Test(arguments: [
        ("fnd", "find"), ("FIDN", "find"), ("serach", "search"), ("scna", "scan"), ("cont", "count"),
        ("replace-bsae", "replace-base"), ("indexs", "indexes"), ("colections", "collections"), ("nera", "near")
    ])
    func aMistypedCommandSuggestsTheNearestOne(typed: String, suggestion: String) {
        do {
            _ = try ShellCommand.parse("\(typed) stations")
            Issue.record("\(typed) parsed")
        } catch {
            #expect("\(error)".contains("did you mean \(suggestion)?"), "\(error)")
        }
    }

    @Test(arguments: ["xyzzy", "q", "selectstar", "findings", "clear", "ls"])
    func aWordFarFromEveryCommandGetsNoSuggestion(typed: String) {
        do {
            _ = try ShellCommand.parse(typed)
            Issue.record("\(typed) parsed")
        } catch {
            #expect(!"\(error)".contains("did you mean"), "\(error)")
            #expect("\(error)".contains("unknown command"), "\(error)")
        }
    }

    @Test func theShellPrintsResultsInTheChosenFormatAndJSONIsUnchanged() throws {
        let dir = TemporaryDirectory("kvrepl-format")
        let db = dir.child("demo")
        let find = "find stations where zone = 1 order by id limit 2"
        var r = try kvrepl(["--demo", db, "--format", "table", "-c", find])
        #expect(r.status == 0, "\(r.stderr)")
        let table = r.stdout.split(separator: "\n").map(String.init)
        #expect(table.count == 6)
        #expect(table.first?.hasPrefix("+--") == true)
        #expect(table[1].hasPrefix("| id "))
        #expect(table[3].hasPrefix("| CARLISLE "))
        #expect(table[4].hasPrefix("| CITY-WEST "))
        #expect(Set(table.map(\.count)).count == 1, "aligned:\n\(r.stdout)")

        // The rows of search and near are the documents hit, with their score or distance
        // after the primary key; terms lead with the term.
        r = try kvrepl([
            db, "--format", "jsonl", "-c", "search stations \"parking\" limit 2", "-c",
            "near stations (-31.9540, 115.8620) within 1500 limit 2"
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let hits = try jsonLines(r.stdout)
        #expect(hits.count == 4)
        #expect(hits.prefix(2).allSatisfy { $0["score"] != nil && $0["name"] != nil && $0["zone"] != nil })
        #expect(hits.suffix(2).allSatisfy { $0["distance"] != nil && $0["name"] != nil })
        #expect(hits[2]["id"] == "PERTH")
        r = try kvrepl([
            db, "--format", "csv", "-c", "search stations \"parking\" limit 2", "-c", "terms stations limit 2"
        ])
        let csvLines = r.stdout.unicodeScalars.split(separator: "\n").map { String(String.UnicodeScalarView($0)) }
        #expect(csvLines.count == 7, "\(r.stdout)")
        #expect(csvLines.allSatisfy { $0.hasSuffix("\r") || $0.hasSuffix(")") }, "CRLF records, the statistics line LF")
        #expect(csvLines.first?.hasPrefix("id,score,") == true, "\(r.stdout)")
        #expect(
            csvLines[0].hasSuffix(",zone\r") && csvLines[2].hasSuffix(",4\r"),
            "the last cell of the last record is kept:\n\(r.stdout)")
        #expect(csvLines[4].hasPrefix("term,documents"), "\(r.stdout)")
        // --json keeps search's {"id", "score"}.
        let searched = try jsonLines(try kvrepl([db, "--json", "-c", "search stations \"parking\" limit 2"]).stdout)
        #expect(
            searched.allSatisfy {
                if case .object(let o) = $0 { return Set(o.keys) == ["id", "score"] } else { return false }
            })

        // Switched inside the shell; messages stay text; CSV's header and records.
        r = try kvrepl([db, "-c", "format csv", "-c", find, "-c", "format jsonl", "-c", find, "-c", "count stations"])
        #expect(r.status == 0, "\(r.stderr)")
        let out = r.stdout.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).map {
            String(String.UnicodeScalarView($0))
        }
        #expect(out[0] == "results print as csv")
        #expect(out[1].hasPrefix("id,"))
        #expect(out[1].hasSuffix("\r"))
        #expect(out[4] == "results print as jsonl")
        let documents = try out[5...6].map { try JSONValue(parsing: $0) }
        #expect(documents.allSatisfy { $0["zone"] == 1 })
        #expect(out[7] == "{\"count\":\(try countStations(db))}")

        // --json: one compact object per result, whatever format the session chose.
        let plain = try kvrepl([db, "--json", "-c", find])
        let switched = try kvrepl([db, "--json", "-c", "format table", "-c", find])
        #expect(plain.stdout.split(separator: "\n").count == 2)
        #expect(
            switched.stdout.split(separator: "\n").dropFirst().joined(separator: "\n")
                == plain.stdout.trimmingCharacters(in: .newlines))
        #expect(try kvrepl([db, "--json", "--format", "table", "-c", find]).status == 2)
    }

    @Test func timerPrintsEachCommandsWallTime() throws {
        let dir = TemporaryDirectory("kvrepl-timer")
        let db = dir.child("demo")
        var r = try kvrepl([
            "--demo", db, "-c", "timer on", "-c", "count stations", "-c", "timer off", "-c", "count stations"
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        // Only the count while the timer was on (the shell's settings are not timed).
        #expect(lines.filter { $0.hasPrefix("Run Time: real ") && $0.hasSuffix(" s") }.count == 1)
        #expect(lines.firstIndex { $0.hasPrefix("Run Time") } == 2)
        #expect(lines.last?.hasPrefix("Run Time") == false)
        // With --json, the time goes to standard error as JSON; standard output stays results.
        r = try kvrepl([db, "--json", "-c", "timer on", "-c", "count stations"])
        #expect(try jsonLines(r.stdout).count == 2)
        #expect(try jsonLines(r.stdout).last?["count"] != nil)
        let times = try jsonLines(r.stderr)
        #expect(times.count == 1)
        if case .double(let s)? = times.first?["real_seconds"] {
            #expect(s >= 0)
        } else {
            Issue.record("no real_seconds: \(r.stderr)")
        }
    }

    func countStations(_ db: String) throws -> Int {
        let r = try kvrepl([db, "--json", "-c", "count stations"])
        guard case .int(let n)? = try jsonLines(r.stdout).first?["count"] else { return -1 }
        return Int(n)
    }
}
