import Foundation
import KVDocs
import KVReplCore

/// The schema and keyspace loaders: mutations of valid declarations; a loaded one must
/// write itself back as JSON that loads to an equal declaration.
struct FuzzSchemas: FuzzChecks {
    /// The errors the loaders document.
    static let documentedKinds: Set<String> = [KVDocsError.Kind.schema.rawValue]

    /// Keyspace declarations to the keyspace loader, mostly; the rest to the schema loader.
    func check(_ bytes: [UInt8], _ r: inout FuzzRandom) -> FuzzResult {
        let keyspaces =
            bytes.count > 14 && bytes.starts(with: Array("{\"keyspaces\"".utf8))
            ? r.below(10) != 0 : r.below(10) == 0
        return keyspaces ? Self.checkKeySchema(bytes) : Self.checkSchema(bytes)
    }

    static let keyspacesMore =
        #"{"keyspaces": {"k": {"prefix": ["a", 1, -2.5, true, null, ["nested", [18446744073709551615]], -9223372036854775808], "components": [{"name": "x", "type": "string"}, {"name": "y", "type": "int"}, {"name": "z", "type": "double"}, {"name": "b", "type": "bool"}, {"name": "raw", "type": "bytes"}, {"name": "u", "type": "uuid"}, {"name": "d", "type": "date"}]}, "e": {"prefix": [], "components": []}}}"#

    static let documents = [
        DemoDatabase.schemaJSON, Workload.schemaJSON, FuzzImports.schemaJSON, DemoDatabase.keyspacesJSON, keyspacesMore,
        #"{"collections": {"c": {"primaryKey": "id", "indexes": [{"name": "i", "fields": ["a.b", "t[]"], "unique": true, "include": ["x", "y.z"]}, {"name": "all", "fields": ["q"], "include": "*"}], "text": [{"name": "t", "fields": ["d", "e.f"], "tokenizer": "trigram case_sensitive 1", "detail": "none"}, {"name": "t2", "fields": ["g"], "tokenizer": "porter unicode61", "detail": "column"}]}, "d": {}}}"#,
        #"{"collections": {}}"#, #"{"keyspaces": {}}"#,
        #"{"collections": {"é": {"primaryKey": "k"}, "e\u0301": {"primaryKey": "k"}}}"#,
        #"{"keyspaces": {"a": {"prefix": ["x"], "components": []}, "b": {"prefix": ["x"], "components": []}}}"#,
        #"{"collections": {"c": {"primaryKey": "id", "indexes": [{"name": "i", "fields": ["a.b", "t[]"], "unique": true, "include": ["x"]}], "text": [{"name": "t", "fields": ["d"], "tokenizer": "trigram", "detail": "none", "caseSensitive": true}]}}}"#,
        #"{"keyspaces": {"k": {"prefix": ["a", 1], "components": [{"name": "x", "type": "string"}, {"name": "y", "type": "int"}, {"name": "z", "type": "double"}]}}}"#
    ]

    static let dictionary =
        [
            "\"collections\"", "\"keyspaces\"", "\"primaryKey\"", "\"indexes\"", "\"text\"", "\"name\"", "\"fields\"",
            "\"unique\"", "\"include\"", "\"tokenizer\"", "\"detail\"", "\"prefix\"", "\"components\"", "\"type\"",
            "\"string\"", "\"int\"", "\"double\"", "\"bool\"", "\"bytes\"", "\"uuid\"", "\"date\"", "\"float\"",
            "\"unicode61\"", "\"porter\"", "\"trigram\"", "\"trigram case_sensitive 1\"", "\"full\"", "\"column\"",
            "\"none\"",
            "\"*\"", "\"a.b\"", "\"tags[]\"", "\"a[].b[]\"", "\"\"", "\".\"", "\"[]\"", "\"a..b\"", "\"a[0]\"",
            "\"a b\"",
            "\"\\u0000\"", "\"\\ud800\"", "true", "false", "null", "[]", "{}", "[", "]", "{", "}", ",", ":", "\"", "\\",
            "{\"name\": \"i\", \"fields\": [\"x\"]}", "[[[[", "]]]]"
        ] + FuzzMutator.numbers

