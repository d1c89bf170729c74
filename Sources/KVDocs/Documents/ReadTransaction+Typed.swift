import Foundation

// Typed reads through one snapshot: the untyped reads of a transaction, each document
// decoded as `T` with the store's date strategy (``DocumentStore/dateStrategy``), and ids
// given as Swift values.

extension ReadTransaction {
    /// The document whose primary key is `id`, given as a Swift value (`Int`, `String`,
    /// `UUID`, or any `Encodable` value whose JSON is a string or an integer), or `nil`.
    /// - Throws: `.invalidArgument` for an id whose JSON is neither, `.schema` for an
    ///   unknown collection.
    public func get<ID: Encodable>(_ collection: String, id: ID) throws -> JSONValue? {
        try get(collection, id: try store.idJSON(id))
    }

    /// The document whose primary key is `id` decoded as `T`, or `nil`.
    ///
    /// ```swift
    /// let athlete = try store.read { tx in try tx.get("athletes", id: 42, as: Athlete.self) }
    /// ```
    /// - Parameters:
    ///   - collection: the collection.
    ///   - id: the primary key: an `Int`, a `String`, a `UUID`, a ``JSONValue``, or any
    ///     `Encodable` value whose JSON is a string or an integer.
    ///   - type: the type to decode.
    /// - Throws: `.decoding` when the document does not decode as `T`; otherwise as
    ///   `get(_:id:)`.
    public func get<ID: Encodable, T: Decodable>(_ collection: String, id: ID, as type: T.Type) throws -> T? {
        try getDecoded(collection, id: try store.idJSON(id), as: type)
    }

    /// The documents matching `query` decoded as `T`, in its order, after its offset, up to
    /// its limit: ``find(_:_:)`` typed.
    ///
    /// ```swift
    /// let (ada, trips) = try store.read { tx in
    ///     (try tx.get("people", id: "p1", as: Person.self),
    ///      try tx.find("trips", Query().where("person", .equal("p1")), as: Trip.self))
    /// }
    /// ```
    /// - Throws: `.decoding` when a document does not decode as `T` (a query that selects
    ///   fields returns documents with those fields only); otherwise as ``find(_:_:)``.
    public func find<T: Decodable>(_ collection: String, _ query: Query = Query(), as type: T.Type) throws -> [T] {
        var values: [T] = []
        try forEachDecoded(collection, query, as: type) { values.append($0) }
        return values
    }

    /// Calls `body` with each document matching `query` decoded as `T`, as the scan finds
    /// it: ``forEach(_:_:_:)`` typed, in bounded memory.
    /// - Throws: `.decoding` when a document does not decode as `T` (documents before it
    ///   have been handed to `body`); otherwise as ``forEach(_:_:_:)``.
    public func forEach<T: Decodable>(_ collection: String, _ query: Query = Query(), as type: T.Type, _ body: (T) throws -> Void) throws {
        try forEachDecoded(collection, query, as: type, body)
    }

    /// The documents within `within` metres of `center`, nearest first, decoded as `T`
    /// with their distances: ``near(_:_:within:query:index:includeDocuments:)`` typed.
    ///
    /// ```swift
    /// let (station, departures) = try store.read { tx in
    ///     let nearest = try tx.near("stations", here, within: 1500, query: Query().limit(1), as: Station.self).first
    ///     let next = try tx.find("departures", Query().where("station", .equal(.string(nearest?.value.id ?? "")))
    ///                                                   .orderBy("at").limit(5), as: Departure.self)
    ///     return (nearest, next)
    /// }
    /// ```
    /// - Throws: `.decoding` when a document does not decode as `T`; otherwise as
    ///   ``near(_:_:within:query:index:includeDocuments:)``.
    public func near<T: Decodable>(_ collection: String, _ center: GeoPoint, within: Double? = nil, query: Query = Query(),
                                   index: String? = nil, as type: T.Type) throws -> [TypedNearHit<T>] {
        try near(collection, center, within: within, query: query, index: index).map {
            TypedNearHit(id: $0.id, distance: $0.distance, value: try decoded($0.document, as: type))
        }
    }

    /// The hits of a full-text search, each document decoded as `T`:
    /// ``search(_:_:options:)`` typed. ``SearchOptions/includeDocuments`` is ignored (a
    /// value needs its document).
    /// - Throws: `.decoding` when a document does not decode as `T`; otherwise as
    ///   ``search(_:_:options:)``.
    public func search<T: Decodable>(_ collection: String, _ query: String, options: SearchOptions = SearchOptions(),
                                     as type: T.Type) throws -> [TypedSearchHit<T>] {
        var options = options
        options.includeDocuments = true
        return try search(collection, query, options: options).map { TypedSearchHit($0, value: try decoded($0.document, as: type)) }
    }

    /// A stored document decoded as `T` with the store's date strategy.
    private func decoded<T: Decodable>(_ json: JSONValue, as type: T.Type) throws -> T {
        try DocumentStore.decodeStored(type, json, dates: store.dateStrategy)
    }
}
