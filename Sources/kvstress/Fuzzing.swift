import Foundation
import KVDocs
import KVReplCore

#if canImport(Glibc)
import Glibc
#endif

/// Seeded fuzzing of every parser that reads input from a user or a file: random bytes and
/// mutations of valid inputs. Each input must be accepted or rejected with a one-line
/// `KVDocsError` (or kvrepl's `ShellCommandError`); a crash ends the process, and a watchdog
/// ends it when one input runs longer than 10 seconds.
enum FuzzScenario {
    static let targets = ["tuple", "command", "fts5", "schema", "import", "json"]

    /// The input being run, for the watchdog: its start time and a description.
    final class Current: @unchecked Sendable {
        private let lock = NSLock()
        private var started = Date.distantFuture
        private var what = ""
        func begin(_ what: @autoclosure () -> String) {
            lock.withLock {
                started = Date()
                self.what = what()
            }
        }
        func end() { lock.withLock { started = .distantFuture } }
        var state: (Date, String) { lock.withLock { (started, what) } }
    }

    static func startWatchdog(_ current: Current, limit: Double) {
        let thread = Thread {
            while true {
                usleep(200_000)
                let (started, what) = current.state
                if Date().timeIntervalSince(started) > limit {
                    note("HANG: one input ran more than \(Int(limit)) s: \(what)")
                    exit(2)
                }
            }
        }
        thread.start()
    }

    // MARK: Inputs

    static let interesting: [String] = [
        "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
        "18446744073709551615", "18446744073709551616", "1e309", "-1e309", "1e-400", "0.1", "-0", "NaN",
        String(repeating: "9", count: 400), "\"", "\\", "(", ")", "[", "]", "{", "}", ",", ":", "*", "^", "-", "+",
        "\u{0}", "\u{FFFD}", "é", "\u{10FFFF}", "\u{D7FF}", "\\uD800", "\\uDC00", "\\u0000", " ", "\t", "\n", "\r\n",
        "NEAR(", "AND", "OR", "NOT", "limit", "offset", "where", "0x", "0xzz",
        String(repeating: "(", count: 300), String(repeating: "[", count: 300), String(repeating: "{\"a\":", count: 300)
    ]

    static func mutate(_ input: [UInt8], _ corpus: [[UInt8]], _ rng: inout SplitMix64) -> [UInt8] {
        var bytes = input
        for _ in 0..<(1 + Int(rng.next() % 4)) {
            let at = bytes.isEmpty ? 0 : Int(rng.next() % UInt64(bytes.count + 1))
            switch rng.next() % 8 {
            case 0 where !bytes.isEmpty:
                bytes[min(at, bytes.count - 1)] ^= UInt8(1 << (rng.next() % 8))
            case 1:
                bytes.insert(UInt8(truncatingIfNeeded: rng.next()), at: at)
            case 2 where !bytes.isEmpty:
                bytes.remove(at: min(at, bytes.count - 1))
            case 3:
                bytes.insert(contentsOf: Array(interesting[Int(rng.next() % UInt64(interesting.count))].utf8), at: at)
            case 4 where at < bytes.count:
                bytes.removeSubrange(at..<min(bytes.count, at + 1 + Int(rng.next() % 16)))
            case 5 where !corpus.isEmpty:
                let other = corpus[Int(rng.next() % UInt64(corpus.count))]
                let from = other.isEmpty ? 0 : Int(rng.next() % UInt64(other.count))
                bytes.insert(contentsOf: other[from..<min(other.count, from + 1 + Int(rng.next() % 32))], at: at)
            case 6 where at < bytes.count:
                let chunk = bytes[at..<min(bytes.count, at + 1 + Int(rng.next() % 16))]
                bytes.insert(contentsOf: chunk, at: at)
            default:
                bytes = Array(bytes.prefix(at))
            }
        }
        return bytes
    }

