// kvprofile: one document workload of kvbench's documents section (or a text build or
// text query of its text section), alone, for a profiler.
//
// It builds the section's store (N people, the three indexes of kvbench, plain or covering;
// for `text-*`, N notes with one text index), then runs one workload many times inside
// `profiledWorkload`, a function that does nothing else, so that a profiler can be told to
// count only it:
//
//   valgrind --tool=callgrind --toggle-collect='*profiledWorkload*' \
//       .build-prof/release/kvprofile covering-equality --n 20000 --rounds 2000
//
// (callgrind counts instructions, the same from run to run whatever else the machine does;
// valgrind 3.19 cannot read the toolchain's DWARF 5, so build it without debug information:
// `swift build -c release --product kvprofile --scratch-path .build-prof -debug-info-format none`.)
// It prints the workload's time per operation and the allocations it made, for a quick look.
import CAllocationCount
import Foundation
import KVDocs

struct Person: Codable, Sendable {
    var id: String
    var name: String
    var age: Int
    var city: String
    var email: String
    var score: Double

    static func make(_ i: Int, _ random: inout SplitMix64) -> Person {
        Person(
            id: String(format: "p%08d", i), name: "Person \(i)", age: Int(random.next() % 80) + 10,
            city: "City \(random.next() % 50)", email: "p\(i)@example.org",
            score: Double(random.next() % 10_000) / 100)
    }

    var json: JSONValue {
        [
            "id": .string(id), "name": .string(name), "age": .int(Int64(age)), "city": .string(city),
            "email": .string(email), "score": .double(score)
        ]
    }
}

/// The workloads, named as on the command line.
enum Workload: String, CaseIterable {
    case getTyped = "get-typed", get
    case equalityTyped = "equality-typed", equality
    case rangeTyped = "range-typed", range
    case coveringEquality = "covering-equality", coveringRange = "covering-range"
    case insertTyped = "insert-typed", insert
    case updateTyped = "update-typed", update
    case deleteTyped = "delete-typed", delete
    case importLines = "import"
    case textBuild = "text-build"
    case textColumn = "text-column", textPhrase = "text-phrase", textPrefix = "text-prefix"
    case vectorScan = "vector-scan", vectorBuild = "vector-build", vectorFilter = "vector-filter"
    case vectorApproximate = "vector-approximate"

    var covering: Bool { self == .coveringEquality || self == .coveringRange }
}

/// The schema of kvbench's documents section: by_city, by_age (covering: the whole
/// document) and the unique by_email.
func schema(covering: Bool) throws -> DocumentSchema {
    let include: SecondaryIndexDefinition.Inclusion = covering ? .document : .none
    return try DocumentSchema(collections: [
        "person": CollectionSchema(
            primaryKey: "id",
            indexes: [
                SecondaryIndexDefinition(name: "by_city", fields: ["city"], include: include),
                SecondaryIndexDefinition(name: "by_age", fields: ["age"], include: include),
                SecondaryIndexDefinition(name: "by_email", fields: ["email"], unique: true)
            ])
    ])
}

/// Runs `body` `rounds` times: the only function a profiler should count.
@inline(never)
func profiledWorkload(rounds: Int, _ body: (Int) throws -> Void) rethrows {
    for round in 0..<rounds { try body(round) }
}

/// A text corpus in the manner of kvbench's text section: words drawn from a Zipf
/// distribution over a vocabulary of 50,000 made of syllables, a title and a body per note.
func notes(_ n: Int) -> (notes: [(title: String, body: String)], words: [String]) {
    var random = SplitMix64(seed: 21)
    let syllables = ["ka", "lo", "mi", "ra", "te", "su", "no", "vi", "pe", "da", "ri", "zo", "fu", "ne", "ba", "sto"]
    var words: [String] = []
    var seen = Set<String>()
    while words.count < 50_000 {
        let length = 1 + Int(random.next() % UInt64(2 + min(4, words.count / 100)))
        let word = (0..<length).map { _ in syllables[Int(random.next() % UInt64(syllables.count))] }.joined()
        if seen.insert(word).inserted { words.append(word) }
    }
    var weights: [Double] = []
    var sum = 0.0
    for rank in 1...words.count {
        sum += 1 / Double(rank)
        weights.append(sum)
    }
    func word() -> String {
        let u = Double(random.next() % 1_000_000) / 1_000_000 * sum
        let i = weights.partitioningIndex(where: { $0 > u })
        return words[min(i, words.count - 1)]
    }
    let notes = (0..<n).map { _ in
        let title = (0..<(2 + Int(random.next() % 11))).map { _ in word() }.joined(separator: " ")
        let long = random.next() % 10 == 0
        let length = long ? 150 + Int(random.next() % 350) : 8 + Int(random.next() % 70)
        return (title, (0..<length).map { _ in word() }.joined(separator: " "))
    }
    return (notes, words)
}

