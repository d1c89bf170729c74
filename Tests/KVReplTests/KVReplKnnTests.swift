import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@testable import KVReplCore

/// The `knn` command: its grammar, its text and `--json` output, and `explain knn`.
@Suite struct KVReplKnnTests {
    @Test func theKnnGrammarTakesAVectorKAndItsClauses() throws {
        #expect(
            try ShellCommand.parse("knn notes by_embedding [1, 0, 0.5] 10")
                == .knn(.init(collection: "notes", index: "by_embedding", vector: [1, 0, 0.5], k: 10)))
        #expect(
            try ShellCommand.parse("KNN notes by_embedding [1,2] 3 exact where folder = \"work\" and rank < 5")
                == .knn(
                    .init(
                        collection: "notes", index: "by_embedding", vector: [1, 2], k: 3,
                        query: DocumentQuery().where("folder", .equal("work")).where("rank", .less(5)), search: .exact))
        )
        #expect(
            try ShellCommand.parse("knn notes v [1] 2 probes 7 where a = 1")
                == .knn(
                    .init(
                        collection: "notes", index: "v", vector: [1], k: 2,
                        query: DocumentQuery().where("a", .equal(1)),
                        search: .approximate(probes: 7))))
        #expect(
            try ShellCommand.parse("explain knn notes v [1e2] 1")
                == .explainKnn(.init(collection: "notes", index: "v", vector: [100], k: 1)))
    }

    @Test func theHybridGrammarTakesTextAVectorConditionsAndARadius() throws {
        #expect(
            try ShellCommand.parse(#"hybrid notes 5 text "train OR bus" vector [1, 0]"#)
                == .hybrid(.init(collection: "notes", k: 5, text: "train OR bus", vector: [1, 0])))
        #expect(
            try ShellCommand.parse(
                #"hybrid notes 3 vector [0.5] using v where folder = "work" near (0, 0) within 1500 text 'night'"#)
                == .hybrid(
                    .init(
                        collection: "notes", k: 3, text: "night", vector: [0.5], vectorIndex: "v",
                        query: DocumentQuery().where("folder", .equal("work")),
                        center: try GeoPoint(latitude: 0, longitude: 0), radius: 1500)))
        for (line, message) in [
            ("hybrid notes 3", "hybrid takes text \"QUERY\", vector [..] or both"),
            ("hybrid notes 3 text train", "text takes a quoted FTS5 query"),
            ("hybrid notes 3 vector [1] near (0, 0)", "near (LAT, LON) takes within METERS"),
            ("hybrid notes 3 vector [1] vector [2]", "vector is given twice")
        ] {
            do {
                _ = try ShellCommand.parse(line)
                Issue.record("\(line) parsed")
            } catch {
                #expect("\(error)".contains(message), "\(line): \(error)")
            }
        }
    }

    @Test(arguments: [
        ("knn", "expected a collection name"),
        ("knn notes", "expected a vector index name"),
        ("knn notes v", "the query vector"),
        ("knn notes v 3 3", "the query vector must be a JSON array of numbers, not 3"),
        ("knn notes v [] 3", "the query vector must be a JSON array of numbers, not []"),
        ("knn notes v [1, \"a\"] 3", "element 1 of the query vector is \"a\", not a finite number"),
        ("knn notes v [1, 1e39] 3", "element 1 of the query vector is 1e+39, not a finite number"),
        ("knn notes v [1] -3", "K, how many nearest"),
        ("knn notes v [1] 3 limit 4", "it takes no limit"),
        ("knn notes v [1] 3 exact exact", "exact is given twice"),
        ("knn notes v [1] 3 sideways", "expected where, exact or probes"),
        ("knn notes v [1] 3 probes", "N, how many lists"),
        ("knn notes v [1] 3 probes 0", "probes must be at least 1"),
        ("knn notes v [1] 3 exact probes 2", "knn takes one of exact and probes N, once")
    ])
    func malformedKnnCommandsSayWhatWasExpected(line: String, message: String) {
        #expect(throws: ShellCommandError.self) { try ShellCommand.parse(line) }
        do { _ = try ShellCommand.parse(line) } catch {
            #expect("\(error)".contains(message), "\(error)")
        }
    }

    @Test func knnPrintsEachHitWithItsDistanceAndDocumentAndExplainsItsStrategy() throws {
        let dir = TemporaryDirectory("kvrepl-knn")
        let db = dir.child("db")
        let schema = dir.child("schema.json")
        try #"""
        {"collections": {"notes": {"primaryKey": "id", "indexes": [
          {"name": "by_folder", "fields": ["folder"]},
          {"name": "by_embedding", "type": "vector", "fields": ["embedding"], "dimensions": 2, "metric": "l2"}]}}}
        """#.write(toFile: schema, atomically: true, encoding: .utf8)
        var r = try kvrepl([
            "--create", db, "-c", "schema load \(schema)",
            "-c", #"insert notes {"id": "a", "folder": "work", "embedding": [0, 0]}"#,
            "-c", #"insert notes {"id": "b", "folder": "home", "embedding": [3, 4]}"#,
            "-c", #"insert notes {"id": "c", "folder": "work", "embedding": [6, 8]}"#,
            "-c", #"insert notes {"id": "d", "folder": "work"}"#
        ])
        #expect(r.status == 0, "\(r.stderr)")
        r = try kvrepl([db, "--json", "-c", #"knn notes by_embedding [0, 0] 2"#])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = try jsonLines(r.stdout)
        #expect(
            lines == [
                ["id": "a", "distance": 0.0, "document": ["id": "a", "folder": "work", "embedding": [0, 0]]],
                ["id": "b", "distance": 5.0, "document": ["id": "b", "folder": "home", "embedding": [3, 4]]]
            ])
        r = try kvrepl([db, "-c", #"knn notes by_embedding [0, 0] 5 where folder = "work" exact"#])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(
            r.stdout.split(separator: "\n") == [
                #""a"  0.0  {"embedding":[0,0],"folder":"work","id":"a"}"#,
                #""c"  10.0  {"embedding":[6,8],"folder":"work","id":"c"}"#
            ])
        r = try kvrepl([db, "--json", "-c", #"explain knn notes by_embedding [0, 0] 1 where folder = "home""#])
        #expect(r.status == 0, "\(r.stderr)")
        let plan = try jsonLines(r.stdout).first
        #expect(plan?["strategy"] == "prefilter")
        #expect(plan?["prefilter_index"] == "by_folder")
        #expect(plan?["candidates"] == 1)
        #expect(plan?["hits"] == 1)
        #expect(plan?["exact"] == true)
        // A query vector of the wrong length is an error naming the index's dimensions.
        r = try kvrepl([db, "-c", #"knn notes by_embedding [0, 0, 0] 1"#])
        #expect(r.status == 1)
        #expect(r.stderr.contains("holds vectors of 2 values; the query has 3"), "\(r.stderr)")
    }
}
