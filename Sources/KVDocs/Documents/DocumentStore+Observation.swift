extension DocumentStore {
    /// Observes any reads: `fetch` is run on one snapshot now, then again after each
    /// committed write to one of `collections`, and its result is yielded when it differs
    /// from the last one. See ``Observation``.
    ///
    /// ```swift
    /// let dashboard = store.observe(collections: ["people", "trips"]) { tx in
    ///     Dashboard(people: try tx.count("people"), trips: try tx.count("trips"))
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - collections: the collections `fetch` reads; only writes to them wake the
    ///     observation. `nil` observes every write.
    ///   - fetch: the reads, through one transaction. Its errors end the sequence.
    public func observe<Value: Equatable & Sendable>(collections: [String]?,
                                                     _ fetch: @escaping @Sendable (ReadTransaction) throws -> Value) -> Observation<Value> {
        Observation(store: self, collections: collections) { tx in
            let value = try fetch(tx)
            return (value, value)
        }
    }
}

extension DocumentCollection {
    /// Observes ``find(_:)-1iyg``: the documents matching `query`, now and after each write to
    /// this collection that changes them. See ``Observation``.
    public func observe(_ query: Query = Query()) -> Observation<[JSONValue]> {
        store.observe(collections: [name]) { [name] in try $0.find(name, query) }
    }

    /// Observes ``count(_:)-44yjt``: the number of documents matching `query`'s conditions.
    public func observeCount(_ query: Query = Query()) -> Observation<Int> {
        store.observe(collections: [name]) { [name] in try $0.count(name, query) }
    }

    /// Observes ``search(_:options:)-92wb5``: the hits of a text query, their order and scores
    /// (BM25 changes with the collection, so a write that adds no hit can still change them).
    public func observeSearch(_ query: String, options: SearchOptions = SearchOptions()) -> Observation<[SearchHit]> {
        store.observe(collections: [name]) { [name] in try $0.search(name, query, options: options) }
    }

    /// Observes ``near(_:within:query:index:includeDocuments:)-4fdrw``: the documents around
    /// `center`, nearest first, with their distances.
    public func observeNear(_ center: GeoPoint, within: Double? = nil, query: Query = Query(), index: String? = nil,
                            includeDocuments: Bool = true) -> Observation<[NearHit]> {
        store.observe(collections: [name]) { [name] in
            try $0.near(name, center, within: within, query: query, index: index, includeDocuments: includeDocuments)
        }
    }
}

extension TypedCollection {
    /// Observes ``find(_:)-4m7sz``, decoding each document as `T`. Two results are compared by
    /// their stored documents, so `T` need not be `Equatable`.
    /// - Throws: (from the sequence) `.decoding` when a document does not decode as `T`.
    public func observe(_ query: Query = Query()) -> Observation<[T]> where T: Sendable {
        let name = base.name, dates = base.store.dateStrategy
        return Observation(store: base.store, collections: [name]) { tx in
            let documents = try tx.find(name, query)
            return (try documents.map { try Self.value($0, dates: dates) }, documents)
        }
    }

    /// Observes ``count(_:)-23eqa``.
    public func observeCount(_ query: Query = Query()) -> Observation<Int> {
        base.observeCount(query)
    }

    /// Observes ``search(_:options:)-95y1v``, decoding each hit's document as `T`. Two results
    /// are compared by their hits (ids, scores, documents, highlights, snippets).
    public func observeSearch(_ query: String, options: SearchOptions = SearchOptions()) -> Observation<[TypedSearchHit<T>]> where T: Sendable {
        let name = base.name, dates = base.store.dateStrategy
        var options = options
        options.includeDocuments = true
        return Observation(store: base.store, collections: [name]) { [options] tx in
            let hits = try tx.search(name, query, options: options)
            return (try hits.map { TypedSearchHit($0, value: try Self.value($0.document, dates: dates)) }, hits)
        }
    }

    /// Observes ``near(_:within:query:index:)-91jny``, decoding each document as `T`.
    public func observeNear(_ center: GeoPoint, within: Double? = nil, query: Query = Query(),
                            index: String? = nil) -> Observation<[TypedNearHit<T>]> where T: Sendable {
        let name = base.name, dates = base.store.dateStrategy
        return Observation(store: base.store, collections: [name]) { tx in
            let hits = try tx.near(name, center, within: within, query: query, index: index)
            return (try hits.map { TypedNearHit(id: $0.id, distance: $0.distance, value: try Self.value($0.document, dates: dates)) }, hits)
        }
    }
}

extension SearchHit: Equatable {
    /// Equal when id, score (to the bit), document, highlights and snippet are; strings
    /// compare by code points, not by Unicode canonical equivalence.
    public static func == (lhs: SearchHit, rhs: SearchHit) -> Bool {
        lhs.id == rhs.id && lhs.score.bitPattern == rhs.score.bitPattern && lhs.document == rhs.document
            && lhs.highlights.count == rhs.highlights.count
            && lhs.highlights.allSatisfy { key, value in
                rhs.highlights.contains { $0.key.hasSameCodePoints(as: key) && $0.value.hasSameCodePoints(as: value) }
            }
            && (lhs.snippet ?? "").hasSameCodePoints(as: rhs.snippet ?? "") && (lhs.snippet == nil) == (rhs.snippet == nil)
    }
}

extension NearHit: Equatable {
    /// Equal when id, distance (to the bit) and document are.
    public static func == (lhs: NearHit, rhs: NearHit) -> Bool {
        lhs.id == rhs.id && lhs.distance.bitPattern == rhs.distance.bitPattern && lhs.document == rhs.document
    }
}
