/// A single-pass stream of results read from storage, whose every step can fail.
///
/// KVDocs follows GRDB's cursor design: a cursor is **not** a `Sequence`. A `for`-`in`
/// loop cannot throw, so a sequence over storage has to end silently when a read fails
/// or the database is closed mid-way; a cursor's ``next()`` throws instead, and so does
/// every operation built on it. Iterate with `while let` or ``forEach(_:)``:
///
/// ```swift
/// let entries = try db.entries(.prefix("user:"))
/// while let entry = try entries.next() {
///     print(entry.key, entry.value)
/// }
///
/// try db.entries(.prefix("user:")).forEach { entry in print(entry.key) }
/// let keys = try db.entries(.prefix("user:")).map(\.key).collect()
/// ```
///
/// Invariants, for every cursor of KVDocs:
/// - Once ``next()`` has returned `nil`, it returns `nil` forever.
/// - An error of the storage (an I/O error, corruption, `.closed` after
///   ``LevelDB/close()``) is thrown by the ``next()`` call that meets it, and again by every
///   later call: an iteration cut short by an error cannot be mistaken for a complete one.
/// - ``map(_:)``, ``filter(_:)``, ``compactMap(_:)`` and ``prefix(_:)`` are lazy: they read
///   nothing until their own ``next()`` is called. The other operations read the cursor to
///   its end (or to the element they look for) and throw what ``next()`` throws.
///
/// Cursors are classes: they are consumed in place, so a copy of the reference shares the
/// position. They stay on the thread that made them (none is `Sendable`).
///
/// ## Topics
///
/// ### Reading
/// - ``next()``
///
/// ### Consuming
/// - ``forEach(_:)``
/// - ``collect()``
/// - ``reduce(_:_:)``
/// - ``reduce(into:_:)``
/// - ``contains(where:)``
/// - ``contains(_:)``
/// - ``first(where:)``
/// - ``allSatisfy(_:)``
///
/// ### Lazy adapters
/// - ``map(_:)``
/// - ``filter(_:)``
/// - ``compactMap(_:)``
/// - ``prefix(_:)``
public protocol ThrowingCursor<Element>: AnyObject {
    /// The type of the elements.
    associatedtype Element

    /// Advances to the next element and returns it, or `nil` when there is none left.
    /// - Throws: what reading the next element throws (for storage: ``KVDocsError``).
    func next() throws -> Element?
}

extension ThrowingCursor {
    /// Calls `body` with each remaining element, in order.
    ///
    /// ```swift
    /// try db.entries(.prefix("user:")).forEach { entry in print(entry.key) }
    /// ```
    /// - Throws: what ``next()`` or `body` throws; either stops the iteration.
    public func forEach(_ body: (Element) throws -> Void) throws {
        while let element = try next() { try body(element) }
    }

    /// The remaining elements, in an array.
    /// - Throws: what ``next()`` throws; nothing is returned then.
    public func collect() throws -> [Element] {
        var result: [Element] = []
        while let element = try next() { result.append(element) }
        return result
    }

    /// Combines the remaining elements with `nextPartialResult`, starting from `initialResult`.
    /// - Throws: what ``next()`` or `nextPartialResult` throws.
    public func reduce<Result>(_ initialResult: Result, _ nextPartialResult: (Result, Element) throws -> Result) throws
        -> Result
    {
        var result = initialResult
        while let element = try next() { result = try nextPartialResult(result, element) }
        return result
    }

    /// Combines the remaining elements into a mutable `initialResult` with `updateAccumulatingResult`.
    /// - Throws: what ``next()`` or `updateAccumulatingResult` throws.
    public func reduce<Result>(
        into initialResult: Result, _ updateAccumulatingResult: (inout Result, Element) throws -> Void
    ) throws -> Result {
        var result = initialResult
        while let element = try next() { try updateAccumulatingResult(&result, element) }
        return result
    }

    /// Whether some remaining element satisfies `predicate`. Reads up to the first that does.
    /// - Throws: what ``next()`` or `predicate` throws.
    public func contains(where predicate: (Element) throws -> Bool) throws -> Bool {
        while let element = try next() {
            if try predicate(element) { return true }
        }
        return false
    }

    /// The first remaining element that satisfies `predicate`, or `nil`. Reads up to it.
    /// - Throws: what ``next()`` or `predicate` throws.
    public func first(where predicate: (Element) throws -> Bool) throws -> Element? {
        while let element = try next() {
            if try predicate(element) { return element }
        }
        return nil
    }

    /// Whether every remaining element satisfies `predicate` (true when there is none).
    /// Reads up to the first that does not.
    /// - Throws: what ``next()`` or `predicate` throws.
    public func allSatisfy(_ predicate: (Element) throws -> Bool) throws -> Bool {
        while let element = try next() {
            if try !predicate(element) { return false }
        }
        return true
    }
}

extension ThrowingCursor where Element: Equatable {
    /// Whether some remaining element equals `element`. Reads up to the first that does.
    /// - Throws: what ``next()`` throws.
    public func contains(_ element: Element) throws -> Bool {
        try contains { $0 == element }
    }
}

extension Array {
    /// The remaining elements of `cursor`, in order: GRDB's `Array(cursor)`.
    ///
    /// ```swift
    /// let entries = try Array(db.entries(.prefix("user:")))
    /// ```
    /// - Throws: what the cursor's ``ThrowingCursor/next()`` throws.
    public init<C: ThrowingCursor>(_ cursor: C) throws where C.Element == Element {
        self = try cursor.collect()
    }
}

extension Set {
    /// The remaining elements of `cursor`, without duplicates.
    /// - Throws: what the cursor's ``ThrowingCursor/next()`` throws.
    public init<C: ThrowingCursor>(_ cursor: C) throws where C.Element == Element {
        self = try cursor.reduce(into: Set()) { $0.insert($1) }
    }
}
