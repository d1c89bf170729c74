import CBench
import Foundation
import KVDocs

/// A physical floor as a program of LevelDB C API calls (`cfloor.h`): gets, batch puts and
/// deletes, writes and scans, grouped in units (a batch written, a query answered), run by
/// `cb_floor_run` with nothing of KVDocs in the way.
final class FloorProgram {
    private(set) var bytes: [UInt8] = []
    private var kind: [Int8] = [], flags: [Int8] = []
    private var aOffset: [Int] = [], aLength: [Int] = [], bOffset: [Int] = [], bLength: [Int] = []
    private var limit: [Int32] = []
    private var unitStarts: [Int32] = [0]
    /// The units closed so far.
    var units: Int { unitStarts.count - 1 }

    private func step(
        _ k: cb_step_kind, _ a: some Collection<UInt8>, _ b: some Collection<UInt8> = [], limit l: Int = 0,
        flags f: Int32 = 0
    ) {
        kind.append(Int8(k.rawValue))
        flags.append(Int8(f))
        limit.append(Int32(l))
        aOffset.append(bytes.count)
        aLength.append(a.count)
        bytes += a
        bOffset.append(bytes.count)
        bLength.append(b.count)
        bytes += b
    }

    func get(_ key: some Collection<UInt8>) { step(CB_GET, key) }
    func put(_ key: some Collection<UInt8>, _ value: some Collection<UInt8>) { step(CB_PUT, key, value) }
    func delete(_ key: some Collection<UInt8>) { step(CB_DELETE, key) }
    /// `leveldb_write` of the puts and deletes since the last write.
    func write() { step(CB_WRITE, []) }

    /// A scan of `range` (up to `limit` entries; `nil`: all): a new iterator, or with
    /// `sameIterator` the previous scan's (a seek only); backwards with `reverse`.
    func scan(_ range: KeyRange, limit: Int? = nil, reverse: Bool = false, sameIterator: Bool = false) {
        var f: Int32 = 0
        if range.upper?.isIncluded == true { f |= Int32(CB_UPPER_INCLUDED) }
        if let lower = range.lower, !lower.isIncluded { f |= Int32(CB_LOWER_EXCLUDED) }
        step(
            reverse ? CB_SCAN_REVERSE : (sameIterator ? CB_SCAN_SAME : CB_SCAN), range.lower?.key ?? [],
            range.upper?.key ?? [], limit: limit ?? -1, flags: f)
    }

    /// The same program without its gets (the same units): what the writes cost alone.
    func withoutGets() -> FloorProgram {
        let copy = FloorProgram()
        copy.bytes = bytes
        var unit = 1
        for i in kind.indices {
            while unit < unitStarts.count, unitStarts[unit] <= Int32(i) {
                copy.endUnit()
                unit += 1
            }
            if kind[i] == Int8(CB_GET.rawValue) { continue }
            copy.kind.append(kind[i])
            copy.flags.append(flags[i])
            copy.limit.append(limit[i])
            copy.aOffset.append(aOffset[i])
            copy.aLength.append(aLength[i])
            copy.bOffset.append(bOffset[i])
            copy.bLength.append(bLength[i])
        }
        while unit < unitStarts.count {
            copy.endUnit()
            unit += 1
        }
        return copy
    }

    /// Closes the current unit.
    func endUnit() { unitStarts.append(Int32(kind.count)) }

