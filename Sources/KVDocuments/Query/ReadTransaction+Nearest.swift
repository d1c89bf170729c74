import Foundation
import KVKeys
import KVStorage
import KVSupport
import KVVector

/// One hit of a nearest-neighbour query.
public struct NearestHit: Sendable, Equatable {
    /// The primary key of the document.
    public let id: JSONValue
    /// The distance from the query vector in the index's metric (``VectorMetric``), exact.
    public let distance: Double
    /// The document (only the query's selected fields with ``DocumentQuery/select(_:)``), or
    /// `null` when the query asked for no documents.
    public let document: JSONValue
}

/// One hit of a nearest-neighbour query whose document is decoded as `T`.
public struct TypedNearestHit<T> {
    /// The primary key of the document.
    public let id: JSONValue
    /// The distance from the query vector in the index's metric.
    public let distance: Double
    /// The document, decoded.
    public let value: T

    /// The hit `hit` with its document decoded as `T`.
    /// - Parameters:
    ///   - hit: an untyped hit, with its document.
    ///   - dates: how the document's dates were written: the store's
    ///     ``DocumentStore/dateStrategy``.
    /// - Throws: `.decoding` when the document does not decode as `T`.
    public init(decoding hit: NearestHit, dates: DateStrategy) throws where T: Decodable {
        self.id = hit.id
        self.distance = hit.distance
        self.value = try hit.document.decode(T.self, dates: dates)
    }
}

extension TypedNearestHit: Sendable where T: Sendable {}

/// How a nearest-neighbour query searches its vector index.
///
/// A vector index keeps, beside its id-ordered blocks, an inverted file once it holds
/// 1,024 vectors: about √n lists (k-means centroids trained on a sample, retrained in the
/// write that makes the index 4× larger than at the last training), each vector in the list
/// of its nearest centroid.
public enum VectorSearchMode: Sendable, Hashable {
    /// Every vector scanned (or, with a selective condition another index serves, every
    /// matching one looked up): the exact k nearest.
    case exact
    /// The `probes` lists whose centroids are nearest the query, read with the same exact
    /// distances; `nil`: ``defaultProbes(lists:)``. Recall, the share of the exact k found,
    /// rises with `probes` (kvbench's vector section measures it). With conditions, a search
    /// that finds fewer than k reads 4× as many lists, up to every vector, so it returns k
    /// whenever k documents match. An index without lists is scanned whole (exact).
    case approximate(probes: Int? = nil)

    /// The lists an approximate search reads by default for an index of `lists` lists:
    /// one in 32, at least 4 (recall@10 1.000 on kvbench's clustered 100,000 × 384, where 2 of
    /// its 178 lists give 0.994).
    public static func defaultProbes(lists: Int) -> Int { max(4, lists / 32) }
}

/// How a nearest-neighbour query read its vector index (see
/// ``ReadTransaction/explainNearest(_:to:k:query:index:search:)``).
public struct VectorPlan: Sendable, CustomStringConvertible {
    /// How the candidates were found.
    public enum Strategy: Sendable, Hashable {
        /// Every vector of the index scanned (the query has no condition).
        case scan
        /// Every vector scanned; the conditions checked on documents in order of distance
        /// until k matched (no index serves them, or the one that does matches too many).
        case scanWithFilter
        /// Pre-filter: the documents matching the conditions read through `index` (a
        /// secondary index), and only their vectors read.
        case candidates(index: String)
    }

    /// The collection queried.
    public let collection: String
    /// The vector index read.
    public let index: String
    /// Its metric.
    public let metric: VectorMetric
    /// How many nearest were asked for.
    public let k: Int
    /// The search asked for.
    public let search: VectorSearchMode
    /// How the candidates were found.
    public let strategy: Strategy
    /// The lists of the index's inverted file (`nil`: it has none, under 1,024 vectors).
    public let lists: Int?
    /// The lists an approximate search read (`nil`: it read every vector, or looked up the
    /// pre-filter's candidates).
    public let listsRead: Int?
    /// The query's conditions.
    public let filter: [QueryCondition]
    /// The vectors in the index at this snapshot.
    public let vectors: Int
    /// Documents matching the conditions found through the pre-filter's index
    /// (``Strategy/candidates(index:)``), else `nil`.
    public let candidates: Int?
    /// Blocks of vectors read.
    public let blocksRead: Int
    /// Vectors whose distance bound the scan computed.
    public let vectorsScanned: Int
    /// Exact distances computed.
    public let exactDistances: Int
    /// Documents read to check the conditions (``Strategy/scanWithFilter``).
    public let documentsChecked: Int
    /// Hits returned.
    public let hits: Int

