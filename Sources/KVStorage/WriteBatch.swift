import CLevelDB

/// Operations to apply to a database atomically with ``LevelDB/write(_:sync:)``.
///
/// ```swift
/// let batch = WriteBatch()
/// batch.put("balance:alice", "90")
/// batch.put("balance:bob", "110")
/// try db.write(batch)
/// ```
///
/// Operations apply in the order they were added, so a later put of the same key wins.
/// A batch can be written several times and to several databases.
public final class WriteBatch {
    let handle: OpaquePointer
    /// The number of operations (puts and deletes) added since creation or the last ``clear()``.
    public private(set) var count = 0

    /// An empty batch.
    public init() { handle = leveldb_writebatch_create() }

    deinit { leveldb_writebatch_destroy(handle) }

    /// Adds a put of `value` under `key`.
    /// Inlinable, so that a caller in another module (the document layer) puts its keys and
    /// values without a generic call through the protocol's witnesses.
    @inlinable
    public func put<Key: ByteRepresentable, Value: ByteRepresentable>(_ key: Key, _ value: Value) {
        key.withBytes { k in value.withBytes { v in put(bytes: k, v) } }
    }

    /// Adds a delete of `key`.
    @inlinable
    public func delete<Key: ByteRepresentable>(_ key: Key) {
        key.withBytes { k in delete(bytes: k) }
    }

    @usableFromInline
    func put(bytes key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) {
        leveldb_writebatch_put(handle, key.cChars, key.count, value.cChars, value.count)
        count += 1
    }

    @usableFromInline
    func delete(bytes key: UnsafeRawBufferPointer) {
        leveldb_writebatch_delete(handle, key.cChars, key.count)
        count += 1
    }

    /// Removes every operation.
    public func clear() {
        leveldb_writebatch_clear(handle)
        count = 0
    }

    /// Adds every operation of `other`, after this batch's own.
    public func append(_ other: WriteBatch) {
        leveldb_writebatch_append(handle, other.handle)
        count += other.count
    }

    /// One operation of a batch.
    public enum Operation: Hashable, Sendable {
        /// Store `value` under `key`.
        case put(key: [UInt8], value: [UInt8])
        /// Remove `key`.
        case delete(key: [UInt8])
    }

    /// The operations in the order they will apply, copied out of the batch (each call
    /// walks the whole batch).
    public var operations: [Operation] {
        final class Collector { var operations: [Operation] = [] }
        let collector = Collector()
        withExtendedLifetime(collector) {
            leveldb_writebatch_iterate(
                handle, Unmanaged.passUnretained(collector).toOpaque(),
                { state, k, klen, v, vlen in
                    guard let state else { return }
                    let c = Unmanaged<Collector>.fromOpaque(state).takeUnretainedValue()
                    c.operations.append(
                        .put(
                            key: Array(UnsafeRawBufferPointer(start: k, count: klen)),
                            value: Array(UnsafeRawBufferPointer(start: v, count: vlen))))
                },
                { state, k, klen in
                    guard let state else { return }
                    let c = Unmanaged<Collector>.fromOpaque(state).takeUnretainedValue()
                    c.operations.append(.delete(key: Array(UnsafeRawBufferPointer(start: k, count: klen))))
                })
        }
        return collector.operations
    }
}

// A batch is a mutable buffer with no internal locking: fill it on one thread.
@available(*, unavailable)
extension WriteBatch: Sendable {}
