import Foundation
import KVGeo
import KVKeys
import KVSupport

/// One hit of a geo query.
public struct NearHit: Sendable {
    /// The primary key of the document.
    public let id: JSONValue
    /// The haversine distance from the query's centre to the document's point, in metres.
    public let distance: Double
    /// The document (only the query's selected fields with ``DocumentQuery/select(_:)``), or `null`
    /// when the query asked for no documents.
    public let document: JSONValue
}

/// One hit of a geo query whose documents are decoded as `T`: from a ``TypedCollection``,
/// or `tx.fetch(.near(…, as: T.self))`.
public struct TypedNearHit<T> {
    /// The primary key of the document.
    public let id: JSONValue
    /// The distance from the query's centre, in metres.
    public let distance: Double
    /// The document, decoded.
    public let value: T

    /// A hit of `value`, the document with primary key `id`, at `distance` metres.
    /// - Parameters:
    ///   - id: the document's primary key.
    ///   - distance: the distance from the query's centre, in metres.
    ///   - value: the document, decoded.
    public init(id: JSONValue, distance: Double, value: T) {
        self.id = id
        self.distance = distance
        self.value = value
    }

    /// The hit `hit` with its document decoded as `T`.
    /// - Parameters:
    ///   - hit: an untyped hit, with its document.
    ///   - dates: how the document's dates were written: the store's
    ///     ``DocumentStore/dateStrategy``.
    /// - Throws: `.decoding` when the document does not decode as `T`.
    public init(decoding hit: NearHit, dates: DateStrategy) throws where T: Decodable {
        self.init(id: hit.id, distance: hit.distance, value: try hit.document.decode(T.self, dates: dates))
    }
}

extension TypedNearHit: Sendable where T: Sendable {}

/// How a geo query read its index: the cells of each widening circle and the key ranges
/// read (see ``ReadTransaction/explainNear(_:_:within:query:index:)``).
public struct GeoPlan: Sendable, CustomStringConvertible {
    /// One circle of the search: its radius, the cells covering it and the ranges of leaf
    /// cell codes read for it (those not read by an earlier circle).
    public struct Ring: Sendable {
        /// Metres.
        public let radius: Double
        /// Each cell as `LEVEL/0xCODE [lat S..N, lon W..E]`.
        public let cells: [String]
        /// Each range of leaf cell codes read, as `0xLOW..0xHIGH`.
        public let ranges: [String]
    }

    /// The collection queried.
    public let collection: String
    /// The geo index read.
    public let index: String
    /// The centre.
    public let center: GeoPoint
    /// The query's radius in metres, `nil` for none.
    public let within: Double?
    /// The circles read, in order.
    public let rings: [Ring]
    /// The conditions checked on each document within the radius, in distance order.
    public let filter: [QueryCondition]
    /// The index entries read.
    public let candidates: Int
    /// The hits returned (after the offset, up to the limit).
    public let hits: Int

    public var description: String {
        var lines = [
            "near \(collection) \(center)\(within.map { " within \(Self.metres($0))" } ?? "") using geo index \(index)"
        ]
        for (n, ring) in rings.enumerated() {
            lines.append(
                "ring \(n + 1): radius \(Self.metres(ring.radius)), \(ring.cells.count) cells, \(ring.ranges.count) ranges read"
            )
            lines += ring.cells.map { "  cell " + $0 }
            lines += ring.ranges.map { "  range " + $0 }
        }
        if !filter.isEmpty { lines.append("filter: " + filter.map(\.description).joined(separator: " and ")) }
        lines.append("\(candidates) entries read, \(hits) hits")
        return lines.joined(separator: "\n")
    }

    static func metres(_ m: Double) -> String {
        m.rounded() == m && abs(m) < 1e15 ? "\(Int64(m)) m" : "\(m) m"
    }
}

