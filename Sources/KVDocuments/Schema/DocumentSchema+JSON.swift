import Foundation
import KVSupport

extension DocumentSchema {
    /// Loads a schema from JSON text (the format in ``DocumentSchema``). `file` names the source in errors.
    ///
    /// A collection may say `"replicated": true` (its `"primaryKey"` then defaults to, and
    /// must be, `"_id"`) and `"revsLimit": N` (1…10000, only with `"replicated"`).
    /// - Throws: `.schema` naming the file, the collection, the index and the problem.
    public init(json data: Data, file: String = "<schema>") throws {
        func fail(_ m: String) -> KVDocsError { KVDocsError(.schema, "\(file): \(m)") }
        let root: JSONValue
        do { root = try JSONValue(parsing: data) } catch let e as KVDocsError { throw fail(e.message) }
        guard case .object(let top) = root else {
            throw fail("the top level must be an object with a \"collections\" member, not \(article(root.typeName))")
        }
        if let extra = Set(top.keys).subtracting(["collections"]).sorted().first {
            throw fail("unknown member \"\(extra)\" (expected \"collections\")")
        }
        guard let c = top["collections"] else { throw fail("missing the \"collections\" member") }
        guard case .object(let entries) = c else {
            throw fail("\"collections\" must be an object, not \(article(c.typeName))")
        }
        var collections: [String: CollectionSchema] = [:]
        for (name, body) in entries {
            func failIn(_ m: String) -> KVDocsError { fail("collection \"\(name)\": \(m)") }
            guard case .object(let fields) = body else {
                throw failIn("must be an object, not \(article(body.typeName))")
            }
            if let extra = Set(fields.keys).subtracting(["primaryKey", "indexes", "text", "replicated", "revsLimit"])
                .sorted().first
            {
                throw failIn(
                    "unknown member \"\(extra)\" (expected \"primaryKey\", \"indexes\", \"text\", \"replicated\", \"revsLimit\")"
                )
            }
            var collection = CollectionSchema()
            if let r = fields["replicated"] {
                guard case .bool(let b) = r else {
                    throw failIn("\"replicated\" must be true or false, not \(r.compactDescription)")
                }
                collection.replicated = b
                if b { collection.primaryKey = CollectionSchema.replicatedPrimaryKey }
            }
            if let limit = fields["revsLimit"] {
                guard collection.replicated else {
                    throw failIn("\"revsLimit\" is only valid with \"replicated\": true")
                }
                let value: Int?
                switch limit {
                case .int(let i): value = Int(exactly: i)
                case .uint(let u): value = Int(exactly: u)
                case .double(let d) where d.rounded() == d: value = Int(exactly: d)
                default: value = nil
                }
                guard let value, (1...CollectionSchema.maximumRevsLimit).contains(value) else {
                    throw failIn(
                        "\"revsLimit\" must be an integer 1…\(CollectionSchema.maximumRevsLimit), not \(limit.compactDescription)"
                    )
                }
                collection.revsLimit = value
            }
            if let pk = fields["primaryKey"] {
                guard case .string(let s) = pk else {
                    throw failIn("\"primaryKey\" must be a string, not \(article(pk.typeName))")
                }
                collection.primaryKey = s
            }
            var definitions: [AnyIndexDefinition] = []
            for (i, value) in try Self.array(fields["indexes"], "indexes", failIn).enumerated() {
                guard case .object(let o) = value else { throw failIn("indexes[\(i)] must be an object") }
                guard case .string(let indexName)? = o["name"] else {
                    throw failIn("indexes[\(i)] needs a string \"name\"")
                }
                func failIndex(_ m: String) -> KVDocsError { failIn("index \"\(indexName)\": \(m)") }
                switch o["type"] {
                case nil:
                    definitions.append(AnyIndexDefinition(try SecondaryIndexDefinition(entry: o, fail: failIndex)))
                case .string("geo")?:
                    definitions.append(AnyIndexDefinition(try GeoIndexDefinition(entry: o, fail: failIndex)))
                case .string(let type)? where IndexKindRegistry.kind(IndexIdentity.Kind(catalogName: type)) != nil:
                    var options = o
                    options["name"] = nil
                    options["type"] = nil
                    definitions.append(
                        try AnyIndexDefinition(
                            name: indexName, kind: IndexIdentity.Kind(catalogName: type), options: options))
                case let type?:
                    throw failIndex(
                        "\"type\" must be \(IndexKindRegistry.knownTypes) (a secondary index has no \"type\"), not \(type.compactDescription)"
                    )
                }
            }
            for (i, value) in try Self.array(fields["text"], "text", failIn).enumerated() {
                guard case .object(let o) = value else { throw failIn("text[\(i)] must be an object") }
                guard case .string(let indexName)? = o["name"] else {
                    throw failIn("text[\(i)] needs a string \"name\"")
                }
                func failIndex(_ m: String) -> KVDocsError { failIn("text index \"\(indexName)\": \(m)") }
                definitions.append(AnyIndexDefinition(try TextIndexDefinition(entry: o, fail: failIndex)))
            }
            collection.definitions = definitions
            // Dictionary lookup compares keys as `==` does (canonical equivalence), in constant time.
            if let index = collections.index(forKey: name) {
                let other = collections[index].key
                throw fail(
                    "collection names \"\(other)\" and \"\(name)\" differ only in Unicode normalisation; use one spelling"
                )
            }
            collections[name] = collection
        }
        do {
            try self.init(collections: collections)
        } catch let e as KVDocsError {
            throw fail(e.message)
        }
    }

