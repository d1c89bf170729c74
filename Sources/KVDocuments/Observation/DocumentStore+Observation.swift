import KVGeo
import KVSupport

// Observation: one entry point for requests (`observe(_:)` with a ``DocumentRequest``),
// one for any reads (`observe(tracking:)`, spelled `observe { tx in … }` with a trailing
// closure, after GRDB's `ValueObservation.tracking`), both tracking the collections each run read,
// and the explicit-region variant `observe(collections:_:)`.

extension DocumentStore {
    /// Observes `request`: its value now, then again after each committed write to a
    /// collection it read, yielded when it differs from the last one. See ``DocumentObservation``.
    ///
    /// <!-- doc-code: preamble=examples -->
    /// ```swift
    /// let perth = DocumentQuery().where("station", .equal("PERTH")).orderBy("time").limit(3)
    /// for try await departures in store.observe(.find("departures", perth, as: Departure.self)) {
    ///     board.show(departures)
    /// }
    /// ```
    ///
    /// The collections watched are those the request read (tracked on every run, see
    /// ``observe(tracking:)``). Two values are compared by the stored
    /// documents or hits they were decoded from, so a decoded `T` need not be `Equatable`;
    /// a request of your own is compared by its value when that is `Equatable`, and
    /// yielded after every relevant write otherwise.
    /// - Parameter request: the read; its errors end the sequence.
    public func observe<Request: DocumentRequest>(_ request: Request) -> DocumentObservation<Request.Value>
    where Request.Value: Sendable {
        DocumentObservation(store: self, region: .tracked) { tx in try Self.observedFetch(request, tx) }
    }

    /// Observes any reads: `fetch` is run on one snapshot now, then again after each
    /// committed write to a collection its last run read, and its result is yielded when
    /// it differs from the last one. Written with a trailing closure,
    /// `store.observe { tx in … }`. See ``DocumentObservation``.
    ///
    /// <!-- doc-code: preamble=examples -->
    /// ```swift
    /// struct Summary: Equatable, Sendable { var people: Int; var trips: Int? }
    /// let summary = store.observe { tx in
    ///     let people = try tx.count("people")
    ///     // "trips" is watched only while a run reads it.
    ///     return Summary(people: people, trips: try people > 0 ? tx.count("trips") : nil)
    /// }
    /// ```
    ///
    /// Every read of a collection through the transaction counts (`get`, `fetch`, `find`,
    /// `forEach`, `count`, `explain`, `search`, `near`, and their typed forms), as in GRDB's
    /// `ValueObservation.tracking`: the collections are tracked anew on every run, so a
    /// branch that starts reading another collection is watched from that run on, and one
    /// that stops reading a collection is no longer woken by it. Reads straight through
    /// ``ReadTransaction/snapshot`` are not seen: name their collections with
    /// ``observe(collections:_:)``.
    /// - Parameter fetch: the reads, through one transaction. Its errors end the sequence.
    public func observe<Value: Equatable & Sendable>(
        tracking fetch: @escaping @Sendable (ReadTransaction) throws -> Value
    ) -> DocumentObservation<Value> {
        DocumentObservation(store: self, region: .tracked) { tx in
            let value = try fetch(tx)
            return (value, value)
        }
    }

    /// Observes any reads, woken by writes to the collections named rather than those
    /// read: `fetch` is run on one snapshot now, then again after each committed write to
    /// one of `collections`, and its result is yielded when it differs from the last one.
    /// Prefer ``observe(tracking:)``, which tracks what `fetch` reads;
    /// name the collections when `fetch` reads through ``ReadTransaction/snapshot``, or to
    /// wake on every write (`nil`).
    ///
    /// <!-- doc-code: preamble=examples -->
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
    public func observe<Value: Equatable & Sendable>(
        collections: [String]?,
        _ fetch: @escaping @Sendable (ReadTransaction) throws -> Value
    ) -> DocumentObservation<Value> {
        let region = collections.map { ObservedRegion.collections(Set($0.map { Array($0.utf8) })) } ?? .everyWrite
        return DocumentObservation(store: self, region: region) { tx in
            let value = try fetch(tx)
            return (value, value)
        }
    }

    /// `request`'s value through `tx`, with what two values are compared by: the stored
    /// result of a library request, the value itself when it is `Equatable`, or nothing
    /// that is ever equal.
    static func observedFetch<Request: DocumentRequest>(_ request: Request, _ tx: ReadTransaction) throws
        -> (value: Request.Value, identity: any Equatable & Sendable)
    {
        if let stored = request as? any StoredResultRequest {
            let fetched = try stored.fetchWithStoredResult(from: tx)
            if let value = fetched.value as? Request.Value { return (value, fetched.stored) }
        }
        let value = try tx.fetch(request)
        if let equatable = value as? any Equatable { return (value, EquatableValue(value: equatable)) }
        return (value, NeverEqual())
    }
}

/// A request's value compared as `Equatable`. `@unchecked Sendable`: it holds a value of a
/// `Sendable` type (the request's `Value`, so constrained by `observe(_:)`), only seen
/// through `any Equatable`.
private struct EquatableValue: Equatable, @unchecked Sendable {
    let value: any Equatable

    static func == (lhs: EquatableValue, rhs: EquatableValue) -> Bool {
        func equal<A: Equatable>(_ a: A) -> Bool { (rhs.value as? A).map { $0 == a } ?? false }
        return equal(lhs.value)
    }
}

/// The identity of a value that cannot be compared: every value is yielded.
private struct NeverEqual: Equatable, Sendable {
    static func == (lhs: NeverEqual, rhs: NeverEqual) -> Bool { false }
}

extension DocumentCollection {

}

extension TypedCollection {

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
            && (lhs.snippet ?? "").hasSameCodePoints(as: rhs.snippet ?? "")
            && (lhs.snippet == nil) == (rhs.snippet == nil)
    }
}

extension NearHit: Equatable {
    /// Equal when id, distance (to the bit) and document are.
    public static func == (lhs: NearHit, rhs: NearHit) -> Bool {
        lhs.id == rhs.id && lhs.distance.bitPattern == rhs.distance.bitPattern && lhs.document == rhs.document
    }
}
