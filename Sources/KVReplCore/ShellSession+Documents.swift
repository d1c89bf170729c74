import Foundation
import KVDocs

extension ShellSession {
    /// The markers of an interactive search's bold matches (private-use characters).
    static let boldOn = "\u{E000}", boldOff = "\u{E001}"

    func executeDocument(_ command: ShellCommand) throws {
        switch command {
        case .schema:
            let schema = try documents().schema
            let value = try JSONValue(parsing: schema.jsonData())
            emit(value, ShellDisplay.prettyJSON(value))
        case .schemaLoad(let file):
            let schema = try DocumentSchema(contentsOfFile: file)
            if let store {
                try store.apply(schema) { [progress] p in
                    progress?("building \(p.collection).\(p.index): \(p.done)/\(p.total)")
                }
            } else {
                // Also replaces a stored schema that cannot be read (Advice.storeDamage).
                store = try DocumentStore(database: database, schema: schema)
                storeDamage = nil
            }
            emit(
                ["ok": true, "collections": .array(schema.collections.keys.sorted().map { .string($0) })],
                "schema stored: \(schema.collections.keys.sorted().joined(separator: ", "))")
        case .collections:
            let store = try documents()
            leadingColumns = ["name", "primary_key", "documents"]
            for (name, c) in try store.schema.collections.sorted(by: { $0.key < $1.key }) {
                let count = try reading { try $0.count(name) }
                emitRow(
                    ["name": .string(name), "primary_key": .string(c.primaryKey), "documents": .int(Int64(count))],
                    "\(name) (primary key \(c.primaryKey), \(count) documents)")
            }
        case .indexes(let collection):
            let c = try documents().schema.collection(collection)
            leadingColumns = ["name", "kind", "fields"]
            for index in c.indexes {
                emitRow(
                    [
                        "name": .string(index.name), "fields": .array(index.fields.map { .string($0.description) }),
                        "unique": .bool(index.unique),
                        "sparse": .bool(index.unique || index.sparse), "kind": "secondary"
                    ],
                    "\(index.name): \(index.fields.map(\.description).joined(separator: ", "))\(index.unique ? " (unique)" : index.sparse ? " (sparse)" : "")"
                )
            }
            for geo in c.geo {
                emitRow(
                    ["name": .string(geo.name), "fields": [.string(geo.field.description)], "kind": "geo"],
                    "\(geo.name): geo(\(geo.field))")
            }
            for text in c.text {
                let tokenizer =
                    text.tokenizer == .trigram && text.caseSensitive
                    ? "trigram case_sensitive 1" : text.tokenizer.rawValue
                emitRow(
                    [
                        "name": .string(text.name), "fields": .array(text.fields.map { .string($0.description) }),
                        "tokenizer": .string(tokenizer),
                        "detail": .string(text.detail.rawValue), "kind": "text"
                    ],
                    "\(text.name): text(\(text.fields.map(\.description).joined(separator: ", ")); \(tokenizer)\(text.detail == .full ? "" : "; detail \(text.detail.rawValue)"))"
                )
            }
        case .insert(let collection, let document), .upsert(let collection, let document):
            let c = try documents().collection(collection)
            let change: DocumentChange
            if case .insert = command {
                change = try c.insert(document, sync: sync)
            } else {
                change = try c.upsert(document, sync: sync)
            }
            emit(
                [
                    "ok": true, "id": change.id, "sequence": .int(change.sequence),
                    "operation": .string(change.operation.rawValue)
                ],
                "\(change.operation.rawValue) \(change.id) (sequence \(change.sequence))")
        case .doc(let collection, let id):
            guard let document = try reading({ try $0.get(collection, id: id) }) else {
                throw KVDocsError(.notFound, "collection \"\(collection)\" has no document \(id)")
            }
            leadingColumns = [try documents().schema.collection(collection).primaryKey]
            emitRow(document, interactive ? ShellDisplay.prettyJSON(document) : ShellDisplay.compactJSON(document))
        case .remove(let collection, let id):
            guard try documents().collection(collection).delete(id: id, sync: sync) else {
                throw KVDocsError(.notFound, "collection \"\(collection)\" has no document \(id)")
            }
            emit(["ok": true, "id": id], "removed \(id)")
        case .importFile(let collection, let file):
            let count = try documents().importJSONLines(into: collection, path: file, sync: sync) { [progress] p in
                let done = p.totalBytes > 0 ? " (\(min(100, p.bytes * 100 / p.totalBytes))%)" : ""
                progress?(
                    p.validating
                        ? "checking \(file): \(p.lines) lines\(done)"
                        : "importing \(file): \(p.documents) documents\(done)")
            }
            emit(["ok": true, "documents": .int(Int64(count))], "imported \(count) documents into \(collection)")
        case .exportFile(let collection, let file):
            let count = try reading { try $0.exportJSONLines(from: collection, to: file) }
            emit(
                ["ok": true, "documents": .int(Int64(count)), "file": .string(file)],
                "exported \(count) documents to \(file)")
        case .find(let collection, let query):
            // Streamed from one snapshot: a result of any size prints in bounded memory.
            leadingColumns = [try documents().schema.collection(collection).primaryKey]
            let interactive = interactive
            try reading { tx in
                try streamRows(text: { interactive ? ShellDisplay.prettyJSON($0) : ShellDisplay.compactJSON($0) }) {
                    row in
                    try tx.forEach(collection, query, row)
                }
            }
        case .count(let collection, let query):
            let n = try reading { try $0.count(collection, query) }
            emitRow(["count": .int(Int64(n))], "\(n)")
        case .explain(let collection, let query):
            let plan = try documents().collection(collection).explain(query)
            emit(
                [
                    "collection": .string(collection), "index": plan.index.map { .string($0) } ?? .null,
                    "ranges": .array(plan.ranges.map { .string(QueryPlan.describe($0)) }),
                    "range_conditions": .array(plan.rangeConditions.map { .string($0.description) }),
                    "filter": .array(plan.filter.map { .string($0.description) }),
                    "ordered_by_scan": .bool(plan.orderedByScan), "covering": .bool(plan.covering),
                    "scanned_documents": plan.scannedDocuments.map { .int(Int64($0)) } ?? .null,
                    "suggestion": plan.suggestion.map { .string($0) } ?? .null,
                    "plan": .string(plan.description)
                ],
                plan.description)
        case .search(let collection, let text, let limit, let highlight):
            // A format's rows are the documents hit, with their scores (as near's are with
            // their distances); text and --json print ids and scores.
            let rowsHaveDocuments = format != nil && !json
            // Interactively, matches are bold. The highlighter wraps them in two private-use
            // characters, turned into the terminal's bold on and off only after the stored
            // text around them is escaped (a stored U+E000 turns bold on, nothing worse).
            let bold = interactive && !json && format == nil
            let options = SearchOptions(
                limit: limit,
                highlight: highlight ? .init(open: bold ? Self.boldOn : "[", close: bold ? Self.boldOff : "]") : nil,
                includeDocuments: rowsHaveDocuments)
            let primaryKey = try documents().schema.collection(collection).primaryKey
            leadingColumns = [primaryKey, "score"]
            for hit in try reading({ try $0.search(collection, text, options: options) }) {
                var o: JSONObject = ["id": hit.id, "score": .double(hit.score)]
                if highlight { o["highlights"] = .object(JSONObject(hit.highlights.mapValues { .string($0) })) }
                var row: JSONObject = [primaryKey: hit.id]
                if case .object(let fields) = hit.document { row = fields }
                row["score"] = .double(hit.score)
                if highlight { row["highlights"] = o["highlights"] }
                let fields = hit.highlights.sorted { $0.key < $1.key }.filter { !$0.value.isEmpty }
                    .map { "  \(ShellDisplay.escaped($0.key)): \(ShellDisplay.escaped($0.value))" }
                let text = (["\(ShellDisplay.compactJSON(hit.id))  \(String(format: "%.6f", hit.score))"] + fields)
                    .joined(
                        separator: "\n")
                if bold {
                    out(
                        text.replacingOccurrences(of: Self.boldOn, with: "\u{1B}[1m").replacingOccurrences(
                            of: Self.boldOff, with: "\u{1B}[0m"))
                } else {
                    emitRow(.object(o), text, row: .object(row))
                }
            }
        case .near(let near):
            let hits = try reading {
                try $0.near(
                    near.collection, near.center, within: near.within, query: near.query, index: near.index,
                    includeDocuments: !json)
            }
            let primaryKey = try documents().schema.collection(near.collection).primaryKey
            leadingColumns = [primaryKey, "distance"]
            for hit in hits {
                var row: JSONObject = [primaryKey: hit.id]
                if case .object(let fields) = hit.document { row = fields }
                // Shown to 0.1 m in table, line and csv; json and jsonl keep the exact value.
                let exact = format == .json || format == .jsonl
                row["distance"] = .double(exact ? hit.distance : (hit.distance * 10).rounded() / 10)
                emitRow(
                    ["id": hit.id, "distance": .double(hit.distance)],
                    "\(ShellDisplay.compactJSON(hit.id))  \(ShellDisplay.metres(hit.distance))  \(ShellDisplay.compactJSON(hit.document))",
                    row: .object(row))
            }
        case .explainNear(let near):
            let plan = try reading {
                try $0.explainNear(
                    near.collection, near.center, within: near.within, query: near.query, index: near.index)
            }
            let rings: [JSONValue] = plan.rings.map { ring in
                [
                    "radius": .double(ring.radius), "cells": .array(ring.cells.map { .string($0) }),
                    "ranges": .array(ring.ranges.map { .string($0) })
                ]
            }
            emit(
                [
                    "collection": .string(plan.collection), "index": .string(plan.index), "center": plan.center.json,
                    "within": plan.within.map { .double($0) } ?? .null, "rings": .array(rings),
                    "cells": .array(plan.rings.flatMap { $0.cells.map { .string($0) } }),
                    "ranges": .array(plan.rings.flatMap { $0.ranges.map { .string($0) } }),
                    "filter": .array(plan.filter.map { .string($0.description) }),
                    "candidates": .int(Int64(plan.candidates)), "hits": .int(Int64(plan.hits)),
                    "plan": .string(plan.description)
                ],
                plan.description)
        case .terms(let collection, let index, let prefix, let limit):
            let (stats, terms) = try reading { tx in
                (
                    try tx.textStatistics(collection, index: index),
                    try tx.textTerms(collection, index: index, prefix: prefix, limit: limit)
                )
            }
            if !json {
                emit(
                    .null,
                    "\(stats.documents) documents, \(stats.tokens) tokens (\(String(format: "%.1f", stats.averageLength)) per document)"
                )
            }
            leadingColumns = ["term", "documents"]
            for t in terms {
                emitRow(
                    ["term": .string(t.term), "documents": .int(Int64(t.documents))],
                    "\(ShellDisplay.escaped(t.term))  \(t.documents)")
            }
        case .verify(let collection):
            let report = try documents().verify(collection: collection)
            emit(
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
        case .reindex(let collection, let index):
            try documents().reindex(collection: collection, index: index) { [progress] p in
                progress?("building \(p.collection).\(p.index): \(p.done)/\(p.total)")
            }
            emit(["ok": true], "reindexed \(collection)\(index.map { "." + $0 } ?? "")")
        case .optimize(let collection, let index):
            let steps = try documents().optimize(collection: collection, index: index)
            emit(
                ["ok": true, "steps": .int(Int64(steps))],
                "optimized \(collection)\(index.map { "." + $0 } ?? "") (\(steps) merge step\(steps == 1 ? "" : "s"))")
        case .salvage(let quarantine):
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
                    database: database, quarantine: quarantine ?? "quarantine", progress: building)
                store = salvaged
                self.storeDamage = nil
                report = salvageReport
            } else {
                report = try documents().salvage(quarantine: quarantine ?? "quarantine", progress: building)
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
        case .layers:
            guard let layers else {
                throw KVDocsError(.invalidArgument, "this session has no layers: open it with --base BASEDB")
            }
            let (baseBytes, userBytes) = layers.sizes()
            emit(
                [
                    "base": .string(layers.basePath), "base_bytes": .int(Int64(baseBytes)),
                    "user": .string(layers.userPath), "user_bytes": .int(Int64(userBytes))
                ],
                "base: \(layers.basePath) (\(baseBytes) bytes, read-only)\nuser: \(layers.userPath) (\(userBytes) bytes)"
            )
        case .replaceBase(let newBase, let allowingUnrelated):
            guard let layers else {
                throw KVDocsError(.invalidArgument, "this session has no layers: open it with --base BASEDB")
            }
            try layers.replaceBase(with: newBase, allowingUnrelatedBase: allowingUnrelated) { [progress] p in
                progress?("\(p.phase): \(p.done)/\(p.total)")
            }
            emit(["ok": true, "base": .string(layers.basePath)], "the base is now \(layers.basePath)")
        case .backup(let directory):
            let report = try layers.map { try $0.backup(to: directory) } ?? database.backup(to: directory)
            emit(
                [
                    "ok": true, "path": .string(report.path), "entries": .int(Int64(report.entries)),
                    "bytes": .int(Int64(report.bytes))
                ],
                "backed up \(report.entries) entries (\(report.bytes) bytes) to \(report.path)")
        case .changes(let since, let limit):
            leadingColumns = ["sequence", "operation", "collection", "id"]
            for c in try documents().changes(since: since, limit: limit) {
                emitRow(
                    [
                        "sequence": .int(c.sequence), "collection": .string(c.collection), "id": c.id,
                        "operation": .string(c.operation.rawValue)
                    ], c.description)
            }
        case .conflicts(let collection):
            leadingColumns = ["id", "winner", "conflicts"]
            for c in try documents().collection(collection).conflicts() {
                emitRow(
                    [
                        "id": .string(c.id), "winner": .string(c.winner.description),
                        "conflicts": .array(c.conflicts.map { .string($0.description) }),
                        "deleted_conflicts": .array(c.deletedConflicts.map { .string($0.description) })
                    ],
                    "\(JSONValue.string(c.id).compactDescription) \(c.winner) conflicts: \(c.conflicts.map(\.description).joined(separator: ", "))"
                )
            }
        case .revs(let collection, let idValue):
            guard case .string(let id) = idValue else {
                throw KVDocsError(
                    .invalidArgument, "a replicated document's id is a string, not \(idValue.compactDescription)")
            }
            let store = try documents()
            let leaves = try store.collection(collection).revisionLeaves(id: id)
            guard !leaves.isEmpty else {
                throw KVDocsError(
                    .notFound, "collection \"\(collection)\" has no document \(idValue.compactDescription)")
            }
            leadingColumns = ["rev", "winner", "deleted", "history"]
            for (i, leaf) in leaves.enumerated() {
                let history =
                    try store.read { try $0.revisionHistory(collection, id: id, revision: leaf.revision) } ?? [
                        leaf.revision
                    ]
                emitRow(
                    [
                        "rev": .string(leaf.revision.description), "winner": .bool(i == 0),
                        "deleted": .bool(leaf.deleted),
                        "history": .array(history.map { .string($0.description) })
                    ],
                    "\(leaf.revision)\(i == 0 ? " (winner)" : "")\(leaf.deleted ? " deleted" : ""): \(history.map(\.description).joined(separator: " <- "))"
                )
            }
        case .replicate(let source, let target, let continuous):
            guard let syncCommands else {
                throw KVDocsError(.notSupported, "this shell has no sync commands (it was built without KVDocsSync)")
            }
            let summary = try syncCommands.replicate(
                source: source, target: target, continuous: continuous, store: store, readOnly: readOnly
            ) { json, text in
                if interactive, let progress {
                    progress(text)
                } else if continuous {
                    emit(json, text)
                    // A program reading the reports through a pipe sees each as it comes.
                    fflush(nil)
                }
            }
            emit(summary.json, summary.text)
        case .serve(let port, let bind, let user, let passwordFile):
            guard let syncCommands else {
                throw KVDocsError(.notSupported, "this shell has no sync commands (it was built without KVDocsSync)")
            }
            let summary = try syncCommands.serve(
                port: port, bind: bind, user: user, passwordFile: passwordFile, store: try documents()
            ) { json, text in
                emit(json, text)
                // A program reading through a pipe learns the port at once.
                fflush(nil)
            }
            emit(summary.json, summary.text)
        case .resolve(let collection, let idValue, let revText):
            guard case .string(let id) = idValue else {
                throw KVDocsError(
                    .invalidArgument, "a replicated document's id is a string, not \(idValue.compactDescription)")
            }
            let keep = try DocumentRevision.parse(revText)
            let tombstones = try documents().collection(collection).resolve(id: id, keep: keep, sync: sync)
            emit(
                [
                    "ok": true, "id": idValue, "kept": .string(keep.description),
                    "tombstones": .array(tombstones.map { .string($0.description) })
                ],
                "resolved \(idValue.compactDescription): kept \(keep), \(tombstones.count) tombstone\(tombstones.count == 1 ? "" : "s")"
            )
        default:
            break
        }
    }

