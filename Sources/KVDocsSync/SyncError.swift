import KVDocs

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
