import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@Suite struct KeyspaceTests {
    static let json = #"""
        {"keyspaces": {
          "departure": {"prefix": ["dep"], "components": [{"name": "station", "type": "string"}, {"name": "time", "type": "int"}]},
          "station":   {"prefix": ["st", 1], "components": [{"name": "code", "type": "string"}]},
          "reading":   {"prefix": ["r", null, [true, 2.5]], "components": [{"name": "sensor", "type": "uuid"}, {"name": "at", "type": "date"}, {"name": "value", "type": "double"}, {"name": "ok", "type": "bool"}, {"name": "raw", "type": "bytes"}]}
        }}
        """#

    @Test func jsonKeyspacesBuildAndDecodeKeys() throws {
        let schema = try KeySchema(json: Data(Self.json.utf8), file: "keyspaces.json")
        let departure = try schema.keyspace("departure")
        let key = try departure.key(["station": "Perth", "time": 1700000000])
        #expect(key.hex == "026465700002506572746800186553f100")  // ("dep", "Perth", 1700000000)
        #expect(try departure.key("Perth", 1700000000) == key)
        #expect(schema.decode(key)?.description == #"departure(station: "Perth", time: 1700000000)"#)
        #expect(schema.decode(key)?["time"] == .int(1700000000))

        let reading = try schema.keyspace("reading")
        #expect(reading.prefix == Tuple(["r", nil, .tuple([true, 2.5])]))
        let id = UUID(uuidString: "12345678-1234-5678-1234-567812345678")!
        let at = Date(timeIntervalSince1970: 1_700_000_000)
        let rkey = try reading.key(["sensor": id, "at": at, "value": 21, "ok": true, "raw": [UInt8]([0, 1])])
        #expect(
            schema.decode(rkey)?.description
                == #"reading(sensor: UUID(12345678-1234-5678-1234-567812345678), at: 2023-11-14T22:13:20Z, value: 21.0, ok: true, raw: 0x0001)"#
        )
        // Keys of no keyspace, and keys that fit a prefix but not its components, decode to nil.
        #expect(schema.decode(Tuple(["other", 1])) == nil)
        #expect(schema.decode(Tuple(["dep", "Perth"])) == nil)
        #expect(schema.decode([0xFF]) == nil)
    }

    @Test func keysSortByComponentsAndRangesSelectLeadingComponents() throws {
        let schema = try KeySchema(json: Data(Self.json.utf8))
        let departure = try schema.keyspace("departure")
        try withTemporaryDatabase { db, _ throws in
            for (station, time) in [("Perth", 300), ("Perth", -5), ("Armadale", 10), ("Perth", 20), ("Perthshire", 1)] {
                try db.put(departure.key(["station": station, "time": time]), "")
            }
            let perth = try db.entries(departure.range(["station": "Perth"])).collect()
            #expect(perth.compactMap { schema.decode($0.key)?["time"] } == [.int(-5), .int(20), .int(300)])
            let all = try db.entries(departure.range()).collect()
            #expect(all.count == 5)
            #expect(
                try db.entries(departure.range(["station": "Perth"]), order: .reverse, limit: 1).collect().map {
                    try departure.decode($0.key).description
                }
                    == [#"departure(station: "Perth", time: 300)"#])
        }
    }

    @Test func mismatchedNamesTypesAndArityGiveClearErrors() throws {
        let departure = try KeySchema(json: Data(Self.json.utf8)).keyspace("departure")
        let cases: [(() throws -> Any, String)] = [
            (
                { try departure.key(["station": "Perth"]) },
                #"keyspace "departure" needs 2 components (station: string, time: int); missing "time""#
            ),
            (
                { try departure.key(["station": "Perth", "time": 1, "platform": 2]) },
                #"keyspace "departure" has no component "platform"; its components are station: string, time: int"#
            ),
            (
                { try departure.key(["station": 5, "time": 1]) },
                #"keyspace "departure": component "station" is a string, not an integer (5)"#
            ),
            (
                { try departure.key(["station": "Perth", "time": 1.5]) },
                #"keyspace "departure": component "time" is an int, not a double (1.5)"#
            ),
            (
                { try departure.key("Perth") },
                #"keyspace "departure" needs 2 components (station: string, time: int), got 1"#
            ),
            (
                { try departure.range(["time": 5]) },
                #"keyspace "departure": a range takes leading components in order (station: string, time: int); "time" cannot be used without the components before it"#
            ),
            (
                { try departure.decode(Tuple(["dep", "Perth", "noon"])) },
                #"keyspace "departure": component "time" should be an int, found a string "noon""#
            ),
            (
                { try departure.decode(Tuple(["dep", "Perth"])) },
                #"key ("Perth",) has 1 component after the prefix of keyspace "departure", which declares 2 (station: string, time: int)"#
            ),
            (
                { try departure.decode(Tuple(["arr", "Perth", 1])) },
                #"key is not in keyspace "departure" (prefix ("dep",))"#
            )
        ]
        for (body, message) in cases {
            do {
                _ = try body()
                Issue.record("no error; expected: \(message)")
            } catch let error as KVDocsError {
                #expect(error.kind == .schema)
                #expect(error.message == message)
            }
        }
    }

    @Test(arguments: [
        (
            #"{"keyspaces": {"d": {"prefix": ["dep"], "components": [{"name": "t", "type": "integer"}]}}}"#,
            #"ks.json: keyspace "d": component 0 ("t") has unknown type "integer"; expected one of string, int, double, bool, bytes, uuid, date"#
        ),
        (#"{"keyspaces": {"d": {"components": []}}}"#, #"ks.json: keyspace "d": missing "prefix""#),
        (
            #"{"keyspaces": {"d": {"prefix": "dep", "components": []}}}"#,
            #"ks.json: keyspace "d": "prefix" must be an array, not a string"#
        ),
        (
            #"{"keyspaces": {"d": {"prefix": [{"a": 1}], "components": []}}}"#,
            #"ks.json: keyspace "d": "prefix": an object cannot be a tuple element"#
        ),
        (
            #"{"keyspaces": {"d": {"prefix": [], "components": [{"name": "a", "type": "int"}, {"name": "a", "type": "int"}]}}}"#,
            #"ks.json: keyspace "d": component "a" is declared twice"#
        ),
        (
            #"{"keyspaces": {"d": {"prefix": [], "components": [{"type": "int"}]}}}"#,
            #"ks.json: keyspace "d": component 0 needs a string "name""#
        ),
        (
            #"{"keyspaces": {"d": {"prefix": [], "components": [], "extra": 1}}}"#,
            #"ks.json: keyspace "d": unknown member "extra" (expected "prefix" and "components")"#
        ),
        (
            #"{"keyspaces": {"a": {"prefix": ["x"], "components": []}, "b": {"prefix": ["x"], "components": []}}}"#,
            #"ks.json: keyspaces "a" and "b" have the same prefix ("x",)"#
        ),
        (#"{"keys": {}}"#, #"ks.json: missing the "keyspaces" member"#),
        (#"[1]"#, #"ks.json: the top level must be an object with a "keyspaces" member, not an array"#)
    ])
    func malformedKeyspaceFilesNameTheFileTheKeyspaceAndTheProblem(json: String, message: String) {
        do {
            _ = try KeySchema(json: Data(json.utf8), file: "ks.json")
            Issue.record("accepted: \(json)")
        } catch let error as KVDocsError {
            #expect(error.kind == .schema)
            #expect(error.message == message)
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test func jsonSyntaxErrorsNameTheFileAndPosition() throws {
        let dir = TemporaryDirectory()
        let path = dir.child("keyspaces.json")
        try Data("{\"keyspaces\": {\n  \"d\": {\"prefix\": [1,, 2]}}}".utf8).write(to: URL(fileURLWithPath: path))
        do {
            _ = try KeySchema(contentsOfFile: path)
            Issue.record("accepted invalid JSON")
        } catch let error as KVDocsError {
            #expect(error.kind == .schema)
            #expect(error.message.hasPrefix("\(path): invalid JSON at line 2, column 22"))
        }
        #expect(throws: KVDocsError.self) { _ = try KeySchema(contentsOfFile: dir.child("missing.json")) }
    }

    @Test func swiftDeclaredKeyspacesMatchJSONOnes() throws {
        let swift = try KeySchema([
            Keyspace(
                name: "departure", prefix: ["dep"],
                components: [.init(name: "station", type: .string), .init(name: "time", type: .int)])
        ])
        let json = try KeySchema(
            json: Data(
                #"{"keyspaces": {"departure": {"prefix": ["dep"], "components": [{"name": "station", "type": "string"}, {"name": "time", "type": "int"}]}}}"#
                    .utf8))
        #expect(swift == json)
        #expect(throws: KVDocsError.self) { _ = try Keyspace(name: "", prefix: [], components: []) }
    }
}
