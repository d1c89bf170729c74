import KVDocs

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
