import KVDocs

extension SyncEndpoint {
    func database(_ collection: DocumentCollection, _ request: SyncRequest) async throws -> SyncResponse {
        switch request.method {
        case "GET", "HEAD":
            let sequence = try await collection.async.updateSequence()
            return SyncResponse(
                200,
                [
                    "db_name": .string(collection.name), "update_seq": .int(sequence),
                    "committed_update_seq": .int(sequence), "instance_start_time": "0", "purge_seq": 0,
                    "compact_running": false, "disk_format_version": 5,
                    "doc_count": .int(Int64(try await store.fetch(.count(collection)))), "doc_del_count": 0,
                    // (`disk` as the replication protocol's example of this answer has it.)
                    "sizes": ["active": 0, "disk": 0, "external": 0, "file": 0]
                ])
        case "PUT":
            throw SyncError(
                status: 412, error: "file_exists", reason: "The database could not be created, the file already exists."
            )
        default:
            throw SyncError.methodNotAllowed("GET,HEAD,PUT")
        }
    }
}
