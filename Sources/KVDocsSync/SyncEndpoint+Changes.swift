import KVDocs

extension SyncEndpoint {
    func changes(_ collection: DocumentCollection, _ request: SyncRequest) async throws -> SyncResponse {
        guard request.method == "GET" || request.method == "POST" else { throw SyncError.methodNotAllowed("GET,POST") }
        var since: Int64 = 0
        if let text = request.parameter("since") {
            if text == "now" {
                since = try await collection.async.updateSequence()
            } else if let parsed = try? LocalPeer.sequence((try? JSONValue(parsing: text)) ?? .string(text)) {
                // A number, or a number in a JSON string (how a replicator echoes `seq`).
                since = parsed
            } else {
                throw SyncError.badRequest("since must be a sequence number or \"now\", not \(text)")
            }
        }
        let limit = try integer(request, "limit")
        let style: ChangesStyle
        switch request.parameter("style") ?? "main_only" {
        case "main_only": style = .mainOnly
        case "all_docs": style = .allDocs
        case let other: throw SyncError.badRequest("style must be main_only or all_docs, not \(other)")
        }
        var documentIDs: Set<String>?
        if let filter = request.parameter("filter") {
            guard filter == "_doc_ids" else {
                throw SyncError.badRequest("the only filter supported is _doc_ids, not \(filter)")
            }
            var ids: JSONValue?
            if let text = request.parameter("doc_ids") {
                ids = try? JSONValue(parsing: text)
            } else if request.method == "POST" {
                ids = try json(request)["doc_ids"]
            }
            guard case .array(let items)? = ids else {
                throw SyncError.badRequest("filter=_doc_ids needs doc_ids, a list")
            }
            documentIDs = Set(
                try items.map {
                    guard case .string(let id) = $0 else { throw SyncError.badRequest("doc_ids must hold strings") }
                    return id
                })
        }
        let includeDocs = try flag(request, "include_docs")
        let feed = request.parameter("feed") ?? "normal"
        if feed == "continuous" {
            return try continuousChanges(
                collection, request, since: since, limit: limit, style: style, documentIDs: documentIDs,
                includeDocs: includeDocs)
        }
        var page = try await collection.async.changes(
            since: since, limit: limit, style: style, documentIDs: documentIDs)
        switch feed {
        case "normal": break
        case "longpoll":
            if page.results.isEmpty {
                let timeout = min(try integer(request, "timeout") ?? 60_000, Self.maximumTimeout)
                _ = try await collection.waitForChanges(since: since, timeout: .milliseconds(timeout))
                page = try await collection.async.changes(
                    since: since, limit: limit, style: style, documentIDs: documentIDs)
            }
        default:
            throw SyncError.badRequest("feed must be normal, longpoll or continuous, not \(feed)")
        }
        let results = try page.results.map { try Self.row($0, collection, includeDocs: includeDocs) }
        return SyncResponse(200, ["results": .array(results), "last_seq": .int(page.lastSequence), "pending": 0])
    }

    /// One row of `_changes`: `seq`, `id`, `changes` (the leaves asked for), `deleted`,
    /// and with `include_docs` the winner (`null` when deleted).
    static func row(_ change: ReplicatedChange, _ collection: DocumentCollection, includeDocs: Bool) throws
        -> JSONValue
    {
        var row: [(String, JSONValue)] = [
            ("seq", .int(change.sequence)), ("id", .string(change.id)),
            ("changes", .array(change.leaves.map { ["rev": .string($0.description)] }))
        ]
        if change.deleted { row.append(("deleted", true)) }
        if includeDocs {
            row.append(("doc", try collection.get(id: .string(change.id)) ?? .null))
        }
        return .object(JSONObject(row))
    }

    /// `_changes?feed=continuous`: a line per change as changes come, until `limit` rows,
    /// or until `timeout` passes without a change; with `heartbeat` (milliseconds, or
    /// `true` for 60 s) an empty line after each such period instead, for as long as the
    /// client listens. The last line is `{"last_seq": N, "pending": 0}`.
    private func continuousChanges(
        _ collection: DocumentCollection, _ request: SyncRequest, since first: Int64, limit: Int?,
        style: ChangesStyle, documentIDs: Set<String>?, includeDocs: Bool
    ) throws -> SyncResponse {
        let heartbeat: Int?
        switch request.parameter("heartbeat") {
        case nil, "false": heartbeat = nil
        case "true": heartbeat = 60_000
        case let text?:
            guard let value = Int(text), value > 0 else {
                throw SyncError.badRequest("heartbeat must be a positive number of milliseconds or true, not \(text)")
            }
            heartbeat = min(value, Self.maximumTimeout)
        }
        let timeout = min(try integer(request, "timeout") ?? 60_000, Self.maximumTimeout)
        let stream = AsyncThrowingStream<[UInt8], any Error> { continuation in
            let task = Task {
                do {
                    var since = first
                    var sent = 0
                    while limit.map({ sent < $0 }) ?? true {
                        let page = try await collection.async.changes(
                            since: since, limit: limit.map { $0 - sent }, style: style, documentIDs: documentIDs)
                        for change in page.results {
                            continuation.yield(
                                try Self.row(change, collection, includeDocs: includeDocs).canonicalBytes() + [0x0A])
                        }
                        sent += page.results.count
                        since = max(since, page.lastSequence)
                        guard page.results.isEmpty else { continue }
                        let latest = try await collection.waitForChanges(
                            since: since, timeout: .milliseconds(heartbeat ?? timeout))
                        if latest <= since {
                            guard heartbeat != nil else { break }
                            continuation.yield([0x0A])
                        }
                    }
                    continuation.yield(
                        try JSONValue.object(["last_seq": .int(since), "pending": 0]).canonicalBytes() + [0x0A])
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
        return SyncResponse(status: 200, stream: stream)
    }
}
