import KVDocs

extension SyncEndpoint {
    func json(_ request: SyncRequest) throws -> JSONValue {
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

    func flag(_ request: SyncRequest, _ name: String) throws -> Bool {
        switch request.parameter(name) {
        case nil, "false": return false
        case "true": return true
        case let other?: throw SyncError.badRequest("\(name) must be true or false, not \(other)")
        }
    }

    func integer(_ request: SyncRequest, _ name: String) throws -> Int? {
        guard let text = request.parameter(name) else { return nil }
        guard let value = Int(text), value >= 0 else {
            throw SyncError.badRequest("\(name) must be a non-negative integer, not \(text)")
        }
        return value
    }
}
