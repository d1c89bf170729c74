import Foundation
import KVDocs
import KVDocsTestSupport
import KVReplCore
import Testing

/// kvrepl's command line as the README documents it: `--format text` (the default), a
/// command written after PATH, and a command's help from the command line.
@Suite struct KVReplCommandLineTests {
    @Test func formatTextIsAcceptedAndIsTheDefault() throws {
        let dir = TemporaryDirectory("kvrepl-cli")
        let db = dir.child("db")
        #expect(try kvrepl([db, "--create", "-c", #"put a "one""#]).status == 0)
        let plain = try kvrepl([db, "-c", "get a"])
        let text = try kvrepl([db, "--format", "text", "-c", "get a"])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout == plain.stdout && text.stdout == "one\n")
        let bogus = try kvrepl([db, "--format", "bogus", "-c", "get a"])
        #expect(bogus.status == 2)
        #expect(bogus.stderr.contains("--format takes table, line, json, jsonl, csv or text, not \"bogus\""))
        // --json and --format stay exclusive, text included.
        #expect(try kvrepl([db, "--json", "--format", "text", "-c", "get a"]).status == 2)
    }

    @Test func wordsAfterThePathAreOneMoreCommand() throws {
        let dir = TemporaryDirectory("kvrepl-cli")
        let db = dir.child("db")
        var r = try kvrepl([db, "--create", "put", "k", "two words"])
        #expect(r.status == 0, "\(r.stderr)")
        r = try kvrepl([db, "--json", "get", "k"])
        #expect(
            try jsonLines(r.stdout) == [
                ["key": "k", "key_hex": "6b", "value": "two words", "value_hex": "74776f20776f726473"]
            ])
        // After the -c commands, and options after the command word are the command's.
        r = try kvrepl([db, "-c", "put j 1", "scan", "--keys-only"])
        #expect(r.status == 0 && r.stdout == "OK\n\"j\"\n\"k\"\n", "\(r.stdout) \(r.stderr)")
        // A failing command sets the exit status as with -c.
        r = try kvrepl([db, "get", "missing"])
        #expect(r.status == 1 && r.stderr.contains("key not found"))
    }

    @Test func aCommandsHelpPrintsFromTheCommandLine() throws {
        let dir = TemporaryDirectory("kvrepl-cli")
        let db = dir.child("db")
        #expect(try kvrepl([db, "--create", "-c", "put a 1"]).status == 0)
        let expected = try ShellCommand.help("serve") + "\n"
        for arguments in [[db, "serve", "--help"], ["serve", "--help"], [db, "help", "serve"], ["serve", "-h"]] {
            let r = try kvrepl(arguments)
            #expect(r.status == 0 && r.stdout == expected, "\(arguments): \(r.stdout) \(r.stderr)")
        }
        // kvrepl's own help still describes kvrepl.
        let own = try kvrepl(["--help"])
        #expect(own.status == 0 && own.stdout.hasPrefix("OVERVIEW: Inspect and query a LevelDB database"))
    }
}
