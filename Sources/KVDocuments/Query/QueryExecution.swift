import HeapModule
import KVKeys
import KVStorage
@_spi(KVDocsInternals) import KVSupport

/// Runs a ``QueryPlan`` against one snapshot, streaming: matches flow from the scan and
/// the scan stops as soon as `offset + limit` of them are known.
///
/// Ids are read from the tail of each index key (no tuple decode of the values before
/// them), and the document key is the collection's prefix followed by those id bytes.
/// Tuple order of ids is bytewise order of their encodings, so ids compare as bytes.
///
/// By the plan's shape:
/// - **Ordered by the scan** (or no index and primary-key order): one pass over the ranges.
/// - **Primary-key order from an index that does not give it**: each distinct value
///   combination's entries are already sorted by id, so the streams of the first
///   ``maximumMergedStreams`` values are merged by id (as the FoundationDB record layer
///   unions `IN` streams). With more values, a bounded top-k heap of ids.
/// - **Any other order**: a bounded top-k heap of (sort key, id) over every match.
///
/// Conditions the ranges guarantee are not re-checked; the plan's ``QueryPlan/filter`` is.
/// Without such a residual filter, a document is fetched only when it is returned.
struct QueryExecution {
    /// The most per-value streams merged by id before falling back to a top-k heap.
    static let maximumMergedStreams = 128

    let reader: any KeyValueReader
    let store: DocumentStore
    let collection: String
    let plan: QueryPlan
    /// The prefix of the collection's document keys (an id's bytes follow it).
    let documentPrefix: [UInt8]
    /// Over a reader whose reads are round trips (etcd): documents read ahead, many in one
    /// request, for the candidates the scan has found; `nil` over a local store.
    let prefetched: Prefetched?
    /// The most candidates read ahead at once over a network.
    static let readAhead = 256
    /// The member keys of the documents decoded so far, which the next ones reuse.
    let keys = BinaryJSON.KeyCache()

    init(transaction: ReadTransaction, collection: String, plan: QueryPlan) {
        self.reader = transaction.reader
        self.store = transaction.store
        self.collection = collection
        self.plan = plan
        self.documentPrefix = transaction.store.layout.documents(collection).prefix
        self.prefetched = transaction.reader.readsAreRoundTrips ? Prefetched() : nil
    }

    /// Documents read ahead by key (a key read and absent maps to `nil`), each taken once.
    final class Prefetched {
        private var documents: [ByteKey: [UInt8]?] = [:]

        /// Reads the documents of `ids` not read yet, in one ``KeyValueReader/values(forKeys:)``.
        func fetch(_ ids: [[UInt8]], in execution: QueryExecution) throws {
            let keys = ids.map { execution.documentPrefix + $0 }.filter { documents[ByteKey($0)] == nil }
            guard !keys.isEmpty else { return }
            for (key, value) in zip(keys, try execution.reader.values(forKeys: keys)) {
                documents[ByteKey(key)] = .some(value)
            }
        }

        /// The document under `key` if it was read ahead (`.some(nil)`: absent), forgetting it.
        func take(_ key: [UInt8]) -> [UInt8]?? {
            documents.removeValue(forKey: ByteKey(key))
        }
    }

    // MARK: - Entry points

    /// The documents matching the plan's query, in its order, after `offset`, up to `limit`.
    func documents(offset: Int, limit: Int?) throws -> [JSONValue] {
        var documents: [JSONValue] = []
        if let limit { documents.reserveCapacity(Swift.min(limit, 1024)) }
        try forEach(offset: offset, limit: limit, transform: value) { documents.append($0) }
        return documents
    }

