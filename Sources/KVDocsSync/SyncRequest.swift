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
