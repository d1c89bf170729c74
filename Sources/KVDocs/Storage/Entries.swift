/// A key and its value, copied out of the database.
public struct Entry: Hashable, Sendable {
    public var key: [UInt8]
    public var value: [UInt8]

    public init(key: [UInt8], value: [UInt8]) {
        self.key = key
        self.value = value
    }
}

/// The entries of a key range in one direction, up to a limit: a single-pass sequence.
///
/// ```swift
/// for entry in try db.entries(.prefix("user:").starting(at: "user:100"), order: .reverse, limit: 20) {
///     print(entry.key, entry.value)
/// }
/// ```
///
/// The sequence reads the database as of its creation (or as of the snapshot in its read
/// options). Iterating with `for`-`in` copies each key and value; to read them in place use
/// ``next(_:)`` or ``Database/forEach(in:order:limit:options:_:)``.
///
/// A `for`-`in` loop cannot throw, so if the database is closed or a read fails mid-way
/// the loop ends early and ``error`` holds the cause. ``nextEntry()`` and ``next(_:)``
/// throw instead.
public final class Entries: Sequence, IteratorProtocol {
    /// The range scanned.
    public let range: KeyRange
    /// The direction of the scan.
    public let order: ScanOrder
    /// The most entries the sequence yields; `nil` for no limit.
    public let limit: Int?
    /// The error that ended a `for`-`in` loop early, if any.
    public private(set) var error: KVDocsError?

    private let cursor: Cursor
    private var started = false
    private var finished = false
    private var yielded = 0

    init(database: Database, range: KeyRange, order: ScanOrder, limit: Int?, options: ReadOptions) throws {
        if let limit, limit < 0 {
            throw KVDocsError(.invalidArgument, "scan limit must not be negative (got \(limit))", path: database.path)
        }
        self.range = range
        self.order = order
        self.limit = limit
        self.cursor = try Cursor(database: database, options: options)
    }

    /// Moves to the next entry and lends its key and value to `body`; returns `nil`
    /// when the range is exhausted. The buffers are valid only during `body`.
    /// - Throws: `.closed`, `.corruption`, `.ioError`, or what `body` throws.
    public func next<R>(_ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> R) throws -> R? {
        guard try advance() else { return nil }
        return try cursor.withEntry(body)
    }

    /// The next entry, copied; `nil` when the range is exhausted.
    /// - Throws: `.closed`, `.corruption`, `.ioError`.
    public func nextEntry() throws -> Entry? {
        try next { Entry(key: Array($0), value: Array($1)) }
    }

    /// The next entry for `for`-`in`; at an error the sequence ends and ``error`` is set.
    public func next() -> Entry? {
        do {
            return try nextEntry()
        } catch let e as KVDocsError {
            error = e
            finished = true
            return nil
        } catch {
            self.error = KVDocsError(.ioError, "\(error)")
            finished = true
            return nil
        }
    }

    /// All remaining entries, copied.
    /// - Throws: the error that stopped the scan.
    public func collect() throws -> [Entry] {
        var result: [Entry] = []
        while let entry = try nextEntry() { result.append(entry) }
        return result
    }

    private func advance() throws -> Bool {
        if finished { return false }
        if let limit, yielded >= limit {
            finished = true
            return false
        }
        let found: Bool
        if !started {
            started = true
            found = range.isEmpty(compare: cursor.database.compareKeys) ? false : try cursor.position(in: range, order: order)
        } else {
            found = try cursor.step(in: range, order: order)
        }
        if !found { finished = true; return false }
        yielded += 1
        return true
    }
}

// Entries wrap a cursor, which stays on one thread.
@available(*, unavailable)
extension Entries: Sendable {}

extension Database {
    /// The entries of `range` in `order`, at most `limit` of them.
    ///
    /// Bounds, prefixes, start keys, direction and limit all combine: for example
    /// `.prefix(p).starting(at: k)` with `.reverse` yields the keys of `p` that are `>= k`,
    /// highest first.
    /// - Throws: `.closed`, `.invalidArgument` for a negative limit.
    public func entries(
        _ range: KeyRange = .all, order: ScanOrder = .forward, limit: Int? = nil,
        options: ReadOptions = ReadOptions()
    ) throws -> Entries {
        try Entries(database: self, range: range, order: order, limit: limit, options: options)
    }

    /// Calls `body` with each key and value of `range` in `order`, in place (no copies).
    /// The buffers are valid only during each call. Returns the number of entries visited.
    /// - Throws: `.closed`, `.corruption`, `.ioError`, or what `body` throws (which stops the scan).
    @discardableResult
    public func forEach(
        in range: KeyRange = .all, order: ScanOrder = .forward, limit: Int? = nil,
        options: ReadOptions = ReadOptions(),
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Void
    ) throws -> Int {
        let entries = try entries(range, order: order, limit: limit, options: options)
        var count = 0
        while try entries.next(body) != nil { count += 1 }
        return count
    }
}
