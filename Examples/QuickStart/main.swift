// The README's library examples: open a database, write, batch, scan a prefix both ways,
// read through a snapshot; documents, search, and (AppExample.swift) migrations, async
// access and observed queries. Run it with `swift run kvdocs-example [PATH]`.
import Foundation
import KVDocs

let path =
    CommandLine.arguments.dropFirst().first
    ?? FileManager.default.temporaryDirectory.appendingPathComponent("kvdocs-example.db").path

/// The README's documents example: a Codable type, a schema, an insert and an indexed query.
func documentsExample(_ db: LevelDB) throws {
    struct Station: Codable {
        var id: String
        var name: String
        var zone: Int
        var lines: [String]
    }
    let schema = try DocumentSchema(
        json: Data(
            #"""
            {"collections": {"stations": {"primaryKey": "id", "indexes": [
              {"name": "by_zone", "fields": ["zone"]}, {"name": "by_line", "fields": ["lines[]"]}]}}}
            """#.utf8))
    let store = try DocumentStore(database: db, schema: schema)
    let stations = try store.collection("stations", of: Station.self)
    try stations.upsert(Station(id: "PER", name: "Perth", zone: 1, lines: ["Fremantle", "Midland"]))
    try stations.upsert(Station(id: "FRE", name: "Fremantle", zone: 2, lines: ["Fremantle"]))
    let query = DocumentQuery().where("lines[]", .equal("Fremantle")).where("zone", .lessOrEqual(2)).orderBy("zone")
    print(try stations.find(query).map(\.name))  // ["Perth", "Fremantle"]
    print(try store.collection("stations").explain(query))  // index by_line, then filter zone <= 2
}

/// The README's search example: a text index declared in the schema, BM25 ranking, highlights.
func searchExample(_ db: LevelDB) throws {
    let schema = try DocumentSchema(
        json: Data(
            #"""
            {"collections": {"notes": {"primaryKey": "id",
              "text": [{"name": "body", "fields": ["title", "text"], "tokenizer": "porter"}]}}}
            """#.utf8))
    let notes = try DocumentStore(database: db, schema: schema).collection("notes")
    try notes.upsert(["id": 1, "title": "Night trains", "text": "The night express leaves Perth at ten."])
    try notes.upsert(["id": 2, "title": "Platforms", "text": "Trains to Fremantle leave from platform 7."])
    let options = SearchOptions(limit: 10, highlight: .init(open: "**", close: "**"))
    for query in ["train* NOT fremantle", "\"night express\" OR title: platforms"] {
        for hit in try notes.search(query, options: options) {
            print(query, "=>", hit.id, hit.highlights["title"] ?? "", "|", hit.highlights["text"] ?? "")
        }
    }
}

do {
    var options = LevelDBOptions()
    options.bloomFilterBitsPerKey = 10  // fewer disk reads for missing keys
    let db = try LevelDB(path: path, options: options)
    defer { db.close() }

    // Keys and values: String (UTF-8), [UInt8] or Data.
    try db.put("station:perth", "Perth, zone 1")
    try db.put("station:fremantle", "Fremantle, zone 2")

    // Several writes, atomically.
    try db.write { batch in
        batch.put("station:armadale", "Armadale, zone 3")
        batch.put("station:midland", "Midland, zone 2")
        batch.delete("station:closed")
    }

    print("perth:", try db.get("station:perth", as: String.self) ?? "missing")

    // A snapshot keeps seeing the database as it was.
    let snapshot = try db.snapshot()
    try db.put("station:perth", "Perth (renamed)")

    // A prefix, ending at a key, in reverse, with a limit: a cursor, read with `try next()`
    // (or `try forEach`), so a read error or a closed database is thrown, never lost.
    let stations = try db.entries(.prefix("station:").ending(at: "station:m"), order: .reverse, limit: 3)
    while let entry = try stations.next() {
        print(String(decoding: entry.key, as: UTF8.self), "=>", String(decoding: entry.value, as: UTF8.self))
    }
    print("through the snapshot:", try snapshot.get("station:perth", as: String.self) ?? "missing")

    // Tuple keys (the FoundationDB encoding) through a declared keyspace: by station, then time.
    let departure = try Keyspace(
        name: "departure", prefix: ["dep"],
        components: [
            .init(name: "station", type: .string), .init(name: "time", type: .int)
        ])
    try db.put(departure.key("Perth", 1700000000), "to Fremantle")
    try db.put(departure.key("Perth", 1699999000), "to Midland")
    try db.entries(departure.range(["station": "Perth"])).forEach { entry in
        print(try departure.decode(entry.key), "=>", String(decoding: entry.value, as: UTF8.self))
    }
    try documentsExample(db)
    try searchExample(db)
    try await appExample(path + "-app")
    print("on disk (approx.):", try db.approximateSize(), "bytes; LevelDB", LevelDB.levelDBVersion)
} catch {
    FileHandle.standardError.write(Data("kvdocs-example: \(error)\n".utf8))
    exit(1)
}
