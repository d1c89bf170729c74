import KVDocs

// The commands that check and rebuild a store's indexes.
extension CommandTable {
    static let verify = CommandDefinition<String?>(
        "verify", usage: "verify [COLLECTION]", summary: "check that indexes match documents", access: .read,
        completion: [.collection], parse: { s in s.word() }
    ) { session, collection in
        let report = try session.documents().verify(collection: collection)
        session.emit(
            [
                "ok": .bool(report.isClean), "documents": .int(Int64(report.documents)),
                "index_entries": .int(Int64(report.indexEntries)),
                "missing_entries": .int(Int64(report.missingEntries)),
                "dangling_entries": .int(Int64(report.danglingEntries)),
                "bad_documents": .int(Int64(report.badDocuments)),
                "problems": .array(report.problems.map { .string($0) })
            ],
            report.description)
        if !report.isClean { throw KVDocsError(.corruption, "verify found problems") }
    }

    @Sendable static func collectionIndex(_ s: inout LineScanner) throws -> ShellCommand.CollectionIndex {
        let collection = try s.expectWord("a collection name")
        return .init(collection: collection, index: s.word())
    }

    static let reindex = CommandDefinition<ShellCommand.CollectionIndex>(
        "reindex", usage: "reindex COLLECTION [INDEX]", summary: "rebuild indexes", access: .write,
        completion: [.collection, .index], parse: collectionIndex
    ) { session, arguments in
        try session.documents().reindex(collection: arguments.collection, index: arguments.index) {
            [progress = session.progress] p in
            progress?("building \(p.collection).\(p.index): \(p.done)/\(p.total)")
        }
        session.emit(["ok": true], "reindexed \(arguments.collection)\(arguments.index.map { "." + $0 } ?? "")")
    }

    static let optimize = CommandDefinition<ShellCommand.CollectionIndex>(
        "optimize", usage: "optimize COLLECTION [INDEX]",
        summary: "merge the segments of a collection's text indexes (or of one) into one, as FTS5's 'optimize' does",
        access: .write, completion: [.collection, .textIndex], parse: collectionIndex
    ) { session, arguments in
        let steps = try session.documents().optimize(collection: arguments.collection, index: arguments.index)
        session.emit(
            ["ok": true, "steps": .int(Int64(steps))],
            "optimized \(arguments.collection)\(arguments.index.map { "." + $0 } ?? "") (\(steps) merge step\(steps == 1 ? "" : "s"))"
        )
    }

    static let salvage = CommandDefinition<String?>(
        "salvage", usage: "salvage [QUARANTINE]",
        summary:
            "after a repair: move unreadable documents to a quarantine collection (default quarantine), rebuild every index, report what was lost",
        access: .write, target: .levelDBFiles, parse: { s in s.word() }
    ) { session, quarantine in try session.salvage(quarantine: quarantine ?? "quarantine") }
}

extension ShellSession {
    func salvage(quarantine: String) throws {
        let building: (DocumentStore.IndexBuildProgress) -> Void = { [progress] p in
            progress?("building \(p.collection).\(p.index): \(p.done)/\(p.total)")
        }
        let report: SalvageReport
        if store == nil, let storeDamage {
            // Salvage would fail on this damage as the open did: say what fixes it.
            guard DocumentStore.remedy(for: storeDamage) == .salvage else {
                throw KVDocsError(
                    .corruption,
                    "salvage cannot open the document layer (\(storeDamage.message)): \(ShellAdvice.storeDamage(storeDamage))"
                )
            }
            let (salvaged, salvageReport) = try DocumentStore.salvage(
                database: database, quarantine: quarantine, progress: building)
            store = salvaged
            self.storeDamage = nil
            report = salvageReport
        } else {
            report = try documents().salvage(quarantine: quarantine, progress: building)
        }
        let lost: [JSONValue] = report.quarantined.map { q in
            [
                "collection": .string(q.collection), "id": q.id ?? .null, "quarantine_id": .string(q.quarantineID),
                "reason": .string(q.reason)
            ]
        }
        emit(
            [
                "ok": .bool(report.verification.isClean), "kept": .int(Int64(report.kept.values.reduce(0, +))),
                "quarantine": .string(report.quarantine), "quarantined": .array(lost),
                "rebuilt_indexes": .array(report.rebuiltIndexes.map { .string($0) }),
                "catalog_repairs": .array(report.catalogRepairs.map { .string($0) })
            ],
            report.description)
        if !report.verification.isClean {
            throw KVDocsError(
                .corruption,
                "salvage finished but verify still finds problems: \(report.verification.missingEntries) missing and \(report.verification.danglingEntries) dangling entries, \(report.verification.badDocuments) bad documents"
            )
        }
    }
}
