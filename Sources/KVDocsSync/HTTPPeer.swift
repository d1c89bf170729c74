import AsyncHTTPClient
import Foundation
import KVDocs
import NIOCore
import NIOHTTP1

/// A database at a URL that speaks CouchDB's replication protocol (a ``SyncServer``,
/// CouchDB, or anything compatible), as one side of a ``Replication``.
///
/// Network failures, timeouts and the statuses a busy or restarting server answers (5xx,
/// 408, 429) are ``TransientPeerError``s, which a replication retries; other error
/// statuses end it with the server's `error` and `reason`.
///
/// ```swift
/// let remote = try HTTPPeer(url: "http://127.0.0.1:5984/notes")
/// try await Replication(source: try LocalPeer(notes), target: remote).run()
/// ```
public struct HTTPPeer: ReplicationPeer {
    /// The database's URL, without credentials.
    public let url: String
    private let root: String
    private let database: String
    private let authorization: String?
    private let client: HTTPClient

    /// The client peers use unless given another: it fails a request at once when it
    /// cannot connect (AsyncHTTPClient's default retries the connection until the request's
    /// deadline), because a ``Replication`` retries on its own, with backoff, from its
    /// checkpoint. Never shut down.
    public static let defaultClient: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .seconds(10)
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// The largest response body read, in bytes.
    static let maximumResponseSize = 256 << 20

    /// The peer at `url` (`http://HOST:PORT/DATABASE`).
    /// - Parameters:
    ///   - url: the database's URL; a user and password in it are used as credentials.
    ///   - user: the user, if not in the URL.
    ///   - password: the password, if not in the URL.
    ///   - client: the HTTP client to use; ``defaultClient`` by default.
    /// - Throws: `.invalidArgument` for a URL that is not `http(s)://HOST[:PORT]/DATABASE`.
    public init(
        url: String, user: String? = nil, password: String? = nil, client: HTTPClient = HTTPPeer.defaultClient
    ) throws {
        guard var components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty
        else {
            throw KVDocsError(.invalidArgument, "\(url) is not an http:// or https:// URL of a database")
        }
        let name = components.path.split(separator: "/").map(String.init)
        guard name.count == 1, let database = name.first else {
            throw KVDocsError(
                .invalidArgument, "\(url) does not name one database: expected \(scheme)://\(host)/DATABASE")
        }
        let user = components.user?.removingPercentEncoding ?? user
        let password = components.password?.removingPercentEncoding ?? password
        components.user = nil
        components.password = nil
        components.path = ""
        components.query = nil
        components.fragment = nil
        guard let root = components.string else {
            throw KVDocsError(.invalidArgument, "\(url) is not a valid URL")
        }
        self.root = root
        self.database = database
        self.url = root + "/" + Self.encode(database)
        if let user, let password {
            authorization = "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
        } else {
            authorization = nil
        }
        self.client = client
    }

    // MARK: - ReplicationPeer

    /// The server's `uuid` (from `GET /`) and the database's name, or the URL when the
    /// server gives no `uuid`.
    public func identity() async throws -> String {
        let welcome = try await request(.GET, root + "/")
        if case .string(let uuid)? = welcome["uuid"] { return "\(uuid)/\(database)" }
        return url
    }

    /// The database's `update_seq`.
    public func updateSequence() async throws -> JSONValue {
        let info = try await request(.GET, url)
        guard let sequence = info["update_seq"] else { throw malformed("GET \(url) has no update_seq") }
        return sequence
    }

    /// `_changes` with `style=all_docs`, `longpoll` when waiting.
    public func changes(since: JSONValue, limit: Int, documentIDs: Set<String>?, wait: Duration?) async throws
        -> PeerChanges
    {
        var query: [(String, String)] = [("style", "all_docs"), ("limit", "\(limit)")]
        if case .string(let text) = since {
            query.append(("since", text))
        } else {
            query.append(("since", since.compactDescription))
        }
        if let wait {
            let milliseconds = wait.components.seconds * 1000 + wait.components.attoseconds / 1_000_000_000_000_000
            query += [("feed", "longpoll"), ("timeout", "\(milliseconds)"), ("heartbeat", "10000")]
        }
        let answer: JSONValue
        let timeout = (wait ?? .zero) + .seconds(60)
        if let documentIDs {
            query.append(("filter", "_doc_ids"))
            answer = try await request(
                .POST, url + "/_changes", query: query,
                body: ["doc_ids": .array(documentIDs.sorted().map { .string($0) })], timeout: timeout)
        } else {
            answer = try await request(.GET, url + "/_changes", query: query, timeout: timeout)
        }
        guard case .array(let rows)? = answer["results"], let last = answer["last_seq"] else {
            throw malformed("_changes answered without results and last_seq")
        }
        var results: [PeerChange] = []
        for row in rows {
            guard case .string(let id)? = row["id"], let sequence = row["seq"],
                case .array(let changes)? = row["changes"]
            else { throw malformed("a _changes row lacks seq, id or changes: \(row.compactDescription)") }
            let leaves = try changes.map { change -> DocumentRevision in
                guard case .string(let text)? = change["rev"], let revision = DocumentRevision(text) else {
                    throw malformed("a _changes row has a bad rev: \(change.compactDescription)")
                }
                return revision
            }
            results.append(PeerChange(sequence: sequence, id: id, leaves: leaves, deleted: row["deleted"] == true))
        }
        return PeerChanges(results: results, lastSequence: last)
    }

