import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@testable import KVReplCore

/// The command table is the one place a command is declared: names, help, completion, the
/// read-only checks and dispatch come from it, and the commands of registered index kinds
/// join it.
@Suite struct CommandTableTests {
    static let schema = #"""
        {"collections": {"words": {"primaryKey": "id",
          "indexes": [{"name": "by_length", "type": "length", "fields": ["word"]}]}}}
        """#

    init() throws { try IndexKindRegistry.register(LengthIndexKind()) }

    @Test func everyCommandHasOneDefinitionWithUsageAndHelp() throws {
        let names = CommandTable.all.flatMap { [$0.name] + $0.aliases }
        #expect(Set(names).count == names.count, "a name or alias declared twice: \(names)")
        for c in CommandTable.builtIn {
            #expect(c.usage.hasPrefix(c.name), "\(c.name): usage \(c.usage)")
            #expect(!c.summary.isEmpty, "\(c.name)")
            #expect(try CommandTable.helpText(c.name).hasPrefix(c.usage + "\n  " + c.summary))
            #expect(try CommandTable.helpText(nil).contains(c.usage), "\(c.name) missing from help")
        }
        // Aliases reach their command.
        #expect(try ShellCommand.parse("mode csv") == .format(.some(.csv)))
        #expect(try ShellCommand.parse("exit") == .quit)
        #expect(try CommandTable.helpText("mode").hasPrefix("format [table|line|json|jsonl|csv|text]"))
    }

    @Test func aRegisteredKindsCommandParsesRunsAndHasHelpAndCompletion() throws {
        let dir = TemporaryDirectory("kvrepl-kind")
        let file = dir.child("schema.json")
        try Data(Self.schema.utf8).write(to: URL(fileURLWithPath: file))
        let s = try CapturedSession(path: dir.child("db"), schemaFile: file)
        for (id, word) in [("a", "abc"), ("b", "xy"), ("c", "abcd"), ("d", "xyz"), ("e", "abcdef")] {
            #expect(s.session.run(#"insert words {"id": "\#(id)", "word": "\#(word)"}"#) == .ok, "\(s.err)")
        }
        s.out = []
        #expect(s.session.run("lengths words 3 4") == .ok, "\(s.err)")
        #expect(
            s.out == [
                #"{"id":"a","word":"abc"}"#, #"{"id":"d","word":"xyz"}"#, #"{"id":"c","word":"abcd"}"#
            ])
        s.out = []
        #expect(s.session.run(#"lengths words 2 10 using by_length where word prefix "abc" limit 2 offset 1"#) == .ok)
        #expect(s.out == [#"{"id":"c","word":"abcd"}"#, #"{"id":"e","word":"abcdef"}"#])

        // The kind's run checks its values; the shell's parser checks the clauses.
        s.err = []
        #expect(s.session.run(#"lengths words "3" 4"#) == .failed)
        #expect(s.err.last?.hasPrefix("error: lengths takes two integers, MIN and MAX") == true, "\(s.err)")
        #expect(s.session.run("lengths words 3") == .failed)
        #expect(s.err.last?.contains("expected MAX (a JSON literal)") == true, "\(s.err)")
        #expect(s.session.run("lengths words 1 2 limit 1 limit 2") == .failed)
        #expect(s.err.last?.contains("limit is given twice") == true, "\(s.err)")

        // Help and completion come from the kind's declaration.
        #expect(
            try CommandTable.helpText("lengths")
                == "lengths COLLECTION MIN MAX [using INDEX] [where …] [limit N] [offset N]\n  the documents whose indexed string has a UTF-8 length in [MIN, MAX]"
        )
        #expect(s.session.completions(for: "len", line: "len") == ["lengths"])
        #expect(s.session.completions(for: "w", line: "lengths w") == ["words"])
        #expect(s.session.completions(for: "", line: "lengths words 1 2 using ") == ["by_length"])
        // The kind's indexes are listed with the others.
        s.out = []
        #expect(s.session.run("indexes words") == .ok)
        #expect(s.out == [#"by_length: length({"fields":["word"]})"#])
        // A kind's command only reads.
        #expect(try ShellCommand.parse("lengths words 1 2")?.isWrite == false)
    }

    @Test func aKindsCommandPrintsItsRowsAsJSONLinesWithJSON() throws {
        let dir = TemporaryDirectory("kvrepl-kind")
        let file = dir.child("schema.json")
        try Data(Self.schema.utf8).write(to: URL(fileURLWithPath: file))
        let session = try ShellSession.open(path: dir.child("db"), create: true, json: true, schemaFile: file)
        defer { session.close() }
        var out: [String] = []
        session.out = { out.append($0) }
        #expect(session.run(#"insert words {"id": 1, "word": "kvdocs"}"#) == .ok)
        out = []
        #expect(session.run("lengths words 0 100") == .ok)
        #expect(out == [#"{"id":1,"word":"kvdocs"}"#])
    }

    @Test func completionComesFromTheDefinitions() throws {
        let dir = TemporaryDirectory("kvrepl-complete")
        let s = try CapturedSession(path: dir.child("db"), schemaFile: try schemaFile(in: dir))
        #expect(s.session.run(#"put user:1 x"#) == .ok)
        #expect(s.session.completions(for: "fi", line: "fi") == ["find"])
        #expect(s.session.completions(for: "p", line: "find p") == ["people"])
        #expect(s.session.completions(for: "o", line: "find people o") == ["order", "offset"])
        #expect(s.session.completions(for: "o", line: "sync o") == ["on", "off"])
        #expect(s.session.completions(for: "", line: "explain ") == ["find", "near", "knn"])
        #expect(s.session.completions(for: "p", line: "explain find p") == ["people"])
        #expect(s.session.completions(for: "", line: "reindex people ") == ["by_age"])
        #expect(s.session.completions(for: "user", line: "get user") == ["user:1"])
        #expect(s.session.completions(for: "--k", line: "scan --k") == ["--keys-only"])
        #expect(s.session.completions(for: "sc", line: "help sc") == ["scan", "schema"])
        #expect(s.session.completions(for: "c", line: "format c") == ["csv"])
    }
}