    public var description: String {
        let how =
            if let listsRead, let lists { "approximate: \(listsRead) of \(lists) lists read" } else { "exact" }
        var lines = ["nearest \(k) in \(collection) using vector index \(index) (\(metric.rawValue), \(how))"]
        switch strategy {
        case .scan:
            lines.append(listsRead == nil ? "scan: every vector of the index" : "scan: the vectors of the lists read")
        case .scanWithFilter:
            lines.append(
                listsRead == nil
                    ? "scan with filter: every vector, the conditions checked on documents nearest first"
                    : "scan with filter: the lists' vectors, the conditions checked on documents nearest first")
        case .candidates(let name):
            lines.append(
                "pre-filter: \(candidates ?? 0) documents matching the conditions through index \(name), only their vectors read"
            )
        }
        if !filter.isEmpty { lines.append("filter: " + filter.map(\.description).joined(separator: " and ")) }
        lines.append(
            "\(vectors) vectors, \(blocksRead) blocks read, \(vectorsScanned) scanned, \(exactDistances) exact distances, \(documentsChecked) documents checked, \(hits) hits"
        )
        return lines.joined(separator: "\n")
    }
}

extension ReadTransaction {
    /// The `k` documents of `collection` whose vectors are nearest to `vector`, nearest first,
    /// ties broken by primary key, read from a vector index through this transaction's
    /// snapshot, with `query`'s conditions as a filter: approximate (the lists of an inverted
    /// file nearest the query) or exact, as `search` asks.
    ///
    /// Distances are exact in the index's metric (``VectorMetric``), computed in double
    /// precision from the stored float32 values; an approximate search may miss some of the
    /// exact k (``VectorSearchMode``). With conditions, the result is the k nearest among the
    /// documents that match them (fewer only when fewer match): when an index serves the
    /// conditions and matches few documents, only their vectors are read (pre-filter, always
    /// exact); otherwise the vectors are scanned and the conditions checked on documents
    /// nearest first. ``explainNearest(_:to:k:query:index:search:)`` says which.
    ///
    /// - Parameters:
    ///   - collection: the collection.
    ///   - vector: the query vector: the index's dimensions, finite values.
    ///   - k: how many nearest (0 or more).
    ///   - query: conditions, and the fields to return (``DocumentQuery/select(_:)``); no
    ///     order, limit or offset (k says how many; hits come by distance).
    ///   - index: the vector index to read; `nil` for the collection's only one.
    ///   - search: ``VectorSearchMode/exact`` or ``VectorSearchMode/approximate(probes:)``
    ///     (the default, with the default probes).
    ///   - includeDocuments: whether hits carry their documents.
    /// - Throws: `.invalidArgument` for a vector of the wrong length or with a value that is
    ///   not finite, a negative k or probes below 1, or a query with an order, a limit or an
    ///   offset; `.schema` for
    ///   a collection without a vector index, an unknown index, several and none named, or an
    ///   index being built; `.corruption` for a damaged block, naming its key.
    public func nearest(
        _ collection: String, to vector: [Float], k: Int, query: DocumentQuery = DocumentQuery(),
        index: String? = nil, search: VectorSearchMode = .approximate(), includeDocuments: Bool = true
    ) throws -> [NearestHit] {
        try runNearest(
            collection, vector, k: k, query: query, index: index, search: search, includeDocuments: includeDocuments
        ).hits
    }

    /// How ``nearest(_:to:k:query:index:search:includeDocuments:)`` reads the index for
    /// these arguments: the query is run, and its strategy and counts reported.
    public func explainNearest(
        _ collection: String, to vector: [Float], k: Int, query: DocumentQuery = DocumentQuery(),
        index: String? = nil, search: VectorSearchMode = .approximate()
    ) throws -> VectorPlan {
        try runNearest(
            collection, vector, k: k, query: query, index: index, search: search, includeDocuments: false
        ).plan
    }

