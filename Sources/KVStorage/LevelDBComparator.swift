import CLevelDB
import Foundation

/// A named key order for databases that should not sort keys bytewise.
///
/// LevelDB stores the comparator's name in the database and checks it on every open,
/// so the name must change whenever the order changes. Names starting with `leveldb.`
/// are reserved.
///
/// ```swift
/// let reversed = LevelDBComparator(name: "example.reverse") { a, b in
///     LevelDBComparator.bytewise(b, a)
/// }
/// var options = LevelDBOptions()
/// options.comparator = reversed
/// ```
///
/// Prefix ranges (``KeyRange/prefix(_:)``) describe a contiguous run of keys only under
/// bytewise order; with a custom comparator use explicit bounds.
public final class LevelDBComparator: Sendable {
    /// The name stored in the database.
    public let name: String
    /// Returns a negative number, zero or a positive number as `a` sorts before, with or after `b`.
    public let compare: @Sendable (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Int

    /// Creates a comparator.
    /// - Parameters:
    ///   - name: the name LevelDB stores and checks on open.
    ///   - compare: a total order; it must not throw, block, or touch the database.
    public init(name: String, compare: @escaping @Sendable (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Int) {
        self.name = name
        self.compare = compare
    }

    /// LevelDB's default order: unsigned bytes, a prefix first.
    @inlinable
    public static func bytewise(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let common = min(a.count, b.count)
        if common > 0, let pa = a.baseAddress, let pb = b.baseAddress {
            let r = memcmp(pa, pb, common)
            if r != 0 { return Int(r) }
        }
        return a.count - b.count
    }
}

/// The C comparator's state: retains the Swift comparator and the C copy of its name
/// until LevelDB calls the destructor.
final class ComparatorState {
    let comparator: LevelDBComparator
    let cName: UnsafeMutablePointer<CChar>

    init(_ comparator: LevelDBComparator) {
        self.comparator = comparator
        self.cName = strdup(comparator.name) ?? UnsafeMutablePointer(mutating: emptyCString)
    }

    deinit { if UnsafePointer(cName) != emptyCString { free(cName) } }

    /// Creates the C comparator; `leveldb_comparator_destroy` releases the state.
    static func makeCComparator(_ comparator: LevelDBComparator) -> OpaquePointer {
        let state = Unmanaged.passRetained(ComparatorState(comparator)).toOpaque()
        return leveldb_comparator_create(
            state,
            { state in
                guard let state else { return }
                Unmanaged<ComparatorState>.fromOpaque(state).release()
            },
            { state, a, alen, b, blen in
                guard let state else { return 0 }
                let s = Unmanaged<ComparatorState>.fromOpaque(state).takeUnretainedValue()
                let r = s.comparator.compare(
                    UnsafeRawBufferPointer(start: a, count: alen),
                    UnsafeRawBufferPointer(start: b, count: blen))
                return r < 0 ? -1 : (r > 0 ? 1 : 0)
            },
            { state in
                guard let state else { return emptyCString }
                return UnsafePointer(Unmanaged<ComparatorState>.fromOpaque(state).takeUnretainedValue().cName)
            })
    }
}
