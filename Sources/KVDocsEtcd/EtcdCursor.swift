import KVStorage
import KVSupport

/// A scan of an ``EtcdKeyValueStore``: pages of Range answers, every page at one revision.
///
/// **Invariants.** Forward, each page starts just after the last key handed out; backward,
/// each page ends just before it (etcd's `range_end` is exclusive), with a limit that grows
/// ×4 from 64 to 16,384 keys, since the server reads the whole rest of a descending range
/// for every page. The first page of a scan of the latest state fixes the revision of the
/// others, so the scan sees one state.
final class EtcdCursor: KeyValueCursor {
    private let store: EtcdKeyValueStore
    /// The etcd keys still to read: `[start, end)`.
    private var start: [UInt8]
    private var end: [UInt8]
    private let order: ScanOrder
    /// The revision read; 0 until the first page of a scan of the latest state.
    private var revision: Int64
    private var page: [EtcdMessages.KeyValue] = []
    private var position = 0
    private var finished: Bool
    private var reverseLimit = 64

    /// The write transaction that records the keys read, if any.
    private let session: EtcdSession?

    init(
        store: EtcdKeyValueStore, start: [UInt8], end: [UInt8], order: ScanOrder, revision: Int64,
        session: EtcdSession? = nil
    ) {
        self.store = store
        self.session = session
        self.start = start
        self.end = end
        self.order = order
        self.revision = revision
        finished = compareBytes(start, end) >= 0
    }

    func next<R>(_ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> R) throws -> R? {
        if position == page.count {
            guard !finished else { return nil }
            try load()
            guard position < page.count else { return nil }
        }
        let entry = page[position]
        position += 1
        session?.scannedKey(entry.key, modRevision: entry.modRevision)
        let prefixLength = store.prefix.count
        return try entry.key.withUnsafeBytes { key in
            try entry.value.withUnsafeBytes { value in
                try body(UnsafeRawBufferPointer(rebasing: key[prefixLength...]), value)
            }
        }
    }

    /// Reads the next page.
    private func load() throws {
        try store.checkOpen()
        let forward = order == .forward
        let limit = forward ? store.options.pageSize : reverseLimit
        let answer = try EtcdMessages.rangeResponse(
            try store.range(key: start, end: end, limit: limit, revision: revision, descending: !forward))
        if revision == 0 { revision = answer.revision }
        page = answer.kvs
        position = 0
        guard let last = page.last, answer.more else {
            finished = true
            return
        }
        if forward {
            start = last.key + [0]
        } else {
            end = last.key
            // Bounded by bytes too: a page of large values stays a page of this many keys.
            let bytes = page.reduce(0) { $0 + $1.key.count + $1.value.count }
            if bytes < 4 << 20 { reverseLimit = min(16_384, reverseLimit * 4) }
        }
        finished = compareBytes(start, end) >= 0
    }
}
