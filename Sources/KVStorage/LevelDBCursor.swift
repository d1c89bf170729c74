import CLevelDB
import KVSupport

/// A LevelDB iterator: a position in the database's key order that can seek and step
/// both ways, reading the entry it is on without copying.
///
/// A cursor reads the database as of its creation (LevelDB iterators carry an implicit
/// snapshot) unless made with a ``LevelDBSnapshot`` in its ``LevelDBReadOptions``. It keeps its database
/// alive; after ``LevelDB/close()`` every method throws `.closed`.
///
/// ```swift
/// let cursor = try db.makeCursor()
/// try cursor.seek(to: "user:")
/// while try cursor.isValid {
///     let keyLength = try cursor.withKey { $0.count }
///     try cursor.next()
/// }
/// ```
///
/// Most code wants ``LevelDB/entries(_:order:limit:options:)`` instead, which handles
/// ranges, direction and limits and returns a ``ThrowingCursor`` of entries. A `LevelDBCursor` is
/// positioned explicitly and is not a ``ThrowingCursor``.
public final class LevelDBCursor {
    /// The database the cursor reads. Kept alive by the cursor.
    public let database: LevelDB
    private let snapshot: LevelDBSnapshot?
    private var iterator: OpaquePointer?

    init(database: LevelDB, options: LevelDBReadOptions) throws {
        self.database = database
        self.snapshot = options.snapshot
        iterator = try database.withHandle { db in
            try database.withReadOptions(options) { readOptions in
                let it: OpaquePointer = leveldb_create_iterator(db, readOptions)
                database.register(.iterator(it), owner: self)
                return it
            }
        }
    }

    deinit { database.free(ownedBy: self) }

    /// Runs `body` with the iterator while the database is open.
    @inline(__always)
    private func withIterator<R>(_ body: (OpaquePointer) throws -> R) throws -> R {
        try database.withHandle { _ in
            guard let iterator else { throw KVDocsError.closed(database.path) }
            return try body(iterator)
        }
    }

    /// Throws the iterator's error status, if any (I/O error or corruption met while moving).
    @inline(__always)
    private func check(_ it: OpaquePointer) throws {
        try withLevelDBError(path: database.path) { leveldb_iter_get_error(it, $0) }
    }

    /// Whether the cursor is on an entry. False past either end or after an error.
    public var isValid: Bool {
        get throws { try withIterator { leveldb_iter_valid($0) != 0 } }
    }

    /// Moves to the first entry; the cursor is not valid afterwards when there is none.
    /// - Throws: `.closed`; `.corruption` or `.ioError` met while reading.
    public func seekToFirst() throws {
        try withIterator {
            leveldb_iter_seek_to_first($0)
            try check($0)
        }
    }

    /// Moves to the last entry; the cursor is not valid afterwards when there is none.
    /// - Throws: `.closed`; `.corruption` or `.ioError` met while reading.
    public func seekToLast() throws {
        try withIterator {
            leveldb_iter_seek_to_last($0)
            try check($0)
        }
    }

    /// Moves to the first entry whose key is at or after `key` in the database's order; the
    /// cursor is not valid afterwards when there is none.
    /// - Throws: `.closed`; `.corruption` or `.ioError` met while reading.
    public func seek<Key: ByteRepresentable>(to key: Key) throws {
        try withIterator { it in
            key.withBytes { leveldb_iter_seek(it, $0.cChars, $0.count) }
            try check(it)
        }
    }

    /// Moves to the next entry. REQUIRES: ``isValid``; else it throws `.invalidArgument`.
    public func next() throws {
        try withIterator { it in
            guard leveldb_iter_valid(it) != 0 else { throw notPositioned() }
            leveldb_iter_next(it)
            try check(it)
        }
    }

    /// Moves to the previous entry. REQUIRES: ``isValid``; else it throws `.invalidArgument`.
    public func previous() throws {
        try withIterator { it in
            guard leveldb_iter_valid(it) != 0 else { throw notPositioned() }
            leveldb_iter_prev(it)
            try check(it)
        }
    }

