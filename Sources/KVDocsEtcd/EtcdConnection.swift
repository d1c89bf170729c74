import AsyncHTTPClient
import Foundation
import KVSupport
import NIOCore

/// The HTTP side of an ``EtcdKeyValueStore``: POSTs of JSON to etcd's v3 gateway (`/v3/kv/range`,
/// `/v3/kv/txn`, …) on one of the cluster's endpoints, answered as JSON or mapped to a
/// `KVDocsError`.
///
/// **Invariants.** Requests go to the endpoint that last answered. A request that could not
/// reach it, or that the member refused for want of a leader, goes to the next one, and so
/// on once round the list; a write goes to another endpoint only when it was never sent
/// (its connection failed), since one that was sent may have been applied. Calls block the
/// calling thread: never call them from an event loop of the client's group.
final class EtcdConnection: Sendable {
    /// The endpoints' base URLs (`http://127.0.0.1:2379`), without a trailing slash.
    let endpoints: [String]
    /// The time a request may take before it fails.
    let timeout: TimeAmount
    /// The requests made (for tests and benchmarks: what an operation costs in round trips).
    let requests = Locked(0)
    let client: HTTPClient
    private let current = Locked(0)
    /// A fault the next write meets, for the tests of commits whose answer is lost.
    package let nextWriteFault = Locked<WriteFault?>(nil)

    /// How a write fails on purpose (tests only).
    package enum WriteFault: Sendable {
        /// Sent and applied, then its answer lost.
        case answerLost
        /// Never sent, but reported as if its answer were lost.
        case requestLost
    }

    /// The largest response body read, in bytes.
    static let maximumResponseSize = 512 << 20

    /// A connection to the cluster at `endpoints`.
    /// - Throws: `.invalidArgument` for an empty list or an address that is not an
    ///   `http://` or `https://` URL.
    init(endpoints: [String], timeout: TimeAmount) throws {
        guard !endpoints.isEmpty else {
            throw KVDocsError(.invalidArgument, "an etcd store needs at least one endpoint")
        }
        var cleaned: [String] = []
        for endpoint in endpoints {
            var text = endpoint.trimmingCharacters(in: .whitespaces)
            while text.hasSuffix("/") { text.removeLast() }
            guard text.hasPrefix("http://") || text.hasPrefix("https://"), URL(string: text)?.host != nil else {
                throw KVDocsError(
                    .invalidArgument,
                    "etcd endpoint \"\(endpoint)\" is not a URL such as http://127.0.0.1:2379")
            }
            cleaned.append(text)
        }
        self.endpoints = cleaned
        self.timeout = timeout
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .seconds(5)
        // Each document store on the store holds one connection for its watch.
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
        client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }

    /// Closes the client's connections, without waiting (so on any thread, an event loop's
    /// included: the last reference to a store may go there, with its watch). Later calls fail.
    func shutdown() {
        _ = client.shutdown()
    }

    /// The endpoints, for messages.
    var description: String { endpoints.joined(separator: ",") }

