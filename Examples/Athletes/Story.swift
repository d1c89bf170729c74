import Foundation
import KVDocs

/// A failure of the story itself (not of KVDocs), printed as it is.
struct StoryError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The files of the story, all inside the directory given on the command line.
struct StoryPaths {
    let directory: String
    func file(_ name: String) -> String { URL(fileURLWithPath: directory).appendingPathComponent(name).path }
    var user: String { file("user.db") }
    func download(_ year: Int) -> String { file("athletes-\(year).jsonl") }
    func base(_ year: Int) -> String { file("athletes-\(year).db") }

    /// Removes what an earlier run of the story left (only the story's own names), so that
    /// the story can run again on the same directory.
    func removeEarlierRun() throws {
        let names =
            ["user.db", "user.db.layers"] + [2025, 2026].flatMap { ["athletes-\($0).jsonl", "athletes-\($0).db"] }
        for name in names where FileManager.default.fileExists(atPath: file(name)) {
            try FileManager.default.removeItem(atPath: file(name))
        }
    }
}

/// The user's own data, written to the user layer: a correction of one athlete and two groups.
enum UserData {
    static let correctedAthlete = 42
    static let correctedClub = "Oulun Hiihtoseura"
    static let correctedPoints = 5_000
    static let groups = [
        Group(id: "relay", name: "Relay team", members: [42, 7, 1_001, 12_345]),
        Group(id: "rivals", name: "Rivals to watch", members: [3, 17_999])
    ]
}

/// Builds a "downloaded" base database: the season's athletes written as a file of JSON
/// lines, then imported with the documented fast path for bulk loads,
/// `DocumentStore.importJSONLines(into:path:)` (checked first, then written in batches of
/// 1,000, in bounded memory).
func buildBase(year: Int, count: Int, paths: StoryPaths, schema: DocumentSchema) throws -> Int {
    let db = try LevelDB(path: paths.base(year))
    defer { db.close() }
    let store = try DocumentStore(database: db, schema: schema)
    try Season.writeJSONLines(
        Season.athletes(year: year, count: count), to: paths.download(year), dates: store.dateStrategy)
    return try store.importJSONLines(into: "athletes", path: paths.download(year))
}

/// The whole story: a base, the user's layer over it, reports, a new base, reports again.
func runStory(in directory: String) throws {
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let paths = StoryPaths(directory: directory)
    try paths.removeEarlierRun()
    let schema = try athletesSchema()

    // 1. The app downloads this season's database: a read-only base.
    let imported = try buildBase(year: 2025, count: 18_000, paths: paths, schema: schema)
    print("downloaded athletes-2025.db: \(imported) athletes imported from athletes-2025.jsonl")

    // 2. The user's own database over it: reads see both, writes go to the user layer.
    let layers = try LayeredDocumentStore(user: paths.user, base: paths.base(2025), schema: schema, create: true)
    defer { layers.close() }
    let store = layers.store
    let athletes = try store.collection("athletes", of: Athlete.self)

    // A typed id: an Int, as the struct declares it.
    guard var corrected = try athletes.get(id: UserData.correctedAthlete) else {
        throw StoryError("athlete \(UserData.correctedAthlete) is not in the base")
    }
    corrected.club = UserData.correctedClub
    corrected.points = UserData.correctedPoints
    // Typed batch writes: the correction and the groups, all or nothing, in the user layer.
    try store.write { batch in
        try batch.update("athletes", encoding: corrected)
        for group in UserData.groups {
            try batch.upsert("groups", encoding: group)
        }
    }
    print(
        "user layer: athlete #\(corrected.id) now \(corrected.club), \(corrected.points) points; groups \(UserData.groups.map(\.id).joined(separator: ", "))"
    )
    try printReport(of: store, season: 2025)

    // 3. Next season's database arrives: the base is replaced; the user's data stays.
    let importedNext = try buildBase(year: 2026, count: 18_150, paths: paths, schema: schema)
    print("downloaded athletes-2026.db: \(importedNext) athletes imported from athletes-2026.jsonl")
    try layers.replaceBase(with: paths.base(2026))
    print("replaced the base: now \(URL(fileURLWithPath: layers.basePath).lastPathComponent)")
    try printReport(of: store, season: 2026)
}
