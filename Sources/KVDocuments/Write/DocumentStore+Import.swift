import Foundation
import KVSupport

/// A line that is not valid JSON (its parser's error), told apart from the line reader's errors.
private struct MalformedLine: Error {
    let error: KVDocsError
}

extension DocumentStore {
    /// How ``importJSONLines(into:path:mode:batchSize:maximumLineLength:sync:progress:)`` treats existing ids.
    public enum ImportMode: Sendable {
        /// An existing id is an error.
        case insert
        /// An existing document is replaced.
        case upsert
    }

    /// Progress of an import: lines read and documents written so far.
    public struct ImportProgress: Sendable {
        /// Lines read so far in this pass, blank lines included.
        public let lines: Int
        /// Documents written so far (0 while validating).
        public let documents: Int
        /// Whether the file is being validated (first pass) or written (second pass).
        public let validating: Bool
        /// The bytes of the file read so far in this pass, and the file's size (for a
        /// fraction done: a file of a few long lines has few lines to count).
        public let bytes: Int
        /// The size of the file, in bytes.
        public let totalBytes: Int
    }

    /// The most bytes of input an import keeps parsed between its checking pass and its
    /// writing pass (32 MiB); a larger file is read and parsed again for writing.
    public static let importStagingBudget = 32 << 20

    /// Imports a file of JSON lines (one document per line; blank lines are skipped) into
    /// `collection`, maintaining every index, in batches of `batchSize` documents.
    ///
    /// Memory stays bounded whatever the file's size: the longest line (at most
    /// `maximumLineLength` bytes) plus one batch. Reading is linear in the file's size,
    /// whatever the lines' lengths. A first pass checks every line (valid JSON, an object, a
    /// usable primary key, not too long) and every document against each of the
    /// collection's indexes, as a write would (a geo index's field holding no point, arrays
    /// nested deeper than an index stores), so a line that cannot be written is reported as
    /// `file:line: reason` before anything is written. What depends on other documents is
    /// found in the second pass, as the documents are written (checking it first would
    /// hold every value of the file): a write that fails there (a unique value taken by a
    /// stored document or an earlier line, an existing id in `.insert` mode) stops the
    /// import with the line number; its batch is not written, the batches before it are.
    ///
    /// Into a replicated collection, a line that carries `_rev` (as
    /// ``exportJSONLines(from:to:)`` writes them; CouchDB's `_revisions` and `_deleted` are
    /// read too) is merged with that revision, as a replication would, whatever `mode`: an
    /// exported collection imports with its revisions, and importing it again writes
    /// nothing. A line without `_rev` is an ordinary write.
    ///
    /// `progress` is called during both passes, every 10,000 lines or 16 MiB read,
    /// whichever comes first, once more at the end of the first pass (unless it just was), and
    /// after every batch written.
    ///
    /// - Parameters:
    ///   - collection: the collection to import into.
    ///   - path: the file of JSON lines, one document per line; blank lines are skipped.
    ///   - mode: `.upsert` (the default) replaces an existing document, `.insert` stops at an
    ///     existing id.
    ///   - batchSize: the documents written per atomic batch. A store whose transactions are
    ///     bounded (etcd's operations and request bytes) that refuses a batch as too large
    ///     gets it again in halves, growing back to `batchSize` after eight batches that fit;
    ///     a single document that does not fit is an error naming its line.
    ///   - maximumLineLength: the longest line accepted, in bytes (64 MiB by default); a
    ///     longer line is an error naming the file, the line and the limit, and nothing is
    ///     imported.
    ///   - sync: write every batch with LevelDB's `sync` option, so the documents imported
    ///     survive a power loss or an OS crash once this returns (see ``DocumentStore``,
    ///     Durability). Without it, they survive a crash of the process only.
    ///   - progress: called during both passes, as described above.
    /// - Returns: the number of documents written.
    @discardableResult
    public func importJSONLines(
        into collection: String, path: String, mode: ImportMode = .upsert,
        batchSize: Int = 1000, maximumLineLength: Int = LineReader.defaultMaximumLineLength,
        sync: Bool = false, progress: ((ImportProgress) -> Void)? = nil
    ) throws -> Int {
        try importJSONLines(
            into: collection, path: path, mode: mode, batchSize: batchSize, maximumLineLength: maximumLineLength,
            sync: sync, stagingBudget: Self.importStagingBudget, progress: progress)
    }