extension Array {
    /// The first index whose element satisfies `predicate`, for a predicate false then true.
    func partitioningIndex(where predicate: (Element) -> Bool) -> Int {
        var lo = 0, hi = count
        while lo < hi {
            let mid = (lo + hi) / 2
            if predicate(self[mid]) { hi = mid } else { lo = mid + 1 }
        }
        return lo
    }
}

/// Builds a text index over `n` notes, 1000 per write, as kvbench's text section does;
/// then, for `text-column`, `text-phrase` and `text-prefix`, runs `rounds` queries of that kind on it
/// (as kvbench's: `title: w` for a word w of rank below 500; two adjacent words of a body;
/// the first four letters of a body's word and `*`).
func runTextBuild(_ workload: Workload, n: Int, rounds: Int, directory: String) throws {
    let (corpus, words) = notes(n)
    let db = try LevelDB(path: directory + "/text")
    defer { db.close() }
    let store = try DocumentStore(
        database: db,
        schema: try DocumentSchema(
            json: Data(
                #"{"collections": {"notes": {"primaryKey": "id", "text": [{"name": "t", "fields": ["title", "body"]}]}}}"#
                    .utf8)))
    let batches = stride(from: 0, to: n, by: 1000).map { first in
        (first..<min(first + 1000, n)).map { i -> JSONValue in
            ["id": .int(Int64(i)), "title": .string(corpus[i].title), "body": .string(corpus[i].body)]
        }
    }
    if workload != .textBuild {
        for batch in batches { try store.write { b in for note in batch { try b.insert("notes", note) } } }
        var random = SplitMix64(seed: 5)
        let queries = (0..<rounds).map { _ -> String in
            if workload == .textColumn { return "title: " + words[Int(random.next() % 500)] }
            let body = corpus[Int(random.next() % UInt64(n))].body.split(separator: " ")
            if workload == .textPrefix { return String((body.first ?? "ka").prefix(4)) + "*" }
            let at = Int(random.next() % UInt64(max(1, body.count - 1)))
            return body.count < 2 ? String(body.first ?? "a") : "\"\(body[at]) \(body[at + 1])\""
        }
        let notes = try store.collection("notes")
        let started = Date()
        try profiledWorkload(rounds: rounds) { i in
            _ = try notes.search(queries[i], options: SearchOptions(limit: 10, includeDocuments: false))
        }
        print(
            String(
                format: "%@: %.3f µs per query", workload.rawValue,
                Date().timeIntervalSince(started) / Double(rounds) * 1e6))
        return
    }
    let started = Date()
    let allocationsBefore = kv_allocations()
    try profiledWorkload(rounds: batches.count) { i in
        try store.write { batch in for note in batches[i] { try batch.insert("notes", note) } }
    }
    let seconds = Date().timeIntervalSince(started)
    print(
        String(
            format: "text-build: %d notes, %.3f µs per note, %.1f allocations per note", n,
            seconds / Double(max(n, 1)) * 1e6, Double(kv_allocations() - allocationsBefore) / Double(max(n, 1))))
}

