import Foundation
import KVStorage
import KVSupport

// The store's date strategy (``DocumentStore/dateStrategy``) and the conversions of its
// typed API: every `Codable` value and id goes through these, so all of them write and
// read dates one way.

extension DocumentStore {
    /// The strategy a store opens with, and whether the catalog already records it.
    ///
    /// A recorded strategy wins, and `requested` must agree with it. Without a record, an
    /// existing store that holds documents was written by a version that wrote dates as
    /// seconds since 2001, so it keeps that; otherwise nothing can be misread, and the store
    /// takes `requested`, or the default.
    /// - Throws: `.invalidArgument` when `requested` differs from what the store's dates
    ///   are, naming both; what reading the record throws.
    static func dateStrategy(
        requested: DateStrategy?, storage: any KeyValueStore, catalog: DocumentCatalog, existing: Bool,
        layout: Layout
    ) throws -> (strategy: DateStrategy, recorded: Bool) {
        if let recorded = try catalog.dateStrategy(in: storage) {
            if let requested, requested != recorded {
                throw KVDocsError(
                    .invalidArgument,
                    "the document store in \(storage.name) stores dates as \(recorded); opening it with dates: .\(requested) would misread them (open it with dates: .\(recorded), or without dates:)",
                    path: storage.name)
            }
            return (recorded, true)
        }
        if existing, try holdsDocuments(storage, layout: layout) {
            let legacy = DateStrategy.secondsSince2001
            if let requested, requested != legacy {
                throw KVDocsError(
                    .invalidArgument,
                    "the document store in \(storage.name) holds documents written before KVDocs recorded how dates are stored, as \(legacy); opening it with dates: .\(requested) would misread them (open it with dates: .\(legacy), or without dates:)",
                    path: storage.name)
            }
            return (legacy, false)
        }
        return (requested ?? .default, false)
    }

    /// Whether any collection of the store holds a document.
    static func holdsDocuments(_ reader: some KeyValueReader, layout: Layout) throws -> Bool {
        let cursor = try reader.scan(layout.root.subspace(["d"]).range, order: .forward)
        return try cursor.next({ _, _ in () }) != nil
    }

    /// Whether the database this store writes to holds a date strategy record of its own:
    /// in a layered store, the user layer (whose values are tagged), not the base.
    func holdsOwnDateRecord() throws -> Bool {
        guard let layered = storage as? LayeredKeyValueStore else {
            return try records.dateStrategy(in: storage) != nil
        }
        guard let stored = try layered.user.get(records.datesKey) else { return false }
        return try LayeredKeyValueStore.untag(stored, key: records.datesKey, name: layered.user.path) != nil
    }

    /// Records ``dateStrategy`` in the catalog (synced), unless the database holds it
    /// already. In a layered store the user layer gets its own record even when the base
    /// has one, so the user's documents keep their strategy whatever base they are over.
    /// - Throws: `.invalidArgument` when another store recorded a different one meanwhile.
    func recordDateStrategy() throws {
        try storage.withWriteTransaction {
            if let recorded = try records.dateStrategy(in: storage), recorded != dateStrategy {
                throw KVDocsError(
                    .invalidArgument,
                    "the document store in \(storage.name) was given the date strategy \(recorded) by another open meanwhile; this one was opened with \(dateStrategy)",
                    path: storage.name)
            }
            if try holdsOwnDateRecord() { return }
            let batch = WriteBatch()
            records.putDateStrategy(dateStrategy, in: batch)
            try storage.write(batch, sync: true)
        }
    }

    /// The JSON of a typed document, dates as the store writes them.
    /// - Throws: `.invalidArgument` when the value cannot be encoded.
    func json<T: Encodable>(encoding value: T) throws -> JSONValue {
        try JSONValue(encoding: value, dates: dateStrategy)
    }

    /// The JSON of a primary key given as any `Encodable` value (a ``JSONValue`` as it is).
    /// - Throws: `.invalidArgument` when the value cannot be encoded.
    func idJSON<ID: Encodable>(_ id: ID) throws -> JSONValue {
        if let json = id as? JSONValue { return json }
        return try JSONValue(encoding: id, dates: dateStrategy)
    }

    /// A stored document decoded as `T`, dates read with `dates`.
    /// - Throws: `.decoding`, naming the coding path and what was expected and found.
    package static func decodeStored<T: Decodable>(_ type: T.Type, _ json: JSONValue, dates: DateStrategy) throws -> T {
        do {
            return try JSONValueDecoder.decode(T.self, from: json, dates: dates)
        } catch let error as DecodingError {
            throw KVDocsError(.decoding, "stored document does not decode as \(T.self): \(error.summary)")
        } catch {
            throw KVDocsError(.decoding, "stored document does not decode as \(T.self): \(error)")
        }
    }
}
