import Foundation
import KVKeys
import KVStorage
import KVSupport

/// The catalog: every record a store keeps about itself, under `("m", …)` of its root.
///
/// The catalog is the only code that knows these keys:
///
/// | key | value |
/// |---|---|
/// | `("m", "format")` | the store's layout version, `(version,)` |
/// | `("m", "generation")` | a counter bumped by every catalog change, `(n,)` |
/// | `("m", "schema")` | the document schema, as JSON |
/// | `("m", "seq")` | the last change sequence number, `(n,)` |
/// | `("m", "keyspaces")` | the declared keyspaces, as JSON |
/// | `("m", "dates")` | how typed documents store dates, `(name,)`: a ``DateStrategy`` raw value |
/// | `("m", "uuid")` | the store's replication identity, `(32 lowercase hex digits,)`; written the first time replication asks for it |
/// | `("m", KIND, collection, index)` | an index's ``IndexState``, as JSON |
/// | `("m", "migration", name)` | a data migration that ran to its end, `(position,)` |
/// | `("m", "migrating")` | the data migration running: `(name, sequence before it, phase)` |
/// | `("m", "undo", collection, id)` | a document as it was before the running migration: `(bytes,)` or `()` for none |
///
/// Index states are keyed by typed identity (``IndexIdentity``): kind, collection and
/// index name are separate tuple elements, so no two indexes can share a state whatever
/// their names (a secondary index `"#body"` and a text index `"body"`, or collection
/// `"a/b"` with index `"c"` and collection `"a"` with index `"b/c"`).
///
/// **Generation.** Every write of a schema or an index state through the catalog also
/// bumps the generation in the same write, so a reader that sees the same generation in
/// its snapshot knows the schema and states it cached are still those of its snapshot.
public struct DocumentCatalog: Sendable, Hashable {
    /// The subspace the catalog's store lives in (the catalog itself is `root["m"]`).
    public let root: Subspace

    /// The catalog of the store under `root`.
    /// - Parameter root: the subspace of the store; the whole key space by default.
    public init(root: Subspace = Subspace()) {
        self.root = root
    }

    // MARK: - Keys

    package var formatKey: [UInt8] { root.pack(["m", "format"]) }
    var generationKey: [UInt8] { root.pack(["m", "generation"]) }
    var schemaKey: [UInt8] { root.pack(["m", "schema"]) }
    var sequenceKey: [UInt8] { root.pack(["m", "seq"]) }
    var keyspacesKey: [UInt8] { KeySchema.catalogKey(root) }
    package var datesKey: [UInt8] { root.pack(["m", "dates"]) }
    var uuidKey: [UInt8] { root.pack(["m", "uuid"]) }

    package func stateKey(_ index: IndexIdentity) -> [UInt8] {
        root.pack(["m", .string(index.kind.catalogName), .string(index.collection), .string(index.name)])
    }

    func states(_ kind: IndexIdentity.Kind) -> Subspace { root.subspace(["m", .string(kind.catalogName)]) }

    /// The records of the data migrations that ran to their end, by name.
    var migrations: Subspace { root.subspace(["m", "migration"]) }
    /// The journal header of the data migration running (absent when none is).
    package var migratingKey: [UInt8] { root.pack(["m", "migrating"]) }
    /// The running migration's undo records: each document it wrote, as it was before.
    package var undo: Subspace { root.subspace(["m", "undo"]) }

    // MARK: - Reading (through any reader of the storage seam: the latest state or a snapshot)

    /// Whether `reader`'s data holds a document store under ``root`` (a stored schema).
    /// - Throws: storage errors.
    public func holdsDocumentStore(in reader: some KeyValueReader) throws -> Bool {
        try reader.value(forKey: schemaKey) != nil
    }

