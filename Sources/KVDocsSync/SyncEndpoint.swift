import Foundation
import KVDocs

/// The server side of CouchDB's replication protocol over a store's replicated collections:
/// each is a database at `/<collection>`. It answers the requests a CouchDB, PouchDB or
/// KVDocs replicator makes, with CouchDB's response and error shapes.
///
/// ``SyncServer`` puts it on HTTP; it has no network code itself. Requests that fail
/// validation write nothing.
public struct SyncEndpoint: Sendable {
    /// The store served.
    public let store: DocumentStore
    /// The user and password every request must carry (HTTP basic authentication), or
    /// `nil` for none.
    public let credentials: (user: String, password: String)?

    /// The largest request body accepted, in bytes.
    public static let maximumBodySize = 32 << 20
    /// The most documents of one `_bulk_docs` or `_bulk_get`.
    public static let maximumBatch = 10_000
    /// The most revisions of one `_revs_diff`.
    public static let maximumRevisions = 100_000
    /// The longest a `longpoll` feed waits, in milliseconds.
    public static let maximumTimeout = 300_000

    /// An endpoint serving `store`'s replicated collections.
    public init(store: DocumentStore, credentials: (user: String, password: String)? = nil) {
        self.store = store
        self.credentials = credentials
    }

    /// The response to `request`.
    public func respond(to request: SyncRequest) async -> SyncResponse {
        do {
            try authenticate(request)
            return try await route(request)
        } catch let error as SyncError {
            return error.response
        } catch let error as KVDocsError {
            return Self.response(for: error).response
        } catch is CancellationError {
            return SyncError(status: 503, error: "unavailable", reason: "the server is stopping").response
        } catch {
            return SyncError(status: 500, error: "unknown_error", reason: "\(error)").response
        }
    }

    static func response(for error: KVDocsError) -> SyncError {
        switch error.kind {
        case .conflict: SyncError(status: 409, error: "conflict", reason: "Document update conflict.")
        case .notFound: SyncError(status: 404, error: "not_found", reason: error.message)
        case .invalidArgument, .decoding, .typeMismatch: .badRequest(error.message)
        case .schema: SyncError(status: 400, error: "doc_validation", reason: error.message)
        case .uniqueViolation: SyncError(status: 409, error: "conflict", reason: error.message)
        case .notSupported: SyncError(status: 403, error: "forbidden", reason: error.message)
        default: SyncError(status: 500, error: "unknown_error", reason: error.message)
        }
    }

    // MARK: - Routing

    private func route(_ request: SyncRequest) async throws -> SyncResponse {
        let raw = request.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        var segments: [String] = []
        for part in raw {
            guard let decoded = String(part).removingPercentEncoding else {
                throw SyncError.badRequest("the path \(request.path) is not percent-encoded UTF-8")
            }
            segments.append(decoded)
        }
        if segments.last == "" { segments.removeLast() }
        let method = request.method
        guard let name = segments.first else {
            guard method == "GET" || method == "HEAD" else { throw SyncError.methodNotAllowed("GET,HEAD") }
            return SyncResponse(
                200,
                [
                    "couchdb": "Welcome", "version": "3.3.0",
                    "vendor": ["name": "KVDocs", "version": "1"], "uuid": .string(try await store.uuid()),
                    "features": []
                ])
        }
        if name.hasPrefix("_") {
            throw SyncError(status: 400, error: "illegal_database_name", reason: "Name: '\(name)'. \(Self.nameRule)")
        }
        let collection = try self.collection(name)
        let rest = Array(segments.dropFirst())
        guard let first = rest.first else { return try await database(collection, request) }
        switch first {
        case "_changes": return try await changes(collection, request)
        case "_revs_diff":
            guard method == "POST" else { throw SyncError.methodNotAllowed("POST") }
            return try await revsDiff(collection, request)
        case "_bulk_docs":
            guard method == "POST" else { throw SyncError.methodNotAllowed("POST") }
            return try await bulkDocs(collection, request)
        case "_bulk_get":
            guard method == "POST" else { throw SyncError.methodNotAllowed("POST") }
            return try await bulkGet(collection, request)
        case "_all_docs":
            guard method == "GET" || method == "POST" else { throw SyncError.methodNotAllowed("GET,POST") }
            return try await allDocs(collection, request)
        case "_ensure_full_commit":
            guard method == "POST" else { throw SyncError.methodNotAllowed("POST") }
            return SyncResponse(201, ["ok": true, "instance_start_time": "0"])
        case "_revs_limit":
            guard method == "GET" else { throw SyncError.methodNotAllowed("GET") }
            return SyncResponse(200, .int(Int64(try store.schema.collection(collection.name).revsLimit)))
        case "_local":
            guard rest.count >= 2 else { throw SyncError.badRequest("a _local document needs an id") }
            return try await local(collection, rest.dropFirst().joined(separator: "/"), request)
        default:
            if first.hasPrefix("_") {
                if first == "_design" {
                    throw SyncError(status: 403, error: "forbidden", reason: "design documents are not supported")
                }
                throw SyncError(
                    status: 400, error: "illegal_docid", reason: "Only reserved document ids may start with underscore."
                )
            }
            guard rest.count == 1 else { throw SyncError.missing }
            return try await document(collection, first, request)
        }
    }

    static let nameRule =
        "Only lowercase characters (a-z), digits (0-9), and any of the characters _, $, (, ), +, -, and / are allowed. Must begin with a letter."

    private func collection(_ name: String) throws -> DocumentCollection {
        guard let schema = try store.schema.collections[name], schema.replicated else {
            throw SyncError.missingDatabase
        }
        return try store.collection(name)
    }
}
