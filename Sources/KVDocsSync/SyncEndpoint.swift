import Foundation
import KVDocs

/// An HTTP request, as the sync endpoint sees it: no network types, so that the protocol's
/// logic is tested without sockets.
public struct SyncRequest: Sendable {
    /// `GET`, `HEAD`, `POST`, `PUT`, `DELETE`, …
    public var method: String
    /// The path as sent, still percent-encoded (`/notes/a%2Fb`).
    public var path: String
    /// The query's parameters, percent-decoded, in order.
    public var query: [(name: String, value: String)]
    /// The headers, names in lowercase.
    public var headers: [String: String]
    /// The body.
    public var body: [UInt8]

    /// A request.
    public init(
        method: String, path: String, query: [(name: String, value: String)] = [], headers: [String: String] = [:],
        body: [UInt8] = []
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }

    func parameter(_ name: String) -> String? { query.last { $0.name == name }?.value }
}

/// An HTTP response of the sync endpoint.
public struct SyncResponse: Sendable {
    /// The status code.
    public var status: Int
    /// Headers beyond `Content-Type: application/json`.
    public var headers: [(name: String, value: String)]
    /// The body: JSON text. Empty when the body is `stream`.
    public var body: [UInt8]
    /// A body sent as it is produced (`_changes?feed=continuous`: a JSON line per change,
    /// an empty line per heartbeat, then the `last_seq` line); `nil` for `body`. Ending
    /// the iteration early (the client went) stops what produces it.
    public var stream: AsyncThrowingStream<[UInt8], any Error>?

    init(_ status: Int, _ value: JSONValue, headers: [(name: String, value: String)] = []) {
        self.status = status
        self.headers = headers
        self.body = ((try? value.canonicalBytes()) ?? Array("null".utf8)) + [0x0A]
    }

    init(status: Int, stream: AsyncThrowingStream<[UInt8], any Error>) {
        self.status = status
        self.headers = []
        self.body = []
        self.stream = stream
    }
}

/// A CouchDB error response: status, `error` and `reason`.
struct SyncError: Error {
    let status: Int
    let error: String
    let reason: String
    var headers: [(name: String, value: String)] = []

    var response: SyncResponse {
        SyncResponse(status, ["error": .string(error), "reason": .string(reason)], headers: headers)
    }