    /// Completion candidates for the word being typed (`text`) given the line so far.
    public func completions(for text: String, line: String) -> [String] {
        let words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        let index = line.hasSuffix(" ") || words.isEmpty ? words.count : words.count - 1
        var candidates: [String] = []
        if index == 0 {
            candidates = ShellCommand.names
        } else {
            let command = words[0].lowercased()
            // Completion offers what it can: a schema that cannot be read offers no names
            // (the command itself then reports the error).
            let schema = store.flatMap { try? $0.schema }
            let collections = schema?.collections.keys.sorted() ?? []
            switch (command, index) {
            case ("find", 1), ("count", 1), ("insert", 1), ("upsert", 1), ("doc", 1), ("remove", 1), ("indexes", 1),
                ("import", 1), ("export", 1), ("search", 1), ("near", 1), ("terms", 1), ("verify", 1), ("reindex", 1),
                ("optimize", 1),
                ("conflicts", 1), ("resolve", 1), ("revs", 1), ("replicate", 1), ("replicate", 2):
                candidates = collections
            case ("sync", 1), ("timer", 1): candidates = ["on", "off"]
            case ("format", 1), ("mode", 1): candidates = OutputFormat.allCases.map(\.rawValue) + ["text"]
            case ("explain", 1): candidates = ["find", "near"]
            case ("explain", 2): candidates = collections
            case ("terms", 2), ("optimize", 2):
                if let c = schema?.collections[words[1]] { candidates = c.text.map(\.name) }
            case ("reindex", 2), ("indexes", 2):
                if let c = schema?.collections[words[1]] {
                    candidates = c.indexes.map(\.name) + c.text.map(\.name) + c.geo.map(\.name)
                }
            case ("get", _), ("del", _), ("scan", _), ("put", 1), ("delrange", _):
                candidates =
                    (try? database.entries(.prefix(text), limit: 50, options: readOptions).collect()
                        .compactMap { ShellDisplay.printable($0.key) }.filter { !$0.contains(" ") }) ?? []
                if command == "scan" || command == "delrange" {
                    candidates += ["--from", "--to", "--reverse", "--limit", "--keys-only", "--count"]
                }
            case ("help", 1): candidates = ShellCommand.names
            case ("near", _):
                candidates = ["within", "using", "where", "and", "limit", "offset"]
                if let c = schema?.collections[words[1]], words.last?.lowercased() == "using" {
                    candidates = c.geo.map(\.name)
                }
            case ("find", _), ("count", _):
                candidates = ["where", "and", "order", "by", "asc", "desc", "limit", "offset", "prefix", "in"]
            default: break
            }
        }
        return candidates.filter { $0.hasPrefix(text) }
    }
}