    /// Calls `body` with what `transform` makes of each document matching the plan's query,
    /// in its order, after `offset`, up to `limit`, as the scan finds it: none is held once
    /// `body` has it, but for an order the scan does not give, the top-k heap holds the first
    /// `offset + limit` matches (every match without a limit) until the scan ends.
    ///
    /// `transform` gets a match as read: its stored bytes, unless the residual filter or the
    /// order needed its value. Where the scan's order is the query's and nothing is checked
    /// after the index (the common case), those bytes are lent (``Match/lent(_:key:fromIndex:)``):
    /// an index entry's payload or the buffer of the document's get, read in place, with no
    /// copy and no array per entry. `transform` must not keep them; `body` runs after it,
    /// outside every storage call.
    func forEach<V>(
        offset: Int, limit: Int?, transform: (Match) throws -> V, _ body: (V) throws -> Void
    ) throws {
        if prefetched == nil, plan.filter.isEmpty, !plan.mayRepeat {
            if plan.index != nil, plan.orderedByScan, plan.tieValues == nil {
                try streamInPlace(
                    RangeScan(execution: self, reverse: plan.reverse), offset: offset, limit: limit, transform, body)
                return
            }
            if plan.index == nil, plan.order == nil {
                try streamDocumentsInPlace(offset: offset, limit: limit, transform, body)
                return
            }
        }
        try forEachMatch(offset: offset, limit: limit) { try body(try transform($0)) }
    }

    /// Every other plan's matches: owned bytes or values, handed to `body` one by one.
    private func forEachMatch(offset: Int, limit: Int?, _ body: (Match) throws -> Void) throws {
        // The output holds `body` only while this call runs.
        try withoutActuallyEscaping(body) { body in
            var output = Output(skip: offset, limit: limit, countOnly: false, sink: body)
            if plan.index == nil {
                if plan.order == nil {
                    try streamDocuments(into: &output)
                } else {
                    try topKByOrder(candidates: try DocumentScan(execution: self), into: &output)
                }
            } else if plan.orderedByScan, let tieValues = plan.tieValues {
                try stream(
                    TieSortedScan(RangeScan(execution: self, reverse: plan.reverse, groupValues: tieValues)),
                    into: &output)
            } else if plan.orderedByScan {
                try stream(RangeScan(execution: self, reverse: plan.reverse), into: &output)
            } else if plan.order == nil {
                if let merge = try MergeByID(execution: self) {
                    try stream(merge, into: &output)
                } else {
                    try topKByID(into: &output)
                }
            } else {
                try topKByOrder(candidates: RangeScan(execution: self, reverse: false), into: &output)
            }
        }
    }

    /// One pass over index entries in the query's order, nothing checked after the index:
    /// a covering entry's payload is transformed where the cursor lends it; otherwise the id
    /// is copied into one key buffer reused for every entry and the document transformed in
    /// the buffer its get lends. Entries the offset skips read no document.
    private func streamInPlace<V>(
        _ scan: RangeScan, offset: Int, limit: Int?, _ transform: (Match) throws -> V, _ body: (V) throws -> Void
    ) throws {
        var skip = offset
        var count = 0
        let prefixCount = documentPrefix.count
        var key = documentPrefix
        key.reserveCapacity(prefixCount + 32)
        let covering = plan.covering
        while limit.map({ count < $0 }) ?? true {
            if skip > 0 {
                guard try scan.next({ _, _ in () }) != nil else { return }
                skip -= 1
                continue
            }
            if covering {
                guard
                    let produced = try scan.next({ id, payload -> V in
                        key.removeSubrange(prefixCount...)
                        key.append(contentsOf: id)
                        return try transform(
                            .lent(payload ?? UnsafeRawBufferPointer(start: nil, count: 0), key: key, fromIndex: true))
                    })
                else { return }
                try body(produced)
            } else {
                guard
                    try scan.next({ id, _ -> Void in
                        key.removeSubrange(prefixCount...)
                        key.append(contentsOf: id)
                    }) != nil
                else { return }
                let produced = try reader.withValue(forKey: key) { bytes -> V? in
                    try bytes.map { try transform(.lent($0, key: key, fromIndex: false)) }
                }
                // A dangling entry (no document) is no match.
                guard let produced else { continue }
                try body(produced)
            }
            count += 1
        }
    }

    /// One pass over the documents in primary-key order (no index, no filter), each
    /// transformed where the cursor lends it.
    private func streamDocumentsInPlace<V>(
        offset: Int, limit: Int?, _ transform: (Match) throws -> V, _ body: (V) throws -> Void
    ) throws {
        let cursor = try reader.scan(plan.ranges[0], order: .forward)
        let prefixLength = plan.keyPrefixLength
        var skip = offset
        var count = 0
        var key: [UInt8] = []
        while limit.map({ count < $0 }) ?? true {
            var produced: V?
            guard
                try cursor.step({ k, value in
                    // A document key holds exactly one element after the collection's prefix.
                    guard try TupleDecoder.lastElementStart(of: k, from: prefixLength) == prefixLength else { return }
                    if skip > 0 {
                        skip -= 1
                        return
                    }
                    key.removeAll(keepingCapacity: true)
                    key.append(contentsOf: k)
                    produced = try transform(.lent(value, key: key, fromIndex: false))
                })
            else { return }
            guard let produced else { continue }
            try body(produced)
            count += 1
        }
    }

