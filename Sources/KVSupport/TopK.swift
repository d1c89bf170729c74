import HeapModule

/// The smallest `capacity` matches seen (a max-heap that drops its largest), or every
/// match when there is no capacity (no limit).
///
/// `@inlinable`: the text and query layers keep their own element types here, once per
/// candidate; across the module boundary an unspecialized heap looked up generic metadata
/// and copied elements through value witnesses (+15% instructions of a text query).
package struct TopK<Element: Comparable> {
    @usableFromInline let capacity: Int?
    @usableFromInline var heap = Heap<Element>()
    @usableFromInline var all: [Element] = []

    @inlinable
    package init(capacity: Int?) { self.capacity = capacity }

    /// Whether `entry` would be kept now.
    @inlinable
    package func wouldKeep(_ entry: Element) -> Bool {
        guard let capacity else { return true }
        guard heap.count >= capacity else { return capacity > 0 }
        return heap.max.map { entry < $0 } ?? false
    }

    @inlinable
    package mutating func insert(_ entry: Element) {
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
    package func sorted() -> [Element] { capacity == nil ? all.sorted() : heap.unordered.sorted() }
}

extension TopK {
    /// The largest element kept, once `capacity` are kept (what a new one must beat).
    @inlinable
    package var worst: Element? {
        guard let capacity, heap.count >= capacity else { return nil }
        return heap.max
    }
}
