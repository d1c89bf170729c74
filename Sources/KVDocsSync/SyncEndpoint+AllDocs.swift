import KVDocs

extension SyncEndpoint {
    /// CouchDB's `_all_docs`: the documents' winners by id, in one snapshot. With `keys` (a
    /// JSON list in the query, or in the body of a POST) a row per key, in their order:
    /// `error: not_found` for an id without revisions, `deleted: true` (and a `null` doc)
    /// for one whose winner is a tombstone. Without, every live document in id order,
    /// from `startkey` to `endkey` (`inclusive_end`, `descending`), after `skip`, up to
    /// `limit`. `include_docs` adds each winner's body.
    func allDocs(_ collection: DocumentCollection, _ request: SyncRequest) async throws -> SyncResponse {
        let includeDocs = try flag(request, "include_docs")
        let descending = try flag(request, "descending")
        let skip = try integer(request, "skip") ?? 0
        let limit = try integer(request, "limit")
        var listed: JSONValue?
        if let text = request.parameter("keys") {
            listed = (try? JSONValue(parsing: text)) ?? .string(text)
        } else if request.method == "POST", !request.body.isEmpty {
            listed = try json(request)["keys"]
        }
        var keys: [String]?
        if let listed {
            guard case .array(let items) = listed else { throw SyncError.badRequest("`keys` must be a list of ids") }
            guard items.count <= Self.maximumBatch else {
                throw SyncError(status: 413, error: "too_large", reason: "at most \(Self.maximumBatch) keys")
            }
            keys = try items.map {
                guard case .string(let id) = $0 else { throw SyncError.badRequest("`keys` must be a list of ids") }
                return id
            }
        }
        /// A key bound: a JSON string (`startkey="a"`), under either of CouchDB's spellings.
        func bound(_ names: String...) throws -> String? {
            guard let text = names.lazy.compactMap({ request.parameter($0) }).first else { return nil }
            guard case .string(let id)? = try? JSONValue(parsing: text) else {
                throw SyncError.badRequest("\(names[0]) must be a JSON string, not \(text)")
            }
            return id
        }
        let first = try bound("startkey", "start_key"), last = try bound("endkey", "end_key")
        let inclusiveEnd =
            try request.parameter("inclusive_end").map { text -> Bool in
                guard text == "true" || text == "false" else {
                    throw SyncError.badRequest("inclusive_end must be true or false, not \(text)")
                }
                return text == "true"
            } ?? true
        let name = collection.name
        let requested = keys
        let (total, offset, rows) = try await store.read { tx -> (Int, Int, [JSONValue]) in
            func row(_ id: String) throws -> JSONValue {
                guard let winner = try tx.revisionLeaves(name, id: id).first else {
                    return ["key": .string(id), "error": "not_found"]
                }
                var value: [(String, JSONValue)] = [("rev", .string(winner.revision.description))]
                if winner.deleted { value.append(("deleted", true)) }
                var fields: [(String, JSONValue)] = [
                    ("id", .string(id)), ("key", .string(id)), ("value", .object(JSONObject(value)))
                ]
                if includeDocs {
                    fields.append(("doc", winner.deleted ? .null : try tx.get(name, id: .string(id)) ?? .null))
                }
                return .object(JSONObject(fields))
            }
            let total = try tx.count(name)
            if let requested {
                let chosen = requested.dropFirst(skip).prefix(limit ?? Int.max)
                return (total, 0, try chosen.map(row))
            }
            var ids: [String] = []
            try tx.forEach(name) { document in
                if case .string(let id)? = document["_id"] { ids.append(id) }
            }
            ids.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            if descending { ids.reverse() }
            /// Whether `id` comes before `bound` in the listing's direction.
            func before(_ id: String, _ bound: String) -> Bool {
                descending
                    ? bound.utf8.lexicographicallyPrecedes(id.utf8) : id.utf8.lexicographicallyPrecedes(bound.utf8)
            }
            let start = first.map { bound in ids.firstIndex { !before($0, bound) } ?? ids.count } ?? 0
            var end = ids.count
            if let last {
                end = ids.firstIndex { id in before(last, id) || (!inclusiveEnd && id == last) } ?? ids.count
            }
            let range = ids[start..<max(start, end)]
            let chosen = range.dropFirst(skip).prefix(limit ?? Int.max)
            return (total, start + min(skip, range.count), try chosen.map(row))
        }
        return SyncResponse(
            200, ["total_rows": .int(Int64(total)), "offset": .int(Int64(offset)), "rows": .array(rows)])
    }
}
