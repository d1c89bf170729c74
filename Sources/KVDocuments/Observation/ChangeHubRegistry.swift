import KVKeys
import KVStorage
import KVSupport

/// The change hubs of the open databases: one ``ChangeHub`` per database handle and store
/// root, shared by every ``DocumentStore`` open on them, so that a write through any store
/// reaches the observers of all.
///
/// **Invariants.** A hub is in the registry from its first use until its database closes;
/// then it is removed and told (``ChangeHub/databaseDidClose()``), once. A database that is
/// deinitialized closes first, so a handle's identity is never reused while its hubs are
/// registered.
final class ChangeHubRegistry: Sendable {
    /// The registry of the process.
    static let shared = ChangeHubRegistry()

    private struct Key: Hashable {
        let database: ObjectIdentifier
        let root: [UInt8]
    }
    private let hubs = Locked<[Key: ChangeHub]>([:])

    /// The hub of `root` on `database`, made on first use.
    func hub(of database: LevelDB, root: Subspace) -> ChangeHub {
        let key = Key(database: ObjectIdentifier(database), root: root.prefix)
        let (hub, firstOfDatabase) = hubs.withLock { hubs -> (ChangeHub, Bool) in
            if let existing = hubs[key] { return (existing, false) }
            let first = !hubs.keys.contains { $0.database == key.database }
            let made = ChangeHub()
            hubs[key] = made
            return (made, first)
        }
        // Outside the lock: a closed database runs the action at once, on this thread.
        if firstOfDatabase {
            let id = key.database
            database.whenClosed { [self] in databaseDidClose(id) }
        }
        return hub
    }

    /// A store that is not a LevelDB database, held weakly: its hubs live while it does.
    /// @unchecked Sendable: read and written only under the lock of ``others``.
    private struct Held: @unchecked Sendable {
        weak var store: AnyObject?
        let hub: ChangeHub
    }
    private let others = Locked<[Key: Held]>([:])

    /// The hub of `root` on `store` (another ``KeyValueStore`` than a ``LevelDB``: every
    /// ``DocumentStore`` opened on the same store object shares it), made on first use. A
    /// hub whose store has gone is dropped when its identity is met again, so a new store
    /// at a freed address never inherits it.
    func hub(of store: AnyObject, root: Subspace) -> ChangeHub {
        let key = Key(database: ObjectIdentifier(store), root: root.prefix)
        return others.withLock { others -> ChangeHub in
            if let held = others[key], held.store === store { return held.hub }
            others = others.filter { $0.value.store != nil }
            let made = ChangeHub()
            others[key] = Held(store: store, hub: made)
            return made
        }
    }

    /// Removes the hubs of a closed database and tells each.
    private func databaseDidClose(_ database: ObjectIdentifier) {
        let closed = hubs.withLock { hubs -> [ChangeHub] in
            let keys = hubs.keys.filter { $0.database == database }
            return keys.compactMap { hubs.removeValue(forKey: $0) }
        }
        for hub in closed { hub.databaseDidClose() }
    }
}
