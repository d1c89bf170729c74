import KVDocs

extension SyncEndpoint {
    func local(_ collection: DocumentCollection, _ id: String, _ request: SyncRequest) async throws
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
}