    /// `POST _revs_diff`.
    public func revsDiff(_ offered: [String: [DocumentRevision]]) async throws -> [String: RevsDiffEntry] {
        let body = JSONValue.object(
            JSONObject(offered.map { ($0.key, .array($0.value.map { .string($0.description) })) }))
        guard case .object(let answer) = try await request(.POST, url + "/_revs_diff", body: body) else {
            throw malformed("_revs_diff did not answer an object")
        }
        var result: [String: RevsDiffEntry] = [:]
        for (id, entry) in answer {
            func revisions(_ name: String) throws -> [DocumentRevision] {
                guard case .array(let items)? = entry[name] else { return [] }
                return try items.map {
                    guard case .string(let text) = $0, let revision = DocumentRevision(text) else {
                        throw malformed("_revs_diff answered a bad rev for \(id)")
                    }
                    return revision
                }
            }
            result[id] = RevsDiffEntry(
                missing: try revisions("missing"), possibleAncestors: try revisions("possible_ancestors"))
        }
        return result
    }

    /// `POST _bulk_get?revs=true&latest=true`, or `open_revs` per document when the server
    /// has no `_bulk_get`.
    public func fetch(_ requests: [PeerRevisionRequest]) async throws -> [ReplicatedDocument] {
        let body: JSONValue = [
            "docs": .array(requests.map { ["id": .string($0.id), "rev": .string($0.revision.description)] })
        ]
        var documents: [ReplicatedDocument] = []
        var seen = Set<PeerRevisionRequest>()
        func keep(_ value: JSONValue?) throws {
            guard let value else { return }
            do {
                let document = try ReplicatedDocument(json: value)
                if seen.insert(PeerRevisionRequest(id: document.id, revision: document.revision)).inserted {
                    documents.append(document)
                }
            } catch {
                throw malformed("a fetched revision is not a document: \(error.reason)")
            }
        }
        do {
            let answer = try await request(
                .POST, url + "/_bulk_get", query: [("revs", "true"), ("latest", "true")], body: body)
            guard case .array(let results)? = answer["results"] else { throw malformed("_bulk_get without results") }
            for result in results {
                guard case .array(let docs)? = result["docs"] else { continue }
                for doc in docs { try keep(doc["ok"]) }
            }
        } catch let error as HTTPStatusError where [400, 404, 405, 501].contains(error.status) {
            // No _bulk_get: one open_revs request per document.
            var byID: [(String, [DocumentRevision])] = []
            for request in requests {
                if let k = byID.firstIndex(where: { $0.0 == request.id }) {
                    byID[k].1.append(request.revision)
                } else {
                    byID.append((request.id, [request.revision]))
                }
            }
            for (id, revisions) in byID {
                let answer = try await request(
                    .GET, url + "/" + Self.encode(id),
                    query: [
                        ("revs", "true"), ("latest", "true"),
                        ("open_revs", JSONValue.array(revisions.map { .string($0.description) }).compactDescription)
                    ])
                guard case .array(let items) = answer else { throw malformed("open_revs did not answer a list") }
                for item in items { try keep(item["ok"]) }
            }
        }
        return documents
    }