    /// The stored layout version; `nil` when no store was ever written here.
    /// A store written before versions were kept reports 1.
    /// - Throws: `.corruption` for a version that is not an integer, storage errors.
    public func formatVersion(in reader: some KeyValueReader) throws -> Int64? {
        if let bytes = try reader.value(forKey: formatKey) {
            return try integer(bytes, "format version", formatKey, reader)
        }
        let exists = try reader.value(forKey: schemaKey) != nil || reader.value(forKey: sequenceKey) != nil
        return exists ? 1 : nil
    }

    /// The generation counter (0 before the first catalog change).
    package func generation(in reader: some KeyValueReader) throws -> Int64 {
        guard let bytes = try reader.value(forKey: generationKey) else { return 0 }
        return try integer(bytes, "catalog generation", generationKey, reader)
    }

    /// The last change sequence number (0 before the first write).
    /// - Throws: `.corruption` for a sequence that is not an integer, storage errors.
    public func lastSequence(in reader: some KeyValueReader) throws -> Int64 {
        guard let bytes = try reader.value(forKey: sequenceKey) else { return 0 }
        return try integer(bytes, "sequence number", sequenceKey, reader)
    }

    /// The recorded date strategy of typed documents; `nil` when none is recorded (a store
    /// written before strategies were recorded, or none written yet).
    /// - Throws: `.notSupported` for a strategy this version does not know (recorded by a
    ///   newer version), `.corruption` for a record that is not a name, storage errors.
    public func dateStrategy(in reader: some KeyValueReader) throws -> DateStrategy? {
        guard let bytes = try reader.value(forKey: datesKey) else { return nil }
        let name: String
        do {
            name = try Tuple(decoding: bytes).string(at: 0)
        } catch {
            throw KVDocsError(
                .corruption, "the catalog's date strategy is not a name", path: reader.name, key: datesKey)
        }
        guard let strategy = DateStrategy(rawValue: name) else {
            throw KVDocsError(
                .notSupported,
                "the document store in \(reader.name) stores dates as \"\(name)\", a strategy this version of KVDocs does not know (it knows \(DateStrategy.allCases.map(\.rawValue).joined(separator: ", ")))",
                path: reader.name, key: datesKey)
        }
        return strategy
    }

    /// The store's replication identity (32 lowercase hex digits), or `nil` when none was
    /// made yet.
    /// - Throws: `.corruption` for a record that is not 32 hex digits, storage errors.
    public func uuid(in reader: some KeyValueReader) throws -> String? {
        guard let bytes = try reader.value(forKey: uuidKey) else { return nil }
        guard let text = try? Tuple(decoding: bytes).string(at: 0), text.utf8.count == 32,
            text.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        else {
            throw KVDocsError(
                .corruption, "the catalog's store UUID is not 32 hex digits", path: reader.name, key: uuidKey)
        }
        return text
    }

    /// The stored schema JSON, or `nil`.
    func schemaData(in reader: some KeyValueReader) throws -> [UInt8]? {
        try reader.value(forKey: schemaKey)
    }

    /// Every stored index state of `kind`, by identity. Records that cannot be read are
    /// reported as `.corruption`.
    package func indexStates(_ kind: IndexIdentity.Kind, in reader: some KeyValueReader) throws -> [IndexIdentity:
        IndexState]
    {
        var result: [IndexIdentity: IndexState] = [:]
        let subspace = states(kind)
        let cursor = try reader.scan(subspace.range, order: .forward)
        while let (key, value) = try cursor.next({ k, v in (Array(k), Array(v)) }) {
            guard let t = try? subspace.unpack(key), t.count == 2,
                let collection = try? t.string(at: 0), let name = try? t.string(at: 1)
            else {
                throw KVDocsError(
                    .corruption, "a catalog key under (\"m\", \"\(kind.catalogName)\") is not (collection, index)",
                    path: reader.name, key: key)
            }
            let identity = IndexIdentity(collection, name, kind)
            do {
                result[identity] = try IndexState(json: value, index: identity, in: reader.name)
            } catch var e as KVDocsError {
                e.key = key
                throw e
            }
        }
        return result
    }

