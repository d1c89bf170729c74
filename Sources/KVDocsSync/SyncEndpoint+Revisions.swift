import KVDocs

extension SyncEndpoint {
    // MARK: - _revs_diff

    func revsDiff(_ collection: DocumentCollection, _ request: SyncRequest) async throws -> SyncResponse {
        guard case .object(let members) = try json(request) else {
            throw SyncError.badRequest("the body must be an object of document ids and revision lists")
        }
        guard members.count <= Self.maximumBatch else {
            throw SyncError(
                status: 413, error: "too_large", reason: "at most \(Self.maximumBatch) documents per _revs_diff")
        }
        var offered: [String: [DocumentRevision]] = [:]
        var total = 0
        for (id, value) in members {
            guard case .array(let items) = value else {
                throw SyncError.badRequest("the revisions of \(JSONValue.string(id).compactDescription) must be a list")
            }
            total += items.count
            guard total <= Self.maximumRevisions else {
                throw SyncError(
                    status: 413, error: "too_large", reason: "at most \(Self.maximumRevisions) revisions per _revs_diff"
                )
            }
            offered[id] = try items.map(Self.revision)
        }
        let lacking = try await collection.async.revsDiff(offered)
        var answer: [(String, JSONValue)] = []
        for (id, entry) in lacking where !entry.missing.isEmpty {
            var fields: [(String, JSONValue)] = [("missing", .array(entry.missing.map { .string($0.description) }))]
            if !entry.possibleAncestors.isEmpty {
                fields.append(("possible_ancestors", .array(entry.possibleAncestors.map { .string($0.description) })))
            }
            answer.append((id, .object(JSONObject(fields))))
        }
        return SyncResponse(200, .object(JSONObject(answer)))
    }

    static func revision(_ value: JSONValue) throws -> DocumentRevision {
        guard case .string(let text) = value, let revision = DocumentRevision(text) else {
            throw SyncError.badRequest("Invalid rev format")
        }
        return revision
    }

    // MARK: - _bulk_docs

    func bulkDocs(_ collection: DocumentCollection, _ request: SyncRequest) async throws -> SyncResponse {
        let body = try json(request)
        guard case .array(let items)? = body["docs"] else {
            throw SyncError.badRequest("POST body must include `docs` parameter.")
        }
        guard items.count <= Self.maximumBatch else {
            throw SyncError(
                status: 413, error: "too_large", reason: "at most \(Self.maximumBatch) documents per _bulk_docs")
        }
        var newEdits = true
        if let value = body["new_edits"] {
            guard case .bool(let b) = value else { throw SyncError.badRequest("new_edits must be a boolean") }
            newEdits = b
        }
        guard !newEdits else { return try await interactiveEdits(collection, items) }
        // Every document is checked first; those refused are answered, the others written
        // in one batch.
        var errors: [JSONValue] = []
        var accepted: [ReplicatedDocument] = []
        for item in items {
            do {
                accepted.append(try ReplicatedDocument(json: item))
            } catch {
                errors.append(Self.failure(id: error.id, rev: error.revision?.description, error.error, error.reason))
            }
        }
        for result in try await collection.async.bulkWriteReplicated(accepted) {
            if case .rejected(let id, let revision, let error, let reason) = result {
                errors.append(Self.failure(id: id, rev: revision?.description, error, reason))
            }
        }
        return SyncResponse(201, .array(errors))
    }

    static func failure(id: String?, rev: String?, _ error: String, _ reason: String) -> JSONValue {
        var fields: [(String, JSONValue)] = []
        if let id { fields.append(("id", .string(id))) }
        if let rev { fields.append(("rev", .string(rev))) }
        fields.append(("error", .string(error)))
        fields.append(("reason", .string(reason)))
        return .object(JSONObject(fields))
    }

    /// `_bulk_docs` without `new_edits: false`: each document an edit of the winner its
    /// `_rev` names (or a new document), each on its own, as CouchDB does.
    private func interactiveEdits(_ collection: DocumentCollection, _ items: [JSONValue]) async throws -> SyncResponse {
        var answers: [JSONValue] = []
        for item in items {
            guard case .object(let fields) = item, case .string(let id)? = fields["_id"] else {
                answers.append(Self.failure(id: nil, rev: nil, "bad_request", "each document needs an _id string"))
                continue
            }
            do {
                let (revision, _) = try await collection.async.save(.object(fields))
                answers.append(["ok": true, "id": .string(id), "rev": .string(revision.description)])
            } catch let error as KVDocsError {
                let failure = Self.response(for: error)
                answers.append(Self.failure(id: id, rev: nil, failure.error, failure.reason))
            }
        }
        return SyncResponse(201, .array(answers))
    }

    // MARK: - _bulk_get and open_revs

    func bulkGet(_ collection: DocumentCollection, _ request: SyncRequest) async throws -> SyncResponse {
        guard case .array(let items)? = try json(request)["docs"] else {
            throw SyncError.badRequest("POST body must include `docs` parameter.")
        }
        guard items.count <= Self.maximumBatch else {
            throw SyncError(
                status: 413, error: "too_large", reason: "at most \(Self.maximumBatch) documents per _bulk_get")
        }
        let revs = try flag(request, "revs")
        let latest = try flag(request, "latest")
        var requests: [(id: String, revision: DocumentRevision?)] = []
        for item in items {
            guard case .string(let id)? = item["id"] else { throw SyncError.badRequest("each entry needs an id") }
            requests.append((id, try item["rev"].map(Self.revision)))
        }
        let answers = try await collection.async.bulkGet(requests, latest: latest, withHistory: revs)
        var results: [JSONValue] = []
        for (request, answer) in zip(requests, answers) {
            var docs: [JSONValue] = answer.results.map {
                switch $0 {
                case .ok(let document): ["ok": document.json]
                case .missing(let revision):
                    [
                        "error": [
                            "id": .string(request.id), "rev": .string(revision.description), "error": "not_found",
                            "reason": "missing"
                        ]
                    ]
                }
            }
            if docs.isEmpty {
                docs = [
                    [
                        "error": [
                            "id": .string(request.id), "rev": .string(request.revision?.description ?? "undefined"),
                            "error": "not_found", "reason": "missing"
                        ]
                    ]
                ]
            }
            results.append(["id": .string(request.id), "docs": .array(docs)])
        }
        return SyncResponse(200, ["results": .array(results)])
    }
}
