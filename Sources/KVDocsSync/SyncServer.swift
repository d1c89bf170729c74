import Foundation
import HTTPTypes
import Hummingbird
import KVDocs
import Logging
import NIOCore

/// An HTTP server for a store's replicated collections, speaking CouchDB's replication
/// protocol (``SyncEndpoint``): a CouchDB, PouchDB or KVDocs replicator can pull from and
/// push to each collection at `http://HOST:PORT/<collection>`.
///
/// It listens on loopback by default. Listening on any other address requires
/// credentials, which every request must then carry (HTTP basic authentication); put a
/// TLS-terminating proxy in front of it beyond a trusted network.
///
/// ```swift
/// let server = try SyncServer(store: store, port: 5984)
/// try await server.run { port in print("serving on \(port)") }  // until cancelled
/// ```
public final class SyncServer: Sendable {
    /// The protocol's logic, without the network.
    public let endpoint: SyncEndpoint
    /// The address listened on.
    public let host: String
    /// The port asked for (0: any free port, reported by ``run(onListening:)``).
    public let port: Int

    /// A server for `store`.
    /// - Parameters:
    ///   - store: the store whose replicated collections are served.
    ///   - host: the address to listen on; loopback (`127.0.0.1`) by default.
    ///   - port: the port; 0 for any free one.
    ///   - credentials: the user and password requests must carry; required for an address
    ///     other than loopback.
    /// - Throws: `.invalidArgument` for a port out of range, or a non-loopback address
    ///   without credentials.
    public init(
        store: DocumentStore, host: String = "127.0.0.1", port: Int = 5984,
        credentials: (user: String, password: String)? = nil
    ) throws {
        guard (0...65535).contains(port) else {
            throw KVDocsError(.invalidArgument, "the port must be in 0...65535 (got \(port))")
        }
        if credentials == nil, !Self.isLoopback(host) {
            throw KVDocsError(
                .invalidArgument,
                "serving on \(host) reaches beyond this machine: it needs credentials (a user and a password)")
        }
        if let credentials, credentials.user.isEmpty || credentials.password.isEmpty || credentials.user.contains(":") {
            throw KVDocsError(.invalidArgument, "the user must be non-empty without \":\", the password non-empty")
        }
        self.endpoint = SyncEndpoint(store: store, credentials: credentials)
        self.host = host
        self.port = port
    }

    /// Whether `host` names this machine only.
    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// Serves until the task is cancelled.
    /// - Parameter onListening: called with the port once the server listens.
    public func run(onListening: @escaping @Sendable (Int) -> Void = { _ in }) async throws {
        let endpoint = self.endpoint
        let responder = CallbackResponder<BasicRequestContext> { request, _ in
            var request = request
            let body: ByteBuffer
            do {
                body = try await request.collectBody(upTo: SyncEndpoint.maximumBodySize)
            } catch {
                return Self.response(
                    SyncError(status: 413, error: "too_large", reason: "the request entity is too large").response)
            }
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.canonicalName] = field.value }
            var query: [(name: String, value: String)] = []
            for (name, value) in request.uri.queryParameters { query.append((String(name), String(value))) }
            let answer = await endpoint.respond(
                to: SyncRequest(
                    method: request.method.rawValue, path: request.uri.path, query: query, headers: headers,
                    body: Array(buffer: body)))
            return Self.response(answer, head: request.method == .head)
        }
        var logger = Logger(label: "kvdocs-sync")
        logger.logLevel = .critical
        let app = Application(
            responder: responder,
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "KVDocs"),
            onServerRunning: { channel in onListening(channel.localAddress?.port ?? 0) },
            logger: logger)
        try await app.run()
    }

    static func response(_ answer: SyncResponse, head: Bool = false) -> Response {
        var fields = HTTPFields()
        fields[.contentType] = "application/json"
        fields[.cacheControl] = "must-revalidate"
        for (name, value) in answer.headers {
            if let field = HTTPField.Name(name) { fields[field] = value }
        }
        let body: ResponseBody
        if head {
            body = ResponseBody()
        } else if let stream = answer.stream {
            // Sent as produced; Hummingbird stops iterating when the client goes.
            body = ResponseBody(asyncSequence: stream.map { ByteBuffer(bytes: $0) })
        } else {
            body = ResponseBody(byteBuffer: ByteBuffer(bytes: answer.body))
        }
        return Response(status: HTTPResponse.Status(code: answer.status), headers: fields, body: body)
    }
}
