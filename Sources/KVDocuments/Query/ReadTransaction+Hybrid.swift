import Foundation
import KVGeo
import KVKeys
import KVSupport
import KVVector

/// A query that combines a full-text query (BM25), a vector query and the usual conditions
/// (a geo radius included), fused by reciprocal rank fusion: see
/// ``ReadTransaction/hybrid(_:_:)``.
public struct HybridQuery: Sendable {
    /// The FTS5 query on the collection's text index, or `nil` for none.
    public var text: String?
    /// The text index; `nil` for the collection's only (or first) one.
    public var textIndex: String?
    /// The query vector, or `nil` for none.
    public var vector: [Float]?
    /// The vector index; `nil` for the collection's only one.
    public var vectorIndex: String?
    /// Only documents within `radius` metres of `center` (through the collection's geo
    /// index), or `nil` for no radius.
    public var near: (center: GeoPoint, radius: Double)?
    /// Conditions every hit meets (no order, limit or offset).
    public var conditions: DocumentQuery
    /// How many hits.
    public var k: Int
    /// How deep each ranked list is read: its best `depth` documents that meet the
    /// conditions (at least k).
    public var depth: Int
    /// The constant of reciprocal rank fusion: a document at rank r (from 1) of a list adds
    /// `1 / (rrfConstant + r)` to its score. 60, as Cormack, Clarke and Büttcher (2009) chose.
    public var rrfConstant: Double

    /// A hybrid query of the k best documents.
    /// - Parameters:
    ///   - text: the FTS5 query, or `nil`.
    ///   - vector: the query vector, or `nil`.
    ///   - k: how many hits.
    ///   - conditions: conditions every hit meets.
    ///   - near: a geo radius every hit lies within, or `nil`.
    ///   - depth: how deep each list is read (default max(k, 50)).
    ///   - rrfConstant: reciprocal rank fusion's constant (default 60).
    public init(
        text: String? = nil, vector: [Float]? = nil, k: Int, conditions: DocumentQuery = DocumentQuery(),
        near: (center: GeoPoint, radius: Double)? = nil, depth: Int? = nil, rrfConstant: Double = 60
    ) {
        self.text = text
        self.vector = vector
        self.k = k
        self.conditions = conditions
        self.near = near
        self.depth = max(k, depth ?? 50)
        self.rrfConstant = rrfConstant
    }
}

/// One hit of a hybrid query.
public struct HybridHit: Sendable, Equatable {
    /// The primary key of the document.
    public let id: JSONValue
    /// Its fused score: the sum over the lists it is in of `1 / (rrfConstant + rank)`.
    public let score: Double
    /// Its rank (from 1) among the text query's matches that meet the conditions, or `nil`
    /// when it is not among the first `depth`.
    public let textRank: Int?
    /// Its rank (from 1) by distance to the query vector, or `nil` when it is not among the
    /// first `depth`.
    public let vectorRank: Int?
    /// Its distance to the query vector when it has a vector rank.
    public let distance: Double?
    /// The document.
    public let document: JSONValue
}

