import Foundation
import KVDocs
import Testing

@testable import KVReplCore

@Suite struct LiteralTests {
    func key(_ text: String) throws -> [UInt8] {
        var s = LineScanner(text)
        return try s.keyLiteral()
    }

    @Test func keyLiteralsOfEveryForm() throws {
        #expect(try key("hello") == Array("hello".utf8))
        #expect(try key("\"quoted text\"") == Array("quoted text".utf8))
        #expect(
            try key(#""a\nb\tc\"d\\e\x00\xff""#) == [0x61, 0x0A, 0x62, 0x09, 0x63, 0x22, 0x64, 0x5C, 0x65, 0x00, 0xFF])
        #expect(try key("0x68656c6c6f") == Array("hello".utf8))
        #expect(try key("0x") == [])
        #expect(try key("\"\"") == [])
        #expect(try key(#"("dep", "Perth", 1700000000)"#) == Tuple(["dep", "Perth", 1700000000]).encoded)
        #expect(
            try key(#"("a", -1.5, true, false, null, 0x00ff, ("nested", 1), 18446744073709551615)"#)
                == Tuple(["a", -1.5, true, false, nil, .bytes([0, 0xFF]), .tuple(["nested", 1]), .uint(.max)]).encoded)
        #expect(try key("()") == [])
        #expect(try key("(\"x\",)") == Tuple(["x"]).encoded)
    }

    @Test(arguments: [
        ("\"unterminated", "column 1: unterminated string (missing closing \")"),
        ("0x123", "column 1: invalid hex bytes \"0x123\": expected 0x followed by pairs of hex digits"),
        ("0xzz", "column 1: invalid hex bytes \"0xzz\": expected 0x followed by pairs of hex digits"),
        (#""\q""#, #"column 2: unknown escape \q (use \n, \t, \r, \0, \", \\ or \xHH)"#),
        (#""\x4""#, #"column 2: \x needs two hex digits"#),
        ("(1, 2", "column 1: unterminated tuple (missing \")\")"),
        ("(1 2)", "column 4: expected \",\" or \")\" in a tuple"),
        (
            "(perth)",
            "column 2: unexpected \"perth\" in a tuple: expected a string, an integer, a decimal, true, false, null, 0x… bytes or a nested tuple"
        ),
        (#"("\xff")"#, "column 2: a tuple string must be UTF-8; use 0x… for bytes"),
        ("", "column 1: expected a key")
    ])
    func malformedLiteralsNameWhatWasExpected(text: String, message: String) {
        do {
            _ = try key(text)
            Issue.record("accepted \(text)")
        } catch let e as ShellCommandError {
            #expect(e.description == message)
        } catch {
            Issue.record("\(error)")
        }
    }
}

@Suite struct CommandParserTests {
    @Test func rawCommands() throws {
        #expect(try ShellCommand.parse("get k") == .get(Array("k".utf8)))
        #expect(try ShellCommand.parse("GET 0x00") == .get([0]))
        #expect(try ShellCommand.parse("put k hello world") == .put(Array("k".utf8), Array("hello world".utf8)))
        #expect(try ShellCommand.parse(#"put k {"a": 1}"#) == .put(Array("k".utf8), Array(#"{"a": 1}"#.utf8)))
        #expect(try ShellCommand.parse(#"put ("t", 1) "v w""#) == .put(Tuple(["t", 1]).encoded, Array("v w".utf8)))
        #expect(try ShellCommand.parse("put k 0x0001") == .put(Array("k".utf8), [0, 1]))
        #expect(try ShellCommand.parse("del \"a b\"") == .del(Array("a b".utf8)))
        var o = ShellCommand.ScanOptions()
        o.prefix = Array("user:".utf8)
        o.from = Array("user:5".utf8)
        o.to = Array("user:9".utf8)
        o.reverse = true
        o.limit = 10
        o.keysOnly = true
        o.count = true
        #expect(
            try ShellCommand.parse("scan user: --from user:5 --to user:9 --reverse --limit 10 --keys-only --count")
                == .scan(o))
        #expect(try ShellCommand.parse("scan") == .scan(ShellCommand.ScanOptions()))
        #expect(
            try ShellCommand.parse("delrange --from a --to b")
                == .delrange(
                    {
                        var d = ShellCommand.ScanOptions()
                        d.from = [0x61]
                        d.to = [0x62]
                        return d
                    }()))
        #expect(try ShellCommand.parse("stats") == .stats)
        #expect(try ShellCommand.parse("property leveldb.stats") == .property("leveldb.stats"))
        #expect(try ShellCommand.parse("size --from a") == .size(from: [0x61], to: nil))
        #expect(try ShellCommand.parse("compact") == .compact(from: nil, to: nil))
        #expect(try ShellCommand.parse("snapshot") == .snapshot)
        #expect(try ShellCommand.parse("release") == .release)
        #expect(try ShellCommand.parse("dump /tmp/x.jsonl") == .dump("/tmp/x.jsonl"))
        #expect(try ShellCommand.parse("load \"/tmp/a b.jsonl\"") == .load("/tmp/a b.jsonl"))
        #expect(try ShellCommand.parse("keyspaces") == .keyspaces)
        #expect(try ShellCommand.parse("keyspaces load k.json") == .keyspacesLoad("k.json"))
        #expect(try ShellCommand.parse("sync") == .sync(nil))
        #expect(try ShellCommand.parse("sync on") == .sync(true))
        #expect(try ShellCommand.parse("SYNC Off") == .sync(false))
        #expect(try ShellCommand.parse("repair") == .repair)
        #expect(ShellCommand.repair.isWrite && !ShellCommand.sync(true).isWrite)  // sync on|off is allowed read-only
        #expect(try ShellCommand.parse("help") == .help(nil))
        #expect(try ShellCommand.parse("help scan") == .help("scan"))
        #expect(try ShellCommand.parse("quit") == .quit)
        #expect(try ShellCommand.parse("") == nil)
        #expect(try ShellCommand.parse("   # a comment") == nil)
    }

    @Test func documentCommands() throws {
        #expect(try ShellCommand.parse("schema") == .schema)
        #expect(try ShellCommand.parse("schema load s.json") == .schemaLoad("s.json"))
        #expect(try ShellCommand.parse("collections") == .collections)
        #expect(try ShellCommand.parse("indexes people") == .indexes("people"))
        #expect(
            try ShellCommand.parse(#"insert people {"id": "p1", "tags": ["a b", "c"]}"#)
                == .insert("people", ["id": "p1", "tags": ["a b", "c"]]))
        #expect(try ShellCommand.parse(#"upsert people {"id": 2}"#) == .upsert("people", ["id": 2]))
        #expect(try ShellCommand.parse(#"doc people "p1""#) == .doc("people", "p1"))
        #expect(try ShellCommand.parse("remove people 7") == .remove("people", 7))
        #expect(try ShellCommand.parse("import people in.jsonl") == .importFile("people", "in.jsonl"))
        #expect(try ShellCommand.parse("export people out.jsonl") == .exportFile("people", "out.jsonl"))
        let q = DocumentQuery()
            .where("age", .greaterOrEqual(30)).where("address.city", .equal("Perth")).where(
                "tags[]", .in(["a", 2, nil])
            )
            .where("name", .prefix("Jo")).where("x", .notEqual(1.5)).where("y", .less(-1)).where(
                "z", .lessOrEqual(true)
            ).where("w", .greater([1]))
            .orderBy("age", descending: true).limit(10).offset(5)
        #expect(
            try ShellCommand.parse(
                #"find people where age >= 30 and address.city = "Perth" and tags[] in ("a", 2, null) and name prefix "Jo" and x != 1.5 and y < -1 and z <= true and w > [1] order by age desc limit 10 offset 5"#
            )
                == .find("people", q))
        #expect(
            try ShellCommand.parse("find people where age>30")
                == .find("people", DocumentQuery().where("age", .greater(30))))
        #expect(
            try ShellCommand.parse("find people order by name asc") == .find("people", DocumentQuery().orderBy("name")))
        #expect(
            try ShellCommand.parse("count people where zone = 1")
                == .count("people", DocumentQuery().where("zone", .equal(1))))
        #expect(
            try ShellCommand.parse("explain find people where age = 3")
                == .explain("people", DocumentQuery().where("age", .equal(3))))
        #expect(
            try ShellCommand.parse(#"search notes "\"night express\" OR perth" limit 5 highlight"#)
                == .search("notes", #""night express" OR perth"#, limit: 5, highlight: true))
        #expect(
            try ShellCommand.parse(#"search notes 'say "hi"' limit 2"#)
                == .search("notes", #"say "hi""#, limit: 2, highlight: false))
        #expect(try ShellCommand.parse("search notes perth") == .search("notes", "perth", limit: nil, highlight: false))
        #expect(try ShellCommand.parse("terms notes") == .terms("notes", index: nil, prefix: "", limit: nil))
        #expect(
            try ShellCommand.parse(#"terms notes body_text "st" limit 3"#)
                == .terms("notes", index: "body_text", prefix: "st", limit: 3))
        #expect(
            try ShellCommand.parse("terms notes body_text tr")
                == .terms("notes", index: "body_text", prefix: "tr", limit: nil))
        #expect(try ShellCommand.parse("verify") == .verify(nil))
        #expect(try ShellCommand.parse("verify people") == .verify("people"))
        #expect(try ShellCommand.parse("reindex people by_age") == .reindex("people", "by_age"))
        #expect(try ShellCommand.parse("optimize notes") == .optimize("notes", nil))
        #expect(try ShellCommand.parse("optimize notes body_text") == .optimize("notes", "body_text"))
        #expect(try ShellCommand.parse("optimize notes")?.isWrite == true)
        #expect(try ShellCommand.parse("salvage") == .salvage(quarantine: nil))
        #expect(try ShellCommand.parse("salvage lost_docs") == .salvage(quarantine: "lost_docs"))
        #expect(try ShellCommand.parse("salvage").map(\.isWrite) == true)
        #expect(try ShellCommand.parse("changes since 5 limit 3") == .changes(since: 5, limit: 3))
    }

    @Test(arguments: [
        ("frobnicate", "column 1: unknown command \"frobnicate\"; try: help"),
        ("get", "column 4: expected a key"),
        ("put k", "column 6: expected a value after the key"),
        ("scan --limit x", "column 14: expected a number after --limit (a non-negative integer)"),
        (
            "scan --bogus",
            "column 13: unknown option --bogus; expected --from, --to, --reverse, --limit, --keys-only or --count"
        ),
        ("size --reverse", "column 15: unknown option --reverse; expected --from or --to"),
        ("insert people", "column 14: expected a JSON document"),
        (
            "insert people {\"id\": ",
            "column 15: expected a JSON document, found {\"id\":  (invalid JSON at line 1, column 8 (byte 7): unexpected end of input (expected a value), in id)"
        ),
        ("find people where age ~ 3", "column 23: unknown operator \"~\"; expected = != < <= > >= prefix in"),
        ("find people where age in 1", "column 26: expected \"(\" after in: in (v1, v2)"),
        ("find people where age = ", "column 25: expected a JSON value after ="),
        ("find people order age", "column 19: expected \"by\" after order"),
        ("find people limit -1", "column 19: expected the limit (a non-negative integer)"),
        ("find people sideways", "column 13: unexpected \"sideways\": expected where, and, order by, limit or offset"),
        (
            "explain people",
            "column 9: expected \"find\", \"near\" or \"knn\" after explain (explain find COLLECTION …, explain near COLLECTION …, explain knn COLLECTION …)"
        ),
        ("search notes", "column 13: expected a search query (quoted)"),
        ("search notes \"x\" sometimes", "column 18: expected \"limit N\" or \"highlight\""),
        ("changes until 3", "column 9: expected \"since SEQ\" or \"limit N\""),
        ("get a b", "unexpected \"b\" after get (see: help get)"),
        ("stats now", "unexpected \"now\" after stats (see: help stats)"),
        ("sync maybe", "column 6: expected on or off after sync, not \"maybe\""),
        ("sync on off", "unexpected \"off\" after sync (see: help sync)"),
        ("repair --yes", "unexpected \"--yes\" after repair (see: help repair)")
    ])
    func malformedCommandsGiveOneLineErrors(line: String, message: String) {
        do {
            _ = try ShellCommand.parse(line)
            Issue.record("accepted \(line)")
        } catch let e as ShellCommandError {
            #expect(e.description == message)
            #expect(!e.description.contains("\n"))
        } catch {
            Issue.record("\(error)")
        }
    }
}

@Suite struct CommandErrorLineTests {
    /// Found by fuzzing: `kvrepl -c $'rei\nndex'` printed a two-line error.
    @Test func aCommandWithALineBreakIsRejectedOnOneLine() {
        do {
            _ = try ShellCommand.parse("rei\nndex people")
            Issue.record("parsed a command with a line break in its name")
        } catch let error as ShellCommandError {
            #expect(error.description == "column 1: unknown command \"rei\\nndex\"; did you mean reindex? (try: help)")
        } catch {
            Issue.record("\(error)")
        }
    }
}