    /// The number of matches (order, offset and limit play no part). Without a residual
    /// filter, on an index where each document has one entry per range (no multi-valued
    /// field), the entries are counted without decoding them.
    func count() throws -> Int {
        var output = Output(skip: 0, limit: nil, countOnly: true)
        if plan.index == nil {
            try streamDocuments(into: &output)
        } else if plan.filter.isEmpty && !plan.mayRepeat {
            var total = 0
            for range in plan.ranges { total += try reader.count(range) }
            return total
        } else {
            try stream(RangeScan(execution: self, reverse: false), into: &output)
        }
        return output.count
    }

    // MARK: - Output

    /// Matches after the offset, up to the limit, each handed to `sink` as it is taken.
    struct Output {
        var skip: Int
        let limit: Int?
        let countOnly: Bool
        var sink: (Match) throws -> Void = { _ in }
        var count = 0

        var isFull: Bool { limit.map { count >= $0 } ?? false }

        /// Takes one match (in order); `document` is fetched only when it is kept.
        mutating func take(_ document: () throws -> Match?) throws {
            if skip > 0 {
                skip -= 1
                return
            }
            if countOnly {
                count += 1
                return
            }
            guard let d = try document() else { return }
            try sink(d)
            count += 1
        }
    }

    // MARK: - Fetching and filtering

    /// A match as read: the stored bytes of its document (or of a covering entry's payload),
    /// not yet decoded, or a value already built (to filter or sort it).
    enum Match {
        /// Stored bytes: of the document under `key`, or carried by an entry of the plan's
        /// index for that document (`fromIndex`).
        case stored([UInt8], key: [UInt8], fromIndex: Bool)
        /// Stored bytes lent only for the call that is handed the match (a cursor's entry,
        /// a get's buffer): as ``stored(_:key:fromIndex:)``, to be read before that call
        /// returns and never kept.
        case lent(UnsafeRawBufferPointer, key: [UInt8], fromIndex: Bool)
        /// A document already read.
        case value(JSONValue)
    }

    /// Runs `body` with a match's stored bytes (owned or lent), its key and whether they
    /// are an index entry's payload; `nil` for a value already built.
    private func withStoredBytes<R>(
        _ match: Match, _ body: (UnsafeRawBufferPointer, [UInt8], Bool) throws -> R
    ) rethrows -> R? {
        switch match {
        case .value: return nil
        case .stored(let bytes, let key, let fromIndex):
            return try bytes.withUnsafeBytes { try body($0, key, fromIndex) }
        case .lent(let bytes, let key, let fromIndex): return try body(bytes, key, fromIndex)
        }
    }

    /// The id (tuple-encoded) of a match's document; `nil` for a value without its primary key.
    func idBytes(_ match: Match, collection: String, primaryKey: String) throws -> [UInt8]? {
        switch match {
        case .stored(_, let key, _): return Array(key.dropFirst(documentPrefix.count))
        case .lent(_, let key, _): return Array(key.dropFirst(documentPrefix.count))
        case .value(let document):
            guard case .object(let o) = document, let id = o[primaryKey] else { return nil }
            return Tuple([try DocumentStore.idElement(id, collection: collection, primaryKey: primaryKey)]).encoded
        }
    }

    /// The document with the id encoded by `idBytes` as stored, or `nil` (a dangling entry).
    func fetchMatch(_ idBytes: some Collection<UInt8>) throws -> Match? {
        let key = documentPrefix + idBytes
        guard let bytes = try prefetched?.take(key) ?? reader.value(forKey: key) else { return nil }
        return .stored(bytes, key: key, fromIndex: false)
    }