    /// Loads a schema from a JSON file.
    /// - Throws: `.ioError` when it cannot be read, `.schema` as ``init(json:file:)``.
    public init(contentsOfFile path: String) throws {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw KVDocsError(.ioError, "cannot read schema file \(path): \(error.localizedDescription)")
        }
        try self.init(json: data, file: path)
    }

    /// The schema as JSON (the same format), with sorted keys.
    public func jsonData() -> Data {
        var top = JSONObject()
        for (name, c) in collections {
            var o: JSONObject = ["primaryKey": .string(c.primaryKey)]
            // Secondary, then geo, then registered kinds (the order definitions are kept in):
            // the built-in kinds exactly as earlier versions wrote them.
            o["indexes"] = .array(c.definitions.filter { $0.kind != .text }.map { .object($0.entry) })
            o["text"] = .array(c.text.map { $0.json })
            // Only a replicated collection writes these: others stay byte-identical to the
            // JSON earlier versions wrote.
            if c.replicated {
                o["replicated"] = .bool(true)
                o["revsLimit"] = .int(Int64(c.revsLimit))
            }
            top[name] = .object(o)
        }
        // A schema holds only strings, booleans, arrays and objects: always encodable.
        return (try? JSONValue.object(["collections": .object(top)]).canonicalData()) ?? Data()
    }

    private static func array(_ value: JSONValue?, _ name: String, _ fail: (String) -> KVDocsError) throws
        -> [JSONValue]
    {
        guard let value else { return [] }
        guard case .array(let a) = value else {
            throw fail("\"\(name)\" must be an array, not \(article(value.typeName))")
        }
        return a
    }

    static func fieldPaths(_ value: JSONValue?, _ fail: (String) -> KVDocsError) throws -> [FieldPath] {
        guard let value else { throw fail("missing \"fields\"") }
        guard case .array(let a) = value, !a.isEmpty else {
            throw fail("\"fields\" must be a non-empty array of field paths")
        }
        return try a.map {
            guard case .string(let s) = $0 else {
                throw fail("\"fields\" must contain strings, not \(article($0.typeName))")
            }
            do { return try FieldPath(s) } catch let e as KVDocsError { throw fail(e.message) }
        }
    }
}

