import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@Suite struct DocumentSchemaTests {
    static func populate(_ people: DocumentCollection, count: Int = 300) throws {
        var rng = SplitMix64(seed: 41)
        for i in 0..<count {
            var doc = DocumentGenerator.document(id: .string(String(format: "p%04d", i)), &rng)
            if case .object(var o) = doc {
                o["email"] = .string("e\(i)@x.org")
                doc = .object(o)
            }
            try people.insert(doc)
        }
    }

    @Test func addingDroppingAndChangingIndexesOnAPopulatedDatabase() throws {
        try withTemporaryDatabase { db, _ throws in
            var schema = try DocumentSchema(collections: [
                "people": CollectionSchema(indexes: [SecondaryIndexDefinition(name: "by_age", fields: ["age"])])
            ])
            var store = try DocumentStore(database: db, schema: schema)
            try Self.populate(try store.collection("people"))
            let query = DocumentQuery().where("last", .equal("Smith")).orderBy("age")
            let before = try store.collection("people").find(query)
            // by_age could give the order, but without a limit the whole index and a get per
            // document cost more than a scan and a sort.
            let both = DocumentQuery().where("last", .equal("Smith")).where("age", .greaterOrEqual(0)).orderBy("age")
            let beforeBoth = try store.collection("people").find(both)
            #expect(!beforeBoth.isEmpty)
            #expect(try store.collection("people").explain(query).index == nil)

            // Add an index: built with progress, then used.
            schema.collections["people"]?.indexes.append(SecondaryIndexDefinition(name: "by_last", fields: ["last"]))
            var reports: [DocumentStore.IndexBuildProgress] = []
            store = try DocumentStore(database: db, schema: schema) { reports.append($0) }
            #expect(reports.first?.index == "by_last" && reports.last?.done == 300 && reports.last?.total == 300)
            #expect(try store.collection("people").explain(query).index == "by_last")
            #expect(try store.collection("people").find(query) == before)
            #expect(try store.verify().isClean)

            // Change it (now compound) and drop by_age.
            schema.collections["people"]?.indexes = [SecondaryIndexDefinition(name: "by_last", fields: ["last", "age"])]
            // A compound index serves equality on its first field then the order on the
            // next, the documents missing age among them.
            store = try DocumentStore(database: db, schema: schema)
            let prefixPlan = try store.collection("people").explain(query)
            #expect(prefixPlan.index == "by_last" && prefixPlan.orderedByScan)
            #expect(try store.collection("people").find(query) == before)
            let plan = try store.collection("people").explain(both)
            #expect(plan.index == "by_last" && plan.orderedByScan)
            #expect(try store.collection("people").find(both) == beforeBoth)
            #expect(try db.entries(store.layout.index("people", "by_age").range).collect().isEmpty)
            #expect(try store.verify().isClean)

            // Reopening without a schema keeps the stored one.
            store = try DocumentStore(database: db)
            #expect(try store.schema == schema)
            #expect(try store.collection("people").explain(both).index == "by_last")
        }
    }

    @Test func aUniqueIndexOverDuplicatesFailsAndLeavesTheSchemaAsItWas() throws {
        try withTemporaryDatabase { db, _ throws in
            let schema = try DocumentSchema(collections: ["people": CollectionSchema()])
            let store = try DocumentStore(database: db, schema: schema)
            try store.collection("people").insert(["id": "a", "email": "same"])
            try store.collection("people").insert(["id": "b", "email": "same"])
            var unique = schema
            unique.collections["people"]?.indexes = [
                SecondaryIndexDefinition(name: "by_email", fields: ["email"], unique: true)
            ]
            do {
                _ = try DocumentStore(database: db, schema: unique)
                Issue.record("built a unique index over duplicates")
            } catch let error as KVDocsError {
                #expect(error.kind == .uniqueViolation)
                #expect(error.message.contains(#"unique index "by_email" of "people" already has "same""#))
            }
            let reopened = try DocumentStore(database: db)
            #expect(try reopened.schema == schema)
            #expect(try db.entries(reopened.layout.index("people", "by_email").range).collect().isEmpty)
        }
    }

    @Test func malformedSchemaFilesNameTheFileAndTheProblem() throws {
        let cases: [(String, String)] = [
            (
                #"{"collections": {"p": {"indexes": [{"name": "x"}]}}}"#,
                #"s.json: collection "p": index "x": missing "fields""#
            ),
            (
                #"{"collections": {"p": {"indexes": [{"name": "x", "fields": ["a..b"]}]}}}"#,
                #"s.json: collection "p": index "x": invalid field path "a..b": each segment is a field name, optionally followed by []"#
            ),
            (
                #"{"collections": {"p": {"indexes": [{"name": "x", "fields": ["a[]", "b[]"]}]}}}"#,
                #"s.json: collection "p": index "x": at most one field may be multi-valued ([])"#
            ),
            (
                #"{"collections": {"p": {"indexes": [{"name": "x", "fields": ["a"]}, {"name": "x", "fields": ["b"]}]}}}"#,
                #"s.json: collection "p": index "x" is declared twice"#
            ),
            (
                #"{"collections": {"p": {"indexes": [{"name": "x", "fields": ["a"], "unique": "yes"}]}}}"#,
                #"s.json: collection "p": index "x": "unique" must be true or false"#
            ),
            (
                #"{"collections": {"p": {"primaryKey": "a.b"}}}"#,
                #"s.json: collection "p": primaryKey "a.b" must be a top-level field name"#
            ),
            (
                #"{"collections": {"p": {"text": [{"name": "t", "fields": ["bio"], "tokenizer": "icu"}]}}}"#,
                #"s.json: collection "p": text index "t": "tokenizer" must be one of "unicode61", "porter""#
            ),
            (
                #"{"collections": {"p": {"index": []}}}"#,
                #"s.json: collection "p": unknown member "index" (expected "primaryKey", "indexes", "text", "replicated", "revsLimit")"#
            ),
            (#"{"collection": {}}"#, #"s.json: unknown member "collection" (expected "collections")"#),
            ("{\"collections\": {\n\"p\": {,}}}", "s.json: invalid JSON at line 2, column 7")
        ]
        for (json, message) in cases {
            do {
                _ = try DocumentSchema(json: Data(json.utf8), file: "s.json")
                Issue.record("accepted \(json)")
            } catch let error as KVDocsError {
                #expect(error.kind == .schema)
                #expect(error.message.hasPrefix(message), "\(error.message)")
            }
        }
        // Text indexes are accepted and kept.
        let schema = try peopleSchema()
        #expect(schema.collections["people"]?.text == [TextIndexDefinition(name: "bio_text", fields: ["bio", "title"])])
        #expect(try DocumentSchema(json: schema.jsonData()) == schema)
    }

    @Test func explainNamesTheIndexAndKeyRange() throws {
        try withPeopleStore { _, people throws in
            let plan = try people.explain(
                DocumentQuery().where("address.city", .equal("Perth")).where("age", .greater(30)).where(
                    "last", .notEqual("x")
                )
                .orderBy("age").limit(5))
            #expect(plan.index == "by_city_age")
            #expect(plan.orderedByScan)
            #expect(plan.description.contains("collection people: index by_city_age, 1 key range"))
            #expect(plan.description.contains(#"range: address.city = "Perth" and age > 30"#))
            #expect(plan.description.contains(#"keys: [("i", "people", "by_city_age", 3, "Perth", 2, 30.0, 0)+0xff"#))
            #expect(plan.description.contains(#"filter: last != "x""#))
            let scan = try people.explain(DocumentQuery().where("nickname", .equal("x")))
            #expect(scan.index == nil)
            #expect(scan.description.contains("full scan"))
            let tags = try people.explain(DocumentQuery().where("tags[]", .in(["a", "b"])))
            #expect(tags.index == "by_tag" && tags.ranges.count == 2)
        }
    }

    /// A sparse compound index whose second field has no condition cannot serve: the
    /// suggestion names it, with what it lacks.
    @Test func explainNamesASparseIndexAndTheConditionItLacks() throws {
        let schema = try DocumentSchema(
            json: Data(
                #"{"collections": {"people": {"indexes": [{"name": "by_last_first", "fields": ["last", "first"], "sparse": true}]}}}"#
                    .utf8))
        try withTemporaryDatabase { db, _ in
            let people = try DocumentStore(database: db, schema: schema).collection("people")
            try people.insert(["id": 1, "last": "L1"])
            let plan = try people.explain(DocumentQuery().where("last", .equal("L1")).orderBy("age"))
            #expect(plan.index == nil)
            #expect(
                plan.suggestion?.hasPrefix(
                    "index by_last_first on (last, first) is sparse and serves a query only with a condition on each of its fields"
                ) == true)
            #expect(plan.suggestion?.contains("add one on (first)") == true)
            #expect(try people.find(DocumentQuery().where("last", .equal("L1"))).count == 1)
        }
    }

    @Test func explainMarksAFullScanWithTheDocumentsItReadsAndAnIndexThatWouldServe() throws {
        try withPeopleStore { store, people throws in
            try store.write { batch in
                for i in 0..<7 {
                    try batch.insert("people", ["id": .int(Int64(i)), "last": .string("L\(i % 2)"), "nickname": "n"])
                }
            }
            // No index on the fields: one to declare, equality fields first, then the range.
            let scan = try people.explain(
                DocumentQuery().where("nickname", .equal("x")).where("score", .greater(3)).orderBy("score"))
            #expect(scan.index == nil)
            #expect(scan.scannedDocuments == 7)
            #expect(
                scan.suggestion
                    == #"declare an index on (nickname, score): {"name": "by_nickname_score", "fields": ["nickname", "score"]}"#
            )
            #expect(
                scan.description.contains("SCAN, a full scan of every document (no usable index), reads 7 documents"))
            #expect(scan.description.contains("suggestion: declare an index on (nickname, score)"))
            // A compound index serves a condition on its first field.
            let prefix = try people.explain(DocumentQuery().where("last", .equal("L1")).orderBy("age"))
            #expect(prefix.index == "by_last_first" && prefix.suggestion == nil)
            // An order alone: an index on it; nothing to use at all: no suggestion.
            #expect(try people.explain(DocumentQuery().where("nickname", .notEqual("x"))).suggestion == nil)
            #expect(
                try people.explain(DocumentQuery().orderBy("nickname")).suggestion?.contains(#"["nickname"]"#) == true)
            // An index plan carries neither.
            let indexed = try people.explain(DocumentQuery().where("age", .greater(3)))
            #expect(indexed.index == "by_age" && indexed.scannedDocuments == nil && indexed.suggestion == nil)
            #expect(!indexed.description.contains("SCAN"))
        }
    }
}