    /// The index-state records of `kinds` that cannot be read, each with why: a key that is
    /// not `(collection, index)`, or a value that is not an ``IndexState``. (Any of them makes
    /// ``indexStates(_:in:)`` throw, and so the store's open.)
    /// - Throws: storage errors.
    func unreadableIndexStates(_ kinds: [IndexIdentity.Kind], in reader: some KeyValueReader) throws -> [(
        key: [UInt8], reason: String
    )] {
        var found: [(key: [UInt8], reason: String)] = []
        for kind in kinds {
            let subspace = states(kind)
            let cursor = try reader.scan(subspace.range, order: .forward)
            while let (key, value) = try cursor.next({ k, v in (Array(k), Array(v)) }) {
                guard let t = try? subspace.unpack(key), t.count == 2,
                    let collection = try? t.string(at: 0), let name = try? t.string(at: 1)
                else {
                    found.append(
                        (key, "a catalog key under (\"m\", \"\(kind.catalogName)\") is not (collection, index)"))
                    continue
                }
                do {
                    _ = try IndexState(json: value, index: IndexIdentity(collection, name, kind), in: reader.name)
                } catch let e as KVDocsError {
                    found.append((key, e.message))
                }
            }
        }
        return found
    }

    /// Adds the deletion of the records at `keys` to `batch`.
    func deleteRecords(_ keys: [[UInt8]], generation: Int64, in batch: WriteBatch) {
        for key in keys { batch.delete(key) }
        batch.put(generationKey, Tuple([.int(generation)]))
    }

    private func integer(_ bytes: [UInt8], _ what: String, _ key: [UInt8], _ reader: some KeyValueReader) throws
        -> Int64
    {
        do {
            return try Tuple(decoding: bytes).int64(at: 0)
        } catch {
            throw KVDocsError(.corruption, "the catalog's \(what) is not an integer", path: reader.name, key: key)
        }
    }

    /// Whether `key` is an index's state record (or lies where those are kept).
    func isIndexStateKey(_ key: [UInt8]) -> Bool {
        IndexKindRegistry.all.contains { key.starts(with: states($0).prefix) }
    }

    /// Whether `key` is one of the catalog's records.
    func isCatalogKey(_ key: [UInt8]) -> Bool {
        key.starts(with: root.subspace(["m"]).prefix)
    }

    // MARK: - Writing (each bumps the generation in the same batch)

    /// Adds the schema JSON and the current format version to `batch`.
    func putSchema(_ json: Data, format: Int64, generation: Int64, in batch: WriteBatch) {
        batch.put(schemaKey, json)
        batch.put(formatKey, Tuple([.int(format)]))
        batch.put(generationKey, Tuple([.int(generation)]))
    }

    package func putState(_ state: IndexState, of index: IndexIdentity, generation: Int64, in batch: WriteBatch) {
        batch.put(stateKey(index), state.jsonBytes)
        batch.put(generationKey, Tuple([.int(generation)]))
    }

    func deleteState(of index: IndexIdentity, generation: Int64, in batch: WriteBatch) {
        batch.delete(stateKey(index))
        batch.put(generationKey, Tuple([.int(generation)]))
    }

    func putFormat(_ version: Int64, in batch: WriteBatch) {
        batch.put(formatKey, Tuple([.int(version)]))
    }

    func putDateStrategy(_ strategy: DateStrategy, in batch: WriteBatch) {
        batch.put(datesKey, Tuple([.string(strategy.rawValue)]))
    }

    package func putUUID(_ uuid: String, in batch: WriteBatch) {
        batch.put(uuidKey, Tuple([.string(uuid)]))
    }

    func putSequence(_ sequence: Int64, in batch: WriteBatch) {
        batch.put(sequenceKey, Tuple([.int(sequence)]))
    }
}