    /// The match of an index entry: what a covering entry carries, else the document
    /// fetched by id (`nil` for a dangling entry).
    func match(_ candidate: Candidate) throws -> Match? {
        guard let payload = candidate.payload else { return try fetchMatch(candidate.id) }
        return .stored(payload, key: documentPrefix + candidate.id, fromIndex: true)
    }

    /// The document with the id encoded by `idBytes`, or `nil` (a dangling entry).
    func fetch(_ idBytes: some Collection<UInt8>) throws -> JSONValue? {
        try fetchMatch(idBytes).map(value)
    }

    /// The document of an index entry: read from what a covering entry carries, else
    /// fetched by id (`nil` for a dangling entry).
    func document(_ candidate: Candidate) throws -> JSONValue? {
        try match(candidate).map(value)
    }

    /// A match's document.
    /// - Throws: `.corruption` naming the document (and the index, for an entry's payload)
    ///   when its bytes are damaged.
    func value(_ match: Match) throws -> JSONValue {
        switch match {
        case .value(let v): return v
        case .stored(let bytes, let key, let fromIndex):
            return try bytes.withUnsafeBytes { try value($0, key: key, fromIndex: fromIndex) }
        case .lent(let bytes, let key, let fromIndex): return try value(bytes, key: key, fromIndex: fromIndex)
        }
    }

    private func value(_ bytes: UnsafeRawBufferPointer, key: [UInt8], fromIndex: Bool) throws -> JSONValue {
        guard fromIndex else {
            return try store.documentValue(
                buffer: bytes, collection: collection, key: key, idOffset: documentPrefix.count, keys: keys,
                cached: true)
        }
        do {
            return try store.documentCache.value(key: key, bytes: bytes) {
                try DocumentStore.parseStored(buffer: bytes, keys: keys)
            }
        } catch let e as KVDocsError {
            throw damagedPayload(e, key: key)
        }
    }

    /// A match's document reduced to the whole fields `selected` (``FieldPath/project(_:onto:)``):
    /// from stored bytes in the binary form, only those fields are read.
    /// - Throws: `.corruption` as ``value(_:)``.
    func projected(_ match: Match, onto selected: [[String]]) throws -> JSONValue {
        let projected = try withStoredBytes(match) { bytes, key, fromIndex -> JSONValue? in
            guard BinaryJSON.isBinary(bytes) else { return nil }
            do {
                return try FieldPath.project(binary: bytes, onto: selected)
            } catch let damage as BinaryJSON.Damage {
                throw fromIndex
                    ? damagedPayload(damage.error, key: key)
                    : store.damagedDocument(
                        damage.error, collection: collection, key: key, idOffset: documentPrefix.count)
            }
        }
        if let projected, let projected { return projected }
        return FieldPath.project(try value(match), onto: selected)
    }

    /// A match's document decoded as `T`: straight from stored bytes in the binary form.
    /// - Throws: `.decoding` when it does not decode as `T`; `.corruption` as ``value(_:)``.
    func decode<T: Decodable>(_ match: Match, as type: T.Type) throws -> T {
        switch match {
        case .value(let v): return try DocumentStore.decodeStored(type, v, dates: store.dateStrategy)
        case .stored(let bytes, let key, let fromIndex):
            return try bytes.withUnsafeBytes { try decode($0, key: key, fromIndex: fromIndex, as: type) }
        case .lent(let bytes, let key, let fromIndex):
            return try decode(bytes, key: key, fromIndex: fromIndex, as: type)
        }
    }

    private func decode<T: Decodable>(_ bytes: UnsafeRawBufferPointer, key: [UInt8], fromIndex: Bool, as type: T.Type)
        throws -> T
    {
        guard fromIndex else {
            return try store.decodeDocument(
                type, buffer: bytes, collection: collection, key: key, idOffset: documentPrefix.count)
        }
        do {
            return try DocumentStore.decodeStored(type, buffer: bytes, dates: store.dateStrategy)
        } catch let e as BinaryJSON.Damage {
            throw damagedPayload(e.error, key: key)
        }
    }

    private func damagedPayload(_ e: KVDocsError, key: [UInt8]) -> KVDocsError {
        KVDocsError(
            .corruption,
            "index \(plan.index ?? "?") of \"\(collection)\" carries invalid JSON for document \(Self.describeID(Array(key[documentPrefix.count...]))): \(e.message)",
            path: reader.name, key: key)
    }