    private func runNearest(
        _ collection: String, _ vector: [Float], k: Int, query: DocumentQuery, index name: String?,
        search mode: VectorSearchMode, includeDocuments: Bool
    ) throws -> (hits: [NearestHit], plan: VectorPlan) {
        try query.validate()
        guard k >= 0 else { throw KVDocsError(.invalidArgument, "k must not be negative (got \(k))") }
        if case .approximate(let probes?) = mode, probes < 1 {
            throw KVDocsError(.invalidArgument, "probes must be at least 1 (got \(probes))")
        }
        guard k <= Self.maximumNearest else {
            throw KVDocsError(.invalidArgument, "k must be at most \(Self.maximumNearest) (got \(k))")
        }
        if query.order != nil || query.limit != nil || query.offset != 0 {
            throw KVDocsError(
                .invalidArgument,
                "nearest returns the k nearest, nearest first: its query takes conditions and selected fields, no order, limit or offset"
            )
        }
        let maintainer = try self.index(name, of: collection, as: VectorIndexMaintainer.self).maintainer
        var search = try VectorSearch(index: maintainer.index, query: vector)
        let vectors = try maintainer.index.count(self.reader)
        let centroids = try maintainer.index.centroids(self.reader)
        let lists = centroids?.count
        // The lists an approximate search reads; nil: exact.
        var probes: Int?
        if case .approximate(let asked) = mode, let lists {
            probes = asked ?? VectorSearchMode.defaultProbes(lists: lists)
        }
        let documentPrefix = store.layout.documents(collection).prefix
        var documents: [ByteKey: JSONValue] = [:]
        var checked = 0
        func document(_ id: [UInt8]) throws -> JSONValue? {
            if let known = documents[ByteKey(id)] { return known }
            let key = documentPrefix + id
            guard let bytes = try self.reader.value(forKey: key) else { return nil }
            let value = try store.documentValue(bytes, collection: collection, key: key, idOffset: documentPrefix.count)
            documents[ByteKey(id)] = value
            return value
        }
        var strategy = VectorPlan.Strategy.scan
        var candidateCount: Int?
        var results: [NearestSelection.Result]
        if query.conditions.isEmpty {
            results =
                try probes.map { try search.approximate(k: k, probes: $0, centroids: centroids, reader: self.reader) }
                ?? search.scan(k: k, reader: self.reader)
        } else {
            var filterOnly = query
            filterOnly.fields = nil
            let plan = try planner.plan(collection, filterOnly)
            // Pre-filter when an index serves the conditions and finds at most max(n/32, √(k·n))
            // documents (n vectors). A pre-filter looks up the blocks of its m documents (one
            // seek each: about the cost of the bounds of 32 vectors, measured); a scan with the
            // filter computes n bounds and checks about k·n/m documents (nearest first, until
            // k match), as many as the pre-filter reads at m = √(k·n). An approximate search
            // scans only its lists, so the n bounds drop out: it checks about k·n/m documents
            // (measured: 1.5 times a pre-filter's seek each), and the pre-filter wins below
            // m = 2√(k·n) only (at 100,000 vectors and 1%, 1,036 documents: a pre-filter 11 ms,
            // the lists with the filter 15 ms; at a million, 10,000: 101 ms against a scan of
            // 22 lists).
            var ids: [[UInt8]]?
            if let served = plan.index {
                let balance = Int((Double(k) * Double(vectors)).squareRoot())
                let cap = probes == nil ? max(k, vectors / 32, balance) : max(k, 2 * balance)
                let found = try matchingIDs(collection, plan: plan, limit: cap + 1)
                if found.count <= cap {
                    ids = found
                    strategy = .candidates(index: served)
                    candidateCount = found.count
                }
            }
            if let ids {
                results = try search.lookUp(ids, k: k, reader: self.reader)
            } else {
                strategy = .scanWithFilter
                // The conditions read only their fields from the stored bytes (no document
                // built); over a network, each chunk of candidates' documents in one request.
                let fields = query.conditions.map(\.field.wholeField)
                var stored: [ByteKey: [UInt8]] = [:]
                let prefetch: (([[UInt8]]) throws -> Void)? =
                    self.reader.readsAreRoundTrips
                    ? { ids in
                        let missing = ids.filter { stored[ByteKey($0)] == nil }
                        let values = try self.reader.values(forKeys: missing.map { documentPrefix + $0 })
                        for (id, bytes) in zip(missing, values) {
                            if let bytes { stored[ByteKey(id)] = bytes }
                        }
                    } : nil
                let accept: ([UInt8]) throws -> Bool = { id in
                    checked += 1
                    let key = documentPrefix + id
                    if let bytes = stored[ByteKey(id)] {
                        return try bytes.withUnsafeBytes {
                            try self.storedDocument($0, key: key, of: collection, matches: query, fields: fields)
                        }
                    }
                    return try self.reader.withValue(forKey: key) { bytes in
                        guard let bytes else { return false }
                        return try self.storedDocument(
                            bytes, key: key, of: collection, matches: query, fields: fields)
                    }
                }
                results =
                    try probes.map {
                        try search.approximate(
                            k: k, probes: $0, centroids: centroids, accept: accept, prefetch: prefetch,
                            reader: self.reader)
                    } ?? search.scan(k: k, accept: accept, prefetch: prefetch, reader: self.reader)
            }
        }
        if includeDocuments && self.reader.readsAreRoundTrips {
            // Over a network, the hits' documents in one request.
            let missing = results.map(\.id).filter { documents[ByteKey($0)] == nil }
            for (id, bytes) in zip(missing, try self.reader.values(forKeys: missing.map { documentPrefix + $0 })) {
                guard let bytes else { continue }
                documents[ByteKey(id)] = try store.documentValue(
                    bytes, collection: collection, key: documentPrefix + id, idOffset: documentPrefix.count)
            }
        }
        let selected = query.fields.map { $0.map(\.wholeField) }
        var hits: [NearestHit] = []
        hits.reserveCapacity(results.count)
        for result in results {
            let id = try Tuple(decoding: result.id).elements.first.map(DocumentStore.idValue) ?? .null
            var value = JSONValue.null
            if includeDocuments {
                guard let stored = try document(result.id) else { continue }
                value = selected.map { FieldPath.project(stored, onto: $0) } ?? stored
            }
            hits.append(
                NearestHit(id: id, distance: search.kernel.distance(score: result.score), document: value))
        }
        let plan = VectorPlan(
            collection: collection, index: maintainer.definition.name, metric: maintainer.definition.metric, k: k,
            search: mode, strategy: strategy, lists: lists, listsRead: probes == nil ? nil : search.listsRead,
            filter: query.conditions, vectors: vectors, candidates: candidateCount,
            blocksRead: search.blocksRead, vectorsScanned: search.vectorsScanned,
            exactDistances: search.exactComputed, documentsChecked: checked, hits: hits.count)
        return (hits, plan)
    }