extension ReadTransaction {
    /// The documents of `collection` whose point is within `within` metres of `center`,
    /// nearest first, ties broken by primary key, read from a geo index through this
    /// transaction's snapshot.
    ///
    /// Distances are haversine great-circle distances on a sphere of radius
    /// ``GeoPoint/earthRadius``; `within` means distance ≤ `within`. Without a radius the
    /// search is k-nearest: give the query a limit. `query`'s conditions are checked on each
    /// document in distance order, before its offset and limit apply, so
    /// `near(c, p, query: DocumentQuery().where("kind", .equal("rail")).limit(4))` returns the four
    /// nearest rail documents.
    ///
    /// - Parameters:
    ///   - collection: the collection.
    ///   - center: the point distances are measured from.
    ///   - within: the radius in metres (≥ 0), or `nil` for no radius.
    ///   - query: extra conditions, a limit and an offset (no order: hits come by distance),
    ///     and the fields to return (``DocumentQuery/select(_:)``).
    ///   - index: the geo index to read; `nil` for the collection's only one.
    ///   - includeDocuments: whether hits carry their documents (without conditions, a query
    ///     that returns none reads no document).
    /// - Throws: `.invalidArgument` for a negative or non-finite radius, a negative limit or
    ///   offset, or a query with an order; `.schema` for a collection without a geo index,
    ///   an unknown index, several geo indexes and none named (naming them), or an index
    ///   being built; `.corruption` for a damaged entry.
    public func near(
        _ collection: String, _ center: GeoPoint, within: Double? = nil, query: DocumentQuery = DocumentQuery(),
        index: String? = nil,
        includeDocuments: Bool = true
    ) throws -> [NearHit] {
        try runNear(collection, center, within: within, query: query, index: index, includeDocuments: includeDocuments)
            .hits
    }

    /// How ``near(_:_:within:query:index:includeDocuments:)`` reads the index for these
    /// arguments: the query is run, and its circles, cells and ranges reported.
    public func explainNear(
        _ collection: String, _ center: GeoPoint, within: Double? = nil, query: DocumentQuery = DocumentQuery(),
        index: String? = nil
    ) throws -> GeoPlan {
        let (hits, search, name) = try runNear(
            collection, center, within: within, query: query, index: index, includeDocuments: false)
        return GeoPlan(
            collection: collection, index: name, center: center, within: within,
            rings: search.rings.map { ring in
                GeoPlan.Ring(
                    radius: ring.radius, cells: ring.cells.map(\.description),
                    ranges: ring.ranges.map {
                        "0x\(String($0.lowerBound, radix: 16))..0x\(String($0.upperBound, radix: 16))"
                    })
            },
            filter: query.conditions, candidates: search.entriesRead, hits: hits.count)
    }

    private func runNear(
        _ collection: String, _ center: GeoPoint, within: Double?, query: DocumentQuery, index: String?,
        includeDocuments: Bool
    ) throws -> (hits: [NearHit], search: GeoSearch, index: String) {
        recordRead(collection)
        try query.validate()
        if let within, !(within.isFinite && within >= 0) {
            throw KVDocsError(
                .invalidArgument, "the radius must be a finite number of metres, at least 0 (got \(within))")
        }
        if query.order != nil {
            throw KVDocsError(
                .invalidArgument,
                "near returns hits nearest first; the query must not have an order (got order by \(query.order.map { $0.field.description } ?? ""))"
            )
        }
        let maintainer = try geoMaintainer(collection, index)
        let needed = query.limit.map { query.offset.saturatingAdd($0) }
        var documents: [[UInt8]: JSONValue] = [:]
        let documentPrefix = store.layout.documents(collection).prefix
        func document(_ id: [UInt8]) throws -> JSONValue? {
            if let known = documents[id] { return known }
            guard let bytes = try reader.value(forKey: documentPrefix + id) else { return nil }
            let value = try store.documentValue(
                bytes, collection: collection, key: documentPrefix + id, idOffset: documentPrefix.count)
            documents[id] = value
            return value
        }
        var search = GeoSearch(index: maintainer.index, reader: reader, center: center, within: within)
        let accept: ((GeoSearch.Candidate) throws -> Bool)? =
            query.conditions.isEmpty
            ? nil
            : { candidate in
                guard let value = try document(candidate.id) else { return false }
                return query.matches(value)
            }
        let found = try search.run(needed: needed, accept: accept)
        let page = found.dropFirst(min(query.offset, found.count))
        var hits: [NearHit] = []
        hits.reserveCapacity(page.count)
        let selected = query.fields.map { $0.map(\.wholeField) }
        if includeDocuments && reader.readsAreRoundTrips {
            // Over a network, the page's documents in one request.
            let missing = page.map(\.id).filter { documents[$0] == nil }
            for (id, bytes) in zip(missing, try reader.values(forKeys: missing.map { documentPrefix + $0 })) {
                guard let bytes else { continue }
                documents[id] = try store.documentValue(
                    bytes, collection: collection, key: documentPrefix + id, idOffset: documentPrefix.count)
            }
        }
        for candidate in page {
            let id = try Tuple(decoding: candidate.id).elements.first.map(DocumentStore.idValue) ?? .null
            var value = JSONValue.null
            if includeDocuments {
                guard let stored = try document(candidate.id) else { continue }
                value = selected.map { FieldPath.project(stored, onto: $0) } ?? stored
            }
            hits.append(NearHit(id: id, distance: candidate.distance, document: value))
        }
        return (hits, search, maintainer.definition.name)
    }