/// Which index: its collection, its name and its kind, compared by code points.
public struct IndexIdentity: Hashable, Sendable, CustomStringConvertible {
    /// A kind of index. Each kind keeps its states in its own part of the catalog.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        /// The kind's name in catalog keys.
        public let catalogName: String
        /// A kind of index whose states are kept under `("m", catalogName, …)`.
        /// - Parameter catalogName: the kind's name in catalog keys. Kinds are equal when their
        ///   names are, so a new kind needs a name of its own.
        public init(catalogName: String) { self.catalogName = catalogName }
        /// Secondary indexes: plain, unique, compound and multi-valued.
        public static let secondary = Kind(catalogName: "index")
        /// Full-text indexes.
        public static let text = Kind(catalogName: "text")
        /// Geo indexes.
        public static let geo = Kind(catalogName: "geo")
        public var description: String { self == .secondary ? "secondary" : catalogName }
    }

    /// The collection the index belongs to.
    public let collection: String
    /// The index's name.
    public let name: String
    /// The kind of index.
    public let kind: Kind

    /// The identity of index `name` of `collection`, of `kind`.
    /// - Parameters:
    ///   - collection: the collection's name.
    ///   - name: the index's name.
    ///   - kind: the kind of index.
    public init(_ collection: String, _ name: String, _ kind: Kind) {
        self.collection = collection
        self.name = name
        self.kind = kind
    }

    public static func == (a: IndexIdentity, b: IndexIdentity) -> Bool {
        a.kind == b.kind && a.collection.hasSameCodePoints(as: b.collection) && a.name.hasSameCodePoints(as: b.name)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
        JSONValue.hashCodePoints(collection, into: &hasher)
        JSONValue.hashCodePoints(name, into: &hasher)
    }

    /// `collection.index (kind)`, for messages.
    public var description: String { "\(collection).\(name) (\(kind))" }
}

/// What the catalog records about one index.
public struct IndexState: Sendable, Hashable {
    /// Where the index is in its life; the raw value is how the catalog stores it.
    public enum Phase: String, Sendable, Hashable {
        /// Entries are being written; queries do not use the index.
        case building
        /// Entries are exact; queries may use the index.
        case ready
    }
    /// Whether the index is being built or ready for queries.
    public var phase: Phase
    /// The index's definition as JSON, to tell a changed definition from the stored one.
    public var definition: JSONValue
    /// The layout version of the index's entries (1 for indexes written before versions
    /// were kept).
    public var format: Int64

    /// A state of an index.
    /// - Parameters:
    ///   - phase: whether the index is being built or ready.
    ///   - definition: the index's definition as JSON.
    ///   - format: the layout version of the index's entries.
    public init(phase: Phase, definition: JSONValue, format: Int64) {
        self.phase = phase
        self.definition = definition
        self.format = format
    }

    var jsonBytes: [UInt8] {
        let object: JSONObject = ["state": .string(phase.rawValue), "definition": definition, "format": .int(format)]
        // Definitions are built from schema strings, arrays and booleans: always writable.
        return (try? JSONValue.object(object).canonicalBytes()) ?? []
    }

    init(json bytes: [UInt8], index: IndexIdentity, in name: String) throws {
        func fail(_ m: String) -> KVDocsError {
            KVDocsError(.corruption, "the catalog's state of index \(index) \(m)", path: name)
        }
        let value: JSONValue
        do { value = try JSONValue(parsing: bytes) } catch let e as KVDocsError {
            throw fail("is not JSON: \(e.message)")
        }
        guard case .string(let p)? = value["state"], let phase = Phase(rawValue: p) else {
            throw fail("has no valid \"state\"")
        }
        guard let definition = value["definition"] else { throw fail("has no \"definition\"") }
        var format: Int64 = 1
        if let f = value["format"] {
            guard case .int(let v) = f else { throw fail("has a \"format\" that is not an integer") }
            format = v
        }
        self.init(phase: phase, definition: definition, format: format)
    }
}
