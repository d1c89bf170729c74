import Foundation
import KVDocs

/// The documents every scenario writes: people with a secondary, a unique and a text index,
/// each document derived from its id and version so that any document read back can be
/// checked on its own (`isWritten`), and every state the writes passed through recomputed.
enum Workload {
    static let schemaJSON = #"""
        {"collections": {"people": {
          "primaryKey": "id",
          "indexes": [
            {"name": "by_age", "fields": ["age"]},
            {"name": "by_email", "fields": ["email"], "unique": true},
            {"name": "by_city_age", "fields": ["city", "age"]}
          ],
          "text": [{"name": "bio_text", "fields": ["name", "bio"], "tokenizer": "porter"}]
        }}}
        """#

    static func schema() throws -> DocumentSchema {
        try DocumentSchema(json: Data(schemaJSON.utf8), file: "kvstress schema")
    }

    static let words = [
        "river", "station", "harbour", "train", "morning", "coffee", "garden", "bicycle", "market",
        "library", "mountain", "ocean", "city", "quiet", "bright", "running", "swimmer", "athlete",
        "timetable", "platform", "express", "weekend", "island", "forest", "music", "painter",
        "teacher", "engineer", "storage", "database", "record", "journey", "northern", "southern"
    ]
    static let cities = ["Perth", "Fremantle", "Midland", "Joondalup", "Mandurah", "Armadale"]

    /// The document `id` has at `version`: a pure function of both.
    static func person(id: Int, version: Int) -> JSONValue {
        var rng = SplitMix64(seed: UInt64(id) &* 1_000_003 &+ UInt64(version))
        let bio = (0..<(8 + Int(rng.next() % 24))).map { _ in words[Int(rng.next() % UInt64(words.count))] }.joined(
            separator: " ")
        return .object([
            "id": .int(Int64(id)),
            "v": .int(Int64(version)),
            "name": .string("person \(id) \(words[id % words.count])"),
            "age": .int(Int64(18 + (id * 7 + version * 3) % 60)),
            "email": .string("p\(id)@example.org"),
            "city": .string(cities[(id + version) % cities.count]),
            "bio": .string(bio)
        ])
    }

    /// Whether `document` is one the workload writes: `person(id, v)` for its own id and `v`.
    static func isWritten(_ document: JSONValue) -> Bool {
        guard case .int(let id)? = document["id"], case .int(let v)? = document["v"],
            id >= 0, v >= 0, id < Int64(Int32.max), v < Int64(Int32.max)
        else { return false }
        return document == person(id: Int(id), version: Int(v))
    }

    enum Operation: Sendable {
        case upsert(id: Int, version: Int)
        case delete(id: Int)
    }

    /// Deterministic batches of writes over ids `0..<ids`: inserts of new ids first, then a
    /// mix of updates, inserts and deletes.
    static func batches(seed: UInt64, count: Int, size: Int, ids: Int) -> [[Operation]] {
        var rng = SplitMix64(seed: seed)
        var versions: [Int: Int] = [:]
        var result: [[Operation]] = []
        for _ in 0..<count {
            var batch: [Operation] = []
            var touched = Set<Int>()
            while batch.count < size {
                let id = Int(rng.next() % UInt64(ids))
                guard touched.insert(id).inserted else { continue }
                if let v = versions[id], rng.next() % 5 == 0 {
                    _ = v
                    versions[id] = nil
                    batch.append(.delete(id: id))
                } else {
                    let v = (versions[id] ?? -1) + 1
                    versions[id] = v
                    batch.append(.upsert(id: id, version: v))
                }
            }
            result.append(batch)
        }
        return result
    }

    /// Applies one batch to a model of the collection (id → version).
    static func apply(_ batch: [Operation], to model: inout [Int: Int]) {
        for op in batch {
            switch op {
            case .upsert(let id, let version): model[id] = version
            case .delete(let id): model[id] = nil
            }
        }
    }

    /// Writes one batch atomically.
    static func write(_ batch: [Operation], to store: DocumentStore, sync: Bool) throws {
        try store.write(sync: sync) { b in
            for op in batch {
                switch op {
                case .upsert(let id, let version): _ = try b.upsert("people", person(id: id, version: version))
                case .delete(let id): _ = try b.delete("people", id: .int(Int64(id)))
                }
            }
        }
    }

    /// The stored people as id → version, checking that each is a written document.
    /// - Throws: `Failure` when a document is not one the workload wrote.
    static func read(_ store: DocumentStore) throws -> [Int: Int] {
        var state: [Int: Int] = [:]
        for document in try store.collection("people").find() {
            guard isWritten(document), case .int(let id)? = document["id"], case .int(let v)? = document["v"] else {
                throw Failure("a document that was never written: \(document.compactDescription.prefix(200))")
            }
            state[Int(id)] = Int(v)
        }
        return state
    }
}

/// A broken promise found by a scenario: the round fails.
struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