    /// Lends the current key to `body`; valid only during the call.
    /// - Throws: `.invalidArgument` when the cursor is not on an entry, `.closed`, or what
    ///   `body` throws.
    public func withKey<R>(_ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        try withIterator { it in
            guard leveldb_iter_valid(it) != 0 else { throw notPositioned() }
            var length = 0
            let key = leveldb_iter_key(it, &length)
            return try body(UnsafeRawBufferPointer(start: key, count: length))
        }
    }

    /// Lends the current value to `body`; valid only during the call.
    /// - Throws: `.invalidArgument` when the cursor is not on an entry, `.closed`, or what
    ///   `body` throws.
    public func withValue<R>(_ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        try withIterator { it in
            guard leveldb_iter_valid(it) != 0 else { throw notPositioned() }
            var length = 0
            let value = leveldb_iter_value(it, &length)
            return try body(UnsafeRawBufferPointer(start: value, count: length))
        }
    }

    /// A copy of the current key.
    /// - Throws: `.invalidArgument` when the cursor is not on an entry, `.closed`.
    public func key() throws -> [UInt8] { try withKey { Array($0) } }

    /// A copy of the current value.
    /// - Throws: `.invalidArgument` when the cursor is not on an entry, `.closed`.
    public func value() throws -> [UInt8] { try withValue { Array($0) } }

    private func notPositioned() -> KVDocsError {
        KVDocsError(
            .invalidArgument, "the cursor is not on an entry (past an end, or not yet positioned)", path: database.path)
    }

    // MARK: Range stepping (used by Entries; one lock acquisition per step)

    /// Positions on the first entry of `range` in `order`. Returns whether there is one.
    func position(in range: KeyRange, order: ScanOrder) throws -> Bool {
        try withIterator { try position(it: $0, in: range, order: order) }
    }

    /// Steps once in `order`. Returns whether the new entry is still in `range`.
    func step(in range: KeyRange, order: ScanOrder) throws -> Bool {
        try withIterator { try step(it: $0, in: range, order: order) }
    }

    /// Positions on the first entry of `range` (`first`) or steps once in `order`, and lends
    /// the entry to `body` when it is in `range`: one lock acquisition for both. `false` when
    /// the range holds no further entry. Errors of `body` are passed through `callerError`
    /// (set before they are rethrown), so that the caller tells them from the storage's.
    func advance(
        in range: KeyRange, order: ScanOrder, first: Bool, callerError: inout Bool,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void
    ) throws -> Bool {
        try withIterator { it -> Bool in
            let found =
                first ? try position(it: it, in: range, order: order) : try step(it: it, in: range, order: order)
            guard found else { return false }
            var keyLength = 0, valueLength = 0
            let key = leveldb_iter_key(it, &keyLength)
            let value = leveldb_iter_value(it, &valueLength)
            do {
                try body(
                    UnsafeRawBufferPointer(start: key, count: keyLength),
                    UnsafeRawBufferPointer(start: value, count: valueLength))
            } catch {
                callerError = true
                throw error
            }
            return true
        }
    }

    @inline(__always)
    private func position(it: OpaquePointer, in range: KeyRange, order: ScanOrder) throws -> Bool {
        switch order {
        case .forward:
            if let lower = range.lower {
                lower.key.withUnsafeBytes { leveldb_iter_seek(it, $0.cChars, $0.count) }
                // An exclusive lower bound skips an entry equal to it.
                if !lower.isIncluded, leveldb_iter_valid(it) != 0,
                    !range.isAbove(lower: currentKey(it), compare: database.compareKeys)
                {
                    leveldb_iter_next(it)
                }
            } else {
                leveldb_iter_seek_to_first(it)
            }
        case .reverse:
            if let upper = range.upper {
                upper.key.withUnsafeBytes { leveldb_iter_seek(it, $0.cChars, $0.count) }
                if leveldb_iter_valid(it) != 0 {
                    // Seek lands on the first key >= upper: step back unless it is in range.
                    if !range.isBelow(upper: currentKey(it), compare: database.compareKeys) {
                        leveldb_iter_prev(it)
                    }
                } else {
                    leveldb_iter_seek_to_last(it)
                }
            } else {
                leveldb_iter_seek_to_last(it)
            }
        }
        try check(it)
        return inRange(it, range)
    }