extension ReadTransaction {
    /// The k documents of `collection` ranked by reciprocal rank fusion of a text query and a
    /// vector query, among those meeting the conditions (and within the radius), best first,
    /// ties by primary key.
    ///
    /// Each list is exact and filtered before it is cut: the text list is the text query's
    /// matches by BM25 that meet the conditions, the first `depth` of them; the vector list
    /// is the `depth` nearest among the documents that meet them
    /// (``nearest(_:to:k:query:index:search:includeDocuments:)``). With a radius, both lists are
    /// taken from the documents within it. A document's score is the sum, over the lists it
    /// is in, of `1 / (rrfConstant + rank)`.
    ///
    /// - Throws: `.invalidArgument` for a query with neither text nor vector, a negative k, a
    ///   negative or non-finite radius, or conditions with an order, limit or offset;
    ///   otherwise what ``search(_:_:options:)``, ``nearest(_:to:k:query:index:search:includeDocuments:)``
    ///   and ``near(_:_:within:query:index:includeDocuments:)`` throw.
    public func hybrid(_ collection: String, _ hybrid: HybridQuery) throws -> [HybridHit] {
        recordRead(collection)
        guard hybrid.text != nil || hybrid.vector != nil else {
            throw KVDocsError(.invalidArgument, "a hybrid query takes a text query, a vector, or both")
        }
        guard hybrid.k >= 0 else { throw KVDocsError(.invalidArgument, "k must not be negative (got \(hybrid.k))") }
        let conditions = hybrid.conditions
        try conditions.validate()
        if conditions.order != nil || conditions.limit != nil || conditions.offset != 0 {
            throw KVDocsError(
                .invalidArgument, "a hybrid query's conditions take no order, limit or offset (k says how many)")
        }
        guard hybrid.k > 0 else { return [] }
        let schema = try catalog.schema.collection(collection)
        func encoded(_ id: JSONValue) throws -> [UInt8] {
            Tuple([try DocumentStore.idElement(id, collection: collection, primaryKey: schema.primaryKey)]).encoded
        }
        // The radius: the documents within it that meet the conditions.
        var within: Set<ByteKey>?
        if let near = hybrid.near {
            let hits = try self.near(
                collection, near.center, within: near.radius, query: conditions, includeDocuments: false)
            within = Set(try hits.map { ByteKey(try encoded($0.id)) })
        }
        var documents: [ByteKey: JSONValue] = [:]
        let documentPrefix = store.layout.documents(collection).prefix
        func document(_ id: [UInt8]) throws -> JSONValue? {
            if let known = documents[ByteKey(id)] { return known }
            let key = documentPrefix + id
            guard let bytes = try reader.value(forKey: key) else { return nil }
            let value = try store.documentValue(bytes, collection: collection, key: key, idOffset: documentPrefix.count)
            documents[ByteKey(id)] = value
            return value
        }

        // The text list: matches by BM25 meeting the conditions (and within the radius),
        // read in growing prefixes until `depth` meet them or the matches end.
        var textList: [[UInt8]] = []
        let fields = conditions.conditions.map(\.field.wholeField)
        if let text = hybrid.text {
            let maintainer = try textMaintainer(collection, hybrid.textIndex)
            var limit = hybrid.depth * 4
            while true {
                let ranking = try maintainer.rank(text, limit: limit, reader: reader)
                textList = []
                for entry in ranking.hits where textList.count < hybrid.depth {
                    let id = Tuple([entry.id]).encoded
                    // The documents within the radius were found with the conditions.
                    if let within {
                        guard within.contains(ByteKey(id)) else { continue }
                    } else if !conditions.conditions.isEmpty {
                        let key = documentPrefix + id
                        let meets = try reader.withValue(forKey: key) { bytes in
                            try bytes.map {
                                try storedDocument($0, key: key, of: collection, matches: conditions, fields: fields)
                            } ?? false
                        }
                        guard meets else { continue }
                    }
                    textList.append(id)
                }
                if textList.count >= hybrid.depth || ranking.hits.count < limit { break }
                limit = limit.multipliedReportingOverflow(by: 4).overflow ? Int.max : limit * 4
            }
        }

        // The vector list: the `depth` nearest meeting the conditions (within the radius: a
        // pre-filter of the documents in it).
        var vectorList: [(id: [UInt8], distance: Double)] = []
        if let vector = hybrid.vector {
            if let within {
                let maintainer = try index(hybrid.vectorIndex, of: collection, as: VectorIndexMaintainer.self)
                    .maintainer
                var search = try VectorSearch(index: maintainer.index, query: vector)
                vectorList = try search.lookUp(within.map(\.bytes), k: hybrid.depth, reader: reader).map {
                    ($0.id, search.kernel.distance(score: $0.score))
                }
            } else {
                vectorList = try nearest(
                    collection, to: vector, k: hybrid.depth, query: conditions, index: hybrid.vectorIndex,
                    search: .exact, includeDocuments: false
                ).map { (try encoded($0.id), $0.distance) }
            }
        }

        // Reciprocal rank fusion.
        var fused: [ByteKey: (score: Double, text: Int?, vector: Int?, distance: Double?)] = [:]
        for (rank, id) in textList.enumerated() {
            fused[ByteKey(id), default: (0, nil, nil, nil)].score += 1 / (hybrid.rrfConstant + Double(rank + 1))
            fused[ByteKey(id)]?.text = rank + 1
        }
        for (rank, entry) in vectorList.enumerated() {
            fused[ByteKey(entry.id), default: (0, nil, nil, nil)].score +=
                1 / (hybrid.rrfConstant + Double(rank + 1))
            fused[ByteKey(entry.id)]?.vector = rank + 1
            fused[ByteKey(entry.id)]?.distance = entry.distance
        }
        let ranked = fused.sorted { a, b in
            a.value.score != b.value.score ? a.value.score > b.value.score : compareBytes(a.key.bytes, b.key.bytes) < 0
        }
        var hits: [HybridHit] = []
        for (key, entry) in ranked.prefix(hybrid.k) {
            guard let value = try document(key.bytes) else { continue }
            let id = try Tuple(decoding: key.bytes).elements.first.map(DocumentStore.idValue) ?? .null
            hits.append(
                HybridHit(
                    id: id, score: entry.score, textRank: entry.text, vectorRank: entry.vector,
                    distance: entry.distance, document: value))
        }
        return hits
    }
}
