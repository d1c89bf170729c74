import AsyncHTTPClient
import Foundation
import KVStorage
import KVSupport
import NIOCore

/// A watch of the keys under a prefix of an ``EtcdKeyValueStore`` (etcd's Watch, through the
/// gateway's streamed `/v3/watch`): calls its `onChange` after writes under the prefix, by
/// any process, and after each reconnection.
///
/// **Invariants.** The watch is created on the cluster before ``EtcdKeyValueStore/watch(prefix:onChange:)``
/// returns. `onChange` runs on a queue of the watch's, one call at a time; calls that pile up
/// while one runs are merged into one. A broken stream (a member gone, a compaction, the
/// server's timeout) is opened again on the next endpoint from the current revision, and
/// `onChange` is called then, since writes may have been missed meanwhile. No call starts
/// after ``cancel()``.
final class EtcdWatch: KeyValueWatch, @unchecked Sendable {
    // @unchecked Sendable: the mutable state is in `state`, a lock; the rest is immutable.
    private struct State {
        var cancelled = false
        var task: HTTPClient.Task<Void>?
        /// A call of `onChange` is queued and has not started.
        var queued = false
        /// The cluster has created the watch once.
        var created = false
        /// The failures before it did, one per endpoint tried.
        var failures: [String] = []
        var failure: KVDocsError?
    }
    private let state = Locked(State())
    private let store: EtcdKeyValueStore
    private let onChange: @Sendable () -> Void
    private let queue = DispatchQueue(label: "kvdocs.etcd.watch")

    /// The request body.
    private let body: [UInt8]
    /// Set once the cluster created the watch (or every endpoint failed to).
    private let created = DispatchSemaphore(value: 0)

    init(store: EtcdKeyValueStore, key: [UInt8], end: [UInt8], onChange: @escaping @Sendable () -> Void) throws {
        self.store = store
        self.onChange = onChange
        let request: JSONValue = [
            "create_request": ["key": .string(EtcdMessages.base64(key)), "range_end": .string(EtcdMessages.base64(end))]
        ]
        body = try request.canonicalBytes()
    }

    /// Opens the stream, returning once the cluster has created the watch.
    /// - Throws: `.unavailable` when no endpoint created it within the request timeout.
    func start() throws {
        connect(attempt: 0)
        let seconds = Double(store.connection.timeout.nanoseconds) / 1e9
        if created.wait(timeout: .now() + seconds) == .timedOut {
            cancel()
            throw KVDocsError(
                .unavailable, "etcd at \(store.connection.description) did not create a watch within \(seconds) s")
        }
        if let error = state.withLock({ $0.failure }) {
            cancel()
            throw error
        }
    }

    func cancel() {
        let task = state.withLock { s -> HTTPClient.Task<Void>? in
            s.cancelled = true
            return s.task
        }
        task?.cancel()
    }

    /// Queues a call of `onChange`, unless one is queued already.
    func notify() {
        let queue = state.withLock { s -> Bool in
            guard !s.cancelled, !s.queued else { return false }
            s.queued = true
            return true
        }
        guard queue else { return }
        self.queue.async { [self] in
            let run = state.withLock { s -> Bool in
                s.queued = false
                return !s.cancelled
            }
            if run { onChange() }
        }
    }

    /// The cluster created the watch: the first time, `start` returns; every time, the
    /// caller reads what it may have missed.
    func didCreate() {
        let first = state.withLock { s -> Bool in
            defer { s.created = true }
            return !s.created
        }
        if first { created.signal() }
        notify()
    }

    /// Opens the stream on the endpoint after the last one tried; when it ends or breaks,
    /// opens it again a moment later, until cancelled or the store closes.
    private func connect(attempt: Int) {
        let endpoints = store.connection.endpoints
        let endpoint = endpoints[attempt % endpoints.count]
        let task: HTTPClient.Task<Void>
        do {
            try store.checkOpen()
            var request = try HTTPClient.Request(url: endpoint + "/v3/watch", method: .POST)
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(body)
            task = store.connection.client.execute(request: request, delegate: WatchStream(watch: self))
        } catch {
            failed("\(endpoint): \(error)", attempt: attempt)
            return
        }
        let go = state.withLock { s -> Bool in
            s.task = task
            return !s.cancelled
        }
        if !go { task.cancel() }
        task.futureResult.whenComplete { [self] result in
            switch result {
            case .success: failed("\(endpoint): the stream ended", attempt: attempt)
            case .failure(let error): failed("\(endpoint): \(error)", attempt: attempt)
            }
        }
    }

    /// After a stream that failed or ended: opens the next, or, before the watch was ever
    /// created and once every endpoint failed, gives up and lets `start` throw.
    private func failed(_ reason: String, attempt: Int) {
        let next = state.withLock { s -> Bool in
            guard !s.cancelled else { return false }
            if !s.created {
                s.failures.append(reason)
                if s.failures.count >= store.connection.endpoints.count {
                    s.failure = KVDocsError(
                        .unavailable, "etcd could not create a watch: \(s.failures.joined(separator: "; "))")
                    return false
                }
            }
            return true
        }
        if state.withLock({ $0.failure != nil && !$0.created }) {
            created.signal()
            return
        }
        guard next, (try? store.checkOpen()) != nil else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { [self] in connect(attempt: attempt + 1) }
    }
}

/// The response of a watch: lines of JSON, `{"result": …}` each, read as they come. An
/// error answer has no `result`: its stream ends without creating the watch, and the watch
/// tries the next endpoint.
private final class WatchStream: HTTPClientResponseDelegate, @unchecked Sendable {
    // @unchecked Sendable: used on the event loop of its request only.
    typealias Response = Void
    private let watch: EtcdWatch
    private var pending: [UInt8] = []

    init(watch: EtcdWatch) { self.watch = watch }

    func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        pending += buffer.readableBytesView
        while let newline = pending.firstIndex(of: 0x0A) {
            let line = Array(pending[..<newline])
            pending.removeFirst(newline + 1)
            guard let message = try? JSONValue(parsing: line), let result = message["result"] else { continue }
            if result["created"] == .bool(true) { watch.didCreate() }
            if case .array(let events)? = result["events"], !events.isEmpty { watch.notify() }
            // Cancelled by the cluster (a compaction): end, and the watch opens another.
            if result["canceled"] == .bool(true) { task.cancel() }
        }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didFinishRequest(task: HTTPClient.Task<Void>) throws {}
}