    static func plan(_ r: inout FuzzRandom) -> FuzzPlan {
        FuzzPlan(
            mutator: FuzzMutator(
                corpus: documents.map { Array($0.utf8) }, dictionary: dictionary.map { Array($0.utf8) }),
            fresh: { r in Array((r.bool() ? freshSchema(&r) : freshKeyspaces(&r)).utf8) },
            valid: 20,
            deep: { r in
                let limit = r.bool() ? JSONValue.maximumDepth : Tuple.maximumNestingDepth
                let n = fuzzDepth(&r, limit: limit)
                switch r.below(3) {
                case 0:
                    return Array(#"{"keyspaces": {"k": {"prefix": "#.utf8) + fuzzNest("[", "1", "]", n)
                        + Array(#", "components": []}}}"#.utf8)
                case 1:
                    return Array(#"{"collections": {"c": {"primaryKey": "id", "indexes": "#.utf8)
                        + fuzzNest("[", "", "]", n) + Array("}}}".utf8)
                default: return fuzzNest("{\"collections\": ", "{}", "}", n)
                }
            },
            alphabet: Array("{}[]\",:0123456789 truefalsn\\".utf8))
    }

    static func quoted(_ s: String) -> String {
        String(decoding: (try? JSONValue.string(s).canonicalBytes()) ?? Array("\"\"".utf8), as: UTF8.self)
    }

    static func field(_ r: inout FuzzRandom) -> String {
        r.chance(90)
            ? quoted(r.pick(["a", "b", "age", "a.b", "tags[]", "a.b[].c", "x[]", "id", "é", "a b", "c.d.e"]))
            : quoted(r.pick(["", "a.", ".a", "a[]b", "a[][]", "a..b", "[]"]))
    }

    static func freshSchema(_ r: inout FuzzRandom) -> String {
        let collections = (0..<r.size(4)).map { c -> String in
            var members: [String] = []
            if r.chance(80) {
                members.append(
                    "\"primaryKey\": \(quoted(r.chance(95) ? r.pick(["id", "key", "x"]) : r.pick(["a.b", "", "a[]"])))")
            }
            let indexes = (0..<r.size(4)).map { i -> String in
                var m = [
                    "\"name\": \(quoted(r.chance(95) ? "i\(i)" : r.pick(["by_a", "", "t0"])))",
                    "\"fields\": [" + (0..<(1 + r.size(3))).map { _ in field(&r) }.joined(separator: ", ") + "]"
                ]
                if r.chance(30) { m.append("\"unique\": \(r.bool())") }
                if r.chance(20) { m.append(r.bool() ? "\"include\": \"*\"" : "\"include\": [\(field(&r))]") }
                return "{" + m.joined(separator: ", ") + "}"
            }
            if !indexes.isEmpty || r.chance(20) {
                members.append("\"indexes\": [" + indexes.joined(separator: ", ") + "]")
            }
            let texts = (0..<r.size(3)).map { i -> String in
                var m = [
                    "\"name\": \(quoted("t\(i)"))",
                    "\"fields\": [" + (0..<(1 + r.size(3))).map { _ in field(&r) }.joined(separator: ", ") + "]"
                ]
                if r.chance(50) {
                    m.append(
                        "\"tokenizer\": \(quoted(r.chance(95) ? r.pick(["unicode61", "porter", "porter unicode61", "trigram", "trigram case_sensitive 0", "trigram case_sensitive 1"]) : r.pick(["bogus", "Porter", ""])))"
                    )
                }
                if r.chance(30) {
                    m.append("\"detail\": \(quoted(r.chance(95) ? r.pick(["full", "column", "none"]) : "some"))")
                }
                return "{" + m.joined(separator: ", ") + "}"
            }
            if !texts.isEmpty || r.chance(20) { members.append("\"text\": [" + texts.joined(separator: ", ") + "]") }
            return "\(quoted(r.chance(90) ? "c\(c)" : r.pick(["people", "é", "e\u{301}", "", "a b"]))): {"
                + members.joined(separator: ", ") + "}"
        }
        return "{\"collections\": {" + collections.joined(separator: ", ") + "}}"
    }

    static func freshKeyspaces(_ r: inout FuzzRandom) -> String {
        let keyspaces = (0..<r.size(4)).map { k -> String in
            let prefix = (0..<r.size(4)).map { _ in String(decoding: FuzzJSON.value(&r, depth: 3), as: UTF8.self) }
                .joined(separator: ", ")
            let components = (0..<r.size(5)).map { c in
                "{\"name\": \(quoted(r.chance(95) ? "c\(c)" : r.pick(["x", "", "é"]))), \"type\": \(quoted(r.chance(95) ? r.pick(["string", "int", "double", "bool", "bytes", "uuid", "date"]) : "float"))}"
            }.joined(separator: ", ")
            return
                "\(quoted(r.chance(90) ? "k\(k)" : r.pick(["dep", "", "é"]))): {\"prefix\": [\(prefix)], \"components\": [\(components)]}"
        }
        return "{\"keyspaces\": {" + keyspaces.joined(separator: ", ") + "}}"
    }

    static func checkSchema(_ bytes: [UInt8]) -> FuzzResult {
        let schema: DocumentSchema
        do {
            schema = try DocumentSchema(json: Data(bytes), file: "fuzz.json")
        } catch {
            return FuzzResult.judge(error, kinds: documentedKinds)
        }
        let problem = FuzzResult.after("loading DocumentSchema.jsonData() again") { () -> String? in
            let again = try DocumentSchema(json: schema.jsonData(), file: "written")
            return again == schema
                ? nil
                : "the schema written as JSON loads as a different schema: \(String(decoding: schema.jsonData(), as: UTF8.self).prefix(300))"
        }
        return problem.map { .failed($0) } ?? .accepted
    }

    static func checkKeySchema(_ bytes: [UInt8]) -> FuzzResult {
        let keys: KeySchema
        do {
            keys = try KeySchema(json: Data(bytes), file: "fuzz.json")
        } catch {
            return FuzzResult.judge(error, kinds: documentedKinds)
        }
        let problem = FuzzResult.after("loading KeySchema.jsonData() again") { () -> String? in
            let data = try keys.jsonData()
            let again = try KeySchema(json: data, file: "written")
            return again == keys
                ? nil
                : "the keyspaces written as JSON load as different keyspaces: \(String(decoding: data, as: UTF8.self).prefix(300))"
        }
        return problem.map { .failed($0) } ?? .accepted
    }
}