    static func describeID(_ id: [UInt8]) -> String {
        (try? Tuple(decoding: id).elements.first).map { "\($0)" } ?? "?"
    }

    /// Whether the residual filter holds.
    func passes(_ document: JSONValue) -> Bool {
        plan.filter.allSatisfy { $0.matches(document) }
    }

    // MARK: - Streaming

    /// One pass over the documents in primary-key order (no index).
    private func streamDocuments(into output: inout Output) throws {
        let scan = try DocumentScan(execution: self)
        while !output.isFull, let (idBytes, bytes) = try scan.next() {
            let key = documentPrefix + idBytes
            if plan.filter.isEmpty {
                try output.take { .stored(bytes, key: key, fromIndex: false) }
                continue
            }
            let document = try store.documentValue(
                bytes, collection: collection, key: key, idOffset: documentPrefix.count, cached: true)
            guard passes(document) else { continue }
            try output.take { .value(document) }
        }
    }

    /// Candidates in the order they come, each checked against the residual filter.
    private func stream(_ source: some IDSource, into output: inout Output) throws {
        let check = !plan.filter.isEmpty
        var seen: Set<ByteKey>? = plan.mayRepeat && !source.yieldsEachIDOnce ? [] : nil
        // Over a network: candidates read ahead, as many as the output still wants (up to
        // ``readAhead``), and their documents fetched together (not those the offset skips).
        var ahead: [Candidate] = []
        var position = 0
        // A count without a filter reads no document.
        let readAhead = output.countOnly && !check ? nil : prefetched
        func next() throws -> Candidate? {
            guard let prefetched = readAhead else { return try source.nextID() }
            if position == ahead.count {
                ahead.removeAll(keepingCapacity: true)
                position = 0
                let wanted = output.limit.map { output.skip.saturatingAdd($0 - output.count) } ?? Self.readAhead
                while ahead.count < min(max(wanted, 1), Self.readAhead), let candidate = try source.nextID() {
                    ahead.append(candidate)
                }
                let skipped = check ? 0 : min(output.skip, ahead.count)
                try prefetched.fetch(ahead[skipped...].filter { $0.payload == nil }.map(\.id), in: self)
            }
            guard position < ahead.count else { return nil }
            position += 1
            return ahead[position - 1]
        }
        while !output.isFull, let candidate = try next() {
            if seen?.insert(ByteKey(candidate.id)).inserted == false { continue }
            if check {
                guard let document = try document(candidate), passes(document) else { continue }
                try output.take { .value(document) }
            } else {
                try output.take { try match(candidate) }
            }
        }
    }

    // MARK: - Top-k

    /// The first `offset + limit` ids of every candidate, in id order, through a bounded heap.
    private func topKByID(into output: inout Output) throws {
        let source = RangeScan(execution: self, reverse: false)
        let check = !plan.filter.isEmpty
        var seen: Set<ByteKey>? = plan.mayRepeat ? [] : nil
        var best = TopK<Ranked>(capacity: output.limit.map { output.skip.saturatingAdd($0) })
        while let candidate = try source.nextID() {
            if seen?.insert(ByteKey(candidate.id)).inserted == false { continue }
            // An id that cannot make the cut is not even fetched.
            guard best.wouldKeep(Ranked(sortKey: [], id: candidate.id, document: nil)) else { continue }
            var document: Match?
            if check {
                guard let d = try self.document(candidate), passes(d) else { continue }
                document = .value(d)
            } else if candidate.payload != nil {
                document = try match(candidate)
            }
            best.insert(Ranked(sortKey: [], id: candidate.id, document: document))
        }
        let winners = best.sorted()
        if let prefetched {
            let skipped = min(output.skip, winners.count)
            try prefetched.fetch(winners[skipped...].filter { $0.document == nil }.map(\.id), in: self)
        }
        for entry in winners where !output.isFull {
            try output.take { try entry.document ?? fetchMatch(entry.id) }
        }
    }