@Suite struct DocumentIntegrityTests {
    @Test func verifyFindsInjectedInconsistenciesAndReindexRepairsThem() throws {
        try withPeopleStore { store, people throws in
            try DocumentSchemaTests.populate(people, count: 100)
            #expect(try store.verify().isClean)
            let layout = store.layout
            // Remove an entry, add a dangling one, and change a document behind the index's back.
            let ageIndex = layout.index("people", "by_age")
            let victim = try #require(try store.leveldb.entries(ageIndex.range, limit: 1).collect().first)
            try store.leveldb.delete(victim.key)
            try store.leveldb.put(ageIndex.pack(Tuple(ValueOrder.encode(12345) + [.string("ghost")])), "")
            try store.leveldb.put(layout.document("people", "p0001"), #"{"id":"p0001","age":77,"tags":["zzz"]}"#)
            let report = try store.verify(collection: "people")
            #expect(!report.isClean)
            #expect(report.missingEntries >= 2)  // the deleted entry; p0001's new age and tag
            #expect(report.danglingEntries >= 2)  // the ghost; p0001's old entries
            #expect(report.problems.contains { $0.contains("\"ghost\"") && $0.contains("belongs to no document") })
            #expect(report.description.contains("missing entries"))
            try store.reindex(collection: "people", index: "by_age")
            #expect(try store.verify().danglingEntries > 0)  // other indexes still stale
            try store.reindex(collection: "people")
            #expect(try store.verify().isClean)
            #expect(try people.find(DocumentQuery().where("tags[]", .equal("zzz"))).map { $0["id"] } == ["p0001"])
        }
    }

    @Test func aQuerySeesOneSnapshotWhileWritersRun() throws {
        try withPeopleStore { store, people throws in
            for i in 0..<50 {
                try people.insert(["id": .string("p\(i)"), "age": .int(Int64(i)), "address": ["city": "Perth"]])
            }
            try store.read { tx throws in
                let before = try tx.find("people", DocumentQuery().where("age", .greaterOrEqual(0)))
                try people.insert(["id": "new", "age": 5])
                try people.delete(id: "p3")
                try people.upsert(["id": "p4", "age": 1000])
                #expect(try tx.find("people", DocumentQuery().where("age", .greaterOrEqual(0))) == before)
                #expect(try tx.count("people") == 50)
                #expect(try tx.get("people", id: "p3") != nil)
            }
            #expect(try people.count() == 50)
            #expect(try people.find(DocumentQuery().where("age", .equal(1000))).count == 1)
        }
    }

    @Test func manyThreadsWriteAndReadWithVerifyCleanAtTheEnd() throws {
        try withPeopleStore { store, people throws in
            let failures = ManagedAtomicFlag()
            DispatchQueue.concurrentPerform(iterations: 6) { worker in
                var rng = SplitMix64(seed: UInt64(worker))
                for i in 0..<150 {
                    let id = JSONValue.string("w\(worker)-\(i % 40)")
                    do {
                        switch i % 5 {
                        case 0, 1, 2: try people.upsert(DocumentGenerator.document(id: id, &rng))
                        case 3: try people.delete(id: id)
                        default: _ = try people.find(DocumentGenerator.query(&rng))
                        }
                    } catch let error as KVDocsError where error.kind == .uniqueViolation {
                        // Random emails collide across threads: expected, and nothing is written.
                    } catch {
                        failures.set()
                    }
                }
            }
            #expect(!failures.isSet)
            #expect(try store.verify().isClean)
            let changes = try store.changes()
            #expect(changes.map(\.sequence) == Array(1...Int64(changes.count)))
            #expect(try store.lastSequence == Int64(changes.count))
        }
    }
}

@Suite struct ChangeFeedTests {
    @Test func everyWriteGetsTheNextSequenceNumberWithoutGaps() throws {
        try withPeopleStore { store, people throws in
            try people.insert(["id": "a"])
            try people.upsert(["id": "a", "age": 1])
            try people.insert(["id": 2])
            #expect(throws: KVDocsError.self) { try people.insert(["id": "a"]) }  // fails: no sequence number used
            try people.delete(id: "a")
            try people.delete(id: "a")  // nothing to delete: no change
            #expect(
                try store.changes().map(\.description) == [
                    "1 insert people \"a\"", "2 update people \"a\"", "3 insert people 2", "4 delete people \"a\""
                ])
            #expect(try store.changes(since: 2).map(\.sequence) == [3, 4])
            #expect(try store.changes(since: 1, limit: 2).map(\.sequence) == [2, 3])
            // The sequence survives reopening.
            let reopened = try DocumentStore(database: store.leveldb)
            #expect(try reopened.lastSequence == 4)
            try reopened.collection("people").insert(["id": "z"])
            #expect(try reopened.changes(since: 4).map(\.sequence) == [5])
        }
    }

