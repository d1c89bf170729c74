import Foundation

extension DocumentStore {
    /// How ``importJSONLines(into:path:mode:batchSize:progress:)`` treats existing ids.
    public enum ImportMode: Sendable {
        /// An existing id is an error.
        case insert
        /// An existing document is replaced.
        case upsert
    }

    /// Progress of an import: lines read and documents written so far.
    public struct ImportProgress: Sendable {
        public let lines: Int
        public let documents: Int
        /// Whether the file is being validated (first pass) or written (second pass).
        public let validating: Bool
    }

    /// Imports a file of JSON lines (one document per line; blank lines are skipped) into
    /// `collection`, maintaining every index, in batches of `batchSize` documents.
    ///
    /// Memory stays bounded whatever the file's size. A first pass checks every line
    /// (valid JSON, an object, a usable primary key), so a malformed line is reported with
    /// its number before anything is written. A write that fails in the second pass (a
    /// unique violation, an existing id in `.insert` mode) stops the import with the line
    /// number; its batch is not written, the batches before it are.
    /// - Returns: the number of documents written.
    @discardableResult
    public func importJSONLines(into collection: String, path: String, mode: ImportMode = .upsert,
                                batchSize: Int = 1000, progress: ((ImportProgress) -> Void)? = nil) throws -> Int {
        let schema = try self.schema.collection(collection)
        guard batchSize >= 1 else { throw KVDocsError(.invalidArgument, "batchSize must be at least 1") }

        // Pass 1: validate every line.
        var reader = try LineReader(path: path)
        defer { reader.close() }
        while let line = try reader.next() {
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
                throw KVDocsError(e.kind == .decoding ? .decoding : .invalidArgument, "\(path):\(reader.lineNumber): \(e.message); nothing was imported", path: database.path)
            }
            if reader.lineNumber % 10_000 == 0 { progress?(ImportProgress(lines: reader.lineNumber, documents: 0, validating: true)) }
        }

        // Pass 2: write in batches.
        var writer = try LineReader(path: path)
        defer { writer.close() }
        var written = 0
        var finished = false
        while !finished {
            let count = try performWrites { context -> Int in
                var inBatch = 0
                while inBatch < batchSize {
                    guard let line = try writer.next() else {
                        finished = true
                        break
                    }
                    if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
                    do {
                        _ = try context.write(collection, mode == .insert ? .insert : .upsert, document: try JSONValue(parsing: line), id: nil)
                    } catch let e as KVDocsError {
                        throw KVDocsError(e.kind, "\(path):\(writer.lineNumber): \(e.message); \(written) documents before this batch were imported", path: database.path)
                    }
                    inBatch += 1
                }
                return inBatch
            }
            written += count
            progress?(ImportProgress(lines: writer.lineNumber, documents: written, validating: false))
        }
        return written
    }
}
