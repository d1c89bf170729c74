import KVDocs

// The arguments of the commands that take more than one value, as their definitions parse
// them (Commands/*.swift).
extension ShellCommand {
    /// The key a `get`, `put` or `del` names; `nil` for other commands.
    public var key: [UInt8]? {
        if let key = arguments as? [UInt8], name == "get" || name == "del" { return key }
        return (arguments as? KeyValue)?.key
    }

    /// The options of a `scan` or `delrange`; `nil` for other commands.
    public var scanOptions: ScanOptions? { arguments as? ScanOptions }

    /// A geo query: the documents of `collection` nearest `center`, within `within` metres,
    /// passing `query`'s conditions, after its offset, up to its limit.
    public struct Near: Equatable, Sendable {
        public var collection: String
        public var center: GeoPoint
        public var within: Double?
        public var index: String?
        public var query: DocumentQuery
        public init(
            collection: String, center: GeoPoint, within: Double? = nil, index: String? = nil,
            query: DocumentQuery = DocumentQuery()
        ) {
            self.collection = collection
            self.center = center
            self.within = within
            self.index = index
            self.query = query
        }
    }

    /// `scan` and `delrange` options.
    public struct ScanOptions: Equatable, Sendable {
        public var prefix: [UInt8]?
        public var from: [UInt8]?
        public var to: [UInt8]?
        public var reverse = false
        public var limit: Int?
        public var keysOnly = false
        public var count = false
        public init() {}

        /// The key range: the prefix, from `from` (inclusive), to `to` (exclusive).
        public var range: KeyRange {
            var r = prefix.map { KeyRange.prefix($0) } ?? .all
            if let from { r = r.starting(at: from) }
            if let to { r = r.ending(before: to) }
            return r
        }
    }

    /// `put KEY VALUE`.
    struct KeyValue: Equatable, Sendable {
        var key: [UInt8]
        var value: [UInt8]
    }

    /// `size` and `compact`: `--from KEY` (inclusive) and `--to KEY` (exclusive).
    struct KeyBounds: Equatable, Sendable {
        var from: [UInt8]?
        var to: [UInt8]?
        var range: KeyRange { KeyRange(lower: from.map { .included($0) }, upper: to.map { .excluded($0) }) }
    }

    /// `keyspaces` and `schema`: show what is stored, or load a file and store it.
    enum ShowOrLoad: Equatable, Sendable {
        case show
        case load(String)
    }

    /// A collection and a document (`insert`, `upsert`).
    struct CollectionDocument: Equatable, Sendable {
        var collection: String
        var document: JSONValue
    }

    /// A collection and a document id (`doc`, `remove`, `revs`).
    struct CollectionID: Equatable, Sendable {
        var collection: String
        var id: JSONValue
    }

    /// A collection and a file (`import`, `export`).
    struct CollectionFile: Equatable, Sendable {
        var collection: String
        var file: String
    }

    /// A collection and a query (`find`, `count`, `explain find`).
    struct CollectionQuery: Equatable, Sendable {
        var collection: String
        var query: DocumentQuery
    }

    /// `explain find …` or `explain near …`.
    enum Explain: Equatable, Sendable {
        case find(CollectionQuery)
        case near(Near)
        case knn(Knn)
    }

    /// `hybrid COLLECTION K [text "QUERY"] [vector [..]] [using INDEX] [where …] [near (LAT, LON) within M]`.
    struct Hybrid: Equatable, Sendable {
        var collection: String
        var k: Int
        var text: String?
        var vector: [Float]?
        var vectorIndex: String?
        var query = DocumentQuery()
        var center: GeoPoint?
        var radius: Double?
    }

    /// `knn COLLECTION INDEX VECTOR K [where …] [exact | probes N]`.
    struct Knn: Equatable, Sendable {
        var collection: String
        var index: String
        var vector: [Float]
        var k: Int
        var query = DocumentQuery()
        /// Approximate with the default probes unless `exact` or `probes N` was given.
        var search = VectorSearchMode.approximate()
    }

    /// `search COLLECTION "QUERY" [limit N] [highlight]`.
    struct Search: Equatable, Sendable {
        var collection: String
        var text: String
        var limit: Int?
        var highlight: Bool
    }

    /// `terms COLLECTION [INDEX] [PREFIX] [limit N]`.
    struct Terms: Equatable, Sendable {
        var collection: String
        var index: String?
        var prefix: String
        var limit: Int?
    }

    /// A collection and, optionally, one of its indexes (`reindex`, `optimize`).
    struct CollectionIndex: Equatable, Sendable {
        var collection: String
        var index: String?
    }

    /// `changes [since SEQ] [limit N]`.
    struct Changes: Equatable, Sendable {
        var since: Int64
        var limit: Int?
    }

    /// `resolve COLLECTION ID REV`.
    struct Resolve: Equatable, Sendable {
        var collection: String
        var id: JSONValue
        var revision: String
    }

    /// `replicate SOURCE TARGET [--continuous]`.
    struct Replicate: Equatable, Sendable {
        var source: String
        var target: String
        var continuous: Bool
    }

    /// `serve [--port N] [--bind ADDR] [--user U --password-file F]`.
    struct Serve: Equatable, Sendable {
        var port: Int
        var bind: String
        var user: String?
        var passwordFile: String?
    }

    /// `replace-base NEWBASE [--allow-unrelated]`.
    struct ReplaceBase: Equatable, Sendable {
        var path: String
        var allowingUnrelated: Bool
    }

    /// `backup DIR [--compression none|snappy]`; `nil`: the build's preferred compression.
    struct Backup: Equatable, Sendable {
        var path: String
        var compression: LevelDBOptions.Compression?
    }
}
