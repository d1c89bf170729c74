import Foundation

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

    /// Imports a file of JSON lines (one document per line; blank lines are skipped) into
    /// `collection`, maintaining every index, in batches of `batchSize` documents.
    ///
    /// Memory stays bounded whatever the file's size: the longest line (at most
    /// `maximumLineLength` bytes) plus one batch. Reading is linear in the file's size,
    /// whatever the lines' lengths. A first pass checks every line (valid JSON, an object, a
    /// usable primary key, not too long), so a malformed line is reported with its number
    /// before anything is written. A write that fails in the second pass (a unique
    /// violation, an existing id in `.insert` mode) stops the import with the line number;
    /// its batch is not written, the batches before it are.
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
    ///   - batchSize: the documents written per atomic batch.
    ///   - maximumLineLength: the longest line accepted, in bytes (64 MiB by default); a
    ///     longer line is an error naming the file, the line and the limit, and nothing is
    ///     imported.
    ///   - sync: write every batch with LevelDB's `sync` option, so the documents imported
    ///     survive a power loss or an OS crash once this returns (see ``DocumentStore``,
    ///     Durability). Without it, they survive a crash of the process only.
    ///   - progress: called during both passes, as described above.
    /// - Returns: the number of documents written.
    @discardableResult
    public func importJSONLines(into collection: String, path: String, mode: ImportMode = .upsert,
                                batchSize: Int = 1000, maximumLineLength: Int = LineReader.defaultMaximumLineLength,
                                sync: Bool = false, progress: ((ImportProgress) -> Void)? = nil) throws -> Int {
        let schema = try self.schema.collection(collection)
        guard batchSize >= 1 else { throw KVDocsError(.invalidArgument, "batchSize must be at least 1") }
        let totalBytes = ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? NSNumber)?.intValue ?? 0
        let reportEvery = (lines: 10_000, bytes: 16 << 20)

        // Pass 1: validate every line.
        var reader = try LineReader(path: path, maximumLineLength: maximumLineLength)
        defer { reader.close() }
        var reported = (lines: 0, bytes: 0)
        while true {
            let next: Data?
            do {
                next = try reader.next()
            } catch let e as KVDocsError where e.kind == .invalidArgument {
                throw KVDocsError(.invalidArgument, "\(e.message); nothing was imported", path: storage.name)
            }
            guard let line = next else { break }
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
            do {
                let document = try JSONValue(parsing: line)
                guard case .object = document else {
                    throw KVDocsError(.invalidArgument, "expected a JSON object, found \(article(document.typeName))")
                }
                guard let pk = document[schema.primaryKey] else {
                    throw KVDocsError(.invalidArgument, "no primary key field \"\(schema.primaryKey)\"")
                }
                _ = try Self.idElement(pk, collection: collection, primaryKey: schema.primaryKey)
            } catch let e as KVDocsError {
                throw KVDocsError(e.kind == .decoding ? .decoding : .invalidArgument, "\(path):\(reader.lineNumber): \(e.message); nothing was imported", path: storage.name)
            }
            if reader.lineNumber - reported.lines >= reportEvery.lines || reader.bytesConsumed - reported.bytes >= reportEvery.bytes {
                reported = (reader.lineNumber, reader.bytesConsumed)
                progress?(ImportProgress(lines: reader.lineNumber, documents: 0, validating: true, bytes: reader.bytesConsumed, totalBytes: totalBytes))
            }
        }
        if reported != (reader.lineNumber, reader.bytesConsumed) {
            progress?(ImportProgress(lines: reader.lineNumber, documents: 0, validating: true, bytes: reader.bytesConsumed, totalBytes: totalBytes))
        }

        // Pass 2: write in batches.
        var writer = try LineReader(path: path, maximumLineLength: maximumLineLength)
        defer { writer.close() }
        var written = 0
        // The next non-blank line, read ahead so that no empty batch is written at the end.
        func nextLine() throws -> Data? {
            while let line = try writer.next() {
                if !line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return line }
            }
            return nil
        }
        var pending = try nextLine()
        while pending != nil {
            let count = try performWrites(sync: sync) { context -> Int in
                var inBatch = 0
                while inBatch < batchSize, let line = pending {
                    do {
                        _ = try context.write(collection, mode == .insert ? .insert : .upsert, document: try JSONValue(parsing: line), id: nil)
                    } catch let e as KVDocsError {
                        throw KVDocsError(e.kind, "\(path):\(writer.lineNumber): \(e.message); \(written) documents before this batch were imported", path: storage.name)
                    }
                    inBatch += 1
                    pending = try nextLine()
                }
                return inBatch
            }
            written += count
            progress?(ImportProgress(lines: writer.lineNumber, documents: written, validating: false, bytes: writer.bytesConsumed, totalBytes: totalBytes))
        }
        return written
    }
}