    /// Whether the document stored as `bytes` under `key` meets `query`'s conditions, read
    /// from the bytes: only the conditions' `fields` (their whole fields) of the binary form,
    /// no document built (JSON text, which a layered base may hold, is parsed).
    /// - Throws: `.corruption` naming the key for damaged bytes.
    func storedDocument(
        _ bytes: UnsafeRawBufferPointer, key: [UInt8], of collection: String, matches query: DocumentQuery,
        fields: [[String]]
    ) throws -> Bool {
        do {
            guard BinaryJSON.isBinary(bytes) else { return query.matches(try JSONValue(parsing: bytes)) }
            return query.matches(try FieldPath.project(binary: bytes, onto: fields))
        } catch let error as KVDocsError {
            throw KVDocsError(.corruption, "document of \"\(collection)\" is damaged: \(error.message)", key: key)
        } catch {
            throw KVDocsError(.corruption, "document of \"\(collection)\" is damaged: \(error)", key: key)
        }
    }

    /// The largest k a nearest-neighbour query takes.
    static let maximumNearest = 100_000

    /// The ids (tuple-encoded) of the documents matching `plan`'s query, at most `limit`.
    func matchingIDs(_ collection: String, plan: QueryPlan, limit: Int) throws -> [[UInt8]] {
        let execution = QueryExecution(transaction: self, collection: collection, plan: plan)
        if plan.index != nil, plan.filter.isEmpty {
            // The index's entries are the matches: their ids, no document read.
            let scan = QueryExecution.RangeScan(execution: execution, reverse: false)
            var seen = Set<ByteKey>()
            var ids: [[UInt8]] = []
            while ids.count < limit, let candidate = try scan.nextID() {
                if plan.mayRepeat, !seen.insert(ByteKey(candidate.id)).inserted { continue }
                ids.append(candidate.id)
            }
            return ids
        }
        let primaryKey = try catalog.schema.collection(collection).primaryKey
        var ids: [[UInt8]] = []
        try execution.forEach(
            offset: 0, limit: limit,
            transform: { match in try execution.idBytes(match, collection: collection, primaryKey: primaryKey) }
        ) { id in
            if let id { ids.append(id) }
        }
        return ids
    }
}