/// Builds a vector index of `n` clustered unit vectors of 384 dimensions (cosine), 1000 per
/// write, as kvbench's vector section does (`vector-build` profiles the writes); then, for
/// `vector-scan`, runs `rounds` exact top-10 queries without documents, and for
/// `vector-filter` the same with the condition `bucket < 10` (a tenth of the vectors: a scan
/// that checks documents nearest first); `vector-approximate` runs approximate queries reading
/// `KVPROFILE_PROBES` lists (default 2).
func runVector(_ workload: Workload, n: Int, rounds: Int, directory: String) throws {
    let dimensions = 384
    var random = SplitMix64(seed: 5050)
    func normal() -> Double {
        let u = (Double(random.next() >> 11) + 1) / Double(1 << 53)
        let v = Double(random.next() >> 11) / Double(1 << 53)
        return (-2 * log(u)).squareRoot() * cos(2 * Double.pi * v)
    }
    func unit(_ values: [Double]) -> [Double] {
        let norm = values.reduce(0) { $0 + $1 * $1 }.squareRoot()
        return values.map { $0 / norm }
    }
    let centres = (0..<100).map { _ in unit((0..<dimensions).map { _ in normal() }) }
    func draw() -> [Double] { unit(centres[Int(random.next() % 100)].map { $0 + 0.03 * normal() }) }
    var options = LevelDBOptions()
    if let mb = ProcessInfo.processInfo.environment["KVPROFILE_CACHE_MB"].flatMap(Int.init) {
        options.blockCacheCapacity = mb << 20
    }
    let db = try LevelDB(path: directory + "/vectors", options: options)
    defer { db.close() }
    let store = try DocumentStore(
        database: db,
        schema: try DocumentSchema(
            json: Data(
                #"{"collections": {"items": {"indexes": [{"name": "by_bucket", "fields": ["bucket"]}, {"name": "v", "type": "vector", "fields": ["embedding"], "dimensions": 384, "metric": "cosine"}]}}}"#
                    .utf8)))
    let batches = stride(from: 0, to: n, by: 1000).map { first in
        (first..<min(first + 1000, n)).map { i -> JSONValue in
            ["id": .int(Int64(i)), "bucket": .int(Int64(i * 37 % 100)), "embedding": .array(draw().map { .double($0) })]
        }
    }
    let started = Date()
    if workload == .vectorBuild {
        try profiledWorkload(rounds: batches.count) { i in
            try store.write { batch in for item in batches[i] { try batch.insert("items", item) } }
        }
        print(
            String(
                format: "vector-build: %d vectors, %.3f µs per vector", n,
                Date().timeIntervalSince(started) / Double(max(n, 1)) * 1e6))
        return
    }
    for batch in batches { try store.write { b in for item in batch { try b.insert("items", item) } } }
    try db.compact()
    let queries = (0..<rounds).map { _ in draw().map { Float($0) } }
    let filter = workload == .vectorFilter ? DocumentQuery().where("bucket", .less(10)) : DocumentQuery()
    let search: VectorSearchMode =
        workload == .vectorApproximate
        ? .approximate(probes: ProcessInfo.processInfo.environment["KVPROFILE_PROBES"].flatMap(Int.init) ?? 2)
        : .exact
    // The plan of the first query, for a look at what the workload reads.
    if let first = queries.first {
        print(try store.read { try $0.explainNearest("items", to: first, k: 10, query: filter, search: search) })
    }
    let queryStarted = Date()
    try store.read { tx in
        try profiledWorkload(rounds: rounds) { i in
            _ = try tx.nearest("items", to: queries[i], k: 10, query: filter, search: search, includeDocuments: false)
        }
    }
    print(
        String(
            format: "%@: %d vectors, %.3f ms per query", workload.rawValue, n,
            Date().timeIntervalSince(queryStarted) / Double(max(rounds, 1)) * 1e3))
}

