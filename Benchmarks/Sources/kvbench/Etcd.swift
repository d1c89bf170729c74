#if KVBENCH_SYNC
import Foundation
import KVDocs
import KVDocsEtcd

extension Bench {
    /// The document workloads on a three-member etcd cluster on loopback (KVDocsEtcd), against
    /// the same workloads on single-node LevelDB, in one run: each write over etcd is a Raft
    /// round and an fsync on a quorum, each read a request, so the ratios are the price of
    /// running on many machines, not a contest. The cluster is `KVDOCS_ETCD_ENDPOINTS`, else
    /// one started with scripts/etcd-cluster for the section (and stopped after it).
    func runEtcd() throws {
        let count = quick ? 200 : 2_000
        let cluster = try BenchEtcdCluster()
        defer { cluster.stop() }
        let schema = try DocumentSchema(
            json: Data(
                #"""
                {"collections": {"people": {"primaryKey": "id",
                  "indexes": [{"name": "by_age", "fields": ["age"]}, {"name": "by_email", "fields": ["email"], "unique": true}],
                  "text": [{"name": "bio_text", "fields": ["bio"]}]}}}
                """#.utf8))
        let words = ["river", "station", "harbour", "train", "coffee", "garden", "market", "ocean", "bridge", "tower"]
        @Sendable func person(_ i: Int, _ version: Int = 0) -> JSONValue {
            [
                "id": .int(Int64(i)), "age": .int(Int64((i * 7 + version) % 90)), "email": .string("p\(i)@x.org"),
                "bio": .string((0..<6).map { words[($0 * 3 + i + version) % words.count] }.joined(separator: " "))
            ]
        }
        var opened: [EtcdKeyValueStore] = []
        defer {
            for store in opened {
                _ = try? store.removeAll()
                store.close()
            }
        }
        /// A new empty store of each kind.
        func stores() throws -> [(String, DocumentStore)] {
            let db = try LevelDB(path: freshPath("etcd-leveldb"))
            let etcd = try EtcdKeyValueStore(
                endpoints: cluster.endpoints, root: "kvbench-\(UUID().uuidString)", options: .init(maxTxnOps: 4096))
            opened.append(etcd)
            return [
                ("leveldb", try DocumentStore(database: db, schema: schema)),
                ("etcd (3 members)", try DocumentStore(store: etcd, schema: schema))
            ]
        }
        let filled = try stores()
        for (_, store) in filled {
            for start in stride(from: 0, to: count, by: 100) {
                try store.write { batch in
                    for i in start..<min(start + 100, count) { try batch.insert("people", person(i)) }
                }
            }
        }
        func variants(
            _ body: @escaping (DocumentStore) throws -> Int
        ) -> [(String, () throws -> (seconds: Double, operations: Int, extra: [String: Double]))] {
            filled.map { name, store in
                (
                    name,
                    {
                        let start = now()
                        let n = try body(store)
                        return (now() - start, n, [:])
                    }
                )
            }
        }
        func fresh(
            _ body: @escaping (DocumentStore) throws -> Int
        ) -> [(String, () throws -> (seconds: Double, operations: Int, extra: [String: Double]))] {
            ["leveldb", "etcd (3 members)"].enumerated().map { index, name in
                (
                    name,
                    {
                        let store = try stores()[index].1
                        let start = now()
                        let n = try body(store)
                        return (now() - start, n, [:])
                    }
                )
            }
        }
        let singles = quick ? 50 : 300
        try measureAlternating(
            "etcd", "insert one document per write (\(singles))",
            fresh { store in
                for i in 0..<singles { try store.collection("people").insert(person(i)) }
                return singles
            })
        try measureAlternating(
            "etcd", "insert in batches of 100 (\(count) documents)",
            fresh { store in
                for start in stride(from: 0, to: count, by: 100) {
                    try store.write { batch in
                        for i in start..<min(start + 100, count) { try batch.insert("people", person(i)) }
                    }
                }
                return count
            })
        let reads = quick ? 100 : 1_000
        try measureAlternating(
            "etcd", "get by id",
            variants { store in
                let people = try store.collection("people")
                for i in 0..<reads { _ = try people.get(id: .int(Int64((i * 7919) % count))) }
                return reads
            })
        try measureAlternating(
            "etcd", "find by index: age range, 20 documents",
            variants { store in
                let people = try store.collection("people")
                for i in 0..<(reads / 10) {
                    _ = try people.find(
                        DocumentQuery().where("age", .greaterOrEqual(.int(Int64(i % 70)))).orderBy("age").limit(20))
                }
                return reads / 10
            })
        try measureAlternating(
            "etcd", "text search: two terms, top 10",
            variants { store in
                let people = try store.collection("people")
                for i in 0..<(reads / 10) {
                    _ = try people.search(
                        "\(words[i % words.count]) \(words[(i + 3) % words.count])", options: SearchOptions(limit: 10))
                }
                return reads / 10
            })
        try measureAlternating(
            "etcd", "update one document per write (\(singles))",
            variants { store in
                let people = try store.collection("people")
                for i in 0..<singles { try people.update(person(i, Int.random(in: 1...1000))) }
                return singles
            })
        // Four writers at once, each its own store (and, over etcd, its own connection, as
        // processes would be): every write takes the next sequence number, so they contend.
        let racing = quick ? 40 : 200
        try measureAlternating(
            "etcd", "4 writers at once, one document per write (\(racing * 4))",
            ["leveldb", "etcd (3 members)"].enumerated().map { index, name in
                (
                    name,
                    {
                        let writers: [DocumentStore]
                        if index == 0 {
                            writers = Array(
                                repeating: try DocumentStore(
                                    database: try LevelDB(path: self.freshPath("etcd-race")), schema: schema),
                                count: 4)
                        } else {
                            let root = "kvbench-\(UUID().uuidString)"
                            writers = try (0..<4).map { _ in
                                let etcd = try EtcdKeyValueStore(
                                    endpoints: cluster.endpoints, root: root, options: .init(maxTxnOps: 4096))
                                opened.append(etcd)
                                return try DocumentStore(store: etcd, schema: schema, writeAttempts: 1_000)
                            }
                        }
                        let first = writers[0]
                        let start = now()
                        DispatchQueue.concurrentPerform(iterations: 4) { w in
                            for i in 0..<racing {
                                _ = try? writers[w].collection("people").insert(person(w * 100_000 + i))
                            }
                        }
                        let elapsed = now() - start
                        let written = try first.collection("people").count()
                        guard written == racing * 4 else {
                            throw KVDocsError(
                                .conflict, "\(name): \(written) of \(racing * 4) racing inserts were written")
                        }
                        return (elapsed, racing * 4, [:])
                    }
                )
            })
    }
}

/// The etcd cluster of the section: `KVDOCS_ETCD_ENDPOINTS`, or three members started with
/// scripts/etcd-cluster in a temporary directory.
final class BenchEtcdCluster {
    let endpoints: [String]
    private let directory: String?
    private static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/etcd-cluster").path

    init() throws {
        if let given = ProcessInfo.processInfo.environment["KVDOCS_ETCD_ENDPOINTS"], !given.isEmpty {
            endpoints = given.split(separator: ",").map(String.init)
            directory = nil
            return
        }
        let dir = NSTemporaryDirectory() + "kvbench-etcd-\(UUID().uuidString)"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.script)
        process.arguments = ["start", dir]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw KVDocsError(.unavailable, "scripts/etcd-cluster could not start a cluster (is etcd installed?)")
        }
        endpoints = try String(contentsOfFile: dir + "/endpoints", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",").map(String.init)
        directory = dir
    }

    func stop() {
        guard let directory else { return }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.script)
        process.arguments = ["stop", directory]
        try? process.run()
        process.waitUntilExit()
    }
}
#endif
