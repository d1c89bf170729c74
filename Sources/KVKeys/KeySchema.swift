import Foundation
import KVStorage
import KVSupport

/// A set of declared keyspaces, in Swift or from a JSON file shipped with the app:
///
/// ```json
/// {"keyspaces": {"departure": {"prefix": ["dep"],
///                              "components": [{"name": "station", "type": "string"},
///                                             {"name": "time", "type": "int"}]}}}
/// ```
///
/// Prefix elements are JSON strings, integers, decimals (doubles), booleans, `null` and
/// arrays (nested tuples). Component types: `string`, `int`, `double`, `bool`, `bytes`,
/// `uuid`, `date`. Tools use ``decode(_:)`` to display raw keys with names.
public struct KeySchema: Sendable, Hashable {
    /// The keyspaces by name.
    public private(set) var keyspaces: [String: Keyspace] = [:]
    /// Each keyspace's name by its encoded prefix, so that adding one is not quadratic
    /// (found by fuzzing: 8,000 keyspaces took seconds). Kept in step with `keyspaces` by
    /// ``add(_:)``, the only place that changes it.
    private var prefixes: [[UInt8]: String] = [:]

    /// - Throws: `.schema` when two keyspaces share a name or a prefix.
    public init(_ keyspaces: [Keyspace] = []) throws {
        for k in keyspaces { try add(k) }
    }

    /// Adds a keyspace.
    /// - Throws: `.schema` when the name or the prefix is already declared.
    public mutating func add(_ keyspace: Keyspace) throws {
        if keyspaces[keyspace.name] != nil {
            throw KVDocsError(.schema, "keyspace \"\(keyspace.name)\" is declared twice")
        }
        let encoded = keyspace.prefix.encoded
        if let other = prefixes[encoded] {
            throw KVDocsError(
                .schema, "keyspaces \"\(other)\" and \"\(keyspace.name)\" have the same prefix \(keyspace.prefix)")
        }
        keyspaces[keyspace.name] = keyspace
        prefixes[encoded] = keyspace.name
    }

    /// The keyspace called `name`.
    /// - Throws: `.schema` naming the declared keyspaces when there is none.
    public func keyspace(_ name: String) throws -> Keyspace {
        guard let k = keyspaces[name] else {
            throw KVDocsError(
                .schema, "no keyspace \"\(name)\"; declared: \(keyspaces.keys.sorted().joined(separator: ", "))")
        }
        return k
    }

    /// Decodes `key` with the keyspace whose prefix it starts with (the longest such
    /// prefix), or `nil` when no keyspace describes it.
    public func decode<K: ByteRepresentable>(_ key: K) -> DecodedKey? {
        let candidates = keyspaces.values
            .filter { $0.subspace.contains(key) }
            .sorted { $0.subspace.prefix.count > $1.subspace.prefix.count }
        for keyspace in candidates {
            if let decoded = try? keyspace.decode(key) { return decoded }
        }
        return nil
    }
}

// MARK: - JSON

extension KeySchema {
    /// Loads keyspaces from JSON text. `file` names the source in error messages.
    /// - Throws: `.schema` naming the file, the keyspace and what is wrong.
    public init(json data: Data, file: String = "<keyspaces>") throws {
        func fail(_ message: String) -> KVDocsError { KVDocsError(.schema, "\(file): \(message)") }
        let root: JSONValue
        do {
            root = try JSONValue(parsing: data)
        } catch let error as KVDocsError {
            throw fail(error.message)
        }
        guard case .object(let top) = root else {
            throw fail("the top level must be an object with a \"keyspaces\" member, not \(article(root.typeName))")
        }
        guard let declared = top["keyspaces"] else { throw fail("missing the \"keyspaces\" member") }
        guard case .object(let entries) = declared else {
            throw fail("\"keyspaces\" must be an object, not \(article(declared.typeName))")
        }
        var schema = try KeySchema()
        for (name, body) in entries.sorted(by: { $0.key < $1.key }) {
            func failIn(_ message: String) -> KVDocsError { fail("keyspace \"\(name)\": \(message)") }
            guard case .object(let fields) = body else {
                throw failIn("must be an object, not \(article(body.typeName))")
            }
            if let unknown = Set(fields.keys).subtracting(["prefix", "components"]).sorted().first {
                throw failIn("unknown member \"\(unknown)\" (expected \"prefix\" and \"components\")")
            }
            guard let prefixValue = fields["prefix"] else { throw failIn("missing \"prefix\"") }
            guard case .array(let prefixElements) = prefixValue else {
                throw failIn("\"prefix\" must be an array, not \(article(prefixValue.typeName))")
            }
            let prefix: Tuple
            do {
                prefix = try Tuple(prefixElements.map(Self.tupleElement))
            } catch let error as KVDocsError {
                throw failIn("\"prefix\": \(error.message)")
            }
            guard let componentsValue = fields["components"] else { throw failIn("missing \"components\"") }
            guard case .array(let componentValues) = componentsValue else {
                throw failIn("\"components\" must be an array, not \(article(componentsValue.typeName))")
            }
            var components: [Keyspace.Component] = []
            for (i, value) in componentValues.enumerated() {
                guard case .object(let c) = value else {
                    throw failIn("component \(i) must be an object with \"name\" and \"type\"")
                }
                guard case .string(let componentName)? = c["name"] else {
                    throw failIn("component \(i) needs a string \"name\"")
                }
                guard case .string(let typeName)? = c["type"] else {
                    throw failIn("component \(i) (\"\(componentName)\") needs a string \"type\"")
                }
                guard let type = Keyspace.ComponentType(rawValue: typeName) else {
                    throw failIn(
                        "component \(i) (\"\(componentName)\") has unknown type \"\(typeName)\"; expected one of \(Keyspace.ComponentType.allCases.map(\.rawValue).joined(separator: ", "))"
                    )
                }
                if let unknown = Set(c.keys).subtracting(["name", "type"]).sorted().first {
                    throw failIn("component \(i) (\"\(componentName)\") has unknown member \"\(unknown)\"")
                }
                components.append(.init(name: componentName, type: type))
            }
            do {
                try schema.add(try Keyspace(name: name, prefix: prefix, components: components))
            } catch let error as KVDocsError {
                throw fail(error.message)
            }
        }
        self = schema
    }

    /// Loads keyspaces from a JSON file.
    /// - Throws: `.ioError` when the file cannot be read; `.schema` as ``init(json:file:)``.
    public init(contentsOfFile path: String) throws {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw KVDocsError(.ioError, "cannot read keyspace file \(path): \(error.localizedDescription)")
        }
        try self.init(json: data, file: path)
    }

    /// A JSON prefix element as a tuple element.
    static func tupleElement(_ value: JSONValue) throws -> TupleElement {
        switch value {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .uint(let u): return .uint(u)
        case .double(let d): return .double(d)
        case .string(let s): return .string(s)
        case .array(let a): return .tuple(Tuple(try a.map(tupleElement)))
        case .object: throw KVDocsError(.schema, "an object cannot be a tuple element")
        }
    }
}
