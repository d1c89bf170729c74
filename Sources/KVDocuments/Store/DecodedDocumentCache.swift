import Foundation
import KVSupport
import Synchronization

/// Documents decoded from their stored bytes, kept so that reading the same bytes again
/// returns the value already built instead of decoding it a second time.
///
/// **Invariant.** An entry holds the key it was read under, the exact bytes it was decoded
/// from and the value decoding gave. A lookup returns that value only when the key *and*
/// the bytes now read are byte-identical to the entry's. Decoding is a pure function of the
/// bytes, so a hit returns exactly what decoding would have; an entry left behind by a
/// document since rewritten (or read under another snapshot, another store or another
/// layer) differs in its bytes and is never returned. Nothing needs invalidating: writes,
/// schema changes and snapshots play no part in correctness, only in the hit rate.
///
/// **Bounds.** Entries are charged about what their decoded values occupy (four times their
/// stored bytes, plus a fixed overhead); the total stays at most ``limit`` bytes, and a
/// document charged more than an eighth of it is not kept. A hash of the key chooses a set
/// of four slots; older entries are dropped in slot order (a clock hand) while the total is
/// over the limit. A limit of 0 keeps nothing.
///
/// **Admission** (after TinyLFU): every read is counted in a small frequency sketch. A
/// document read once lately is not kept, so reads that meet each document once copy
/// nothing; one read again takes an empty slot of its set, else replaces the slot not read
/// since the set last took an entry, but only when the newcomer has been read more often
/// lately than the entry it would replace. Random reads spread over more documents than the
/// cache holds so leave it mostly as it is, where replacing an entry at every miss would
/// cost a copy and an eviction per read (measured: 15–20% slower random gets).
///
/// **Threads.** One lock guards the slots, held only to compare and copy; decoding runs
/// outside it, and values dropped are released after it.
package final class DecodedDocumentCache: Sendable {
    /// The limit of a new store's cache: 8 MiB.
    package static let defaultLimit = 8 << 20

    /// The slots a key may occupy (a set; the slots come in sets of this many).
    static let ways = 4

    /// The counters of the frequency sketch (``State/sketch``).
    static let sketchSize = 1 << 16

    /// A key's two counters in the sketch, from two independent parts of its hash.
    @inline(__always)
    static func sketchIndices(_ hash: UInt64) -> (Int, Int) {
        (Int(truncatingIfNeeded: hash >> 40) & (sketchSize - 1), Int(truncatingIfNeeded: hash >> 20) & (sketchSize - 1))
    }

    /// What an entry is charged beyond four times its stored bytes and its key (the slot,
    /// allocation headers, the value's tree).
    static let entryOverhead = 128

    /// One entry, or an empty slot (`charge` 0).
    private struct Slot {
        var keyLength = 0
        var charge = 0
        /// Whether it was read since its set last took a new entry.
        var referenced = false
        /// The key followed by the stored bytes.
        var stored: [UInt8] = []
        var value: JSONValue = .null
    }

    // @unchecked: the slots' memory is reached only through the state, under its lock.
    private struct State: @unchecked Sendable {
        var limit: Int
        /// Allocated at the first entry kept; a power of two of slots, in sets of ``ways``.
        /// Owned by the state: freed when it is replaced (``limit``) or the cache goes.
        var slots = UnsafeMutableBufferPointer<Slot>(start: nil, count: 0)
        /// Per slot, its key's hash with the lowest bit set (0: empty), apart from the slots
        /// so that a lookup that misses reads one cache line of its set, not four slots (the
        /// sketch reads bits 20 and up, which the lowest bit leaves as they were).
        var tags = UnsafeMutableBufferPointer<UInt64>(start: nil, count: 0)
        var total = 0
        var hand = 0
        /// How often keys were read lately, by hash: two counts per key, saturating at 15
        /// (in ``sketchSize`` counters; the estimate is the lower), all halved after
        /// ``sketchSize`` × 8 reads, so the counts follow what is read now.
        var sketch: [UInt8] = []
        var sketchReads = 0
        var hits = 0
        var misses = 0

        /// Counts a read of the key with this hash.
        mutating func count(_ hash: UInt64) {
            if sketch.isEmpty { sketch = Array(repeating: 0, count: DecodedDocumentCache.sketchSize) }
            let (a, b) = DecodedDocumentCache.sketchIndices(hash)
            if sketch[a] < 15 { sketch[a] += 1 }
            if sketch[b] < 15 { sketch[b] += 1 }
            sketchReads += 1
            if sketchReads >= DecodedDocumentCache.sketchSize * 8 {
                for i in sketch.indices { sketch[i] >>= 1 }
                sketchReads = 0
            }
        }

        /// The estimated reads of the key with this hash since the counts were last halved.
        func frequency(_ hash: UInt64) -> UInt8 {
            guard !sketch.isEmpty else { return 0 }
            let (a, b) = DecodedDocumentCache.sketchIndices(hash)
            return min(sketch[a], sketch[b])
        }

        /// Empties slot `i`, returning what it held (to release after the lock).
        mutating func clear(_ i: Int) -> (stored: [UInt8], value: JSONValue) {
            total -= slots[i].charge
            tags[i] = 0
            var old = Slot()
            swap(&old, &slots[i])
            return (old.stored, old.value)
        }

        /// Frees the slots (and every entry); called with the state no longer shared.
        func free() {
            guard let base = slots.baseAddress else { return }
            tags.deallocate()
            base.deinitialize(count: slots.count)
            base.deallocate()
        }
    }

    private let state: Locked<State>
    /// Whether the limit is above 0: read without the lock, so a cache turned off costs one
    /// load per read.
    private let enabled: Atomic<Bool>

    /// A cache holding at most `limit` bytes (0: none).
    package init(limit: Int = DecodedDocumentCache.defaultLimit) {
        state = Locked(State(limit: max(0, limit)))
        enabled = Atomic(limit > 0)
    }

    deinit { state.withLock { $0.free() } }

    /// The most bytes the entries may be charged; setting it drops every entry.
    package var limit: Int {
        get { state.withLock { $0.limit } }
        set {
            var old = State(limit: max(0, newValue))
            state.withLock {
                swap(&$0, &old)
                enabled.store(newValue > 0, ordering: .relaxed)
            }
            // The old entries are released here, after the lock.
            old.free()
        }
    }

    /// Lookups answered from the cache and lookups that decoded, since the store opened.
    package var statistics: (hits: Int, misses: Int) { state.withLock { ($0.hits, $0.misses) } }

    /// The bytes the entries are charged now.
    package var charged: Int { state.withLock { $0.total } }

    /// The value of the document stored as `bytes` under `key`: the cached one when an entry
    /// holds exactly this key and these bytes, else `decode()`'s (kept for the next read).
    /// - Throws: what `decode` throws; nothing is kept then.
    package func value(
        key: UnsafeRawBufferPointer, bytes: UnsafeRawBufferPointer, decode: () throws -> JSONValue
    ) rethrows -> JSONValue {
        guard enabled.load(ordering: .relaxed) else { return try decode() }
        let hash = Self.hash(key)
        let charge = 4 * bytes.count + key.count + Self.entryOverhead
        // One critical section for the lookup, the count of the read and, on a miss, whether
        // the value is worth keeping.
        let found = state.withLock { s -> Lookup in
            s.count(hash)
            if let slots = s.slots.baseAddress, let tags = s.tags.baseAddress {
                let first = Int(truncatingIfNeeded: hash) & (s.slots.count - Self.ways)
                for i in first..<first + Self.ways where tags[i] == hash | 1 {
                    let slot = slots + i
                    guard slot.pointee.keyLength == key.count, slot.pointee.stored.count == key.count + bytes.count,
                        slot.pointee.stored.withUnsafeBytes({ Self.equal($0, key, bytes) })
                    else { continue }
                    s.hits &+= 1
                    slot.pointee.referenced = true
                    return .hit(slot.pointee.value)
                }
            }
            s.misses &+= 1
            // A key read once lately is not kept (reads that meet each document once copy
            // nothing); the set's victim decides the rest, in `insert`.
            return .miss(keep: s.limit > 0 && charge <= s.limit / 8 && s.frequency(hash) >= 2)
        }
        switch found {
        case .hit(let value): return value
        case .miss(let keep):
            let value = try decode()
            if keep { insert(value, hash: hash, charge: charge, key: key, bytes: bytes) }
            return value
        }
    }

    /// What a lookup found: the value, or a miss and whether to keep the value decoded.
    private enum Lookup {
        case hit(JSONValue)
        case miss(keep: Bool)
    }

    /// ``value(key:bytes:decode:)`` with the key as an array.
    package func value(key: [UInt8], bytes: UnsafeRawBufferPointer, decode: () throws -> JSONValue) rethrows
        -> JSONValue
    {
        try key.withUnsafeBytes { try value(key: $0, bytes: bytes, decode: decode) }
    }

    private func insert(
        _ value: JSONValue, hash: UInt64, charge: Int, key: UnsafeRawBufferPointer, bytes: UnsafeRawBufferPointer
    ) {
        // Values dropped here are released once the lock is no longer held.
        var dropped: [(stored: [UInt8], value: JSONValue)] = []
        state.withLock { s in
            // The limit may have changed since the lookup.
            guard s.limit > 0, charge <= s.limit / 8 else { return }
            if s.slots.baseAddress == nil {
                // Slots for documents of about 1 KiB charged, a power of two between 64 and 65,536.
                var count = 64
                while count < 65_536 && count * 1024 < s.limit { count *= 2 }
                s.slots = .allocate(capacity: count)
                s.slots.initialize(repeating: Slot())
                s.tags = .allocate(capacity: count)
                s.tags.initialize(repeating: 0)
            }
            // Of the hash's set: an empty slot, else the first not read since the set last
            // took an entry, else the first; every mark of the set is cleared.
            let first = Int(truncatingIfNeeded: hash) & (s.slots.count - Self.ways)
            var i = first
            if let empty = (first..<first + Self.ways).first(where: { s.slots[$0].charge == 0 }) {
                i = empty
            } else {
                if let unread = (first..<first + Self.ways).first(where: { !s.slots[$0].referenced }) { i = unread }
                // A full set takes the new entry only when it is read more often lately than
                // the one it would replace: reads spread over more documents than the cache
                // holds then leave it as it is instead of replacing an entry at every miss.
                guard s.frequency(hash) > s.frequency(s.tags[i]) else { return }
            }
            for j in first..<first + Self.ways { s.slots[j].referenced = false }
            if s.slots[i].charge != 0 { dropped.append(s.clear(i)) }
            var visited = 0
            while s.total + charge > s.limit && visited < s.slots.count {
                if s.slots[s.hand].charge != 0 { dropped.append(s.clear(s.hand)) }
                s.hand = (s.hand + 1) & (s.slots.count - 1)
                visited += 1
            }
            var stored: [UInt8] = []
            stored.reserveCapacity(key.count + bytes.count)
            stored.append(contentsOf: key)
            stored.append(contentsOf: bytes)
            s.slots[i] = Slot(keyLength: key.count, charge: charge, stored: stored, value: value)
            s.tags[i] = hash | 1
            s.total += charge
        }
        dropped.removeAll()
    }

    /// Whether `entry` is `key` followed by `bytes` (lengths already checked equal).
    @inline(__always)
    private static func equal(
        _ entry: UnsafeRawBufferPointer, _ key: UnsafeRawBufferPointer, _ bytes: UnsafeRawBufferPointer
    ) -> Bool {
        guard let e = entry.baseAddress else { return key.isEmpty && bytes.isEmpty }
        if let k = key.baseAddress, memcmp(e, k, key.count) != 0 { return false }
        guard let b = bytes.baseAddress else { return true }
        return memcmp(e + key.count, b, bytes.count) == 0
    }

    /// A hash of `bytes` (``ByteHash/hash(_:)``).
    @inline(__always)
    static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 { ByteHash.hash(bytes) }
}
