import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@testable import KVReplCore

/// A session on a fresh database with one collection `c` (an index on `a.b`, a text
/// index on `t`), recording what it prints.
final class RecordingSession {
    let dir = TemporaryDirectory("kvrepl-test")
    let session: ShellSession
    var out: [String] = []
    var err: [String] = []

    init() throws {
        let schema = dir.child("schema.json")
        try Data(
            #"{"collections": {"c": {"primaryKey": "id", "indexes": [{"name": "by_ab", "fields": ["a.b"]}], "text": [{"name": "t_text", "fields": ["t"]}]}}}"#
                .utf8
        )
        .write(to: URL(fileURLWithPath: schema))
        session = try ShellSession.open(path: dir.child("db"), create: true, json: true, schemaFile: schema)
        session.out = { [unowned self] in self.out.append($0) }
        session.err = { [unowned self] in self.err.append($0) }
    }

    deinit { session.close() }

    /// Runs `line`, returning its output lines and error lines.
    @discardableResult
    func run(_ line: String) -> (outcome: ShellSession.Outcome, out: [String], err: [String]) {
        out = []
        err = []
        let outcome = session.run(line)
        return (outcome, out, err)
    }
}

@Suite struct NumericArgumentTests {
    static let max = "9223372036854775807"
    static let tooLarge = "99999999999999999999"

    @Test(arguments: [
        (
            "find c limit \(tooLarge)",
            "column 14: expected the limit (a non-negative integer), but \(tooLarge) is larger than the most allowed, \(Int.max)"
        ),
        (
            "find c offset 9223372036854775808",
            "column 15: expected the offset (a non-negative integer), but 9223372036854775808 is larger than the most allowed, \(Int.max)"
        ),
        (
            "changes since \(tooLarge)",
            "column 15: expected a sequence number (a non-negative integer), but \(tooLarge) is larger than the most allowed, \(Int.max)"
        ),
        (
            "changes limit +\(tooLarge)",
            "column 15: expected the limit (a non-negative integer), but +\(tooLarge) is larger than the most allowed, \(Int.max)"
        ),
        (
            "scan --limit \(tooLarge)",
            "column 14: expected a number after --limit (a non-negative integer), but \(tooLarge) is larger than the most allowed, \(Int.max)"
        ),
        (
            "search c x limit \(tooLarge)",
            "column 18: expected the limit (a non-negative integer), but \(tooLarge) is larger than the most allowed, \(Int.max)"
        ),
        ("find c limit -9223372036854775809", "column 14: expected the limit (a non-negative integer)"),
        ("find c offset -1", "column 15: expected the offset (a non-negative integer)"),
        ("changes since -1", "column 15: expected a sequence number (a non-negative integer)"),
        ("scan --limit +", "column 14: expected a number after --limit (a non-negative integer)")
    ])
    func numbersPastTheLimitsAreClearErrors(line: String, message: String) {
        do {
            _ = try ShellCommand.parse(line)
            Issue.record("accepted \(line)")
        } catch let e as ShellCommandError {
            #expect(e.description == message)
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test func theLargestNumbersParse() throws {
        #expect(
            try ShellCommand.parse("changes since \(Self.max) limit \(Self.max)") == .changes(since: .max, limit: .max))
        #expect(
            try ShellCommand.parse("find c limit \(Self.max) offset +\(Self.max)")
                == .find("c", DocumentQuery().limit(.max).offset(.max)))
        var o = ShellCommand.ScanOptions()
        o.limit = .max
        #expect(try ShellCommand.parse("scan --limit \(Self.max)") == .scan(o))
    }

    @Test func commandsWithTheLargestNumbersRunWithoutTrapping() throws {
        let s = try RecordingSession()
        for i in 1...3 {
            #expect(s.run(#"insert c {"id": \#(i), "a": {"b": \#(i)}, "t": "night train \#(i)"}"#).outcome == .ok)
        }
        #expect(s.run("changes since \(Self.max)") == (.ok, [], []))
        #expect(s.run("changes since \(Int64.max - 1) limit \(Self.max)") == (.ok, [], []))
        #expect(s.run("changes since 2 limit \(Self.max)").out.count == 1)
        #expect(s.run("find c limit \(Self.max) offset 1").out.count == 2)
        #expect(s.run("find c where a.b > 1 limit 1 offset \(Self.max)") == (.ok, [], []))
        #expect(
            s.run("find c where a.b > 1 order by a.b desc limit \(Self.max) offset 1").out == [
                #"{"a":{"b":2},"id":2,"t":"night train 2"}"#
            ])
        #expect(s.run("find c limit 1 offset \(Self.max)") == (.ok, [], []))
        #expect(s.run("count c where a.b >= 1 limit \(Self.max) offset \(Self.max)").out == [#"{"count":3}"#])
        #expect(s.run("search c night limit \(Self.max)").out.count == 3)
        #expect(s.run("search c 'NEAR(night train, \(Self.tooLarge))' limit \(Self.max)").out.count == 3)
        #expect(s.run("scan --limit \(Self.max) --count").outcome == .ok)
        #expect(
            s.run("scan --limit \(Self.tooLarge)").err == [
                #"{"error":"column 14: expected a number after --limit (a non-negative integer), but \#(Self.tooLarge) is larger than the most allowed, \#(Int.max)"}"#
            ])
    }
}
