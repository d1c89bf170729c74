/// A forward scan of several key ranges through one LevelDB iterator: each range after the
/// first starts at the entry past the last one when that entry is in it, and with a seek
/// otherwise, never with a new iterator (what geo coverings and text merges read).
///
/// An error met while moving ends the scan and is thrown again by every later call; an
/// error thrown by the caller's closure is rethrown and the scan can go on.
final class RangesCursor: KeyValueCursor {
    private let cursor: LevelDBCursor
    private let ranges: [KeyRange]
    private var index = 0
    private var positioned = false
    /// Whether the cursor was ever positioned (so that it sits past every earlier range).
    private var started = false
    private var failure: (any Error)?

    /// How many entries between two ranges are stepped over before a seek is made instead.
    static let stepsBeforeSeek = 8

    /// REQUIRES: `ranges` in increasing order and disjoint.
    init(database: LevelDB, ranges: [KeyRange], options: LevelDBReadOptions) throws {
        self.cursor = try LevelDBCursor(database: database, options: options)
        self.ranges = ranges
    }

    func next<R>(_ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> R) throws -> R? {
        if let failure { throw failure }
        do {
            guard try advance() else { return nil }
        } catch {
            failure = error
            throw error
        }
        return try cursor.withEntry(body)
    }

    private func advance() throws -> Bool {
        while index < ranges.count {
            let range = ranges[index]
            let found: Bool
            if positioned {
                found = try cursor.step(in: range, order: .forward)
            } else {
                positioned = true
                if range.isEmpty(compare: cursor.database.compareKeys) {
                    found = false
                } else if started, let decided = try cursor.resume(in: range, steps: Self.stepsBeforeSeek) {
                    // The entry past the last range, or one a few steps on, already tells:
                    // no seek (ranges often follow one another with little between them).
                    found = decided
                } else {
                    started = true
                    found = try cursor.position(in: range, order: .forward)
                }
            }
            if found { return true }
            index += 1
            positioned = false
        }
        return false
    }
}

/// The default multi-range scan: one cursor per range, one after the other.
final class ChainedCursor: KeyValueCursor {
    private let reader: any KeyValueReader
    private let ranges: [KeyRange]
    private var index = 0
    private var current: (any KeyValueCursor)?

    init(reader: any KeyValueReader, ranges: [KeyRange]) {
        self.reader = reader
        self.ranges = ranges
    }

    func next<R>(_ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> R) throws -> R? {
        while true {
            if current == nil {
                guard index < ranges.count else { return nil }
                current = try reader.scan(ranges[index], order: .forward)
                index += 1
            }
            var called = false
            let result = try current?.next { key, value -> R in
                called = true
                return try body(key, value)
            }
            if called { return result }
            current = nil
        }
    }
}