    /// Every other input is a mutation of a valid one, one in ten is random bytes.
    static func input(_ corpus: [[UInt8]], _ rng: inout SplitMix64) -> [UInt8] {
        if rng.next() % 10 == 0 {
            return (0..<Int(rng.next() % 64)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        }
        let base = corpus[Int(rng.next() % UInt64(corpus.count))]
        return rng.next() % 5 == 0 ? base : mutate(base, corpus, &rng)
    }

    static func randomTuple(_ rng: inout SplitMix64, depth: Int = 0) -> Tuple {
        var elements: [TupleElement] = []
        for _ in 0..<Int(rng.next() % 5) {
            switch rng.next() % (depth < 3 ? 10 : 9) {
            case 0: elements.append(.null)
            case 1:
                elements.append(
                    .bytes(
                        (0..<Int(rng.next() % 6)).map { _ in
                            UInt8(truncatingIfNeeded: rng.next() % 3 == 0 ? 0 : rng.next())
                        }))
            case 2: elements.append(.string(["", "a\u{0}b", "é", "\u{10FFFF}", "x y"][Int(rng.next() % 5)]))
            case 3: elements.append(.int([Int64.min, Int64.max, -1, 0, 1, 255, -256][Int(rng.next() % 7)]))
            case 4: elements.append(.uint(UInt64.max - rng.next() % 3))
            case 5:
                elements.append(
                    .double([Double.nan, .infinity, -.infinity, -0.0, 1.5, .leastNonzeroMagnitude][Int(rng.next() % 6)])
                )
            case 6: elements.append(.float([Float.nan, 1.25, -.infinity][Int(rng.next() % 3)]))
            case 7: elements.append(.bool(rng.next() % 2 == 0))
            case 8: elements.append(.uuid(UUID()))
            default: elements.append(.tuple(randomTuple(&rng, depth: depth + 1)))
            }
        }
        return Tuple(elements)
    }

    // MARK: Targets

    struct Outcome {
        var accepted = 0
        var rejected = 0
        var failures: [String] = []
        var slowest = 0.0
    }

    static func show(_ bytes: [UInt8]) -> String {
        let text = String(decoding: bytes.prefix(120), as: UTF8.self)
        return text.debugDescription + (bytes.count > 120 ? "… (\(bytes.count) bytes)" : "")
    }

    /// Runs one input: an error must be one line, and any other result passes `check`.
    static func run(
        _ bytes: [UInt8], _ index: Int, _ outcome: inout Outcome, _ current: Current, _ target: String,
        _ body: () throws -> String?
    ) {
        current.begin("\(target) input \(index): \(show(bytes))")
        let start = Date()
        do {
            if let problem = try body() {
                outcome.failures.append("\(target) input \(index) \(show(bytes)): \(problem)")
            } else {
                outcome.accepted += 1
            }
        } catch {
            let text: String
            if let e = error as? KVDocsError {
                text = e.description
            } else if let e = error as? ShellCommandError {
                text = e.description
            } else {
                outcome.failures.append(
                    "\(target) input \(index) \(show(bytes)): an error of type \(type(of: error)): \(error)")
                current.end()
                return
            }
            if text.isEmpty || text.contains("\n") {
                outcome.failures.append(
                    "\(target) input \(index) \(show(bytes)): not a one-line error: \(text.debugDescription)")
            }
            outcome.rejected += 1
        }
        outcome.slowest = max(outcome.slowest, Date().timeIntervalSince(start))
        current.end()
    }

    static func fuzz(_ target: String, inputs: Int, seed: UInt64, current: Current) throws -> Outcome {
        var rng = SplitMix64(seed: seed ^ UInt64(target.utf8.reduce(0) { $0 &* 31 &+ Int($1) }))
        var outcome = Outcome()
        switch target {
        case "tuple":
            let corpus = (0..<200).map { _ in randomTuple(&rng).encoded }
            for i in 0..<inputs {
                let bytes = input(corpus, &rng)
                run(bytes, i, &outcome, current, target) {
                    let tuple = try Tuple(decoding: bytes)
                    let again = try Tuple(decoding: tuple.encoded)
                    return again.encoded == tuple.encoded ? nil : "decode, encode, decode is not stable"
                }
            }
        case "command":
            let lines = [
                "get (\"a\", 1, -2.5, true, null)", "put k some value", "put (\"k\") 0x00ff", "del k",
                "scan --prefix p --limit 10 --reverse",
                "scan --from a --to z --keys-only --count", "delrange --prefix x", "stats", "property leveldb.stats",
                "size a z", "compact",
                "snapshot", "release", "dump out.txt", "load in.txt", "keyspaces", "sync on", "repair", "help find",
                "schema", "collections",
                "indexes people", "insert people {\"id\": 1, \"a\": [1, 2.5, \"x\", {\"b\": null}]}",
                "upsert people {\"id\": \"x\"}",
                "doc people 1", "remove people 1", "import people file.jsonl", "export people out.jsonl",
                "find people where age >= 30 and name prefix \"a\" order by age desc limit 10 offset 5",
                "find people where tags[] in [1, 2, 3] and a.b between 1 and 9223372036854775807",
                "count people where age != 3", "explain find people where age = 1 order by name",
                "search people \"river OR station\" limit 5 highlight", "terms people bio_text ri limit 3", "verify",
                "verify people",
                "reindex people by_age", "salvage", "salvage q", "changes since 5 limit 9223372036854775807", "quit"
            ].map { Array($0.utf8) }
            for i in 0..<inputs {
                let bytes = input(lines, &rng)
                run(bytes, i, &outcome, current, target) {
                    _ = try ShellCommand.parse(String(decoding: bytes, as: UTF8.self))
                    return nil
                }
            }
        case "fts5":
            let queries = [
                "river", "river station", "river OR station", "river NOT station", "\"river station\"", "riv*",
                "^river", "bio: river", "{name bio}: river", "-name: river", "NEAR(river station, 3)", "NEAR(a b c)",
                "(a OR b) AND (c NOT d)", "a + b", "\"a\" * b", "name:\"x y\"*"
            ].map { Array($0.utf8) }
            let tokenizers = [TextTokenizer(.unicode61), TextTokenizer(.porter), TextTokenizer(.trigram)]
            for i in 0..<inputs {
                let bytes = input(queries, &rng)
                let tokenizer = tokenizers[i % tokenizers.count]
                run(bytes, i, &outcome, current, target) {
                    _ = try TextQuery.parse(
                        String(decoding: bytes, as: UTF8.self), tokenizer: tokenizer, columns: ["name", "bio"])
                    return nil
                }
            }
        case "schema":
            let documents = [
                Workload.schemaJSON, DemoDatabase.schemaJSON, DemoDatabase.keyspacesJSON,
                #"{"collections": {"c": {"primaryKey": "id", "indexes": [{"name": "i", "fields": ["a.b", "t[]"], "unique": true, "include": ["x"]}], "text": [{"name": "t", "fields": ["d"], "tokenizer": "trigram", "detail": "none", "caseSensitive": true}]}}}"#,
                #"{"keyspaces": {"k": {"prefix": ["a", 1], "components": [{"name": "x", "type": "string"}, {"name": "y", "type": "int"}, {"name": "z", "type": "double"}]}}}"#
            ].map { Array($0.utf8) }
            for i in 0..<inputs {
                let bytes = input(documents, &rng)
                if i % 2 == 0 {
                    run(bytes, i, &outcome, current, target) {
                        _ = try DocumentSchema(json: Data(bytes), file: "fuzz.json")
                        return nil
                    }
                } else {
                    run(bytes, i, &outcome, current, target) {
                        _ = try KeySchema(json: Data(bytes), file: "fuzz.json")
                        return nil
                    }
                }
            }
        case "json":
            let documents = [
                #"{"a": 1, "b": [true, false, null, -0.5e10, "x\u00e9\ud83d\ude00"], "c": {"d": 18446744073709551615}}"#,
                "[]", "{}", "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "-9223372036854775808", "1.7976931348623157e308",
                String(repeating: "[", count: 250) + String(repeating: "]", count: 250)
            ].map { Array($0.utf8) }
            for i in 0..<inputs {
                let bytes = input(documents, &rng)
                run(bytes, i, &outcome, current, target) {
                    let value = try JSONValue(parsing: Data(bytes))
                    let again = try JSONValue(parsing: try value.canonicalData())
                    return again == value || value.compactDescription.contains("nan")
                        ? nil : "canonical form does not parse back to the same value"
                }
            }
        case "import":
            let work = try makeWorkDirectory("fuzz-import")
            defer { try? FileManager.default.removeItem(atPath: work) }
            let db = try LevelDB(path: work + "/db")
            defer { db.close() }
            let store = try DocumentStore(database: db, schema: try Workload.schema())
            let lines = (0..<20).map { i in
                String(decoding: (try? Workload.person(id: i, version: 0).canonicalData()) ?? Data(), as: UTF8.self)
            }
            let files = (0..<8).map { k in
                Array(
                    lines.shuffled(using: &rng).prefix(1 + k * 2).joined(separator: k % 2 == 0 ? "\n" : "\r\n\n").utf8)
            }
            let file = work + "/input.jsonl"
            for i in 0..<inputs {
                let bytes = input(files, &rng)
                try Data(bytes).write(to: URL(fileURLWithPath: file))
                run(bytes, i, &outcome, current, target) {
                    _ = try store.importJSONLines(
                        into: "people", path: file, mode: i % 3 == 0 ? .insert : .upsert, batchSize: 1 + i % 7)
                    return nil
                }
                // Every document stored is exactly one of the lines given (or earlier ones):
                // checked with verify, which also proves a failed import left no partial state.
                if i % 500 == 499 || i == inputs - 1 {
                    let report = try store.verify()
                    if !report.isClean { outcome.failures.append("import: verify after input \(i): \(report)") }
                }
            }
        default:
            throw Failure("unknown fuzz target \(target); known: \(targets.joined(separator: ", "))")
        }
        return outcome
    }

    /// One input of `target` as libFuzzer runs it: `nil`, or what was wrong.
    static func single(_ target: String) throws -> ([UInt8]) -> String? {
        let current = Current()
        let tokenizers = [TextTokenizer(.unicode61), TextTokenizer(.porter), TextTokenizer(.trigram)]
        func check(_ bytes: [UInt8], _ body: () throws -> String?) -> String? {
            var outcome = Outcome()
            run(bytes, 0, &outcome, current, target, body)
            return outcome.failures.first
        }
        switch target {
        case "tuple":
            return { bytes in
                check(bytes) {
                    let tuple = try Tuple(decoding: bytes)
                    return try Tuple(decoding: tuple.encoded).encoded == tuple.encoded
                        ? nil : "decode, encode, decode is not stable"
                }
            }
        case "command":
            return { bytes in
                check(bytes) {
                    _ = try ShellCommand.parse(String(decoding: bytes, as: UTF8.self))
                    return nil
                }
            }
        case "fts5":
            return { bytes in
                check(bytes) {
                    _ = try TextQuery.parse(
                        String(decoding: bytes, as: UTF8.self), tokenizer: tokenizers[bytes.count % 3],
                        columns: ["name", "bio"])
                    return nil
                }
            }
        case "schema":
            return { bytes in
                check(bytes) {
                    if bytes.count % 2 == 0 {
                        _ = try DocumentSchema(json: Data(bytes), file: "fuzz.json")
                    } else {
                        _ = try KeySchema(json: Data(bytes), file: "fuzz.json")
                    }
                    return nil
                }
            }
        case "json":
            return { bytes in
                check(bytes) {
                    let value = try JSONValue(parsing: Data(bytes))
                    return try JSONValue(parsing: try value.canonicalData()) == value
                        || value.compactDescription.contains("nan") ? nil : "canonical form does not parse back"
                }
            }
        default:
            throw Failure("libFuzzer runs one of tuple, command, fts5, schema, json (import uses the seeded loop)")
        }
    }

    static func run(targets: [String], inputs: Int, seed: UInt64, verbose: Bool) throws -> Figures {
        let current = Current()
        startWatchdog(current, limit: 10)
        var figures = Figures(scenario: "fuzz")
        for target in targets {
            let start = Date()
            let outcome = try fuzz(target, inputs: inputs, seed: seed, current: current)
            let seconds = Date().timeIntervalSince(start)
            figures.rounds += inputs
            figures.add("\(target): inputs", inputs)
            figures.add("\(target): accepted", outcome.accepted)
            figures.add("\(target): rejected with a one-line error", outcome.rejected)
            figures.add("\(target): slowest input (ms)", Int(outcome.slowest * 1000))
            figures.add("\(target): inputs per second", Int(Double(inputs) / max(seconds, 0.001)))
            for f in outcome.failures { figures.fail(f) }
            if verbose { note("\(target): \(inputs) inputs in \(String(format: "%.1f", seconds)) s") }
        }
        return figures
    }
}
