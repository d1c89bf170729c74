import KVSupport

/// What one write transaction of an ``EtcdKeyValueStore`` has read, so that its commit can check
/// that no other writer changed it: the optimistic half of etcd's transactions.
///
/// **Invariants.** Every read of the session is at ``revision``: the revision of its first
/// read, then of its last commit, so a session reads one state and sees its own writes.
/// ``points`` holds, for each key read since the last commit, the revision of its last change
/// as read (0: absent); ``ranges`` each range scanned, with the revision through which nobody
/// else changed it. A commit compares them all in the same etcd transaction as its writes:
/// all hold and the writes apply, or none does and nothing is written. A write of one commit
/// (every document write) is thereby checked whole; a write of several (a schema change, an
/// index build, a migration) step by step: each commit compares what was read since the one
/// before (and every range scanned), so that a long one stays within etcd's bound on compares. Used by one thread: the one inside the
/// store's ``EtcdKeyValueStore/withWriteTransaction(_:)``.
final class EtcdSession {
    /// The revision every read of the session names; 0 before the first.
    var revision: Int64 = 0
    /// etcd key → the `mod_revision` read (0: the key was absent), for point reads.
    var points: [[UInt8]: Int64] = [:]
    /// The same for the keys scans returned since the last commit: compared so that a key
    /// deleted by another writer is seen (a range compare sees inserts and updates only).
    /// Cleared by each commit, as ``points`` are.
    var scanned: [[UInt8]: Int64] = [:]
    /// Ranges scanned, `[start, end)` in etcd's keys, unchanged by others through `through`.
    var ranges: [(start: [UInt8], end: [UInt8], through: Int64)] = []
    /// Whether reads are recorded now: false inside ``EtcdKeyValueStore/withUncheckedReads(_:)``.
    var checking = true

    /// Records a point read.
    func read(_ key: [UInt8], modRevision: Int64) {
        points[key] = modRevision
    }

    /// Records a key a scan returned.
    func scannedKey(_ key: [UInt8], modRevision: Int64) {
        scanned[key] = modRevision
    }

    /// The number of compares a commit makes now.
    var compareCount: Int { points.count + scanned.keys.filter { points[$0] == nil }.count + ranges.count }

    /// The compares of a commit: each key read unchanged (`MOD == seen`, which for an absent
    /// key is 0), each range scanned with no key changed after it was read (`MOD < through + 1`,
    /// which sees inserts and updates; deletes are seen by the point compares of the keys the
    /// scan returned).
    func compares() -> [JSONValue] {
        var out: [JSONValue] = []
        out.reserveCapacity(points.count + ranges.count)
        let keys = points.merging(scanned) { point, _ in point }
        for (key, seen) in keys.sorted(by: { compareBytes($0.key, $1.key) < 0 }) {
            out.append([
                "key": .string(EtcdMessages.base64(key)), "target": "MOD", "result": "EQUAL",
                "mod_revision": .string(String(seen))
            ])
        }
        for range in ranges {
            out.append([
                "key": .string(EtcdMessages.base64(range.start)), "range_end": .string(EtcdMessages.base64(range.end)),
                "target": "MOD", "result": "LESS", "mod_revision": .string(String(range.through + 1))
            ])
        }
        return out
    }

    /// After a commit at `revision` (which wrote `operations`): what the session read was
    /// checked by it; later reads are at `revision` and recorded anew, and the ranges scanned
    /// are known unchanged by others through it.
    func committed(_ operations: [EtcdMessages.Operation], at revision: Int64) {
        points.removeAll()
        scanned.removeAll()
        for i in ranges.indices { ranges[i].through = revision }
        self.revision = revision
    }
}
