import HeapModule

/// The smallest `capacity` matches seen (a max-heap that drops its largest), or every
/// match when there is no capacity (no limit).
///
/// `@inlinable`, so the text and query layers get it specialized to their own element
/// types: across the module boundary an unspecialized heap looked up generic metadata and
/// copied elements through value witnesses once per candidate (+15% instructions of a
/// text query). The compiler inlines across modules only what is public, so it is public
/// under the SPI `KVDocsInternals` (`@_spi(KVDocsInternals) import KVSupport`), which
/// apps do not see; `package` with `@inlinable` was not inlined.
@_spi(KVDocsInternals)
public struct TopK<Element: Comparable> {
    @usableFromInline let capacity: Int?
    @usableFromInline var heap = Heap<Element>()
    @usableFromInline var all: [Element] = []

    /// An empty selection keeping the `capacity` smallest (every element with `nil`).
    @inlinable
    public init(capacity: Int?) { self.capacity = capacity }

    /// Whether `entry` would be kept now.
    @inlinable
    public func wouldKeep(_ entry: Element) -> Bool {
        guard let capacity else { return true }
        guard heap.count >= capacity else { return capacity > 0 }
        return heap.max.map { entry < $0 } ?? false
    }

    /// Offers `entry`: kept when it is among the `capacity` smallest so far.
    @inlinable
    public mutating func insert(_ entry: Element) {
        guard let capacity else {
            all.append(entry)
            return
        }
        guard capacity > 0 else { return }
        heap.insert(entry)
        if heap.count > capacity { _ = heap.popMax() }
    }

    /// The kept matches, smallest first.
    @inlinable
    public func sorted() -> [Element] { capacity == nil ? all.sorted() : heap.unordered.sorted() }
}

extension TopK {
    /// The largest element kept, once `capacity` are kept (what a new one must beat).
    @inlinable
    public var worst: Element? {
        guard let capacity, heap.count >= capacity else { return nil }
        return heap.max
    }
}
