import Foundation
import KVDocs

extension Bench {
    /// The physical floors of the documents section's writes, in the same run as KVDocs.
    ///
    /// KVDocs' batches are captured byte for byte (``captureWrites(schema:phases:)``: the
    /// same `store.write` calls, untyped, on a capture store) and replayed on a fresh LevelDB
    /// database through the C API with KVDocs' options, one `leveldb_write` per KVDocs
    /// batch (1000 documents; a delete slice is one batch), not synced, as KVDocs writes.
    /// Each batch holds everything KVDocs put in it: per document its stored record (binary
    /// form), its index entries (put, and for an update the moved ones deleted), its
    /// change-log record, and once per batch the store's sequence record. Before each
    /// batch, the gets KVDocs makes while building it: the stored document's key (inserts:
    /// not found; updates and deletes: found) and, for each unique `email` entry put, the
    /// uniqueness check. Not included: KVDocs' two catalog gets per batch (generation and
    /// sequence), encoding, planning, locks. Inserts start from a database holding the
    /// store's setup records, as KVDocs' fresh store does; updates and deletes from one
    /// holding the same preloaded documents, compacted, as KVDocs' store is.
    func measureDocumentWriteFloors(
        jsonBatches: [[JSONValue]], typedPeople: [[Person]], updates: [Person],
        changed: @escaping (Person, Int) -> Person,
        deleteSlices: [ArraySlice<Person>]
    ) throws {
        let documents = [Self.documentPrefix("person")]
        let documentCount = jsonBatches.reduce(0) { $0 + $1.count }
        func insertAll(_ store: DocumentStore) throws -> Int {
            for batch in jsonBatches { try store.write { b in for p in batch { try b.insert("person", p) } } }
            return jsonBatches.count
        }
        for (indexes, covering) in [(0, false), (1, false), (3, true)] {
            var unique: [[UInt8]] = []
            let captured = try captureWrites(
                schema: try Self.documentsSchema(indexes, covering: covering),
                phases: [
                    { store in
                        if indexes == 3 {
                            unique = [
                                try self.uniqueStringPrefix(
                                    try store.collection("person"), field: "email", index: "by_email")
                            ]
                        }
                        return try insertAll(store)
                    }
                ])
            let program = FloorProgram()
            Self.addWrites(captured.setup, to: program, documents: documents)
            let setup = program.units
            let written = Self.addWrites(captured.phases[0], to: program, documents: documents, unique: unique)
            guard written == documentCount else {
                throw BenchError("floor: the insert batches hold \(written) documents, not \(documentCount)")
            }
            let name = covering ? "insert (3 indexes, 2 covering)" : "insert (\(indexes) secondary indexes)"
            try measureWriteFloor(
                "documents", name, program: program, workload: setup..<program.units, documents: documentCount)
        }

        // 3 indexes: inserts (measured), then the update rounds and delete slices on the
        // same database, as KVDocs runs them on one store.
        var unique: [[UInt8]] = []
        var phases: [(DocumentStore) throws -> Int] = [
            { store in
                unique = [
                    try self.uniqueStringPrefix(try store.collection("person"), field: "email", index: "by_email")
                ]
                return try insertAll(store)
            }
        ]
        for round in 1...repeats {
            phases.append { store in
                let moved = updates.map { self.json(changed($0, round)) }
                for chunk in stride(from: 0, to: moved.count, by: 1000) {
                    try store.write { b in
                        for p in moved[chunk..<min(chunk + 1000, moved.count)] { try b.upsert("person", p) }
                    }
                }
                return (moved.count + 999) / 1000
            }
        }
        for slice in deleteSlices {
            phases.append { store in
                try store.write { b in for p in slice { try b.delete("person", id: .string(p.id)) } }
                return 1
            }
        }
        let captured = try captureWrites(schema: try Self.documentsSchema(3, covering: false), phases: phases)
        // The floor replays the untyped writes. The typed rows write the same keys and almost
        // the same values (a few numbers encode shorter): compared on the first batch, and
        // said in the run's notes and under the table.
        if let first = jsonBatches.first, let typedFirst = typedPeople.first {
            let typed = try captureWrites(
                schema: try Self.documentsSchema(3, covering: false),
                phases: [
                    { store in
                        try store.write { b in for p in typedFirst { try b.insert("person", encoding: p) } }
                        return 1
                    }
                ])
            let a = typed.phases[0][0], b = captured.phases[0][0]
            func size(_ ops: [LoggedWrite]) -> Int { ops.reduce(0) { $0 + $1.key.count + ($1.value?.count ?? 0) } }
            let sameKeys = a.map(\.key) == b.map(\.key) && first.count == typedFirst.count
            let differing = zip(a, b).filter { $0.value != $1.value }.count
            notes["documents: floor of the typed writes"] =
                !sameKeys
                ? "typed and untyped inserts write different keys; the floor replays the untyped ones"
                : differing == 0
                    ? "typed and untyped inserts write byte-identical batches (first batch compared)"
                    : "typed and untyped inserts write the same keys; \(differing) of \(a.count) values differ (first batch: \(size(a)) bytes typed, \(size(b)) untyped); the floor replays the untyped ones"
        }
        let program = FloorProgram()
        Self.addWrites(captured.setup, to: program, documents: documents)
        let setup = program.units
        guard Self.addWrites(captured.phases[0], to: program, documents: documents, unique: unique) == documentCount
        else {
            throw BenchError("floor: the insert batches do not hold every document")
        }
        try measureWriteFloor(
            "documents", "insert (3 secondary indexes)", program: program, workload: setup..<program.units,
            documents: documentCount)
        let preloaded = program.units
        var rounds: [Range<Int>] = [], slices: [Range<Int>] = []
        for phase in captured.phases.dropFirst().prefix(repeats) {
            let start = program.units
            guard Self.addWrites(phase, to: program, documents: documents, unique: unique) == updates.count else {
                throw BenchError("floor: an update round's batches do not hold every update")
            }
            rounds.append(start..<program.units)
        }
        for (phase, slice) in zip(captured.phases.dropFirst(1 + repeats), deleteSlices) {
            let start = program.units
            guard Self.addWrites(phase, to: program, documents: documents, unique: unique) == slice.count else {
                throw BenchError("floor: a delete batch does not hold every delete")
            }
            slices.append(start..<program.units)
        }
        let db = try FloorDatabase(path: freshPath("floor"))
        _ = try program.run(db, units: 0..<preloaded)
        db.compact()  // as KVDocs' store before its reads
        var round = 0
        try measure("documents", "update moving index entries", "leveldb-floor") {
            defer { round += 1 }
            let (seconds, stats) = try program.run(db, units: rounds[round])
            return (seconds, updates.count, Self.floorExtra(stats))
        }
        var deleted = 0
        try measure("documents", "delete", "leveldb-floor") {
            defer { deleted += 1 }
            let (seconds, stats) = try program.run(db, units: slices[deleted])
            return (seconds, deleteSlices[deleted].count, Self.floorExtra(stats))
        }
    }
}

