import HeapModule

/// The smallest `capacity` matches seen (a max-heap that drops its largest), or every
/// match when there is no capacity (no limit).
package struct TopK<Element: Comparable> {
    let capacity: Int?
    private var heap = Heap<Element>()
    private var all: [Element] = []

    package init(capacity: Int?) { self.capacity = capacity }

    /// Whether `entry` would be kept now.
    package func wouldKeep(_ entry: Element) -> Bool {
        guard let capacity else { return true }
        guard heap.count >= capacity else { return capacity > 0 }
        return heap.max.map { entry < $0 } ?? false
    }

    package mutating func insert(_ entry: Element) {
        guard let capacity else { all.append(entry); return }
        guard capacity > 0 else { return }
        heap.insert(entry)
        if heap.count > capacity { _ = heap.popMax() }
    }

    /// The kept matches, smallest first.
    package func sorted() -> [Element] { capacity == nil ? all.sorted() : heap.unordered.sorted() }
}

extension TopK {
    /// The largest element kept, once `capacity` are kept (what a new one must beat).
    package var worst: Element? {
        guard let capacity, heap.count >= capacity else { return nil }
        return heap.max
    }
}