    /// The first `offset + limit` matches in the query's order (by its field, ties by id),
    /// through a bounded heap.
    private func topKByOrder(candidates: some CandidateSource, into output: inout Output) throws {
        let order = plan.order
        let descending = order?.descending ?? false
        var seen: Set<ByteKey>? = plan.mayRepeat ? [] : nil
        var best = TopK<Ranked>(capacity: output.limit.map { output.skip.saturatingAdd($0) })
        while let (idBytes, document) = try candidates.nextCandidate() {
            if seen?.insert(ByteKey(idBytes)).inserted == false { continue }
            guard passes(document) else { continue }
            let sortKey = order.flatMap { $0.field.values(in: document).first.map(ValueOrder.key) } ?? []
            best.insert(Ranked(sortKey: sortKey, id: idBytes, document: .value(document), descending: descending))
        }
        for entry in best.sorted() where !output.isFull {
            try output.take { entry.document }
        }
    }

    /// A match ranked by sort key, then id (both reversed when descending).
    struct Ranked: Comparable {
        let sortKey: [UInt8]
        let id: [UInt8]
        let document: Match?
        var descending = false

        static func < (a: Ranked, b: Ranked) -> Bool {
            var c = compareBytes(a.sortKey, b.sortKey)
            if c == 0 { c = compareBytes(a.id, b.id) }
            return a.descending ? c > 0 : c < 0
        }

        static func == (a: Ranked, b: Ranked) -> Bool { a.sortKey == b.sortKey && a.id == b.id }
    }
}

// MARK: - Sources of candidates

/// An index entry's document: its id's tuple bytes, and what a covering index's entry
/// carries (the document's canonical JSON, or the part of it the query reads).
struct Candidate {
    let id: [UInt8]
    let payload: [UInt8]?
}

/// Index entries, one at a time.
protocol IDSource {
    /// Whether each id comes at most once (no de-duplication needed).
    var yieldsEachIDOnce: Bool { get }
    /// The next entry, or `nil` at the end.
    func nextID() throws -> Candidate?
}

/// Candidates with their documents, one at a time.
protocol CandidateSource {
    /// The next candidate's id bytes and document, or `nil` at the end.
    func nextCandidate() throws -> ([UInt8], JSONValue)?
}

extension QueryExecution {
    /// The index entries of the plan's ranges, in order: their ids.
    final class RangeScan: IDSource, CandidateSource {
        let execution: QueryExecution
        let reverse: Bool
        /// When set, the number of leading index values whose encodings ``group`` holds.
        let groupValues: Int?
        /// The encodings of the first ``groupValues`` values of the last entry returned.
        private(set) var group: [UInt8] = []
        private var rangeIndex = 0
        private var cursor: (any KeyValueCursor)?
        var yieldsEachIDOnce: Bool { false }

        init(execution: QueryExecution, reverse: Bool, groupValues: Int? = nil) {
            self.execution = execution
            self.reverse = reverse
            self.groupValues = groupValues
        }

        func nextID() throws -> Candidate? {
            try next { id, payload in Candidate(id: Array(id), payload: payload.map { Array($0) }) }
        }

        /// Calls `body` with the next entry's id bytes and (for a covering index) payload,
        /// lent by the cursor for the length of the call; `nil` at the end.
        func next<R>(_ body: (_ id: UnsafeRawBufferPointer, _ payload: UnsafeRawBufferPointer?) throws -> R) throws
            -> R?
        {
            let ranges = execution.plan.ranges
            let prefixLength = execution.plan.keyPrefixLength
            while true {
                if cursor == nil {
                    guard rangeIndex < ranges.count else { return nil }
                    cursor = try execution.reader.scan(ranges[rangeIndex], order: reverse ? .reverse : .forward)
                    rangeIndex += 1
                }
                var result: R?
                if let cursor,
                    try cursor.step({ key, value in
                        guard
                            let parts = try QueryExecution.parts(key, value, prefixLength: prefixLength, in: execution)
                        else { return }
                        if let groupValues {
                            do {
                                group = Array(
                                    key[
                                        prefixLength..<(try ValueOrder.end(
                                            ofValues: groupValues, in: key, from: prefixLength))])
                            } catch let error as KVDocsError {
                                throw KVDocsError(
                                    .corruption,
                                    "index \(execution.plan.index ?? "?") of \"\(execution.collection)\" has a malformed entry: \(error.message)",
                                    path: execution.reader.name, key: Array(key))
                            }
                        }
                        result = try body(parts.id, parts.payload)
                    })
                {
                    guard let result else { continue }
                    return result
                }
                cursor = nil
            }
        }