/// Read floors of the documents section that `measureFloors` does not make, built from
/// `explain` and KVDocs' answers and run on copies of KVDocs' databases (``Bench/floorCopy(of:)``).
struct DocumentQueryFloors {
    struct Floor {
        let name: String
        let program: FloorProgram
        let expect: (entries: Int, found: Int, gets: Int)
        /// The database it reads: the covering store's or the plain one's.
        let covering: Bool
    }
    var floors: [Floor] = []
}

extension Bench {
    /// - covering equality / range: on the covering store, a scan of the plan's range, the
    ///   limit's entries (each carries its document), no get;
    /// - the range ordered by id (no natural index): on the plain store, a scan of every
    ///   entry of the plan's `age` ranges (KVDocs keeps the first 50 ids in a heap), then a
    ///   get of each of the 50 documents returned.
    func makeDocumentQueryFloors(
        untyped: DocumentCollection, covered: DocumentCollection, queries: Int,
        equality: @escaping (Int) -> DocumentQuery, range: @escaping (Int) -> DocumentQuery,
        rangeByID: (Int) -> DocumentQuery,
        names: (coveringEquality: String, coveringRange: String, rangeByID: String)
    ) throws -> DocumentQueryFloors {
        let documents = Subspace().subspace(["d", "person"])
        var result = DocumentQueryFloors()
        for (name, make, limit) in [(names.coveringEquality, equality, 20), (names.coveringRange, range, 50)] {
            let program = FloorProgram()
            var entries = 0
            for i in 0..<queries {
                let plan = try covered.explain(make(i))
                guard plan.covering, plan.ranges.count == 1 else {
                    throw BenchError("floor: \(name) is not one covering range:\n\(plan)")
                }
                program.scan(plan.ranges[0], limit: limit)
                program.endUnit()
                entries += try covered.find(make(i)).count
            }
            result.floors.append(.init(name: name, program: program, expect: (entries, 0, 0), covering: true))
        }
        let program = FloorProgram()
        var entries = 0, gets = 0
        for i in 0..<queries {
            let plan = try untyped.explain(rangeByID(i))
            guard plan.index == "by_age", !plan.orderedByScan else {
                throw BenchError("floor: \(names.rangeByID) is not a top-k over by_age:\n\(plan)")
            }
            for range in plan.ranges { program.scan(range) }  // KVDocs: a cursor per range
            var all = rangeByID(i)
            all.limit = nil
            entries += try untyped.count(all)
            for document in try untyped.find(rangeByID(i)) {
                guard let id = document["id"]?.stringValue else { throw BenchError("floor: a person without an id") }
                program.get(documents.pack([.string(id)]))
                gets += 1
            }
            program.endUnit()
        }
        result.floors.append(
            .init(name: names.rangeByID, program: program, expect: (entries, gets, gets), covering: false))
        return result
    }

    /// Runs the floors on the two databases (`floorCopy(of:)` of each, opened through the C API).
    func measure(_ floors: DocumentQueryFloors, path: String, coveringPath: String) throws {
        for covering in [true, false] {
            let db = try FloorDatabase(path: covering ? coveringPath : path)
            for floor in floors.floors where floor.covering == covering {
                try measureReadFloor("documents", floor.name, program: floor.program, on: db, expect: floor.expect)
            }
        }
    }
}