    /// `POST _bulk_docs` with `new_edits: false`.
    public func store(_ documents: [ReplicatedDocument]) async throws -> [ReplicatedWriteResult] {
        let answer = try await request(
            .POST, url + "/_bulk_docs", body: ["docs": .array(documents.map(\.json)), "new_edits": false])
        guard case .array(let rows) = answer else { throw malformed("_bulk_docs did not answer a list") }
        var refused: [PeerRevisionRequest: (String, String)] = [:]
        for row in rows {
            guard case .string(let id)? = row["id"], case .string(let error)? = row["error"] else { continue }
            var reason = ""
            if case .string(let r)? = row["reason"] { reason = r }
            if case .string(let rev)? = row["rev"], let revision = DocumentRevision(rev) {
                refused[PeerRevisionRequest(id: id, revision: revision)] = (error, reason)
            } else {
                for document in documents where document.id == id {
                    refused[PeerRevisionRequest(id: id, revision: document.revision)] = (error, reason)
                }
            }
        }
        return documents.map {
            if let (error, reason) = refused[PeerRevisionRequest(id: $0.id, revision: $0.revision)] {
                return .rejected(id: $0.id, revision: $0.revision, error: error, reason: reason)
            }
            return .stored(id: $0.id, revision: $0.revision)
        }
    }

    /// `POST _ensure_full_commit` (a server without it is taken to commit every write).
    public func ensureFullCommit() async throws {
        do {
            _ = try await request(.POST, url + "/_ensure_full_commit", body: [:])
        } catch let error as HTTPStatusError where [400, 404, 405].contains(error.status) {}
    }

    /// `GET _local/ID`.
    public func localDocument(_ id: String) async throws -> (rev: String, body: JSONObject)? {
        let answer: JSONValue
        do {
            answer = try await request(.GET, url + "/_local/" + Self.encode(id))
        } catch let error as HTTPStatusError where error.status == 404 {
            return nil
        }
        guard case .object(var fields) = answer, case .string(let rev)? = fields["_rev"] else {
            throw malformed("_local/\(id) is not a document with a _rev")
        }
        fields["_id"] = nil
        fields["_rev"] = nil
        return (rev, fields)
    }

    /// `PUT _local/ID`.
    public func putLocalDocument(_ id: String, body: JSONObject, rev: String?) async throws -> String {
        var fields = body
        if let rev { fields["_rev"] = .string(rev) }
        let answer: JSONValue
        do {
            answer = try await request(.PUT, url + "/_local/" + Self.encode(id), body: .object(fields))
        } catch let error as HTTPStatusError where error.status == 409 {
            throw KVDocsError(.conflict, "\(url)/_local/\(id): \(error.reason)")
        }
        guard case .string(let next)? = answer["rev"] else { throw malformed("PUT _local/\(id) answered no rev") }
        return next
    }

    // MARK: - Requests

    /// An error status the server answered, with its CouchDB `error` and `reason`.
    struct HTTPStatusError: Error, CustomStringConvertible {
        let status: Int
        let error: String
        let reason: String
        let what: String
        var description: String { "\(what): HTTP \(status) \(error): \(reason)" }
    }

    private func malformed(_ message: String) -> KVDocsError {
        KVDocsError(.decoding, "\(url): \(message)")
    }

    /// Sends a request and reads its JSON answer.
    private func request(
        _ method: HTTPMethod, _ address: String, query: [(String, String)] = [], body: JSONValue? = nil,
        timeout: Duration = .seconds(60)
    ) async throws -> JSONValue {
        var target = address
        if !query.isEmpty {
            target += "?" + query.map { "\($0.0)=\(Self.encode($0.1))" }.joined(separator: "&")
        }
        var request = HTTPClientRequest(url: target)
        request.method = method
        request.headers.add(name: "Accept", value: "application/json")
        if let authorization { request.headers.add(name: "Authorization", value: authorization) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: try body.canonicalBytes()))
        }
        let what = "\(method.rawValue) \(address)"
        let response: HTTPClientResponse
        let bytes: ByteBuffer
        do {
            response = try await client.execute(
                request, timeout: .nanoseconds(Int64(timeout.components.seconds) * 1_000_000_000))
            bytes = try await response.body.collect(upTo: Self.maximumResponseSize)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw TransientPeerError("\(what): \(error)")
        }
        let status = Int(response.status.code)
        let json = try? JSONValue(parsing: Array(buffer: bytes))
        guard (200..<300).contains(status) else {
            var name = "HTTP \(status)"
            var reason = ""
            if case .string(let e)? = json?["error"] { name = e }
            if case .string(let r)? = json?["reason"] { reason = r }
            if status >= 500 || status == 408 || status == 429 {
                throw TransientPeerError("\(what): HTTP \(status) \(name): \(reason)")
            }
            throw HTTPStatusError(status: status, error: name, reason: reason, what: what)
        }
        guard let json else { throw malformed("\(what) did not answer JSON") }
        return json
    }

    /// `text` percent-encoded for a path segment or a query value: everything but
    /// unreserved characters.
    static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    /// RFC 3986's unreserved characters, ASCII only (`CharacterSet.alphanumerics` holds
    /// every script's letters, which must be encoded).
    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
