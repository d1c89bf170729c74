// The lazy adapters of ThrowingCursor: each reads its base cursor only when its own
// next() is called, and throws what the base or the closure throws.

extension ThrowingCursor {
    /// A cursor of `transform` applied to each remaining element, lazily.
    ///
    /// ```swift
    /// let keys = try db.entries(.prefix("user:")).map(\.key).collect()
    /// ```
    public func map<T>(_ transform: @escaping (Element) throws -> T) -> ThrowingMapCursor<Self, T> {
        ThrowingMapCursor(base: self, transform: transform)
    }

    /// A cursor of the remaining elements that satisfy `isIncluded`, lazily.
    public func filter(_ isIncluded: @escaping (Element) throws -> Bool) -> ThrowingFilterCursor<Self> {
        ThrowingFilterCursor(base: self, isIncluded: isIncluded)
    }

    /// A cursor of the non-`nil` results of `transform` on each remaining element, lazily.
    public func compactMap<T>(_ transform: @escaping (Element) throws -> T?) -> ThrowingCompactMapCursor<Self, T> {
        ThrowingCompactMapCursor(base: self, transform: transform)
    }

    /// A cursor of at most `maxLength` of the remaining elements, lazily: it reads no
    /// further than the `maxLength`th element.
    /// - Precondition: `maxLength >= 0`.
    public func prefix(_ maxLength: Int) -> ThrowingPrefixCursor<Self> {
        precondition(maxLength >= 0, "a cursor's prefix length must not be negative (got \(maxLength))")
        return ThrowingPrefixCursor(base: self, maxLength: maxLength)
    }
}

/// The elements of a base cursor transformed by a closure. See ``ThrowingCursor/map(_:)``.
public final class ThrowingMapCursor<Base: ThrowingCursor, Element>: ThrowingCursor {
    private let base: Base
    private let transform: (Base.Element) throws -> Element

    init(base: Base, transform: @escaping (Base.Element) throws -> Element) {
        self.base = base
        self.transform = transform
    }

    /// The base cursor's next element, transformed; `nil` when the base has none left.
    /// - Throws: what the base cursor's `next()` or the transform throws.
    public func next() throws -> Element? {
        guard let element = try base.next() else { return nil }
        return try transform(element)
    }
}

/// The elements of a base cursor that satisfy a predicate. See ``ThrowingCursor/filter(_:)``.
public final class ThrowingFilterCursor<Base: ThrowingCursor>: ThrowingCursor {
    private let base: Base
    private let isIncluded: (Base.Element) throws -> Bool

    init(base: Base, isIncluded: @escaping (Base.Element) throws -> Bool) {
        self.base = base
        self.isIncluded = isIncluded
    }

    /// The base cursor's next element that satisfies the predicate, reading past the others;
    /// `nil` when the base has none left.
    /// - Throws: what the base cursor's `next()` or the predicate throws.
    public func next() throws -> Base.Element? {
        while let element = try base.next() {
            if try isIncluded(element) { return element }
        }
        return nil
    }
}

/// The non-`nil` results of a closure on a base cursor's elements. See ``ThrowingCursor/compactMap(_:)``.
public final class ThrowingCompactMapCursor<Base: ThrowingCursor, Element>: ThrowingCursor {
    private let base: Base
    private let transform: (Base.Element) throws -> Element?

    init(base: Base, transform: @escaping (Base.Element) throws -> Element?) {
        self.base = base
        self.transform = transform
    }

    /// The next non-`nil` result of the transform on the base cursor's elements, reading past
    /// those it maps to `nil`; `nil` when the base has none left.
    /// - Throws: what the base cursor's `next()` or the transform throws.
    public func next() throws -> Element? {
        while let element = try base.next() {
            if let result = try transform(element) { return result }
        }
        return nil
    }
}

/// The first elements of a base cursor. See ``ThrowingCursor/prefix(_:)``.
public final class ThrowingPrefixCursor<Base: ThrowingCursor>: ThrowingCursor {
    private let base: Base
    private var remaining: Int

    init(base: Base, maxLength: Int) {
        self.base = base
        self.remaining = maxLength
    }

    /// The base cursor's next element while fewer than the prefix length were returned;
    /// then `nil` without reading the base again.
    /// - Throws: what the base cursor's `next()` throws.
    public func next() throws -> Base.Element? {
        guard remaining > 0 else { return nil }
        guard let element = try base.next() else {
            remaining = 0
            return nil
        }
        remaining -= 1
        return element
    }
}

// The adapters hold their base cursor and closures, neither of which may cross threads.
@available(*, unavailable)
extension ThrowingMapCursor: Sendable {}
@available(*, unavailable)
extension ThrowingFilterCursor: Sendable {}
@available(*, unavailable)
extension ThrowingCompactMapCursor: Sendable {}
@available(*, unavailable)
extension ThrowingPrefixCursor: Sendable {}
