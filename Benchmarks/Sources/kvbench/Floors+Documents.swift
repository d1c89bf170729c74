import CBench
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
    func measureDocumentWriteFloors(jsonBatches: [[JSONValue]], updates: [Person], changed: @escaping (Person, Int) -> Person,
                                    deleteSlices: [ArraySlice<Person>]) throws {
        let documents = [Self.documentPrefix("person")]
        let documentCount = jsonBatches.reduce(0) { $0 + $1.count }
        func insertAll(_ store: DocumentStore) throws -> Int {
            for batch in jsonBatches { try store.write { b in for p in batch { try b.insert("person", p) } } }
            return jsonBatches.count
        }
        for (indexes, covering) in [(0, false), (1, false), (3, true)] {
            var unique: [[UInt8]] = []
            let captured = try captureWrites(schema: try Self.documentsSchema(indexes, covering: covering), phases: [{ store in
                if indexes == 3 { unique = [try self.uniqueStringPrefix(try store.collection("person"), field: "email", index: "by_email")] }
                return try insertAll(store)
            }])
            let program = FloorProgram()
            Self.addWrites(captured.setup, to: program, documents: documents)
            let setup = program.units
            let written = Self.addWrites(captured.phases[0], to: program, documents: documents, unique: unique)
            guard written == documentCount else { throw BenchError("floor: the insert batches hold \(written) documents, not \(documentCount)") }
            let name = covering ? "insert (3 indexes, 2 covering)" : "insert (\(indexes) secondary indexes)"
            try measureWriteFloor("documents", name, program: program, workload: setup..<program.units, documents: documentCount)
        }

        // 3 indexes: inserts (measured), then the update rounds and delete slices on the
        // same database, as KVDocs runs them on one store.
        var unique: [[UInt8]] = []
        var phases: [(DocumentStore) throws -> Int] = [{ store in
            unique = [try self.uniqueStringPrefix(try store.collection("person"), field: "email", index: "by_email")]
            return try insertAll(store)
        }]
        for round in 1...repeats {
            phases.append { store in
                let moved = updates.map { self.json(changed($0, round)) }
                for chunk in stride(from: 0, to: moved.count, by: 1000) {
                    try store.write { b in for p in moved[chunk..<min(chunk + 1000, moved.count)] { try b.upsert("person", p) } }
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
        let program = FloorProgram()
        Self.addWrites(captured.setup, to: program, documents: documents)
        let setup = program.units
        guard Self.addWrites(captured.phases[0], to: program, documents: documents, unique: unique) == documentCount else {
            throw BenchError("floor: the insert batches do not hold every document")
        }
        try measureWriteFloor("documents", "insert (3 secondary indexes)", program: program, workload: setup..<program.units, documents: documentCount)
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
