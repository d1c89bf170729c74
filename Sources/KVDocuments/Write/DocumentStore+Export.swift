import Foundation
import KVSupport

extension ReadTransaction {
    /// Writes every document of `collection`, as of the transaction's snapshot, to the
    /// file at `path` as JSON lines, and returns how many were written.
    ///
    /// ```swift
    /// try store.read { tx in
    ///     try tx.exportJSONLines(from: "people", to: "people.jsonl")
    ///     try tx.exportJSONLines(from: "trips", to: "trips.jsonl")   // the same moment
    /// }
    /// ```
    ///
    /// Invariants:
    /// - The file holds the documents of one snapshot, one per line, in primary-key order:
    ///   the documents ``find(_:_:)`` returns for an empty query, each written as its
    ///   canonical JSON (``JSONValue/canonicalBytes()``: compact, object keys in code-point
    ///   order) and a `\n`. ``DocumentStore/importJSONLines(into:path:mode:batchSize:maximumLineLength:sync:progress:)``
    ///   of the file into an empty collection gives the same documents back.
    /// - Documents are read and written one at a time: memory stays bounded (the largest
    ///   document and a 1 MiB buffer) whatever the collection's size.
    /// - Each stored document is parsed and written out again rather than copied, so every
    ///   line is canonical even where the stored bytes are not (a store of format 1, see
    ///   ``DocumentStore/formatVersion``, keeps its documents as Foundation's
    ///   `JSONSerialization` wrote them: migration rebuilds indexes, not documents), and a
    ///   damaged document is reported rather than exported.
    ///
    /// The file is created, or truncated.
    /// - Throws: `.schema` for a collection the schema does not declare; `.corruption`
    ///   naming a stored document that is not valid JSON; `.ioError` naming the file when it
    ///   cannot be written (what was written stays); storage errors.
    @discardableResult
    public func exportJSONLines(from collection: String, to path: String) throws -> Int {
        _ = try store.schema.collection(collection)
        let docs = store.layout.documents(collection)
        let entries = try reader.scan(docs.range, order: .forward)
        let file = try OutputFile(path: path)
        var count = 0
        while let exported = try entries.next({ key, value -> Bool in
            let id = try docs.unpack(Array(key))
            guard id.count == 1 else { return false }  // not a document key (as find skips it)
            let document = try store.documentValue(Array(value), collection: collection, id: id[0])
            try file.write(try document.canonicalBytes())
            try file.write(Self.newline)
            return true
        }) {
            if exported { count += 1 }
        }
        try file.close()
        return count
    }

    private static let newline: [UInt8] = [0x0A]
}

extension DocumentStore {
    /// Writes every document of `collection`, as of one snapshot, to the file at `path`
    /// as JSON lines in primary-key order, one document at a time, and returns how many.
    /// See ``ReadTransaction/exportJSONLines(from:to:)``, which exports several
    /// collections from one snapshot.
    ///
    /// ```swift
    /// try store.exportJSONLines(from: "people", to: "people.jsonl")
    /// ```
    /// - Throws: `.schema`, `.corruption`, `.ioError`, storage errors.
    @discardableResult
    public func exportJSONLines(from collection: String, to path: String) throws -> Int {
        try read { try $0.exportJSONLines(from: collection, to: path) }
    }
}

extension DocumentCollection {
    /// Writes every document of the collection, as of one snapshot, to the file at `path`
    /// as JSON lines in primary-key order, and returns how many. See
    /// ``ReadTransaction/exportJSONLines(from:to:)``.
    /// - Throws: `.corruption`, `.ioError`, storage errors.
    @discardableResult
    public func exportJSONLines(to path: String) throws -> Int {
        try store.exportJSONLines(from: name, to: path)
    }
}