extension SecondaryIndexDefinition {
    /// A secondary index as a schema JSON entry declares it (`"name"` is a string).
    init(entry o: JSONObject, fail failIndex: (String) -> KVDocsError) throws {
        guard case .string(let indexName)? = o["name"] else { throw failIndex("needs a string \"name\"") }
        if let extra = Set(o.keys).subtracting(["name", "fields", "unique", "include", "sparse"]).sorted().first {
            throw failIndex(
                "unknown member \"\(extra)\" (expected \"name\", \"fields\", \"unique\", \"include\", \"sparse\", \"type\")"
            )
        }
        let paths = try DocumentSchema.fieldPaths(o["fields"], failIndex)
        var unique = false
        if let u = o["unique"] {
            guard case .bool(let b) = u else { throw failIndex("\"unique\" must be true or false") }
            unique = b
        }
        var sparse = false
        if let value = o["sparse"] {
            guard case .bool(let b) = value else { throw failIndex("\"sparse\" must be true or false") }
            guard b || !unique else {
                throw failIndex(
                    "a unique index is always sparse (documents missing a field are left out, so they never conflict): remove \"sparse\": false"
                )
            }
            sparse = b
        }
        var include = SecondaryIndexDefinition.Inclusion.none
        switch o["include"] {
        case nil: break
        case .string("*")?: include = .document
        case .array?:
            include = .fields(
                try DocumentSchema.fieldPaths(
                    o["include"], { failIndex($0.replacingOccurrences(of: "\"fields\"", with: "\"include\"")) }))
        case let other?:
            throw failIndex("\"include\" must be an array of field paths or \"*\", not \(other.compactDescription)")
        }
        self.init(name: indexName, fields: paths, unique: unique, include: include, sparse: sparse)
    }
}

extension GeoIndexDefinition {
    /// A geo index as a schema JSON entry declares it (`"name"` is a string; `"type"`, if
    /// present, is `"geo"`).
    init(entry o: JSONObject, fail failIndex: (String) -> KVDocsError) throws {
        guard case .string(let indexName)? = o["name"] else { throw failIndex("needs a string \"name\"") }
        if let extra = Set(o.keys).subtracting(["name", "fields", "type"]).sorted().first {
            throw failIndex("unknown member \"\(extra)\" for a geo index (expected \"name\", \"fields\", \"type\")")
        }
        let paths = try DocumentSchema.fieldPaths(o["fields"], failIndex)
        guard paths.count == 1 else {
            throw failIndex("a geo index takes exactly one field (the point), not \(paths.count)")
        }
        self.init(name: indexName, field: paths[0])
    }
}

extension TextIndexDefinition {
    /// A text index as a schema JSON entry declares it (`"name"` is a string).
    init(entry o: JSONObject, fail failIndex: (String) -> KVDocsError) throws {
        guard case .string(let indexName)? = o["name"] else { throw failIndex("needs a string \"name\"") }
        if let extra = Set(o.keys).subtracting(["name", "fields", "tokenizer", "detail"]).sorted().first {
            throw failIndex("unknown member \"\(extra)\" (expected \"name\", \"fields\", \"tokenizer\", \"detail\")")
        }
        let paths = try DocumentSchema.fieldPaths(o["fields"], failIndex)
        var tokenizer = TextIndexDefinition.Tokenizer.unicode61
        var caseSensitive = false
        if let t = o["tokenizer"] {
            guard case .string(let s) = t, let parsed = TextIndexDefinition.parseTokenizer(s) else {
                throw failIndex(
                    "\"tokenizer\" must be one of \"unicode61\", \"porter\", \"porter unicode61\", \"trigram\", \"trigram case_sensitive 0\", \"trigram case_sensitive 1\" (got \(t.compactDescription))"
                )
            }
            (tokenizer, caseSensitive) = parsed
        }
        var detail = TextIndexDefinition.Detail.full
        if let d = o["detail"] {
            guard case .string(let s) = d, let parsed = TextIndexDefinition.Detail(rawValue: s) else {
                throw failIndex(
                    "\"detail\" must be one of \"full\", \"column\", \"none\" (got \(d.compactDescription))")
            }
            detail = parsed
        }
        self.init(name: indexName, fields: paths, tokenizer: tokenizer, caseSensitive: caseSensitive, detail: detail)
    }
}
