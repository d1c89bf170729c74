import Foundation
import KVDocs

#if canImport(Glibc)
import Glibc
#endif

/// The JSON-lines importer, into one store with a secondary, a unique, a multi-valued and a
/// text index. A file with a malformed line (not JSON, not an object, no usable id) must be
/// refused before anything is written; a file the importer accepts must be stored exactly.
struct FuzzImports: FuzzChecks {
    static let schemaJSON = #"""
        {"collections": {"people": {
          "primaryKey": "id",
          "indexes": [
            {"name": "by_age", "fields": ["age"]},
            {"name": "by_email", "fields": ["email"], "unique": true},
            {"name": "by_tag", "fields": ["tags[]"]},
            {"name": "by_city_age", "fields": ["address.city", "age"]}
          ],
          "text": [{"name": "bio_text", "fields": ["name", "bio"], "tokenizer": "porter"},
                   {"name": "title_trigram", "fields": ["title"], "tokenizer": "trigram"}]
        }}}
        """#

    let work: String
    let db: LevelDB
    let store: DocumentStore
    /// The input file, rewritten for every input: in memory (/dev/shm) where there is one.
    let file: String
    /// The fields of the schema's secondary indexes.
    static let indexedFields: [FieldPath] = ["age", "email", "tags[]", "address.city"]
    static let uniqueField: FieldPath = "email"
    var outcomes: [String: Int] = [:]

    /// Opens an empty store with ``schemaJSON`` in a new work directory.
    init() throws {
        let work = try makeWorkDirectory("fuzz-import")
        let db: LevelDB
        let store: DocumentStore
        do {
            db = try LevelDB(path: work + "/db")
            do {
                store = try DocumentStore(
                    database: db,
                    schema: try DocumentSchema(json: Data(Self.schemaJSON.utf8), file: "fuzz import schema"))
            } catch {
                db.close()
                throw error
            }
        } catch {
            try? FileManager.default.removeItem(atPath: work)
            throw error
        }
        self.work = work
        self.db = db
        self.store = store
        file =
            FileManager.default.isWritableFile(atPath: "/dev/shm")
            ? "/dev/shm/kvstress-fuzz-\(getpid())-\(UUID().uuidString).jsonl" : work + "/input.jsonl"
    }

    mutating func close() {
        unlink(file)
        db.close()
        try? FileManager.default.removeItem(atPath: work)
    }

    /// Imports in a mode, with a batch size and (one time in a hundred) into a collection
    /// the schema lacks, as `r` picks.
    mutating func check(_ bytes: [UInt8], _ r: inout FuzzRandom) -> FuzzResult {
        let mode: DocumentStore.ImportMode = r.below(5) == 0 ? .insert : .upsert
        let batchSize = [1, 2, 3, 7, 1000][r.below(5)]
        let collection = r.below(100) == 0 ? "nobody" : "people"
        return check(bytes, collection: collection, mode: mode, batchSize: batchSize)
    }

    /// `store.verify()` must be clean: no failed import left part of a write behind.
    mutating func checkpoint(after index: Int) -> String? {
        do {
            let report = try store.verify()
            outcomes["verify runs", default: 0] += 1
            guard report.isClean else {
                return
                    "verify after input \(index) is not clean: \(report.missingEntries) missing and \(report.danglingEntries) dangling index entries, \(report.badDocuments) bad documents; \(report.problems.prefix(3).joined(separator: "; "))"
            }
            return nil
        } catch {
            return "verify after input \(index) threw: \(FuzzShow.escaped(String(describing: error)))"
        }
    }

    static func document(_ r: inout FuzzRandom) -> String {
        var members: [String] = []
        let id =
            r.chance(93)
            ? String(r.below(40))
            : r.pick([
                "\"p\(r.below(10))\"", "\"é\"", "\"e\\u0301\"", "-1", "1.0", "1.5", "9223372036854775807",
                "18446744073709551615", "-9223372036854775808", "1e3", "\"\"", "null", "[1]", "{}"
            ])
        if r.chance(99) { members.append("\"id\": \(id)") }
        if r.chance(80) {
            members.append(
                "\"age\": \(r.chance(80) ? String(18 + r.below(60)) : r.pick(FuzzMutator.numbers + ["\"x\"", "null", "[]"]))"
            )
        }
        // Mostly the id's own address (upserts keep it); now and then another's (a unique conflict).
        if r.chance(70) { members.append("\"email\": \"p\(r.chance(85) ? id : String(r.below(40)))@example.org\"") }
        if r.chance(50) {
            members.append(
                "\"tags\": ["
                    + (0..<r.size(4)).map { _ in r.pick(["\"a\"", "\"b\"", "1", "null", "[1]", "{\"x\": 1}", "\"é\""]) }
                    .joined(separator: ", ") + "]")
        }
        if r.chance(50) {
            members.append(
                "\"address\": {\"city\": \(r.pick(["\"Perth\"", "\"Fremantle\"", "1", "null", "{\"a\": []}"])), \"zip\": \(r.below(9999))}"
            )
        }
        if r.chance(60) {
            members.append(
                "\"name\": \"person \(r.below(100))\", \"bio\": \(FuzzSchemas.quoted((0..<r.size(10)).map { _ in r.pick(Workload.words + ["é", "ﬁ", "\u{0}", "中文"]) }.joined(separator: " ")))"
            )
        }
        if r.chance(30) {
            members.append("\"title\": \(r.pick(["\"ab\"", "\"abc def\"", "\"\"", "\"ÀÉÎ\"", "\"\\ud83d\\ude00x\""]))")
        }
        if r.chance(20) { members.append("\"n\": " + String(decoding: FuzzJSON.value(&r, depth: 2), as: UTF8.self)) }
        if r.chance(5) { members.append("\"id\": \(id)") }
        return "{" + members.joined(separator: r.pick([", ", ","])) + "}"
    }

    static func freshFile(_ r: inout FuzzRandom) -> [UInt8] {
        var lines = (0..<(1 + r.size(10))).map { _ in document(&r) }
        if r.chance(20) { lines.insert(r.pick(["", " ", "\t", "  \t "]), at: r.below(lines.count + 1)) }
        if r.chance(10), let first = lines.first { lines.append(first) }
        let separator = r.pick(["\n", "\n", "\r\n", "\n\n"])
        return Array((lines.joined(separator: separator) + (r.chance(60) ? separator : "")).utf8)
    }

    /// Line-level mutations: a line repeated, dropped, moved, blank lines, stray `\r`.
    static func mutateLines(_ bytes: [UInt8], _ r: inout FuzzRandom) -> [UInt8] {
        var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
        for _ in 0..<(1 + r.below(3)) {
            let i = r.below(lines.count)
            switch r.below(5) {
            case 0 where !lines.isEmpty: lines.insert(lines[i], at: r.below(lines.count + 1))
            case 1 where !lines.isEmpty: lines.remove(at: i)
            case 2 where lines.count > 1: lines.swapAt(i, r.below(lines.count))
            case 3: lines.insert(r.pick([[], [0x20], [0x09], [0x0D], [0x20, 0x0D]]), at: r.below(lines.count + 1))
            default: if !lines.isEmpty { lines[i] += [0x0D] }
            }
        }
        return Array(lines.joined(separator: [0x0A]))
    }

    static func plan(_ r: inout FuzzRandom) -> FuzzPlan {
        let corpus =
            (0..<100).map { _ in freshFile(&r) }
            + (0..<8).map { k in
                Array(
                    (0..<(1 + 3 * k)).map { i in
                        String(
                            decoding: (try? Workload.person(id: i, version: k).canonicalBytes()) ?? [], as: UTF8.self)
                    }.joined(separator: k % 2 == 0 ? "\n" : "\r\n\n").utf8)
            }
        let dictionary =
            [
                "\n", "\r\n", "\r", "\n\n", " ", "{", "}", "[", "]", ",", ":", "\"", "\"id\": ", "\"id\": 1",
                "\"email\": \"p1@example.org\"",
                "\"tags\": [", "{\"id\": 3}", "null", "true", "\\u0000", "\\ud800", "\u{FEFF}"
            ] + FuzzMutator.numbers
        let lineMutator = FuzzMutator(corpus: corpus, dictionary: dictionary.map { Array($0.utf8) })
        return FuzzPlan(
            mutator: lineMutator,
            fresh: { r in
                let file = freshFile(&r)
                return r.chance(30) ? mutateLines(file, &r) : file
            },
            valid: 50,
            deep: { r in
                // Arrays nested around the tuple decoder's limit (an indexed array is a
                // nested tuple in its index key) and the JSON parser's, in indexed
                // fields and not.
                let limit = r.bool() ? Tuple.maximumNestingDepth : JSONValue.maximumDepth - 2
                let n = fuzzDepth(&r, limit: limit)
                let (open, close) = r.pick([
                    ("\"n\": ", ""), ("\"age\": ", ""), ("\"email\": ", ""), ("\"tags\": ", ""),
                    ("\"address\": {\"city\": ", "}"), ("\"bio\": ", "")
                ])
                let core = r.pick(["1", "\"x\"", "{}", "[]", "null"])
                // An age too, now and then: the composite index by_city_age holds only documents with both.
                let age = r.bool() ? "\"age\": \(r.below(90)), " : ""
                let line =
                    Array("{\"id\": \(r.below(60)), \(age)\(open)".utf8) + fuzzNest("[", core, "]", n)
                    + Array("\(close)}".utf8)
                return r.bool() ? line + Array("\n{\"id\": 2}\n".utf8) : line
            },
            alphabet: Array("{}[]\",:\n\r 0123456789id".utf8))
    }

    /// The lines the importer reads: split at `\n`, a `\r` before it dropped; the last
    /// line (if not empty) needs no newline and keeps a final `\r`.
    static func lines(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var pieces = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
        let last = pieces.popLast() ?? []
        var lines = pieces.map { $0.last == 0x0D ? $0.dropLast() : $0 }
        if !last.isEmpty { lines.append(last) }
        return lines
    }

    /// Whether the first pass must refuse the file, and the documents it holds otherwise.
    static func model(_ bytes: [UInt8]) -> (refused: Bool, documents: [JSONValue]) {
        var documents: [JSONValue] = []
        for line in lines(bytes) where !line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) {
            guard let document = try? JSONValue(parsing: line), case .object = document, let id = document["id"] else {
                return (true, [])
            }
            switch id {
            case .string, .int, .uint: break
            case .double(let d) where d.rounded() == d && Int64(exactly: d) != nil: break
            default: return (true, [])
            }
            documents.append(document)
        }
        return (false, documents)
    }

    /// The id as the store keys it (an integral double is the integer).
    static func idKey(_ id: JSONValue?) -> [UInt8] {
        switch id {
        case .string(let s)?: return [0x73] + Array(s.utf8)
        case .int(let i)?: return Array("i\(i)".utf8)
        case .uint(let u)?: return Array("i\(u)".utf8)
        case .double(let d)?: return Array("i\(Int64(exactly: d).map(String.init) ?? "?")".utf8)
        default: return []
        }
    }

    mutating func check(_ bytes: [UInt8], collection: String, mode: DocumentStore.ImportMode, batchSize: Int)
        -> FuzzResult
    {
        do {
            try Self.write(bytes, to: file)
        } catch {
            return .failed("cannot write the input file: \(error)")
        }
        let (refused, documents) = Self.model(bytes)
        let before: Int64
        do { before = try store.lastSequence } catch { return .failed("cannot read the last sequence: \(error)") }
        let written: Int
        do {
            written = try store.importJSONLines(into: collection, path: file, mode: mode, batchSize: batchSize)
        } catch {
            let judged = FuzzResult.judge(error, kinds: nil)
            guard case .rejected = judged else { return judged }
            if refused || collection != "people" {
                outcomes["rejected before writing", default: 0] += 1
                let after: Int64
                do { after = try store.lastSequence } catch {
                    return .failed("cannot read the last sequence: \(error)")
                }
                if after != before {
                    return .failed(
                        "a refused file (a malformed line, or no such collection) changed the store: sequence \(before) became \(after)"
                    )
                }
            } else {
                outcomes["rejected while writing", default: 0] += 1
            }
            return judged
        }
        if refused { return .failed("imported \(written) documents from a file with a malformed line") }
        if collection != "people" { return .failed("imported into a collection the schema does not declare") }
        guard written == documents.count else {
            return .failed("imported \(written) documents from a file of \(documents.count)")
        }
        outcomes["documents imported", default: 0] += written
        // Each id holds the last document given for it.
        var last: [[UInt8]: JSONValue] = [:]
        for d in documents { last[Self.idKey(d["id"])] = d }
        let people: DocumentCollection
        do { people = try store.collection("people") } catch { return .failed("store.collection threw \(error)") }
        for d in documents {
            let key = Self.idKey(d["id"])
            guard let expected = last.removeValue(forKey: key), let id = expected["id"] else { continue }
            do {
                guard let stored = try people.get(id: id) else {
                    return .failed("document \(id.compactDescription) imported but not found")
                }
                if stored != expected {
                    return .failed(
                        "document \(id.compactDescription) is stored as \(stored.compactDescription.prefix(200)), imported as \(expected.compactDescription.prefix(200))"
                    )
                }
            } catch {
                return .failed(
                    "reading document \(id.compactDescription) back threw \(FuzzShow.escaped(String(describing: error)))"
                )
            }
            // Each value of an indexed field finds the document through its index.
            for field in Self.indexedFields {
                for value in field.values(in: expected) {
                    let condition = QueryCondition(field: field, op: .equal(value))
                    do {
                        let found = try people.find(DocumentQuery(conditions: [condition]))
                        guard found.contains(where: { Self.idKey($0["id"]) == key }) else {
                            return .failed(
                                "document \(id.compactDescription) is not found by \(FuzzShow.escaped(condition.description))"
                            )
                        }
                        // by_email is unique: no other document has an equal email.
                        if field == Self.uniqueField && found.count != 1 {
                            return .failed(
                                "\(found.count) documents match \(FuzzShow.escaped(condition.description)) of the unique index by_email"
                            )
                        }
                        outcomes["index lookups", default: 0] += 1
                    } catch {
                        return .failed(
                            "finding document \(id.compactDescription) by \(FuzzShow.escaped(String(condition.description.prefix(120)))) threw \(FuzzShow.escaped(String(describing: error)))"
                        )
                    }
                }
            }
        }
        return .accepted
    }

    /// Writes `bytes` to `path`, replacing it (with plain system calls: this runs per input).
    /// The old file is removed rather than truncated: ext4 flushes a file truncated and
    /// rewritten when it is closed.
    static func write(_ bytes: [UInt8], to path: String) throws {
        unlink(path)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Failure("cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { Foundation.close(fd) }
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                Foundation.write(fd, raw.baseAddress.map { $0 + offset }, raw.count - offset)
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw Failure("cannot write \(path): \(String(cString: strerror(errno)))") }
            offset += n
        }
    }
}
