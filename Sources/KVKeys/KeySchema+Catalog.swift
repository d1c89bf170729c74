import Foundation
import KVStorage
import KVSupport

extension KeySchema {
    /// The catalog key under which a database keeps its declared keyspaces: `("m",
    /// "keyspaces")` under `root`, among the document layer's catalog keys (`Catalog`).
    package static func catalogKey(_ root: Subspace) -> [UInt8] { root.pack(["m", "keyspaces"]) }

    /// The keyspaces stored in `database` (see ``store(in:root:)``), or an empty schema.
    /// - Throws: `.corruption` when the stored declaration is malformed.
    public static func stored(in database: LevelDB, root: Subspace = Subspace()) throws -> KeySchema {
        guard let data = try database.get(catalogKey(root), as: Data.self) else { return try KeySchema() }
        do {
            return try KeySchema(json: data, file: "the keyspaces stored in \(database.path)")
        } catch let e as KVDocsError {
            throw KVDocsError(.corruption, e.message, path: database.path)
        }
    }

    /// Stores the keyspaces in the database's catalog, so tools (kvrepl) decode keys by name.
    ///
    /// The declaration is written as JSON under `root.pack(["m", "keyspaces"])`, replacing any
    /// stored one, with a synced write.
    /// - Throws: `.schema` as ``jsonData()``; storage errors.
    public func store(in database: LevelDB, root: Subspace = Subspace()) throws {
        try database.put(Self.catalogKey(root), jsonData(), sync: true)
    }

    /// The keyspaces in the JSON format ``init(json:file:)`` reads (canonical JSON: keys in
    /// code-point order).
    /// - Throws: `.schema` when a prefix element has no JSON form (bytes, a UUID, a float,
    ///   a large integer or a versionstamp).
    public func jsonData() throws -> Data {
        var entries = JSONObject()
        for (name, k) in keyspaces {
            entries[name] = .object([
                "prefix": .array(try k.prefix.elements.map(Self.jsonValue)),
                "components": .array(
                    k.components.map { .object(["name": .string($0.name), "type": .string($0.type.rawValue)]) })
            ])
        }
        return try JSONValue.object(["keyspaces": .object(entries)]).canonicalData()
    }

    static func jsonValue(_ e: TupleElement) throws -> JSONValue {
        switch e {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .uint(let u): return .uint(u)
        case .double(let d): return .double(d)
        case .string(let s): return .string(s)
        case .tuple(let t): return .array(try t.elements.map(jsonValue))
        default: throw KVDocsError(.schema, "a keyspace prefix element \(e) cannot be written as JSON")
        }
    }
}