    /// The import, keeping at most `stagingBudget` bytes of input parsed between its passes.
    package func importJSONLines(
        into collection: String, path: String, mode: ImportMode, batchSize: Int, maximumLineLength: Int,
        sync: Bool, stagingBudget: Int, progress: ((ImportProgress) -> Void)?
    ) throws -> Int {
        let checkedCatalog = try catalog()
        let schema = try checkedCatalog.schema.collection(collection)
        let maintainers = checkedCatalog.maintainers(of: collection)
        let checkedGeneration = checkedCatalog.generation
        guard batchSize >= 1 else { throw KVDocsError(.invalidArgument, "batchSize must be at least 1") }
        let totalBytes = ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? NSNumber)?.intValue ?? 0
        let reportEvery = (lines: 10_000, bytes: 16 << 20)

        // Pass 1: parse and check every line. While they fit in `stagingBudget`, the parsed
        // documents are kept, so a file of moderate size is parsed once; past it they are
        // dropped and pass 2 reads the file again.
        var reader = try LineReader(path: path, maximumLineLength: maximumLineLength)
        defer { reader.close() }
        var reported = (lines: 0, bytes: 0)
        var staged: [(line: Int, bytes: Int, document: JSONValue)]? = []
        var stagedBytes = 0
        while true {
            let parsed: JSONValue??
            do {
                parsed = try reader.withNextLine { line -> JSONValue? in
                    if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return Optional<JSONValue>.none }
                    if staged != nil { stagedBytes += line.count }
                    do {
                        return try JSONValue(parsing: line)
                    } catch let e as KVDocsError {
                        throw MalformedLine(error: e)
                    }
                }
            } catch let malformed as MalformedLine {
                let e = malformed.error
                throw KVDocsError(
                    e.kind == .decoding ? .decoding : .invalidArgument,
                    "\(path):\(reader.lineNumber + 1): \(e.message); nothing was imported", path: storage.name)
            } catch let e as KVDocsError where e.kind == .invalidArgument {
                throw KVDocsError(.invalidArgument, "\(e.message); nothing was imported", path: storage.name)
            }
            guard let line = parsed else { break }
            if let document = line {
                do {
                    guard case .object = document else {
                        throw KVDocsError(
                            .invalidArgument, "expected a JSON object, found \(article(document.typeName))")
                    }
                    guard let pk = document[schema.primaryKey] else {
                        throw KVDocsError(.invalidArgument, "no primary key field \"\(schema.primaryKey)\"")
                    }
                    let id = try Self.idElement(pk, collection: collection, primaryKey: schema.primaryKey)
                    // What every index refuses of one document (a geo field with no point,
                    // arrays nested too deep), the check a write makes before it updates.
                    for maintainer in maintainers { try maintainer.validate(id: id, document: document) }
                } catch let e as KVDocsError {
                    throw KVDocsError(
                        .invalidArgument, "\(path):\(reader.lineNumber): \(e.message); nothing was imported",
                        path: storage.name)
                }
                if stagedBytes > stagingBudget { staged = nil }
                staged?.append((reader.lineNumber, reader.bytesConsumed, document))
            }
            if reader.lineNumber - reported.lines >= reportEvery.lines
                || reader.bytesConsumed - reported.bytes >= reportEvery.bytes
            {
                reported = (reader.lineNumber, reader.bytesConsumed)
                progress?(
                    ImportProgress(
                        lines: reader.lineNumber, documents: 0, validating: true, bytes: reader.bytesConsumed,
                        totalBytes: totalBytes))
            }
        }
        if reported != (reader.lineNumber, reader.bytesConsumed) {
            progress?(
                ImportProgress(
                    lines: reader.lineNumber, documents: 0, validating: true, bytes: reader.bytesConsumed,
                    totalBytes: totalBytes))
        }

        // Pass 2: write in batches, from the staged documents or from the file again.
        var writer: LineReader? = staged == nil ? try LineReader(path: path, maximumLineLength: maximumLineLength) : nil
        defer { writer?.close() }
        var stagedIndex = 0
        var lineNumber = 0
        var bytes = 0
        // The next document and its line number, read ahead so no empty batch is written.
        func nextDocument() throws -> JSONValue? {
            if let staged {
                guard stagedIndex < staged.count else { return nil }
                defer { stagedIndex += 1 }
                lineNumber = staged[stagedIndex].line
                bytes = staged[stagedIndex].bytes
                return staged[stagedIndex].document
            }
            while let line = try writer?.withNextLine({ line -> JSONValue? in
                line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) ? Optional<JSONValue>.none : try JSONValue(parsing: line)
            }) {
                lineNumber = writer?.lineNumber ?? 0
                bytes = writer?.bytesConsumed ?? 0
                if let line { return line }
            }
            return nil
        }
        let replicated = try catalog().schema.collection(collection).replicated
        var written = 0
        var done = (line: 0, bytes: 0)
        var pending = try nextDocument()
        // Documents read but not yet written: the rest of a batch the store refused as too
        // large for one transaction (an etcd store), written in smaller batches.
        var carried: [(document: JSONValue, line: Int, bytes: Int)] = []
        var size = batchSize
        var fitted = 0
        while pending != nil || !carried.isEmpty {
            // The batch is read before it is written, so that a write run again (over a store
            // that retries transactions that conflicted) writes the same documents.
            var documents = Array(carried.prefix(size))
            carried.removeFirst(documents.count)
            while documents.count < size, let document = pending {
                documents.append((document, lineNumber, bytes))
                pending = try nextDocument()
            }
            let count: Int
            do {
                count = try performWrites(sync: sync) { context -> Int in
                    for (document, line, _) in documents {
                        do {
                            // A replicated collection's lines with `_rev` keep their revisions.
                            if try !(replicated && context.writeImported(collection, document)) {
                                // Checked in the first pass against these maintainers (the
                                // writer lock holds the catalog still), when staged from it.
                                _ = try context.write(
                                    collection, mode == .insert ? .insert : .upsert, document: document, id: nil,
                                    validated: staged != nil && context.catalog.generation == checkedGeneration)
                            }
                        } catch let e as KVDocsError {
                            throw KVDocsError(
                                e.kind,
                                "\(path):\(line): \(e.message); \(written) documents before this batch were imported",
                                path: storage.name)
                        }
                    }
                    return documents.count
                }
            } catch let e as KVDocsError where e.kind == .limitExceeded && !e.message.hasPrefix(path + ":") {
                // Too large for one transaction of the store, and nothing was written: the same
                // documents again in halves, growing back after batches that fit.
                guard documents.count > 1 else {
                    throw KVDocsError(
                        e.kind,
                        "\(path):\(documents[0].line): the document, with the index work it brings (a text index merges its segments now and then), does not fit one write of the store: \(e.message); \(written) documents before it were imported",
                        path: storage.name)
                }
                size = documents.count / 2
                fitted = 0
                carried = documents + carried
                continue
            }
            fitted += 1
            if fitted >= 8 && size < batchSize {
                size = min(batchSize, size * 2)
                fitted = 0
            }
            if let last = documents.last { done = (last.line, last.bytes) }
            written += count
            // Lines and bytes up to the last document written (the next one is read ahead);
            // after the last batch, the whole file.
            let end =
                pending == nil && carried.isEmpty ? (line: reader.lineNumber, bytes: reader.bytesConsumed) : done
            progress?(
                ImportProgress(
                    lines: end.line, documents: written, validating: false, bytes: end.bytes, totalBytes: totalBytes))
        }
        return written
    }
}
