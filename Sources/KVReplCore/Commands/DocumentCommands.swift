import KVDocs

// The commands on a store's schema and documents.
extension CommandTable {
    static let schema = CommandDefinition<ShellCommand.ShowOrLoad>(
        "schema", usage: "schema | schema load FILE", summary: "show the document schema, or apply and store one",
        access: .read, completion: [.words(["load"])], writes: { $0 != .show },
        displayName: { $0 == .show ? "schema" : "schema load" },
        parse: { s in s.accept("load") ? .load(try path(&s)) : .show }
    ) { session, action in
        switch action {
        case .show:
            let schema = try session.documents().schema
            let value = try JSONValue(parsing: schema.jsonData())
            session.emit(value, ShellDisplay.prettyJSON(value))
        case .load(let file):
            let schema = try DocumentSchema(contentsOfFile: file)
            if let store = session.store {
                try store.apply(schema) { [progress = session.progress] p in
                    progress?("building \(p.collection).\(p.index): \(p.done)/\(p.total)")
                }
            } else {
                // Also replaces a stored schema that cannot be read (ShellAdvice.storeDamage).
                session.store = try DocumentStore(database: session.database, schema: schema)
                session.storeDamage = nil
            }
            session.emit(
                ["ok": true, "collections": .array(schema.collections.keys.sorted().map { .string($0) })],
                "schema stored: \(schema.collections.keys.sorted().joined(separator: ", "))")
        }
    }

    static let collections = CommandDefinition<NoArguments>(
        "collections", usage: "collections", summary: "the collections with their document counts", access: .read,
        parse: { _ in NoArguments() }
    ) { session, _ in
        let store = try session.documents()
        session.leadingColumns = ["name", "primary_key", "documents"]
        for (name, c) in try store.schema.collections.sorted(by: { $0.key < $1.key }) {
            let count = try session.reading { try $0.count(name) }
            session.emitRow(
                ["name": .string(name), "primary_key": .string(c.primaryKey), "documents": .int(Int64(count))],
                "\(name) (primary key \(c.primaryKey), \(count) documents)")
        }
    }

    static let indexes = CommandDefinition<String>(
        "indexes", usage: "indexes COLLECTION", summary: "a collection's secondary, geo and text indexes",
        access: .read, completion: [.collection, .index], parse: { s in try s.expectWord("a collection name") }
    ) { session, collection in try session.listIndexes(collection) }

    static let insert = CommandDefinition<ShellCommand.CollectionDocument>(
        "insert", usage: "insert COLLECTION JSON", summary: "add a document (fails if its id exists)", access: .write,
        completion: [.collection], parse: collectionDocument
    ) { session, arguments in
        let collection = try session.documents().collection(arguments.collection)
        session.write(try collection.insert(arguments.document, sync: session.sync))
    }

    static let upsert = CommandDefinition<ShellCommand.CollectionDocument>(
        "upsert", usage: "upsert COLLECTION JSON", summary: "add or replace a document", access: .write,
        completion: [.collection], parse: collectionDocument
    ) { session, arguments in
        let collection = try session.documents().collection(arguments.collection)
        session.write(try collection.upsert(arguments.document, sync: session.sync))
    }

    @Sendable static func collectionDocument(_ s: inout LineScanner) throws -> ShellCommand.CollectionDocument {
        let collection = try s.expectWord("a collection name")
        return .init(collection: collection, document: try s.jsonValue("a JSON document"))
    }

    @Sendable static func collectionID(_ s: inout LineScanner) throws -> ShellCommand.CollectionID {
        let collection = try s.expectWord("a collection name")
        return .init(collection: collection, id: try s.jsonValue("an id (a JSON string or number)"))
    }