func run(_ workload: Workload, n: Int, rounds: Int, directory: String) throws {
    switch workload {
    case .textBuild, .textColumn, .textPhrase, .textPrefix:
        return try runTextBuild(workload, n: n, rounds: rounds, directory: directory)
    case .vectorScan, .vectorBuild, .vectorFilter, .vectorApproximate:
        return try runVector(workload, n: n, rounds: rounds, directory: directory)
    default: break
    }
    var random = SplitMix64(seed: 12)
    let people = (0..<n).map { Person.make($0, &random) }
    let db = try LevelDB(path: directory + "/db")
    defer { db.close() }
    let store = try DocumentStore(database: db, schema: try schema(covering: workload.covering))
    // KVPROFILE_DOCUMENT_CACHE=0: without the decoded-document cache, to compare.
    if let limit = ProcessInfo.processInfo.environment["KVPROFILE_DOCUMENT_CACHE"].flatMap({ Int($0) }) {
        store.decodedDocumentCacheLimit = limit
    }
    let untyped = try store.collection("person")
    let typed = try store.collection("person", of: Person.self)
    let preload: Bool
    switch workload {
    case .insertTyped, .insert, .importLines: preload = false
    default: preload = true
    }
    if preload {
        for start in stride(from: 0, to: n, by: 1000) {
            try store.write { batch in
                for p in people[start..<min(start + 1000, n)] { try batch.insert("person", encoding: p) }
            }
        }
        try db.compact()
    }
    let lookups = (0..<rounds).map { _ in people[Int(random.next() % UInt64(n))] }
    let started = Date()
    let allocationsBefore = kv_allocations()
    var operations = rounds
    switch workload {
    case .getTyped:
        try profiledWorkload(rounds: rounds) { i in _ = try typed.get(id: .string(lookups[i].id)) }
    case .get:
        try profiledWorkload(rounds: rounds) { i in _ = try untyped.get(id: .string(lookups[i].id)) }
    case .equalityTyped, .equality, .coveringEquality:
        let queries = (0..<rounds).map { DocumentQuery().where("city", .equal(.string("City \($0 % 50)"))).limit(20) }
        if workload == .equalityTyped {
            try profiledWorkload(rounds: rounds) { i in _ = try typed.find(queries[i]) }
        } else {
            try profiledWorkload(rounds: rounds) { i in _ = try untyped.find(queries[i]) }
        }
    case .rangeTyped, .range, .coveringRange:
        let queries = (0..<rounds).map { (i: Int) -> DocumentQuery in
            let low = Int64(10 + i % 78)
            let high: Int64 = low + 2
            return DocumentQuery().where("age", .greaterOrEqual(.int(low))).where("age", .less(.int(high)))
                .orderBy("age").limit(50)
        }
        if workload == .rangeTyped {
            try profiledWorkload(rounds: rounds) { i in _ = try typed.find(queries[i]) }
        } else {
            try profiledWorkload(rounds: rounds) { i in _ = try untyped.find(queries[i]) }
        }
    case .insertTyped, .insert:
        let batches = stride(from: 0, to: n, by: 1000).map { Array(people[$0..<min($0 + 1000, n)]) }
        operations = n
        if workload == .insertTyped {
            try profiledWorkload(rounds: batches.count) { i in
                try store.write { batch in for p in batches[i] { try batch.insert("person", encoding: p) } }
            }
        } else {
            let json = batches.map { $0.map(\.json) }
            try profiledWorkload(rounds: json.count) { i in
                try store.write { batch in for p in json[i] { try batch.insert("person", p) } }
            }
        }
    case .updateTyped, .update, .deleteTyped, .delete:
        let chosen = Array(people.shuffled(using: &random).prefix(min(n, rounds * 1000)))
        let batches = stride(from: 0, to: chosen.count, by: 1000).map {
            Array(chosen[$0..<min($0 + 1000, chosen.count)])
        }
        operations = chosen.count
        func changed(_ p: Person) -> Person {
            var q = p
            q.age = (p.age + 7) % 80 + 10
            let city = Int(p.city.dropFirst(5)) ?? 0
            q.city = "City \((city + 3) % 50)"
            return q
        }
        switch workload {
        case .updateTyped:
            try profiledWorkload(rounds: batches.count) { i in
                try store.write { batch in for p in batches[i] { try batch.update("person", encoding: changed(p)) } }
            }
        case .update:
            let json = batches.map { $0.map { changed($0).json } }
            try profiledWorkload(rounds: json.count) { i in
                try store.write { batch in for p in json[i] { try batch.update("person", p) } }
            }
        default:
            try profiledWorkload(rounds: batches.count) { i in
                try store.write { batch in for p in batches[i] { try batch.delete("person", id: .string(p.id)) } }
            }
        }
    case .textBuild, .textColumn, .textPhrase, .textPrefix, .vectorScan, .vectorBuild, .vectorFilter,
        .vectorApproximate:
        return
    case .importLines:
        let file = directory + "/people.jsonl"
        let encoder = JSONEncoder()
        var text = Data()
        for p in people {
            text.append(try encoder.encode(p))
            text.append(0x0A)
        }
        try text.write(to: URL(fileURLWithPath: file))
        operations = n
        try profiledWorkload(rounds: 1) { _ in _ = try store.importJSONLines(into: "person", path: file) }
    }
    let seconds = Date().timeIntervalSince(started)
    let allocations = kv_allocations() - allocationsBefore
    print(
        String(
            format: "%@: %d operations, %.3f µs per operation, %.1f allocations per operation", workload.rawValue,
            operations, seconds / Double(max(operations, 1)) * 1e6, Double(allocations) / Double(max(operations, 1))))
}

let arguments = CommandLine.arguments.dropFirst()
guard let name = arguments.first, let workload = Workload(rawValue: name) else {
    FileHandle.standardError.write(
        Data(
            "usage: kvprofile WORKLOAD [--n N] [--rounds R]; WORKLOAD: \(Workload.allCases.map(\.rawValue).joined(separator: ", "))\n"
                .utf8))
    exit(2)
}
func option(_ flag: String, _ fallback: Int) -> Int {
    guard let i = arguments.firstIndex(of: flag), arguments.index(after: i) < arguments.endIndex,
        let value = Int(arguments[arguments.index(after: i)])
    else { return fallback }
    return value
}
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kvprofile-\(getpid())").path
try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: directory) }
do {
    try run(workload, n: option("--n", 20_000), rounds: option("--rounds", 2_000), directory: directory)
} catch {
    FileHandle.standardError.write(Data("kvprofile: \(error)\n".utf8))
    exit(1)
}