    @Test func observersReceiveNewChangesInOrder() async throws {
        let dir = TemporaryDirectory()
        let db = try LevelDB(path: dir.child("db"))
        defer { db.close() }
        let store = try DocumentStore(database: db, schema: try peopleSchema())
        let people = try store.collection("people")
        let stream = store.changeStream()
        let reader = Task { () -> [Int64] in
            var seen: [Int64] = []
            for await change in stream {
                seen.append(change.sequence)
                if seen.count == 20 { break }
            }
            return seen
        }
        for i in 0..<20 { try await people.async.upsert(["id": .int(Int64(i % 7))]) }
        #expect(await reader.value == Array(1...20))
    }
}

@Suite struct ImportTests {
    static func write(_ lines: [String], _ dir: TemporaryDirectory) throws -> String {
        let path = dir.child("import.jsonl")
        try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func importsJSONLinesInBatchesMaintainingIndexes() throws {
        try withPeopleStore { store, people throws in
            let dir = TemporaryDirectory()
            let lines =
                (0..<2500).map {
                    #"{"id": "i\#($0)", "age": \#($0 % 90), "email": "m\#($0)@x", "tags": ["t\#($0 % 3)"]}"#
                } + ["", "  "]
            var progress: [DocumentStore.ImportProgress] = []
            let count = try store.importJSONLines(into: "people", path: try Self.write(lines, dir), batchSize: 1000) {
                progress.append($0)
            }
            #expect(count == 2500)
            #expect(progress.filter { !$0.validating }.map(\.documents) == [1000, 2000, 2500])
            #expect(try people.count() == 2500)
            #expect(try people.count(DocumentQuery().where("tags[]", .equal("t1"))) == 833)
            #expect(try store.verify().isClean)
            #expect(try store.lastSequence == 2500)
        }
    }

    /// A file that fits the staging budget is parsed once and written from the parsed
    /// documents; a larger one is read again. Both write the same documents, report the
    /// same progress and fail the same way at the same line.
    @Test(arguments: [0, 200, DocumentStore.importStagingBudget])
    func stagedAndRereadImportsAgree(budget: Int) throws {
        let dir = TemporaryDirectory()
        var lines = (0..<450).map { #"{"id": "i\#($0)", "age": \#($0 % 90), "email": "m\#($0)@x"}"# }
        lines.insert("", at: 100)
        lines.insert("\t ", at: 300)
        let path = try Self.write(lines, dir)
        var progress: [String] = []
        let count = try withPeopleStore { store, people throws -> Int in
            let n = try store.importJSONLines(
                into: "people", path: path, mode: .insert, batchSize: 100, maximumLineLength: 1 << 20,
                sync: false, stagingBudget: budget
            ) { progress.append("\($0.validating) \($0.lines) \($0.documents) \($0.bytes)") }
            #expect(try people.count() == 450)
            #expect(try people.get(id: "i299")?["age"] == 29)
            #expect(try store.verify().isClean)
            return n
        }
        #expect(count == 450)
        let size = try Data(contentsOf: URL(fileURLWithPath: path)).count
        let written = progress.filter { $0.hasPrefix("false") }
        #expect(written.count == 5)
        #expect(written.last == "false 452 450 \(size)")
        #expect(written.first?.hasPrefix("false 100 100 ") == true)
        // A duplicate id at line 400 stops the import there, after the batches before it.
        lines[399] = #"{"id": "i1"}"#
        let duplicate = try Self.write(lines, dir)
        try withPeopleStore { store, people throws in
            let error = try #require(throws: KVDocsError.self) {
                try store.importJSONLines(
                    into: "people", path: duplicate, mode: .insert, batchSize: 100, maximumLineLength: 1 << 20,
                    sync: false, stagingBudget: budget, progress: nil)
            }
            #expect(error.message.contains("import.jsonl:400:"), "\(error.message)")
            #expect(try people.count() == 300)
        }
    }

    @Test func aMalformedLineIsReportedWithItsNumberAndNothingIsImported() throws {
        try withPeopleStore { store, people throws in
            let dir = TemporaryDirectory()
            for (bad, reason) in [
                (#"{"id": "x", "age": }"#, "invalid JSON at line 1, column 20"),
                (#"[1]"#, "expected a JSON object, found an array"),
                (#"{"age": 1}"#, #"no primary key field "id""#), (#"{"id": true}"#, "must be a string or an integer")
            ] {
                let path = try Self.write([#"{"id": "ok1"}"#, bad], dir)
                do {
                    try store.importJSONLines(into: "people", path: path)
                    Issue.record("imported \(bad)")
                } catch let error as KVDocsError {
                    #expect(error.message.hasPrefix("\(path):2: "), "\(error.message)")
                    #expect(error.message.contains(reason), "\(error.message)")
                    #expect(error.message.hasSuffix("nothing was imported"))
                }
            }
            #expect(try people.count() == 0)
            #expect(try store.lastSequence == 0)
        }
    }

    /// A line that one of the collection's indexes refuses, after 1,000 good lines, is
    /// reported with its number before anything is written: a geo field that holds no
    /// point, an indexed value nested deeper than an index stores. Staged or read again.
    @Test(arguments: [0, DocumentStore.importStagingBudget])
    func aLineAnIndexRefusesIsReportedWithItsNumberAndNothingIsImported(budget: Int) throws {
        let schema = try DocumentSchema(
            json: Data(
                #"""
                {"collections": {"places": {"primaryKey": "id", "indexes": [
                  {"name": "by_tags", "fields": ["tags"]},
                  {"name": "by_loc", "fields": ["loc"], "type": "geo"}]}}}
                """#.utf8))
        let good = (0..<1000).map { #"{"id": \#($0), "loc": {"lat": \#($0 % 90), "lon": 0}, "tags": [["a"]]}"# }
        let deep = String(repeating: "[", count: 130) + String(repeating: "]", count: 130)
        let refused = [
            (
                #"{"id": 1000, "loc": {"lat": "10", "lon": 0}}"#,
                #"geo index by_loc of collection "places": field loc of document 1000 holds {"lat":"10","lon":0}, which is not a point"#
            ),
            (
                #"{"id": 1000, "tags": \#(deep)}"#,
                #"index by_tags of collection "places": field tags holds arrays nested 130 levels deep"#
            )
        ]
        for (bad, reason) in refused {
            try withTemporaryDatabase { db, _ throws in
                let store = try DocumentStore(database: db, schema: schema)
                let dir = TemporaryDirectory()
                let path = try Self.write(good + [bad], dir)
                let error = try #require(throws: KVDocsError.self) {
                    try store.importJSONLines(
                        into: "places", path: path, mode: .upsert, batchSize: 100, maximumLineLength: 1 << 20,
                        sync: false, stagingBudget: budget, progress: nil)
                }
                #expect(error.kind == .invalidArgument)
                #expect(error.message.hasPrefix("\(path):1001: "), "\(error.message)")
                #expect(error.message.contains(reason), "\(error.message)")
                #expect(error.message.hasSuffix("nothing was imported"), "\(error.message)")
                #expect(try store.collection("places").count() == 0)
                #expect(try store.lastSequence == 0)
                #expect(try store.verify().isClean)
                // Without the refused line, the same file imports whole.
                #expect(try store.importJSONLines(into: "places", path: try Self.write(good, dir)) == 1000)
            }
        }
    }

    @Test func aFailingWriteKeepsEarlierBatchesAndDropsItsOwn() throws {
        try withPeopleStore { store, people throws in
            let dir = TemporaryDirectory()
            var lines = (0..<25).map { #"{"id": "i\#($0)", "email": "m\#($0)@x"}"# }
            lines[17] = #"{"id": "dup", "email": "m3@x"}"#
            do {
                try store.importJSONLines(into: "people", path: try Self.write(lines, dir), batchSize: 10)
                Issue.record("imported a duplicate email")
            } catch let error as KVDocsError {
                #expect(error.kind == .uniqueViolation)
                #expect(error.message.contains(":18: "))
                #expect(error.message.contains("10 documents before this batch were imported"))
            }
            #expect(try people.count() == 10)
            #expect(try store.verify().isClean)
        }
    }

    @Test func aLineLongerThanTheMaximumIsReportedAndNothingIsImported() throws {
        try withPeopleStore { store, people throws in
            let dir = TemporaryDirectory()
            let path = try Self.write(
                [
                    #"{"id": "ok1"}"#, #"{"id": "long", "bio": "\#(String(repeating: "x", count: 100))"}"#,
                    #"{"id": "ok2"}"#
                ], dir)
            do {
                try store.importJSONLines(into: "people", path: path, maximumLineLength: 64)
                Issue.record("imported a line longer than the maximum")
            } catch let error as KVDocsError {
                #expect(error.kind == .invalidArgument)
                #expect(error.message == "\(path):2: line longer than the maximum of 64 bytes; nothing was imported")
            }
            #expect(try people.count() == 0)
            #expect(try store.lastSequence == 0)
            #expect(try store.importJSONLines(into: "people", path: path, maximumLineLength: 200) == 3)
        }
    }

    /// Progress comes every 10,000 lines or 16 MiB read while validating, and after every
    /// batch while writing, so a file of a few huge lines reports too.
    @Test func progressIsReportedWhileValidatingAndWritingLargeFiles() throws {
        try withPeopleStore { store, people throws in
            let dir = TemporaryDirectory()
            let blob = String(repeating: "y", count: 9 << 20)
            let lines =
                (0..<12_000).map { #"{"id": \#($0)}"# } + [
                    #"{"id": "big1", "blob": "\#(blob)"}"#, #"{"id": "big2", "blob": "\#(blob)"}"#
                ]
            let path = try Self.write(lines, dir)
            let size = lines.reduce(0) { $0 + $1.utf8.count } + lines.count - 1
            var progress: [DocumentStore.ImportProgress] = []
            #expect(try store.importJSONLines(into: "people", path: path) { progress.append($0) } == 12_002)
            let validating = progress.filter(\.validating), writing = progress.filter { !$0.validating }
            #expect(validating.map(\.lines) == [10_000, 12_002])
            #expect(validating.last?.bytes == size)
            #expect(writing.map(\.documents) == Array(stride(from: 1000, through: 12_000, by: 1000)) + [12_002])
            #expect(writing.last?.lines == 12_002 && writing.last?.bytes == size)
            #expect(progress.allSatisfy { $0.totalBytes == size })
            #expect(try people.get(id: "big2")?["blob"] == .string(blob))
        }
    }

    @Test func importWithSyncIsReadableAfterReopening() throws {
        let dir = TemporaryDirectory()
        let path = try Self.write((0..<30).map { #"{"id": \#($0), "age": \#($0)}"# }, dir)
        do {
            let db = try LevelDB(path: dir.child("db"))
            defer { db.close() }
            let store = try DocumentStore(database: db, schema: try peopleSchema())
            let before = db.syncedWrites
            #expect(try store.importJSONLines(into: "people", path: path, batchSize: 10, sync: true) == 30)
            #expect(db.syncedWrites - before == 3)  // one synced write per batch
        }
        let db = try LevelDB(path: dir.child("db"))
        defer { db.close() }
        let people = try DocumentStore(database: db).collection("people")
        #expect(try people.count() == 30)
        #expect(try people.count(DocumentQuery().where("age", .greaterOrEqual(20))) == 10)
    }

    static func write(_ lines: String..., dir: TemporaryDirectory) throws -> String { try write(lines, dir) }
}