    /// POSTs `body` to `path` and returns the answer.
    /// - Parameters:
    ///   - path: the gateway path, `/v3/kv/range` say.
    ///   - body: the request.
    ///   - write: whether the request changes the cluster (then it is sent to another
    ///     endpoint only when it was never sent).
    /// - Throws: `KVDocsError` mapped from etcd's answer (``map(status:body:endpoint:)``);
    ///   `.unavailable` when no endpoint answered.
    func call(_ path: String, _ body: JSONValue, write: Bool = false) throws -> JSONValue {
        requests.withLock { $0 &+= 1 }
        let bytes = try body.canonicalBytes()
        let fault =
            write
            ? nextWriteFault.withLock { f -> WriteFault? in
                defer { f = nil }
                return f
            } : nil
        let lost = KVDocsError(
            .unavailable, "etcd at \(endpoints[0]) did not answer a write (injected): whether it was applied is unknown"
        )
        if fault == .requestLost { throw lost }
        if fault == .answerLost {
            _ = try call(path, body, write: true)
            throw lost
        }
        let first = current.withLock { $0 }
        var failures: [String] = []
        for step in 0..<endpoints.count {
            let index = (first + step) % endpoints.count
            let endpoint = endpoints[index]
            let response: HTTPClient.Response
            do {
                var request = try HTTPClient.Request(url: endpoint + path, method: .POST)
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(bytes)
                response = try client.execute(request: request, deadline: .now() + timeout).wait()
            } catch {
                let sent = !Self.neverSent(error)
                failures.append("\(endpoint): \(Self.describe(error))")
                if write && sent {
                    throw KVDocsError(
                        .unavailable,
                        "etcd at \(endpoint) did not answer a write (\(Self.describe(error))): whether it was applied is unknown"
                    )
                }
                continue
            }
            let answer = response.body.map { Array($0.readableBytesView) } ?? []
            if response.status.code == 200 {
                if index != first { current.withLock { $0 = index } }
                do {
                    return try JSONValue(parsing: answer)
                } catch {
                    throw KVDocsError(
                        .decoding, "etcd at \(endpoint) answered \(path) with text that is not JSON: \(error)")
                }
            }
            let error = Self.map(status: Int(response.status.code), body: answer, endpoint: endpoint)
            // No leader, or a member cut off from it: another member may have one. A write
            // refused that way was not applied, except a timeout, whose outcome is unknown.
            if error.kind == .unavailable {
                failures.append("\(endpoint): \(error.message)")
                if write && error.message.contains("request timed out") {
                    throw KVDocsError(.unavailable, "\(error.message): whether the write was applied is unknown")
                }
                continue
            }
            throw error
        }
        throw KVDocsError(
            .unavailable, "etcd is unavailable: \(failures.joined(separator: "; "))")
    }

    /// Whether `error` happened before the request could be sent (the connection failed).
    static func neverSent(_ error: any Error) -> Bool {
        if let error = error as? HTTPClientError {
            return error == .connectTimeout || error == .socksHandshakeTimeout
                || error == .tlsHandshakeTimeout
        }
        let text = String(reflecting: error)
        return text.contains("connectTimeout") || text.contains("NIOConnectionError")
            || text.contains("connectionRefused") || text.contains("Connection refused")
    }

    /// A short description of a transport error.
    static func describe(_ error: any Error) -> String {
        let text = String(reflecting: error)
        if text.contains("NIOConnectionError") || text.contains("Connection refused")
            || text.contains("connectionRefused")
        {
            return "connection refused"
        }
        return String(describing: error)
    }

    /// The `KVDocsError` for etcd's error answer (`{"error", "message", "code"}`, the gRPC
    /// status code), mapped on the code and the message, not the HTTP status.
    static func map(status: Int, body: [UInt8], endpoint: String) -> KVDocsError {
        let json = try? JSONValue(parsing: body)
        let message: String
        if case .string(let text)? = json?["error"] {
            message = text
        } else if case .string(let text)? = json?["message"] {
            message = text
        } else {
            message = "HTTP \(status): \(String(decoding: body.prefix(300), as: UTF8.self))"
        }
        let code: Int64? =
            switch json?["code"] {
            case .int(let n)?: n
            case .uint(let n)?: Int64(clamping: n)
            default: nil
            }
        if message.contains("required revision has been compacted") {
            return KVDocsError(.compacted, message)
        }
        if message.contains("request is too large") {
            return KVDocsError(.limitExceeded, "\(message) (the cluster's --max-request-bytes)")
        }
        if message.contains("too many operations in txn request") {
            return KVDocsError(.limitExceeded, "\(message) (the cluster's --max-txn-ops)")
        }
        if message.contains("database space exceeded") || code == 8 {
            return KVDocsError(
                .limitExceeded,
                "\(message): etcd's space quota is exhausted (alarm NOSPACE): compact, defragment and disarm the alarm (etcdctl alarm disarm)"
            )
        }
        if code == 14 || status == 503 {
            return KVDocsError(.unavailable, "etcd at \(endpoint): \(message)")
        }
        if code == 3 || code == 11 {
            return KVDocsError(.invalidArgument, "etcd at \(endpoint) refused the request: \(message)")
        }
        return KVDocsError(.ioError, "etcd at \(endpoint) answered HTTP \(status): \(message)")
    }
}