        /// Candidates read ahead, with their documents fetched together (over a network).
        private var ahead: [Candidate] = []
        private var position = 0

        func nextCandidate() throws -> ([UInt8], JSONValue)? {
            while let candidate = try nextAhead() {
                if let document = try execution.document(candidate) { return (candidate.id, document) }
            }
            return nil
        }

        private func nextAhead() throws -> Candidate? {
            guard let prefetched = execution.prefetched else { return try nextID() }
            if position == ahead.count {
                ahead.removeAll(keepingCapacity: true)
                position = 0
                while ahead.count < QueryExecution.readAhead, let candidate = try nextID() { ahead.append(candidate) }
                try prefetched.fetch(ahead.filter { $0.payload == nil }.map(\.id), in: execution)
            }
            guard position < ahead.count else { return nil }
            position += 1
            return ahead[position - 1]
        }
    }

    /// The entries of a scan that gives the order's values in order but their ties in the
    /// order of the index's later fields: each run of entries with one order value is read
    /// whole and returned sorted by id (descending for a reverse scan).
    final class TieSortedScan: IDSource {
        private let scan: RangeScan
        /// The rest of the current run, last first.
        private var run: [Candidate] = []
        /// The entry read past the current run, with its order value.
        private var pending: ([UInt8], Candidate)?
        var yieldsEachIDOnce: Bool { false }

        init(_ scan: RangeScan) { self.scan = scan }

        private func read() throws -> ([UInt8], Candidate)? {
            guard let candidate = try scan.nextID() else { return nil }
            return (scan.group, candidate)
        }

        func nextID() throws -> Candidate? {
            if let next = run.popLast() { return next }
            guard let (group, first) = try pending ?? read() else { return nil }
            pending = nil
            var entries = [first]
            while let next = try read() {
                if next.0 != group {
                    pending = next
                    break
                }
                entries.append(next.1)
            }
            // Last first: the largest id at the front, so an ascending scan pops the
            // smallest first; a reverse scan pops the largest first.
            run = entries.sorted { compareBytes($0.id, $1.id) > 0 }
            if scan.reverse { run.reverse() }
            return run.popLast()
        }
    }

    /// Every document of the collection in primary-key order, with its bytes.
    final class DocumentScan: CandidateSource {
        let execution: QueryExecution
        private let cursor: any KeyValueCursor

        init(execution: QueryExecution) throws {
            self.execution = execution
            self.cursor = try execution.reader.scan(execution.plan.ranges[0], order: .forward)
        }

        /// The next document's id bytes and stored bytes.
        func next() throws -> ([UInt8], [UInt8])? {
            let prefixLength = execution.plan.keyPrefixLength
            while let entry = try cursor.next({ key, value -> ([UInt8], [UInt8])? in
                // A document key holds exactly one element after the collection's prefix.
                guard try TupleDecoder.lastElementStart(of: key, from: prefixLength) == prefixLength else { return nil }
                return (Array(key[prefixLength...]), Array(value))
            }) {
                if let entry { return entry }
            }
            return nil
        }

        func nextCandidate() throws -> ([UInt8], JSONValue)? {
            guard let (id, bytes) = try next() else { return nil }
            let key = execution.documentPrefix + id
            return (
                id,
                try execution.store.documentValue(
                    bytes, collection: execution.collection, key: key, idOffset: execution.documentPrefix.count,
                    cached: true)
            )
        }
    }

    /// An index entry's candidate, and the length of its key's part before the id (the
    /// entry's value combination: entries sharing it are sorted by id). The id is the key's
    /// last element, or starts the value for an index whose plan says `idInValue` (the whole
    /// key is then the combination); a covering index's payload is the rest of the value.
    /// `nil` for an entry that holds no id.
    static func entry(
        _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, prefixLength: Int,
        in execution: QueryExecution
    ) throws -> (candidate: Candidate, groupLength: Int)? {
        try parts(key, value, prefixLength: prefixLength, in: execution).map {
            (Candidate(id: Array($0.id), payload: $0.payload.map { Array($0) }), $0.groupLength)
        }
    }

