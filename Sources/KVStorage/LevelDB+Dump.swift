import Foundation
import KVSupport

/// Dump files: every entry of a database as a line of JSON, restored byte for byte.
///
/// The format (kvrepl's `dump` and `load`, a public contract) is one JSON object per line,
/// key and value in hexadecimal:
///
/// ```
/// {"key_hex":"6b6579","value_hex":"76616c7565"}
/// ```
///
/// ``LevelDB/dump(to:range:options:)`` writes exactly that: the two members in that
/// order, no spaces, lowercase digits, each line ending with `\n`, entries in key order.
/// ``LevelDB/load(from:batchSize:maximumLineLength:sync:)`` reads any JSON object with
/// string members `key_hex` and `value_hex` (or, as older files spell them, `key` and
/// `value`), in either case of hex digits, with any other members ignored; blank lines are
/// skipped.
extension LevelDB {
    /// Writes the entries of `range` to the file at `path`, one line of JSON per entry
    /// (see the format above), and returns how many were written.
    ///
    /// ```swift
    /// try db.dump(to: "backup.jsonl")
    /// let copy = try LevelDB(path: "restored")
    /// try copy.load(from: "backup.jsonl")        // the same entries, byte for byte
    /// ```
    ///
    /// The entries are those of one moment: the scan's own implicit snapshot, or the
    /// snapshot in `options`; writes made during the dump are not in it. Memory stays
    /// bounded (one entry and a 1 MiB buffer) whatever the database's size. The file is
    /// created, or truncated.
    /// - Throws: `.ioError` naming the file when it cannot be written (what was written
    ///   stays: an incomplete dump); the scan's errors (`.closed`, `.corruption`, `.ioError`).
    @discardableResult
    public func dump(to path: String, range: KeyRange = .all, options: LevelDBReadOptions = LevelDBReadOptions()) throws
        -> Int
    {
        let entries = try self.entries(range, options: options)
        let file = try OutputFile(path: path)
        var count = 0
        while try entries.next({ key, value -> Void in
            try file.write(Self.dumpLineStart)
            try file.writeHex(key)
            try file.write(Self.dumpLineMiddle)
            try file.writeHex(value)
            try file.write(Self.dumpLineEnd)
        }) != nil {
            count += 1
        }
        try file.close()
        return count
    }

    /// Puts the entries of a dump file (see the format above) and returns how many.
    ///
    /// Every line is checked before anything is written, so a malformed line (not JSON,
    /// not an object, a member missing, not hex digits, longer than `maximumLineLength`)
    /// is reported as `file:line` and loads nothing. The entries are then written in
    /// batches of `batchSize`: each batch is atomic, the whole load is not (a crash
    /// part-way keeps the batches already written). Pass `batchSize: .max` for one atomic
    /// batch, at the cost of holding the whole file in memory; otherwise memory stays
    /// bounded by the longest line and one batch. Existing keys are overwritten; other
    /// keys are left alone.
    /// - Parameters:
    ///   - path: the dump file to read, as written by ``dump(to:range:options:)``.
    ///   - batchSize: the entries written per atomic batch (at least 1; `.max` for one
    ///     batch holding the whole file).
    ///   - maximumLineLength: the longest line accepted, in bytes (64 MiB by default).
    ///   - sync: write every batch with `sync` (see ``put(_:_:sync:)``); with nothing to
    ///     load, one empty synced write is still made, so earlier writes are on the disk too.
    /// - Throws: `.invalidArgument` naming the file and line of a malformed line ("nothing
    ///   was loaded"), or for a `batchSize` below 1; `.ioError` when the file cannot be
    ///   read; storage errors of the writes.
    @discardableResult
    public func load(
        from path: String, batchSize: Int = 10_000,
        maximumLineLength: Int = LineReader.defaultMaximumLineLength, sync: Bool = false
    ) throws -> Int {
        guard batchSize >= 1 else {
            throw KVDocsError(.invalidArgument, "load: batchSize must be at least 1, not \(batchSize)", path: self.path)
        }
        // Pass 1: check every line.
        var check = try LineReader(path: path, maximumLineLength: maximumLineLength)
        defer { check.close() }
        while true {
            let next: Data?
            do {
                next = try check.next()
            } catch let e as KVDocsError where e.kind == .invalidArgument {
                throw KVDocsError(.invalidArgument, "\(e.message); nothing was loaded", path: self.path)
            }
            guard let line = next else { break }
            _ = try dumpEntry(line, file: path, line: check.lineNumber, failure: "nothing was loaded")
        }

        // Pass 2: write in batches.
        var reader = try LineReader(path: path, maximumLineLength: maximumLineLength)
        defer { reader.close() }
        let batch = WriteBatch()
        var loaded = 0
        var wrote = false
        while let line = try reader.next() {
            // The file changed since it was checked: say what was written.
            guard
                let (key, value) = try dumpEntry(
                    line, file: path, line: reader.lineNumber,
                    failure:
                        "the file changed while it was loaded; \(loaded - batch.count) entries before this batch were loaded"
                )
            else { continue }
            batch.put(key, value)
            loaded += 1
            if batch.count >= batchSize {
                try write(batch, sync: sync)
                batch.clear()
                wrote = true
            }
        }
        if batch.count > 0 || (sync && !wrote) { try write(batch, sync: sync) }
        return loaded
    }

    private static let dumpLineStart = Array(#"{"key_hex":""#.utf8)
    private static let dumpLineMiddle = Array(#"","value_hex":""#.utf8)
    private static let dumpLineEnd = Array("\"}\n".utf8)

    /// The key and value of a dump line; `nil` for a blank line.
    private func dumpEntry(_ line: Data, file: String, line number: Int, failure: @autoclosure () -> String) throws -> (
        [UInt8], [UInt8]
    )? {
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return nil }
        guard let object = try? JSONValue(parsing: line), case .object(let fields) = object,
            case .string(let keyHex)? = fields["key_hex"] ?? fields["key"],
            case .string(let valueHex)? = fields["value_hex"] ?? fields["value"],
            let key = Self.bytes(hex: keyHex), let value = Self.bytes(hex: valueHex)
        else {
            throw KVDocsError(
                .invalidArgument, "\(file):\(number): expected {\"key_hex\": HEX, \"value_hex\": HEX}; \(failure())",
                path: path)
        }
        return (key, value)
    }

    /// The bytes spelled by pairs of hex digits (either case), or `nil`.
    static func bytes(hex: String) -> [UInt8]? {
        func digit(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        let utf8 = hex.utf8
        guard utf8.count % 2 == 0 else { return nil }
        var result: [UInt8] = []
        result.reserveCapacity(utf8.count / 2)
        var high: UInt8?
        for c in utf8 {
            guard let d = digit(c) else { return nil }
            if let h = high {
                result.append(h << 4 | d)
                high = nil
            } else {
                high = d
            }
        }
        return result
    }
}
