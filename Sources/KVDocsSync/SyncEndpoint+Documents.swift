import KVDocs

extension SyncEndpoint {
    func document(_ collection: DocumentCollection, _ id: String, _ request: SyncRequest) async throws
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
}
