import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// `kvrepl --etcd URLS --root NAME`: the sample database's documents imported into a store on
/// the tests' etcd cluster answer every document command as the LevelDB database does, in
/// `--json` output, and the commands that work on LevelDB's files say they are not supported.
@Suite(.requires(.etcd)) struct KVReplEtcdTests {
    @Test func theDocumentCommandsAnswerOverEtcdAsOverLevelDB() throws {
        let dir = TemporaryDirectory("kvrepl-etcd")
        let db = dir.child("demo")
        let schema = dir.child("schema.json")
        var r = try kvrepl(["--demo", db, "-c", "schema"])
        #expect(r.status == 0, "\(r.stderr)")
        try Data(r.stdout.utf8).write(to: URL(fileURLWithPath: schema))
        for collection in ["stations", "departures"] {
            r = try kvrepl([db, "-c", "export \(collection) \(dir.child(collection + ".jsonl"))"])
            #expect(r.status == 0, "\(r.stderr)")
        }
        let root = "kvrepl-\(UUID().uuidString)"
        let etcd = [
            "--etcd", Reference.etcdEndpoints.joined(separator: ","), "--root", root, "--etcd-max-txn-ops", "4096"
        ]
        r = try kvrepl(
            etcd + [
                "--schema", schema, "-c", "import stations \(dir.child("stations.jsonl"))", "-c",
                "import departures \(dir.child("departures.jsonl"))"
            ])
        #expect(r.status == 0, "\(r.stderr)")
        let commands = [
            "collections", "indexes stations", "count departures", "find stations order by name limit 5",
            "find departures where station = \"PERTH\" order by time limit 4",
            "count departures where time >= 1700005000", "doc stations \"PERTH\"",
            "search departures \"express\" limit 5", "near stations (-31.95, 115.86) within 1500 limit 3",
            "terms departures", "verify", "explain find departures where station = \"ARMADALE\"",
            "find departures where line = \"Armadale\" and platform = 4 limit 3"
        ]
        for command in commands {
            let level = try kvrepl([db, "--json", "-c", command])
            let remote = try kvrepl(etcd + ["--json", "-c", command])
            #expect(remote.status == level.status, "\(command): \(remote.stderr)")
            #expect(remote.stdout == level.stdout, "\(command)")
            #expect(!level.stdout.isEmpty && level.status == 0, "\(command): \(level.stderr)")
        }
        // The import made one change per document (the demo's feed is in another order).
        r = try kvrepl(etcd + ["--json", "-c", "changes since 755"])
        #expect(try jsonLines(r.stdout).map { $0["sequence"] } == [.int(756)], "\(r.stdout) \(r.stderr)")
        // A write through the shell, then read back.
        r = try kvrepl(
            etcd + ["--json", "-c", #"upsert stations {"id": "x", "name": "X"}"#, "-c", "doc stations \"x\""])
        #expect(r.status == 0 && r.stdout.contains(#""name":"X""#), "\(r.stderr)")
        // What works on LevelDB's keys and files is refused, naming the store.
        for command in ["get a", "scan", "backup \(dir.child("b"))", "layers", "dump \(dir.child("d"))"] {
            r = try kvrepl(etcd + ["-c", command])
            #expect(r.status == 1 && r.stderr.contains("this session is on etcd:\(root)@"), "\(command): \(r.stderr)")
        }
        r = try kvrepl(["--etcd", "http://127.0.0.1:1", "-c", "collections"])
        #expect(r.status == 2 && r.stderr.contains("--etcd needs --root"))
    }

    /// Separate kvrepl processes race inserts of the same unique values into one store: each
    /// value is inserted by exactly one, the others get a unique violation, and the change
    /// feed numbers every insert once, without gaps.
    @Test(arguments: [2, 4])
    func racingProcessesInsertEachUniqueValueOnce(processes count: Int) throws {
        let dir = TemporaryDirectory("kvrepl-etcd-race")
        let schema = dir.child("schema.json")
        try Data(
            #"{"collections": {"people": {"indexes": [{"name": "by_email", "fields": ["email"], "unique": true}]}}}"#
                .utf8
        ).write(to: URL(fileURLWithPath: schema))
        let etcd = [
            "--etcd", Reference.etcdEndpoints.joined(separator: ","), "--root", "race-\(UUID().uuidString)",
            "--etcd-max-txn-ops", "4096"
        ]
        var r = try kvrepl(etcd + ["--schema", schema, "-c", "collections"])
        #expect(r.status == 0, "\(r.stderr)")
        let emails = 10
        let results = TestLock<[Int: ProcessResult]>([:])
        DispatchQueue.concurrentPerform(iterations: count) { p in
            let commands = (0..<emails).flatMap { e -> [String] in
                let email = (e + p * 3) % emails  // each process in its own order
                return ["-c", #"insert people {"id": \#(p * 100 + email), "email": "u\#(email)@x.org"}"#]
            }
            let result = try? kvrepl(etcd + ["--json"] + commands)
            results.withLock { $0[p] = result }
        }
        var wins = [Int](repeating: 0, count: emails)
        var violations = 0
        for p in 0..<count {
            let result = try #require(results.withLock { $0[p] })
            for line in try jsonLines(result.stdout) {
                if case .int(let id)? = line["id"] { wins[Int(id % 100)] += 1 }
            }
            violations += result.stderr.split(separator: "\n").filter { $0.contains("unique") }.count
        }
        #expect(wins == [Int](repeating: 1, count: emails), "\(wins)")
        #expect(violations == emails * (count - 1))
        r = try kvrepl(etcd + ["--json", "-c", "count people", "-c", "verify", "-c", "changes"])
        let lines = try jsonLines(r.stdout)
        #expect(lines.first == ["count": .int(Int64(emails))], "\(r.stdout)")
        #expect(lines.dropFirst(2).map { $0["sequence"] } == (1...emails).map { .int(Int64($0)) })
        #expect(r.stdout.contains(#""ok":true"#))
    }
}
