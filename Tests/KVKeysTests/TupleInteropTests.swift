import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// Differential tests against FoundationDB's own tuple layer (Python `fdb.tuple`), and a
/// database written here read back by another LevelDB client (Python `plyvel`).
@Suite struct TupleInteropTests {
    @Test(.requires(.fdbTuple))
    func pythonRepacksOurEncodingsToTheSameBytes() throws {
        var rng = SplitMix64(seed: 21)
        let encodings = (0..<3000).map { _ in TupleGenerator.tuple(&rng).encoded.hex }
        let output = try runPython(
            "Tests/python/fdb_tuple_tool.py", ["repack"], input: encodings.joined(separator: "\n") + "\n")
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        try #require(lines.count == encodings.count)
        for (ours, theirs) in zip(encodings, lines) {
            #expect(
                ours == theirs,
                "Swift \(ours) (\((try? Tuple(decoding: hexBytes(ours)).description) ?? "?")) vs fdb.tuple \(theirs)")
        }
    }

    @Test(.requires(.fdbTuple))
    func weDecodeAndReencodePythonsTuplesExactly() throws {
        let output = try runPython("Tests/python/fdb_tuple_tool.py", ["generate", "3000", "7"])
        let encodings = output.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        try #require(encodings.count == 3000)
        #expect(encodings.contains(""))  // the empty tuple is among them
        for hex in encodings {
            let tuple = try Tuple(decoding: hexBytes(hex))
            #expect(tuple.encoded.hex == hex, "\(tuple)")
        }
    }

    @Test(.requires(.fdbTuple))
    func pythonCompareAgreesWithByteOrder() throws {
        var rng = SplitMix64(seed: 22)
        let tuples = (0..<600).map { _ in TupleGenerator.tuple(&rng, maxLength: 3) }
        let pairs = (0..<4000).map { _ in (tuples.randomElement(using: &rng)!, tuples.randomElement(using: &rng)!) }
        let input = pairs.map { "-\($0.0.encoded.hex) -\($0.1.encoded.hex)" }.joined(separator: "\n") + "\n"
        let results = try runPython("Tests/python/fdb_tuple_tool.py", ["compare"], input: input).split(separator: "\n")
            .compactMap { Int($0) }
        try #require(results.count == pairs.count)
        for ((a, b), theirs) in zip(pairs, results) {
            let ea = a.encoded, eb = b.encoded
            let ours = ea == eb ? 0 : (ea.lexicographicallyPrecedes(eb) ? -1 : 1)
            #expect(ours == theirs, "\(a) vs \(b)")
        }
    }

    /// The documented interop example: Examples/python/read_kvdocs.py reads a database
    /// written here with plyvel and decodes its keys with fdb.tuple.
    @Test(.requires(.plyvel, .fdbTuple))
    func pythonReadsADatabaseWrittenHere() throws {
        let dir = TemporaryDirectory()
        let path = dir.child("db")
        let id = UUID(uuidString: "12345678-1234-5678-1234-567812345678")!
        do {
            let db = try LevelDB(path: path)
            let departures = Subspace(["dep"])
            try db.put(departures.pack(["Perth", 1700000000]), "to Fremantle")
            try db.put(departures.pack(["Perth", -5]), "")
            try db.put(departures.pack(["Armadale", .uint(.max)]), [0x00, 0xFF])
            try db.put(Tuple(["misc", .bytes([0, 1]), nil, .tuple(["n", nil]), 1.5, true, .uuid(id)]), "x")
            try db.put([0xFF, 0x00], "not a tuple")
            db.close()
        }
        let lines = try runPython("Examples/python/read_kvdocs.py", [path, "--json"]).split(separator: "\n").map(
            String.init)
        #expect(
            lines == [
                #"{"key": ["dep", "Armadale", 18446744073709551615], "value_hex": "00ff"}"#,
                #"{"key": ["dep", "Perth", -5], "value_hex": ""}"#,
                #"{"key": ["dep", "Perth", 1700000000], "value_hex": "746f204672656d616e746c65"}"#,
                #"{"key": ["misc", {"bytes": "0001"}, null, ["n", null], 1.5, true, {"uuid": "12345678-1234-5678-1234-567812345678"}], "value_hex": "78"}"#,
                #"{"key": {"hex": "ff00"}, "value_hex": "6e6f74206120747570"# + #"6c65"}"#
            ])
    }

    /// And the other way: keys packed by fdb.tuple and written by plyvel are read and
    /// decoded here, in the same order.
    @Test(.requires(.plyvel, .fdbTuple))
    func weReadADatabaseWrittenByPython() throws {
        let dir = TemporaryDirectory()
        let path = dir.child("db")
        let script = """
            import plyvel
            from fdb import tuple as fdbt
            db = plyvel.DB('\(path)', create_if_missing=True)
            db.put(fdbt.pack(('dep', 'Perth', 1700000000)), b'v1')
            db.put(fdbt.pack(('dep', 'Perth', -1)), b'')
            db.put(fdbt.pack(('dep', 'Perth', 2**70)), b'big')
            db.put(fdbt.pack(('dep', 'Armadale', None, (1, None))), b'\\x00')
            db.close()
            """
        let result = try runProcess(try referencePython(), ["-c", script])
        try #require(result.status == 0, "\(result.stderr)")
        let db = try LevelDB(path: path)
        defer { db.close() }
        let entries = try db.entries(Subspace(["dep"]).range).collect()
        #expect(
            try entries.map { try Tuple(decoding: $0.key).description } == [
                "(\"dep\", \"Armadale\", nil, (1, nil))",
                "(\"dep\", \"Perth\", -1)",
                "(\"dep\", \"Perth\", 1700000000)",
                "(\"dep\", \"Perth\", 1180591620717411303424)"
            ])
        #expect(try db.get(Tuple(["dep", "Perth", 1700000000]), as: String.self) == "v1")
        #expect(entries.map(\.value) == [[0], [], Array("v1".utf8), Array("big".utf8)])
    }
}
