import KVSupport

/// A key and its value, copied out of the database.
public struct KeyValueEntry: Hashable, Sendable {
    /// The key's bytes.
    public var key: [UInt8]
    /// The value's bytes.
    public var value: [UInt8]

    /// An entry of `key` and `value`.
    /// - Parameters:
    ///   - key: the key's bytes.
    ///   - value: the value's bytes.
    public init(key: [UInt8], value: [UInt8]) {
        self.key = key
        self.value = value
    }
}

/// The entries of a key range in one direction, up to a limit: a single-pass
/// ``ThrowingCursor``.
///
/// <!-- doc-code: preamble=examples -->
/// ```swift
/// let entries = try db.entries(.prefix("user:").starting(at: "user:100"), order: .reverse, limit: 20)
/// while let entry = try entries.next() {
///     print(entry.key, entry.value)
/// }
/// ```
///
/// `LevelDBEntries` is not a `Sequence`, so a `for`-`in` loop over it does not compile: a loop
/// that cannot throw would end silently at an I/O error or at ``LevelDB/close()``.
/// ``next()``, ``next(_:)``, and every operation of ``ThrowingCursor`` (``ThrowingCursor/forEach(_:)``,
/// ``ThrowingCursor/collect()``, ``ThrowingCursor/map(_:)``, …) throw instead.
///
/// The entries are read as of the cursor's creation (or as of the snapshot in its read
/// options). ``next()`` copies each key and value; to read them in place use ``next(_:)``
/// or ``LevelDB/forEach(in:order:limit:options:_:)``.
///
/// A storage error (`.closed`, `.corruption`, `.ioError`) ends the iteration: the call
/// that meets it throws it, and so does every later call. An error thrown by the closure
/// of ``next(_:)`` is the caller's: it is rethrown, the entry counts as read, and the
/// iteration can go on.
public final class LevelDBEntries: ThrowingCursor {
    /// The range scanned.
    public let range: KeyRange
    /// The direction of the scan.
    public let order: ScanOrder
    /// The most entries the cursor yields; `nil` for no limit.
    public let limit: Int?

    private let cursor: LevelDBCursor
    private var started = false
    private var finished = false
    private var yielded = 0
    /// The storage error that ended the iteration, thrown again by every later call.
    private var failure: (any Error)?

    init(database: LevelDB, range: KeyRange, order: ScanOrder, limit: Int?, options: LevelDBReadOptions) throws {
        if let limit, limit < 0 {
            throw KVDocsError(.invalidArgument, "scan limit must not be negative (got \(limit))", path: database.path)
        }
        self.range = range
        self.order = order
        self.limit = limit
        self.cursor = try LevelDBCursor(database: database, options: options)
    }

    /// Moves to the next entry and lends its key and value to `body`; returns `nil`
    /// when the range is exhausted. The buffers are valid only during `body`.
    ///
    /// <!-- doc-code: preamble=examples -->
    /// ```swift
    /// while let size = try entries.next({ key, value in key.count + value.count }) { total += size }
    /// ```
    /// - Throws: `.closed`, `.corruption`, `.ioError` (and again on every later call), or
    ///   what `body` throws.
    public func next<R>(_ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> R) throws
        -> R?
    {
        var result: R?
        guard try step({ result = try body($0, $1) }) else { return nil }
        return result
    }

    /// Moves to the next entry and lends its key and value to `body`, returning `true`;
    /// `false` when the range is exhausted. ``next(_:)`` without a result, not generic.
    /// - Throws: as ``next(_:)``.
    public func step(_ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Void) throws
        -> Bool
    {
        if let failure { throw failure }
        if finished { return false }
        if let limit, yielded >= limit {
            finished = true
            return false
        }
        let first = !started
        if first {
            started = true
            if range.isEmpty(compare: cursor.database.compareKeys) {
                finished = true
                return false
            }
        }
        var callerError = false
        do {
            // The entry counts as read before `body` runs, whatever `body` does.
            let found = try cursor.advance(in: range, order: order, first: first, callerError: &callerError) {
                yielded += 1
                try body($0, $1)
            }
            if !found { finished = true }
            return found
        } catch {
            if callerError { throw error }
            failure = error
            finished = true
            throw error
        }
    }

    /// The next entry, copied; `nil` when the range is exhausted.
    /// - Throws: `.closed`, `.corruption`, `.ioError`, and again on every later call.
    public func next() throws -> KeyValueEntry? {
        try next { KeyValueEntry(key: Array($0), value: Array($1)) }
    }
}

// Entries wrap a cursor, which stays on one thread.
@available(*, unavailable)
extension LevelDBEntries: Sendable {}

extension LevelDB {
    /// The entries of `range` in `order`, at most `limit` of them: a ``ThrowingCursor``
    /// (read it with `while let entry = try entries.next()` or `try entries.forEach { … }`).
    ///
    /// <!-- doc-code: preamble=examples -->
    /// ```swift
    /// try db.entries(.prefix("user:"), order: .reverse, limit: 10).forEach { entry in
    ///     print(entry.key, entry.value)
    /// }
    /// ```
    ///
    /// Bounds, prefixes, start keys, direction and limit all combine: for example
    /// `.prefix(p).starting(at: k)` with `.reverse` yields the keys of `p` that are `>= k`,
    /// highest first.
    /// - Throws: `.closed`, `.invalidArgument` for a negative limit.
    public func entries(
        _ range: KeyRange = .all, order: ScanOrder = .forward, limit: Int? = nil,
        options: LevelDBReadOptions = LevelDBReadOptions()
    ) throws -> LevelDBEntries {
        try LevelDBEntries(database: self, range: range, order: order, limit: limit, options: options)
    }

    /// Calls `body` with each key and value of `range` in `order`, in place (no copies).
    /// The buffers are valid only during each call. Returns the number of entries visited.
    /// - Throws: `.closed`, `.corruption`, `.ioError`, or what `body` throws (which stops the scan).
    @discardableResult
    public func forEach(
        in range: KeyRange = .all, order: ScanOrder = .forward, limit: Int? = nil,
        options: LevelDBReadOptions = LevelDBReadOptions(),
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Void
    ) throws -> Int {
        let entries = try entries(range, order: order, limit: limit, options: options)
        var count = 0
        while try entries.next(body) != nil { count += 1 }
        return count
    }
}