    /// Runs `units` on `db`: the seconds, and what the steps found.
    func run(_ db: FloorDatabase, units: Range<Int>) throws -> (seconds: Double, stats: cb_floor_stats) {
        precondition(units.upperBound <= self.units, "a floor program ran a unit it does not have")
        var stats = cb_floor_stats()
        var error: UnsafeMutablePointer<CChar>?
        let seconds = bytes.withUnsafeBufferPointer { bytes in
            kind.withUnsafeBufferPointer { kind in
                flags.withUnsafeBufferPointer { flags in
                    aOffset.withUnsafeBufferPointer { ao in
                        aLength.withUnsafeBufferPointer { al in
                            bOffset.withUnsafeBufferPointer { bo in
                                bLength.withUnsafeBufferPointer { bl in
                                    limit.withUnsafeBufferPointer { limit in
                                        unitStarts.withUnsafeBufferPointer { starts in
                                            bytes.withMemoryRebound(to: CChar.self) { chars in
                                                let program = cb_program(
                                                    bytes: chars.baseAddress, kind: kind.baseAddress,
                                                    flags: flags.baseAddress,
                                                    a_offset: ao.baseAddress, a_length: al.baseAddress,
                                                    b_offset: bo.baseAddress,
                                                    b_length: bl.baseAddress, limit: limit.baseAddress,
                                                    unit_starts: starts.baseAddress)
                                                return cb_floor_run(
                                                    db.handle, program, Int32(units.lowerBound), Int32(units.count),
                                                    &stats, &error)
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        if seconds < 0 || error != nil {
            defer { free(error) }
            throw BenchError("floor: " + (error.map { String(cString: $0) } ?? "failed"))
        }
        return (seconds, stats)
    }
}

/// A LevelDB database opened through the C API with KVDocs' default options (`LevelDBOptions()`:
/// 4 MiB write buffer, 4 KiB blocks, snappy, a 10-bit bloom filter, LevelDB's own 8 MiB
/// cache, paranoid checks; reads verify checksums; writes are not synced).
final class FloorDatabase {
    let handle: OpaquePointer

    init(path: String) throws {
        var error: UnsafeMutablePointer<CChar>?
        guard
            let handle = cb_open(
                path,
                cb_options(write_buffer_size: 0, block_size: 0, cache_capacity: 0, bloom_bits: 10, compression: 1),
                &error)
        else {
            defer { free(error) }
            throw BenchError("floor: " + (error.map { String(cString: $0) } ?? "cannot open \(path)"))
        }
        self.handle = handle
    }

    deinit { cb_close(handle) }

    func compact() { _ = cb_compact(handle) }
}

extension Bench {
    /// A copy of the database at `path` that a floor can open through the C API while KVDocs
    /// keeps the original open: its table files hard-linked (LevelDB never changes a table
    /// file, so the copy reads the very same files and page cache), the others (manifest,
    /// log, `CURRENT`) copied, the lock file left out.
    /// - Precondition: nothing writes to the database while this runs (here: it was
    ///   compacted and only read since).
    func floorCopy(of path: String) throws -> String {
        let copy = freshPath("floor-copy")
        let fm = FileManager.default
        try fm.createDirectory(atPath: copy, withIntermediateDirectories: false)
        for name in try fm.contentsOfDirectory(atPath: path) where name != "LOCK" {
            if name.hasSuffix(".ldb") || name.hasSuffix(".sst") {
                try fm.linkItem(atPath: path + "/" + name, toPath: copy + "/" + name)
            } else {
                try fm.copyItem(atPath: path + "/" + name, toPath: copy + "/" + name)
            }
        }
        return copy
    }
}

/// One operation of a LevelDB write batch.
struct LoggedWrite {
    var key: [UInt8]
    /// `nil` for a delete.
    var value: [UInt8]?
}

/// The write batches of a LevelDB database, read back from its write-ahead log files
/// (`NNNNNN.log`, in number order): LevelDB's log format (32 KiB blocks of records with
/// 7-byte headers: checksum, length, type full/first/middle/last), each record one
/// `WriteBatch` (8-byte sequence, 4-byte count, then tag 1 put or 0 delete, varint32-
/// prefixed key and value). Checksums are not verified: the file was just written.
enum LevelDBLog {
    static func batches(inDatabase path: String) throws -> [[LoggedWrite]] {
        let logs = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".log") }
            .sorted { (Int($0.dropLast(4)) ?? 0) < (Int($1.dropLast(4)) ?? 0) }
        var result: [[LoggedWrite]] = []
        for name in logs {
            let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path + "/" + name)))
            for record in try records(data) { result.append(try operations(record)) }
        }
        return result
    }

    static func records(_ data: [UInt8]) throws -> [[UInt8]] {
        let block = 32768
        var records: [[UInt8]] = [], pending: [UInt8] = []
        var at = 0
        while at + 7 <= data.count {
            let left = block - at % block
            if left < 7 {
                at += left
                continue
            }
            let length = Int(data[at + 4]) | Int(data[at + 5]) << 8, type = data[at + 6]
            if type == 0 && length == 0 {
                at += left
                continue
            }  // preallocated zeros
            guard at + 7 + length <= data.count else { break }  // a torn tail
            let fragment = data[(at + 7)..<(at + 7 + length)]
            switch type {
            case 1: records.append(Array(fragment))
            case 2: pending = Array(fragment)
            case 3: pending += fragment
            case 4:
                records.append(pending + fragment)
                pending = []
            default: throw BenchError("floor: log record of type \(type)")
            }
            at += 7 + length
        }
        return records
    }

    static func operations(_ rep: [UInt8]) throws -> [LoggedWrite] {
        guard rep.count >= 12 else { throw BenchError("floor: a write batch of \(rep.count) bytes") }
        let count = Int(rep[8]) | Int(rep[9]) << 8 | Int(rep[10]) << 16 | Int(rep[11]) << 24
        var at = 12
        func varint() throws -> Int {
            var value = 0, shift = 0
            while at < rep.count {
                let b = rep[at]
                at += 1
                value |= Int(b & 0x7f) << shift
                if b < 0x80 { return value }
                shift += 7
            }
            throw BenchError("floor: a truncated write batch")
        }
        func slice() throws -> [UInt8] {
            let n = try varint()
            guard at + n <= rep.count else { throw BenchError("floor: a truncated write batch") }
            defer { at += n }
            return Array(rep[at..<(at + n)])
        }
        var ops: [LoggedWrite] = []
        ops.reserveCapacity(count)
        while at < rep.count {
            let tag = rep[at]
            at += 1
            switch tag {
            case 1: ops.append(LoggedWrite(key: try slice(), value: try slice()))
            case 0: ops.append(LoggedWrite(key: try slice(), value: nil))
            default: throw BenchError("floor: write batch tag \(tag)")
            }
        }
        guard ops.count == count else {
            throw BenchError("floor: a write batch says \(count) operations and holds \(ops.count)")
        }
        return ops
    }
}

/// What KVDocs wrote for a workload, batch by batch, byte for byte: the writes were made
/// again, untimed, on a capture store whose write buffer (1 GiB) keeps every batch in its
/// log, and read back from the log. Setup batches (the schema, the catalog) come first.
struct CapturedWrites {
    var setup: [[LoggedWrite]] = []
    var phases: [[[LoggedWrite]]] = []
}

extension Bench {
    /// Makes a document store on a capture database, runs each phase (it returns how many
    /// `store.write` calls it made, each one LevelDB write) and returns the batches of each.
    /// - Throws: when a phase's batches in the log are not the writes it made.
    func captureWrites(schema: DocumentSchema, phases: [(DocumentStore) throws -> Int]) throws -> CapturedWrites {
        var options = KVDocs.LevelDBOptions()
        options.writeBufferSize = 1 << 30
        let db = try KVDocs.LevelDB(path: freshPath("floor-capture"), options: options)
        defer {
            db.close()
            try? FileManager.default.removeItem(atPath: db.path)  // up to 1 GiB of log
        }
        let store = try DocumentStore(database: db, schema: schema)
        var captured = CapturedWrites(setup: try LevelDBLog.batches(inDatabase: db.path))
        var seen = captured.setup.count
        for phase in phases {
            let writes = try phase(store)
            let all = try LevelDBLog.batches(inDatabase: db.path)
            guard all.count == seen + writes else {
                throw BenchError(
                    "floor: a capture phase made \(writes) writes, the log holds \(all.count - seen) batches")
            }
            captured.phases.append(Array(all[seen...]))
            seen = all.count
        }
        return captured
    }

    /// The physical work of KVDocs' write batches as a floor program, one unit per batch:
    /// the gets KVDocs makes while building the batch (one per document written or deleted,
    /// the stored document's key, found or not; one per entry put into a unique index, the
    /// uniqueness check), then every put and delete of the batch, byte-identical and in
    /// order, and one `leveldb_write`. Returns the documents written.
    /// - Precondition: no document is written twice in one batch and no unique value is
    ///   released and taken again in one batch (KVDocs then reads its own batch instead).
    @discardableResult
    static func addWrites(
        _ batches: [[LoggedWrite]], to program: FloorProgram, documents: [[UInt8]], unique: [[UInt8]] = []
    ) -> Int {
        var written = 0
        for batch in batches {
            for op in batch {
                if documents.contains(where: { op.key.starts(with: $0) }) {
                    program.get(op.key)
                    written += 1
                } else if op.value != nil, unique.contains(where: { op.key.starts(with: $0) }) {
                    program.get(op.key)
                }
            }
            for op in batch {
                if let value = op.value { program.put(op.key, value) } else { program.delete(op.key) }
            }
            program.write()
            program.endUnit()
        }
        return written
    }

    /// The key prefix of the entries of a unique index on a string field: the common prefix
    /// of the keys its equality plans seek for two values.
    func uniqueStringPrefix(_ collection: DocumentCollection, field: String, index: String) throws -> [UInt8] {
        let keys = try ["a", "b"].map { value -> [UInt8] in
            let plan = try collection.explain(
                DocumentQuery().where(FieldPath(stringLiteral: field), .equal(.string(value))).limit(1))
            guard plan.index == index, let key = plan.ranges.first?.lower?.key else {
                throw BenchError("floor: an equality on \(field) did not plan on the unique index \(index)")
            }
            return key
        }
        return Array(zip(keys[0], keys[1]).prefix { $0 == $1 }.map(\.0))
    }

    /// The key prefix of a collection's stored documents (`("d", collection)`).
    static func documentPrefix(_ collection: String) -> [UInt8] {
        Subspace().subspace(["d", .string(collection)]).prefix
    }

    /// Measures a write floor: per repeat a fresh database, the units before `workload`
    /// (setup, preloaded documents) untimed, then `workload`'s units timed. The extra figure
    /// `writes_only_us` times the same batches without the gets, on another fresh database.
    func measureWriteFloor(
        _ section: String, _ name: String, program: FloorProgram, workload: Range<Int>, documents: Int,
        repeats: Int? = nil
    ) throws {
        let writesOnly = program.withoutGets()
        try measure(section, name, "leveldb-floor", repeats: repeats) {
            // Each database is closed (its background compactions done) before the next opens.
            func run(_ p: FloorProgram) throws -> (seconds: Double, stats: cb_floor_stats) {
                let db = try FloorDatabase(path: freshPath("floor"))
                _ = try p.run(db, units: 0..<workload.lowerBound)
                return try p.run(db, units: workload)
            }
            let (seconds, stats) = try run(program)
            let (writeSeconds, _) = try run(writesOnly)
            return (
                seconds, documents,
                Self.floorExtra(stats).merging(["writes_only_us": writeSeconds * 1e6 / Double(max(1, documents))]) {
                    a, _ in a
                }
            )
        }
    }

    static func floorExtra(_ stats: cb_floor_stats) -> [String: Double] {
        [
            "gets": Double(stats.gets), "gets_found": Double(stats.found), "entries_read": Double(stats.entries),
            "writes": Double(stats.writes)
        ]
    }
}