    static func badRequest(_ reason: String) -> SyncError {
        SyncError(status: 400, error: "bad_request", reason: reason)
    }
    static let missingDatabase = SyncError(status: 404, error: "not_found", reason: "Database does not exist.")
    static let missing = SyncError(status: 404, error: "not_found", reason: "missing")
    static let deleted = SyncError(status: 404, error: "not_found", reason: "deleted")
    static func methodNotAllowed(_ allowed: String) -> SyncError {
        SyncError(
            status: 405, error: "method_not_allowed", reason: "Only \(allowed) allowed",
            headers: [("Allow", allowed)])
    }
}

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

    // MARK: - Authentication

    private func authenticate(_ request: SyncRequest) throws {
        guard let credentials else { return }
        let expected = Array(
            "Basic \(Data("\(credentials.user):\(credentials.password)".utf8).base64EncodedString())".utf8)
        let given = Array((request.headers["authorization"] ?? "").utf8)
        // Constant time in the length of the expected value.
        var difference = UInt8(given.count == expected.count ? 0 : 1)
        for (k, byte) in expected.enumerated() { difference |= byte ^ (k < given.count ? given[k] : 0) }
        guard difference == 0 else {
            throw SyncError(
                status: 401, error: "unauthorized", reason: "Name or password is incorrect.",
                headers: [("WWW-Authenticate", #"Basic realm="kvdocs""#)])
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

    // MARK: - Databases

    private func database(_ collection: DocumentCollection, _ request: SyncRequest) async throws -> SyncResponse {
        switch request.method {
        case "GET", "HEAD":
            let sequence = try await collection.async.updateSequence()
            return SyncResponse(
                200,
                [
                    "db_name": .string(collection.name), "update_seq": .int(sequence),
                    "committed_update_seq": .int(sequence), "instance_start_time": "0", "purge_seq": 0,
                    "compact_running": false, "disk_format_version": 5,
                    "doc_count": .int(Int64(try await store.fetch(.count(collection)))), "doc_del_count": 0,
                    // (`disk` as the replication protocol's example of this answer has it.)
                    "sizes": ["active": 0, "disk": 0, "external": 0, "file": 0]
                ])
        case "PUT":
            throw SyncError(
                status: 412, error: "file_exists", reason: "The database could not be created, the file already exists."
            )
        default:
            throw SyncError.methodNotAllowed("GET,HEAD,PUT")
        }
    }

    // MARK: - _changes

    private func changes(_ collection: DocumentCollection, _ request: SyncRequest) async throws -> SyncResponse {
        guard request.method == "GET" || request.method == "POST" else { throw SyncError.methodNotAllowed("GET,POST") }
        var since: Int64 = 0
        if let text = request.parameter("since") {
            if text == "now" {
                since = try await collection.async.updateSequence()
            } else if let parsed = try? LocalPeer.sequence((try? JSONValue(parsing: text)) ?? .string(text)) {
                // A number, or a number in a JSON string (how a replicator echoes `seq`).
                since = parsed
            } else {
                throw SyncError.badRequest("since must be a sequence number or \"now\", not \(text)")
            }
        }
        let limit = try integer(request, "limit")
        let style: ChangesStyle
        switch request.parameter("style") ?? "main_only" {
        case "main_only": style = .mainOnly
        case "all_docs": style = .allDocs
        case let other: throw SyncError.badRequest("style must be main_only or all_docs, not \(other)")
        }
        var documentIDs: Set<String>?
        if let filter = request.parameter("filter") {
            guard filter == "_doc_ids" else {
                throw SyncError.badRequest("the only filter supported is _doc_ids, not \(filter)")
            }
            var ids: JSONValue?
            if let text = request.parameter("doc_ids") {
                ids = try? JSONValue(parsing: text)
            } else if request.method == "POST" {
                ids = try json(request)["doc_ids"]
            }
            guard case .array(let items)? = ids else {
                throw SyncError.badRequest("filter=_doc_ids needs doc_ids, a list")
            }
            documentIDs = Set(
                try items.map {
                    guard case .string(let id) = $0 else { throw SyncError.badRequest("doc_ids must hold strings") }
                    return id
                })
        }
        let includeDocs = try flag(request, "include_docs")
        let feed = request.parameter("feed") ?? "normal"
        if feed == "continuous" {
            return try continuousChanges(
                collection, request, since: since, limit: limit, style: style, documentIDs: documentIDs,
                includeDocs: includeDocs)
        }
        var page = try await collection.async.changes(
            since: since, limit: limit, style: style, documentIDs: documentIDs)
        switch feed {
        case "normal": break
        case "longpoll":
            if page.results.isEmpty {
                let timeout = min(try integer(request, "timeout") ?? 60_000, Self.maximumTimeout)
                _ = try await collection.waitForChanges(since: since, timeout: .milliseconds(timeout))
                page = try await collection.async.changes(
                    since: since, limit: limit, style: style, documentIDs: documentIDs)
            }
        default:
            throw SyncError.badRequest("feed must be normal, longpoll or continuous, not \(feed)")
        }
        let results = try page.results.map { try Self.row($0, collection, includeDocs: includeDocs) }
        return SyncResponse(200, ["results": .array(results), "last_seq": .int(page.lastSequence), "pending": 0])
    }

    /// One row of `_changes`: `seq`, `id`, `changes` (the leaves asked for), `deleted`,
    /// and with `include_docs` the winner (`null` when deleted).
    static func row(_ change: ReplicatedChange, _ collection: DocumentCollection, includeDocs: Bool) throws
        -> JSONValue
    {
        var row: [(String, JSONValue)] = [
            ("seq", .int(change.sequence)), ("id", .string(change.id)),
            ("changes", .array(change.leaves.map { ["rev": .string($0.description)] }))
        ]
        if change.deleted { row.append(("deleted", true)) }
        if includeDocs {
            row.append(("doc", try collection.get(id: .string(change.id)) ?? .null))
        }
        return .object(JSONObject(row))
    }

    /// `_changes?feed=continuous`: a line per change as changes come, until `limit` rows,
    /// or until `timeout` passes without a change; with `heartbeat` (milliseconds, or
    /// `true` for 60 s) an empty line after each such period instead, for as long as the
    /// client listens. The last line is `{"last_seq": N, "pending": 0}`.
    private func continuousChanges(
        _ collection: DocumentCollection, _ request: SyncRequest, since first: Int64, limit: Int?,
        style: ChangesStyle, documentIDs: Set<String>?, includeDocs: Bool
    ) throws -> SyncResponse {
        let heartbeat: Int?
        switch request.parameter("heartbeat") {
        case nil, "false": heartbeat = nil
        case "true": heartbeat = 60_000
        case let text?:
            guard let value = Int(text), value > 0 else {
                throw SyncError.badRequest("heartbeat must be a positive number of milliseconds or true, not \(text)")
            }
            heartbeat = min(value, Self.maximumTimeout)
        }
        let timeout = min(try integer(request, "timeout") ?? 60_000, Self.maximumTimeout)
        let stream = AsyncThrowingStream<[UInt8], any Error> { continuation in
            let task = Task {
                do {
                    var since = first
                    var sent = 0
                    while limit.map({ sent < $0 }) ?? true {
                        let page = try await collection.async.changes(
                            since: since, limit: limit.map { $0 - sent }, style: style, documentIDs: documentIDs)
                        for change in page.results {
                            continuation.yield(
                                try Self.row(change, collection, includeDocs: includeDocs).canonicalBytes() + [0x0A])
                        }
                        sent += page.results.count
                        since = max(since, page.lastSequence)
                        guard page.results.isEmpty else { continue }
                        let latest = try await collection.waitForChanges(
                            since: since, timeout: .milliseconds(heartbeat ?? timeout))
                        if latest <= since {
                            guard heartbeat != nil else { break }
                            continuation.yield([0x0A])
                        }
                    }
                    continuation.yield(
                        try JSONValue.object(["last_seq": .int(since), "pending": 0]).canonicalBytes() + [0x0A])
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
        return SyncResponse(status: 200, stream: stream)
    }

    // MARK: - _revs_diff

    private func revsDiff(_ collection: DocumentCollection, _ request: SyncRequest) async throws -> SyncResponse {
        guard case .object(let members) = try json(request) else {
            throw SyncError.badRequest("the body must be an object of document ids and revision lists")
        }
        guard members.count <= Self.maximumBatch else {
            throw SyncError(
                status: 413, error: "too_large", reason: "at most \(Self.maximumBatch) documents per _revs_diff")
        }
        var offered: [String: [DocumentRevision]] = [:]
        var total = 0
        for (id, value) in members {
            guard case .array(let items) = value else {
                throw SyncError.badRequest("the revisions of \(JSONValue.string(id).compactDescription) must be a list")
            }
            total += items.count
            guard total <= Self.maximumRevisions else {
                throw SyncError(
                    status: 413, error: "too_large", reason: "at most \(Self.maximumRevisions) revisions per _revs_diff"
                )
            }
            offered[id] = try items.map(Self.revision)
        }
        let lacking = try await collection.async.revsDiff(offered)
        var answer: [(String, JSONValue)] = []
        for (id, entry) in lacking where !entry.missing.isEmpty {
            var fields: [(String, JSONValue)] = [("missing", .array(entry.missing.map { .string($0.description) }))]
            if !entry.possibleAncestors.isEmpty {
                fields.append(("possible_ancestors", .array(entry.possibleAncestors.map { .string($0.description) })))
            }
            answer.append((id, .object(JSONObject(fields))))
        }
        return SyncResponse(200, .object(JSONObject(answer)))
    }

    static func revision(_ value: JSONValue) throws -> DocumentRevision {
        guard case .string(let text) = value, let revision = DocumentRevision(text) else {
            throw SyncError.badRequest("Invalid rev format")
        }
        return revision
    }

    // MARK: - _bulk_docs

    private func bulkDocs(_ collection: DocumentCollection, _ request: SyncRequest) async throws -> SyncResponse {
        let body = try json(request)
        guard case .array(let items)? = body["docs"] else {
            throw SyncError.badRequest("POST body must include `docs` parameter.")
        }
        guard items.count <= Self.maximumBatch else {
            throw SyncError(
                status: 413, error: "too_large", reason: "at most \(Self.maximumBatch) documents per _bulk_docs")
        }
        var newEdits = true
        if let value = body["new_edits"] {
            guard case .bool(let b) = value else { throw SyncError.badRequest("new_edits must be a boolean") }
            newEdits = b
        }
        guard !newEdits else { return try await interactiveEdits(collection, items) }
        // Every document is checked first; those refused are answered, the others written
        // in one batch.
        var errors: [JSONValue] = []
        var accepted: [ReplicatedDocument] = []
        for item in items {
            do {
                accepted.append(try ReplicatedDocument(json: item))
            } catch {
                errors.append(Self.failure(id: error.id, rev: error.revision?.description, error.error, error.reason))
            }
        }
        for result in try await collection.async.bulkWriteReplicated(accepted) {
            if case .rejected(let id, let revision, let error, let reason) = result {
                errors.append(Self.failure(id: id, rev: revision?.description, error, reason))
            }
        }
        return SyncResponse(201, .array(errors))
    }

    static func failure(id: String?, rev: String?, _ error: String, _ reason: String) -> JSONValue {
        var fields: [(String, JSONValue)] = []
        if let id { fields.append(("id", .string(id))) }
        if let rev { fields.append(("rev", .string(rev))) }
        fields.append(("error", .string(error)))
        fields.append(("reason", .string(reason)))
        return .object(JSONObject(fields))
    }

    /// `_bulk_docs` without `new_edits: false`: each document an edit of the winner its
    /// `_rev` names (or a new document), each on its own, as CouchDB does.
    private func interactiveEdits(_ collection: DocumentCollection, _ items: [JSONValue]) async throws -> SyncResponse {
        var answers: [JSONValue] = []
        for item in items {
            guard case .object(let fields) = item, case .string(let id)? = fields["_id"] else {
                answers.append(Self.failure(id: nil, rev: nil, "bad_request", "each document needs an _id string"))
                continue
            }
            do {
                let (revision, _) = try await collection.async.save(.object(fields))
                answers.append(["ok": true, "id": .string(id), "rev": .string(revision.description)])
            } catch let error as KVDocsError {
                let failure = Self.response(for: error)
                answers.append(Self.failure(id: id, rev: nil, failure.error, failure.reason))
            }
        }
        return SyncResponse(201, .array(answers))
    }

    // MARK: - _all_docs

    /// CouchDB's `_all_docs`: the documents' winners by id, in one snapshot. With `keys` (a
    /// JSON list in the query, or in the body of a POST) a row per key, in their order:
    /// `error: not_found` for an id without revisions, `deleted: true` (and a `null` doc)
    /// for one whose winner is a tombstone. Without, every live document in id order,
    /// from `startkey` to `endkey` (`inclusive_end`, `descending`), after `skip`, up to
    /// `limit`. `include_docs` adds each winner's body.
    private func allDocs(_ collection: DocumentCollection, _ request: SyncRequest) async throws -> SyncResponse {
        let includeDocs = try flag(request, "include_docs")
        let descending = try flag(request, "descending")
        let skip = try integer(request, "skip") ?? 0
        let limit = try integer(request, "limit")
        var listed: JSONValue?
        if let text = request.parameter("keys") {
            listed = (try? JSONValue(parsing: text)) ?? .string(text)
        } else if request.method == "POST", !request.body.isEmpty {
            listed = try json(request)["keys"]
        }
        var keys: [String]?
        if let listed {
            guard case .array(let items) = listed else { throw SyncError.badRequest("`keys` must be a list of ids") }
            guard items.count <= Self.maximumBatch else {
                throw SyncError(status: 413, error: "too_large", reason: "at most \(Self.maximumBatch) keys")
            }
            keys = try items.map {
                guard case .string(let id) = $0 else { throw SyncError.badRequest("`keys` must be a list of ids") }
                return id
            }
        }
        /// A key bound: a JSON string (`startkey="a"`), under either of CouchDB's spellings.
        func bound(_ names: String...) throws -> String? {
            guard let text = names.lazy.compactMap({ request.parameter($0) }).first else { return nil }
            guard case .string(let id)? = try? JSONValue(parsing: text) else {
                throw SyncError.badRequest("\(names[0]) must be a JSON string, not \(text)")
            }
            return id
        }
        let first = try bound("startkey", "start_key"), last = try bound("endkey", "end_key")
        let inclusiveEnd =
            try request.parameter("inclusive_end").map { text -> Bool in
                guard text == "true" || text == "false" else {
                    throw SyncError.badRequest("inclusive_end must be true or false, not \(text)")
                }
                return text == "true"
            } ?? true
        let name = collection.name
        let requested = keys
        let (total, offset, rows) = try await store.read { tx -> (Int, Int, [JSONValue]) in
            func row(_ id: String) throws -> JSONValue {
                guard let winner = try tx.revisionLeaves(name, id: id).first else {
                    return ["key": .string(id), "error": "not_found"]
                }
                var value: [(String, JSONValue)] = [("rev", .string(winner.revision.description))]
                if winner.deleted { value.append(("deleted", true)) }
                var fields: [(String, JSONValue)] = [
                    ("id", .string(id)), ("key", .string(id)), ("value", .object(JSONObject(value)))
                ]
                if includeDocs {
                    fields.append(("doc", winner.deleted ? .null : try tx.get(name, id: .string(id)) ?? .null))
                }
                return .object(JSONObject(fields))
            }
            let total = try tx.count(name)
            if let requested {
                let chosen = requested.dropFirst(skip).prefix(limit ?? Int.max)
                return (total, 0, try chosen.map(row))
            }
            var ids: [String] = []
            try tx.forEach(name) { document in
                if case .string(let id)? = document["_id"] { ids.append(id) }
            }
            ids.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            if descending { ids.reverse() }
            /// Whether `id` comes before `bound` in the listing's direction.
            func before(_ id: String, _ bound: String) -> Bool {
                descending
                    ? bound.utf8.lexicographicallyPrecedes(id.utf8) : id.utf8.lexicographicallyPrecedes(bound.utf8)
            }
            let start = first.map { bound in ids.firstIndex { !before($0, bound) } ?? ids.count } ?? 0
            var end = ids.count
            if let last {
                end = ids.firstIndex { id in before(last, id) || (!inclusiveEnd && id == last) } ?? ids.count
            }
            let range = ids[start..<max(start, end)]
            let chosen = range.dropFirst(skip).prefix(limit ?? Int.max)
            return (total, start + min(skip, range.count), try chosen.map(row))
        }
        return SyncResponse(
            200, ["total_rows": .int(Int64(total)), "offset": .int(Int64(offset)), "rows": .array(rows)])
    }

    // MARK: - _bulk_get and open_revs

    private func bulkGet(_ collection: DocumentCollection, _ request: SyncRequest) async throws -> SyncResponse {
        guard case .array(let items)? = try json(request)["docs"] else {
            throw SyncError.badRequest("POST body must include `docs` parameter.")
        }
        guard items.count <= Self.maximumBatch else {
            throw SyncError(
                status: 413, error: "too_large", reason: "at most \(Self.maximumBatch) documents per _bulk_get")
        }
        let revs = try flag(request, "revs")
        let latest = try flag(request, "latest")
        var requests: [(id: String, revision: DocumentRevision?)] = []
        for item in items {
            guard case .string(let id)? = item["id"] else { throw SyncError.badRequest("each entry needs an id") }
            requests.append((id, try item["rev"].map(Self.revision)))
        }
        let answers = try await collection.async.bulkGet(requests, latest: latest, withHistory: revs)
        var results: [JSONValue] = []
        for (request, answer) in zip(requests, answers) {
            var docs: [JSONValue] = answer.results.map {
                switch $0 {
                case .ok(let document): ["ok": document.json]
                case .missing(let revision):
                    [
                        "error": [
                            "id": .string(request.id), "rev": .string(revision.description), "error": "not_found",
                            "reason": "missing"
                        ]
                    ]
                }
            }
            if docs.isEmpty {
                docs = [
                    [
                        "error": [
                            "id": .string(request.id), "rev": .string(request.revision?.description ?? "undefined"),
                            "error": "not_found", "reason": "missing"
                        ]
                    ]
                ]
            }
            results.append(["id": .string(request.id), "docs": .array(docs)])
        }
        return SyncResponse(200, ["results": .array(results)])
    }

    // MARK: - Documents

    private func document(_ collection: DocumentCollection, _ id: String, _ request: SyncRequest) async throws
        -> SyncResponse
    {
        switch request.method {
        case "GET", "HEAD":
            let revs = try flag(request, "revs")
            let latest = try flag(request, "latest")
            if let text = request.parameter("open_revs") {
                var revisions: [DocumentRevision]?
                if text != "all" {
                    guard case .array(let items) = (try? JSONValue(parsing: text)) ?? .null else {
                        throw SyncError.badRequest("open_revs must be \"all\" or a list of revisions")
                    }
                    guard items.count <= 1_000 else {
                        throw SyncError(status: 413, error: "too_large", reason: "at most 1000 open_revs")
                    }
                    revisions = try items.map(Self.revision)
                }
                let results = try await collection.async.openRevisions(
                    id: id, revisions: revisions, latest: latest, withHistory: revs)
                if revisions == nil, results.isEmpty { throw SyncError.missing }
                return SyncResponse(
                    200,
                    .array(
                        results.map {
                            switch $0 {
                            case .ok(let document): ["ok": document.json]
                            case .missing(let revision): ["missing": .string(revision.description)]
                            }
                        }))
            }
            let leaves = try collection.revisionLeaves(id: id)
            guard let winner = leaves.first else { throw SyncError.missing }
            var wanted = winner.revision
            if let text = request.parameter("rev") { wanted = try Self.revision(.string(text)) }
            let results = try collection.openRevisions(id: id, revisions: [wanted], withHistory: revs)
            guard case .ok(let document)? = results.first else { throw SyncError.missing }
            if document.deleted && request.parameter("rev") == nil { throw SyncError.deleted }
            var json = document.json
            if try flag(request, "conflicts"), case .object(var fields) = json,
                let info = try collection.conflictInfo(id: id), !info.conflicts.isEmpty
            {
                fields["_conflicts"] = .array(info.conflicts.map { .string($0.description) })
                json = .object(fields)
            }
            return SyncResponse(200, json)
        case "PUT":
            guard case .object(var fields) = try json(request) else {
                throw SyncError.badRequest("Document must be a JSON object")
            }
            if let given = fields["_id"], given != .string(id) {
                throw SyncError.badRequest("the _id in the body is not the one in the path")
            }
            fields["_id"] = .string(id)
            if request.parameter("new_edits") == "false" {
                return try await bulkDocs(
                    collection,
                    SyncRequest(
                        method: "POST", path: request.path, headers: request.headers,
                        body: try JSONValue.object(["docs": [.object(fields)], "new_edits": false]).canonicalBytes()))
            }
            if let rev = request.parameter("rev"), fields["_rev"] == nil { fields["_rev"] = .string(rev) }
            let (revision, _) = try await collection.async.save(.object(fields))
            return SyncResponse(201, ["ok": true, "id": .string(id), "rev": .string(revision.description)])
        case "DELETE":
            guard let rev = request.parameter("rev") else {
                throw SyncError(status: 409, error: "conflict", reason: "Document update conflict.")
            }
            let (revision, _) = try await collection.async.save(
                ["_id": .string(id), "_rev": .string(try Self.revision(.string(rev)).description), "_deleted": true])
            return SyncResponse(200, ["ok": true, "id": .string(id), "rev": .string(revision.description)])
        default:
            throw SyncError.methodNotAllowed("GET,HEAD,PUT,DELETE")
        }
    }

    // MARK: - _local

    private func local(_ collection: DocumentCollection, _ id: String, _ request: SyncRequest) async throws
        -> SyncResponse
    {
        switch request.method {
        case "GET", "HEAD":
            guard let document = try await collection.async.localDocument(id) else { throw SyncError.missing }
            var fields = document.body
            fields["_id"] = .string("_local/\(id)")
            fields["_rev"] = .string(document.rev)
            return SyncResponse(200, .object(fields))
        case "PUT":
            guard case .object(let fields) = try json(request) else {
                throw SyncError.badRequest("Document must be a JSON object")
            }
            var rev: String?
            if case .string(let given)? = fields["_rev"] { rev = given }
            if let given = request.parameter("rev") { rev = given }
            if rev == nil, try await collection.async.localDocument(id) != nil {
                throw SyncError(status: 409, error: "conflict", reason: "Document update conflict.")
            }
            let next = try await collection.async.putLocalDocument(id, body: fields, ifRev: rev)
            return SyncResponse(201, ["ok": true, "id": .string("_local/\(id)"), "rev": .string(next)])
        case "DELETE":
            guard let rev = request.parameter("rev") else {
                throw SyncError(status: 409, error: "conflict", reason: "Document update conflict.")
            }
            try collection.deleteLocalDocument(id, rev: rev)
            return SyncResponse(200, ["ok": true, "id": .string("_local/\(id)"), "rev": "0-0"])
        default:
            throw SyncError.methodNotAllowed("GET,HEAD,PUT,DELETE")
        }
    }

    // MARK: - Parameters and bodies

    private func json(_ request: SyncRequest) throws -> JSONValue {
        guard request.body.count <= Self.maximumBodySize else {
            throw SyncError(status: 413, error: "too_large", reason: "the request entity is too large")
        }
        if let type = request.headers["content-type"], !type.lowercased().hasPrefix("application/json") {
            throw SyncError(status: 415, error: "bad_content_type", reason: "Content-Type must be application/json")
        }
        do {
            return try JSONValue(parsing: request.body)
        } catch {
            throw SyncError.badRequest("invalid UTF-8 JSON")
        }
    }

    private func flag(_ request: SyncRequest, _ name: String) throws -> Bool {
        switch request.parameter(name) {
        case nil, "false": return false
        case "true": return true
        case let other?: throw SyncError.badRequest("\(name) must be true or false, not \(other)")
        }
    }

    private func integer(_ request: SyncRequest, _ name: String) throws -> Int? {
        guard let text = request.parameter(name) else { return nil }
        guard let value = Int(text), value >= 0 else {
            throw SyncError.badRequest("\(name) must be a non-negative integer, not \(text)")
        }
        return value
    }
}