    static let doc = CommandDefinition<ShellCommand.CollectionID>(
        "doc", usage: "doc COLLECTION ID", summary: "a document by primary key (ID is a JSON literal: \"p1\", 42)",
        access: .read, completion: [.collection], parse: collectionID
    ) { session, arguments in
        guard let document = try session.reading({ try $0.get(arguments.collection, id: arguments.id) }) else {
            throw KVDocsError(.notFound, "collection \"\(arguments.collection)\" has no document \(arguments.id)")
        }
        session.leadingColumns = [try session.documents().schema.collection(arguments.collection).primaryKey]
        session.emitRow(
            document, session.interactive ? ShellDisplay.prettyJSON(document) : ShellDisplay.compactJSON(document))
    }

    static let remove = CommandDefinition<ShellCommand.CollectionID>(
        "remove", usage: "remove COLLECTION ID", summary: "delete a document (ID is a JSON literal: \"p1\", 42)",
        access: .write, completion: [.collection], parse: collectionID
    ) { session, arguments in
        guard try session.documents().collection(arguments.collection).delete(id: arguments.id, sync: session.sync)
        else {
            throw KVDocsError(.notFound, "collection \"\(arguments.collection)\" has no document \(arguments.id)")
        }
        session.emit(["ok": true, "id": arguments.id], "removed \(arguments.id)")
    }

    @Sendable static func collectionFile(_ s: inout LineScanner) throws -> ShellCommand.CollectionFile {
        let collection = try s.expectWord("a collection name")
        return .init(collection: collection, file: try path(&s))
    }

    static let importFile = CommandDefinition<ShellCommand.CollectionFile>(
        "import", usage: "import COLLECTION FILE", summary: "import JSON lines", access: .write,
        completion: [.collection], parse: collectionFile
    ) { session, arguments in
        let file = arguments.file
        let count = try session.documents().importJSONLines(into: arguments.collection, path: file, sync: session.sync)
        {
            [progress = session.progress] p in
            let done = p.totalBytes > 0 ? " (\(min(100, p.bytes * 100 / p.totalBytes))%)" : ""
            progress?(
                p.validating
                    ? "checking \(file): \(p.lines) lines\(done)" : "importing \(file): \(p.documents) documents\(done)"
            )
        }
        session.emit(
            ["ok": true, "documents": .int(Int64(count))], "imported \(count) documents into \(arguments.collection)")
    }

    static let exportFile = CommandDefinition<ShellCommand.CollectionFile>(
        "export", usage: "export COLLECTION FILE", summary: "export JSON lines", access: .read,
        completion: [.collection], parse: collectionFile
    ) { session, arguments in
        let count = try session.reading { try $0.exportJSONLines(from: arguments.collection, to: arguments.file) }
        session.emit(
            ["ok": true, "documents": .int(Int64(count)), "file": .string(arguments.file)],
            "exported \(count) documents to \(arguments.file)")
    }
}

extension ShellSession {
    /// Reports a write of one document.
    func write(_ change: DocumentChange) {
        emit(
            [
                "ok": true, "id": change.id, "sequence": .int(change.sequence),
                "operation": .string(change.operation.rawValue)
            ],
            "\(change.operation.rawValue) \(change.id) (sequence \(change.sequence))")
    }

    func listIndexes(_ collection: String) throws {
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
                text.tokenizer == .trigram && text.caseSensitive ? "trigram case_sensitive 1" : text.tokenizer.rawValue
            emitRow(
                [
                    "name": .string(text.name), "fields": .array(text.fields.map { .string($0.description) }),
                    "tokenizer": .string(tokenizer),
                    "detail": .string(text.detail.rawValue), "kind": "text"
                ],
                "\(text.name): text(\(text.fields.map(\.description).joined(separator: ", ")); \(tokenizer)\(text.detail == .full ? "" : "; detail \(text.detail.rawValue)"))"
            )
        }
        // The indexes of registered kinds, with their declarations' options.
        for index in c.definitions where ![.secondary, .text, .geo].contains(index.kind) {
            var row = index.options
            row["name"] = .string(index.name)
            row["kind"] = .string(index.kind.catalogName)
            emitRow(
                .object(row),
                "\(index.name): \(index.kind.catalogName)(\(JSONValue.object(index.options).compactDescription))")
        }
    }
}