    /// The ready geo index `index` of `collection`, or its only one.
    func geoMaintainer(_ collection: String, _ index: String?) throws -> GeoIndexMaintainer {
        let schema = try catalog.schema.collection(collection)
        let definition: GeoIndexDefinition
        if let index {
            guard let named = schema.geo.first(where: { $0.name.hasSameCodePoints(as: index) }) else {
                let names = schema.geo.map(\.name)
                throw KVDocsError(
                    .schema,
                    "collection \"\(collection)\" has no geo index \"\(index)\""
                        + (names.isEmpty ? "" : "; its geo indexes: \(names.joined(separator: ", "))"))
            }
            definition = named
        } else {
            switch schema.geo.count {
            case 0:
                throw KVDocsError(
                    .schema,
                    "collection \"\(collection)\" has no geo index; declare one: {\"name\": …, \"fields\": [\"location\"], \"type\": \"geo\"}"
                )
            case 1: definition = schema.geo[0]
            default:
                throw KVDocsError(
                    .schema,
                    "collection \"\(collection)\" has several geo indexes (\(schema.geo.map(\.name).joined(separator: ", "))); name the one to use"
                )
            }
        }
        let identity = IndexIdentity(collection, definition.name, .geo)
        guard catalog.isReady(identity), let maintainer = catalog.maintainer(identity) as? GeoIndexMaintainer else {
            throw KVDocsError(.schema, "geo index \"\(definition.name)\" of \"\(collection)\" is being built")
        }
        return maintainer
    }
}

extension DocumentCollection {
    /// The documents whose point is within `within` metres of `center`, nearest first, from
    /// one snapshot: `store.fetch(.near(collection, center, …))` (see ``NearRequest`` and
    /// ``ReadTransaction/near(_:_:within:query:index:includeDocuments:)``).
    public func near(
        _ center: GeoPoint, within: Double? = nil, query: DocumentQuery = DocumentQuery(), index: String? = nil,
        includeDocuments: Bool = true
    ) throws -> [NearHit] {
        try store.fetch(
            .near(self, center, within: within, query: query, index: index, includeDocuments: includeDocuments))
    }

    /// How ``near(_:within:query:index:includeDocuments:)`` reads the index. See
    /// ``ReadTransaction/explainNear(_:_:within:query:index:)``.
    public func explainNear(
        _ center: GeoPoint, within: Double? = nil, query: DocumentQuery = DocumentQuery(), index: String? = nil
    )
        throws -> GeoPlan
    {
        try store.read { try $0.explainNear(name, center, within: within, query: query, index: index) }
    }
}

extension TypedCollection {
    /// The values whose point is within `within` metres of `center`, nearest first, with
    /// their distances, from one snapshot: `store.fetch(.near(collection, center, …))` (see
    /// ``NearRequest`` and ``ReadTransaction/near(_:_:within:query:index:includeDocuments:)``).
    /// - Throws: as `near`, and `.decoding` when a stored document does not decode as `T`.
    public func near(
        _ center: GeoPoint, within: Double? = nil, query: DocumentQuery = DocumentQuery(), index: String? = nil
    ) throws
        -> [TypedNearHit<T>] where T: Sendable
    {
        try base.store.fetch(.near(self, center, within: within, query: query, index: index))
    }
}