    @inline(__always)
    private func step(it: OpaquePointer, in range: KeyRange, order: ScanOrder) throws -> Bool {
        guard leveldb_iter_valid(it) != 0 else { return false }
        if order == .forward { leveldb_iter_next(it) } else { leveldb_iter_prev(it) }
        try check(it)
        return inRange(it, range)
    }

    /// Decides, without seeking, where `range` starts when the cursor is at the first entry
    /// past an earlier range (or at the end): true when the cursor reaches an entry in
    /// `range` (so it is the first one there) within `steps` steps forward, false when
    /// `range` holds no entry, nil when it is still before `range` and a seek is needed
    /// (a step costs a fraction of a seek, so skipping a few entries between ranges pays).
    ///
    /// REQUIRES: the cursor was positioned in a range that ends at or before `range` starts,
    /// and moved forward past its end (by ``position(in:order:)`` or ``step(in:order:)``).
    func resume(in range: KeyRange, steps: Int = 0) throws -> Bool? {
        try withIterator { it in
            var taken = 0
            while true {
                guard leveldb_iter_valid(it) != 0 else {
                    try check(it)
                    return false
                }
                let key = currentKey(it)
                if range.isAbove(lower: key, compare: database.compareKeys) {
                    return range.isBelow(upper: key, compare: database.compareKeys)
                }
                guard taken < steps else { return nil }
                leveldb_iter_next(it)
                taken += 1
            }
        }
    }

    /// The number of entries in `range`, counted by stepping the iterator without handing
    /// out entries: one lock acquisition per 4096 steps (so that ``LevelDB/close()`` is
    /// never held off for long).
    func count(in range: KeyRange) throws -> Int {
        if range.isEmpty(compare: database.compareKeys) { return 0 }
        guard try position(in: range, order: .forward) else { return 0 }
        var total = 1
        while true {
            let (steps, more) = try withIterator { it -> (Int, Bool) in
                var steps = 0
                while steps < 4096 {
                    leveldb_iter_next(it)
                    guard inRange(it, range) else {
                        try check(it)
                        return (steps, false)
                    }
                    steps += 1
                }
                try check(it)
                return (steps, true)
            }
            total += steps
            if !more { return total }
        }
    }

    /// Lends the current key and value to `body`, with one lock acquisition.
    @inline(__always)
    func withEntry<R>(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> R) throws -> R {
        try withIterator { it in
            var keyLength = 0, valueLength = 0
            let key = leveldb_iter_key(it, &keyLength)
            let value = leveldb_iter_value(it, &valueLength)
            return try body(
                UnsafeRawBufferPointer(start: key, count: keyLength),
                UnsafeRawBufferPointer(start: value, count: valueLength))
        }
    }

    @inline(__always)
    private func currentKey(_ it: OpaquePointer) -> UnsafeRawBufferPointer {
        var length = 0
        let key = leveldb_iter_key(it, &length)
        return UnsafeRawBufferPointer(start: key, count: length)
    }

    @inline(__always)
    private func inRange(_ it: OpaquePointer, _ range: KeyRange) -> Bool {
        guard leveldb_iter_valid(it) != 0 else { return false }
        let key = currentKey(it)
        return range.isAbove(lower: key, compare: database.compareKeys)
            && range.isBelow(upper: key, compare: database.compareKeys)
    }
}

// A LevelDB iterator is not thread-safe ("not safe for concurrent use without external
// synchronization", include/leveldb/iterator.h): a cursor stays on one thread.
@available(*, unavailable)
extension LevelDBCursor: Sendable {}

extension LevelDB {
    /// Makes a cursor over the whole database. See ``LevelDBCursor``.
    /// - Throws: `.closed`.
    public func makeCursor(options: LevelDBReadOptions = LevelDBReadOptions()) throws -> LevelDBCursor {
        try LevelDBCursor(database: self, options: options)
    }
}