    /// An index entry's parts, lent from its key and value: see ``entry(_:_:prefixLength:in:)``.
    struct EntryParts {
        let id: UnsafeRawBufferPointer
        let payload: UnsafeRawBufferPointer?
        let groupLength: Int
    }

    /// The parts of an index entry, in place; `nil` for an entry that holds no id.
    @inline(__always)
    static func parts(
        _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, prefixLength: Int,
        in execution: QueryExecution
    ) throws -> EntryParts? {
        do {
            if execution.plan.idInValue {
                guard !value.isEmpty else { return nil }
                let idEnd = try TupleDecoder.firstElementEnd(of: value)
                return EntryParts(
                    id: UnsafeRawBufferPointer(rebasing: value[..<idEnd]),
                    payload: execution.plan.covering ? UnsafeRawBufferPointer(rebasing: value[idEnd...]) : nil,
                    groupLength: key.count)
            }
            guard let start = try TupleDecoder.lastElementStart(of: key, from: prefixLength), start > prefixLength
            else { return nil }
            return EntryParts(
                id: UnsafeRawBufferPointer(rebasing: key[start...]),
                payload: execution.plan.covering ? value : nil, groupLength: start)
        } catch let error as KVDocsError {
            throw KVDocsError(
                .corruption,
                "index \(execution.plan.index ?? "?") of \"\(execution.collection)\" has a malformed entry: \(error.message)",
                path: execution.reader.name, key: Array(key))
        }
    }

    /// A k-way merge by id of the per-value streams of the plan's ranges: each distinct
    /// value combination's entries are sorted by id. `nil` from `init` when there are more
    /// than ``maximumMergedStreams`` of them.
    final class MergeByID: IDSource {
        /// One value combination's entries: the cursor reads on until the group ends.
        final class Group {
            let prefix: [UInt8]
            let cursor: any KeyValueCursor
            init(prefix: [UInt8], cursor: any KeyValueCursor) {
                self.prefix = prefix
                self.cursor = cursor
            }
        }
        struct Head: Comparable {
            let candidate: Candidate
            let group: Int
            var id: [UInt8] { candidate.id }
            static func < (a: Head, b: Head) -> Bool {
                let c = compareBytes(a.id, b.id)
                return c != 0 ? c < 0 : a.group < b.group
            }
            static func == (a: Head, b: Head) -> Bool { a.id == b.id && a.group == b.group }
        }

        let execution: QueryExecution
        private var groups: [Group] = []
        private var heads = Heap<Head>()
        private var last: [UInt8]?
        var yieldsEachIDOnce: Bool { true }

        init?(execution: QueryExecution) throws {
            self.execution = execution
            let prefixLength = execution.plan.keyPrefixLength
            for range in execution.plan.ranges {
                var lower = range.lower
                while true {
                    let cursor = try execution.reader.scan(KeyRange(lower: lower, upper: range.upper), order: .forward)
                    guard
                        let first = try cursor.next({ key, value -> ([UInt8], Candidate)? in
                            guard
                                let entry = try QueryExecution.entry(
                                    key, value, prefixLength: prefixLength, in: execution)
                            else { return nil }
                            return (Array(key[..<entry.groupLength]), entry.candidate)
                        })
                    else { break }
                    guard let (prefix, candidate) = first else { break }
                    guard groups.count < QueryExecution.maximumMergedStreams else { return nil }
                    heads.insert(Head(candidate: candidate, group: groups.count))
                    groups.append(Group(prefix: prefix, cursor: cursor))
                    guard let next = KeyRange.prefixSuccessor(prefix) else { break }
                    lower = .included(next)
                }
            }
        }

        func nextID() throws -> Candidate? {
            let prefixLength = execution.plan.keyPrefixLength
            while let head = heads.popMin() {
                let group = groups[head.group]
                if let next = try group.cursor.next({ key, value -> Candidate? in
                    guard key.starts(with: group.prefix),
                        let entry = try QueryExecution.entry(key, value, prefixLength: prefixLength, in: execution),
                        entry.groupLength == group.prefix.count
                    else { return nil }
                    return entry.candidate
                }), let next {
                    heads.insert(Head(candidate: next, group: head.group))
                }
                if head.id == last { continue }
                last = head.id
                return head.candidate
            }
            return nil
        }
    }
}
