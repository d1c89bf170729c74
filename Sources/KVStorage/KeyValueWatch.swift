/// A store that other processes write, whose writes this process can follow (etcd's watch):
/// what lets change streams and observations see every writer's changes.
///
/// **Invariants.** After ``watch(prefix:onChange:)`` returns, every write committed under the
/// prefix, by any writer, is followed by a call of `onChange` (on a thread of the store's, one
/// call at a time), until the watch is cancelled. Calls carry no data: after each, the caller
/// reads what changed. One call may stand for several writes, and a call also follows every
/// reconnection of the watch (writes may have been missed while it was down), so a caller
/// that reads everything since what it last saw misses nothing.
public protocol WatchableKeyValueStore: KeyValueStore {
    /// Follows the writes under `prefix` (see the protocol's invariants).
    /// - Throws: storage errors of starting the watch.
    func watch(prefix: [UInt8], onChange: @escaping @Sendable () -> Void) throws -> any KeyValueWatch
}

/// A watch of a ``WatchableKeyValueStore``.
public protocol KeyValueWatch: Sendable {
    /// Stops the watch: no call of its `onChange` starts after this returns.
    func cancel()
}
