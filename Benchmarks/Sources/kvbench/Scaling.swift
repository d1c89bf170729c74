import CBench
import Foundation
import KVDocs

extension Bench {
    /// How insert and indexed query costs grow with the collection's size: one store per
    /// side grows through the sizes (10k, 100k, 1M; with --quick 2k and 10k), and at each
    /// size the inserts that reached it and a round of queries are timed.
    func runScaling() throws {
        let sizes = quick ? [2_000, 10_000] : [10_000, 100_000, 1_000_000]
        var rng = BenchRandom(seed: 41)
        let people = (0..<(sizes.last ?? 0)).map { Person.make($0, &rng) }
        let queries = quick ? 100 : 1_000
        let lows = (0..<queries).map { Int64(10 + $0 % 78) }
        let cities = CPeople(
            (0..<queries).map { Person(id: "", name: "", age: 0, city: "City \($0 % 50)", email: "", score: 0) })

        let (db, store) = try kvdocsStore(3, covering: false)
        defer { db.close() }
        let typed = try store.collection("person", of: Person.self)
        let cdb = try openC(3)
        defer { cs_close(cdb) }
        var from = 0
        for size in sizes {
            let slice = Array(people[from..<size])
            let extra = ["documents": Double(size)]
            try measure("scaling", "insert (batches of 1000)", "kvdocs", repeats: 1) {
                let start = now()
                for chunk in stride(from: 0, to: slice.count, by: 1000) {
                    try store.write { b in
                        for p in slice[chunk..<min(chunk + 1000, slice.count)] { try b.insert("person", encoding: p) }
                    }
                }
                return (now() - start, slice.count, extra)
            }
            try measure("scaling", "insert (batches of 1000)", "sqlite-c", repeats: 1) {
                let rows = CPeople(slice)
                return (try c { cs_insert(cdb, rows.rows, Int32(rows.count), 1000, $0) }, slice.count, extra)
            }
            from = size
            try measure("scaling", "equality (city = ?, limit 20)", "kvdocs") {
                let start = now()
                for i in 0..<queries {
                    _ = try typed.find(DocumentQuery().where("city", .equal(.string("City \(i % 50)"))).limit(20))
                }
                return (now() - start, queries, extra)
            }
            try measure("scaling", "equality (city = ?, limit 20)", "sqlite-c") {
                var rows: Int32 = 0
                return (try c { cs_equal(cdb, cities.city, Int32(queries), 20, &rows, $0) }, queries, extra)
            }
            try measure("scaling", "range (age in [a, a+2), order by age, limit 50)", "kvdocs") {
                let start = now()
                for i in 0..<queries {
                    _ = try typed.find(
                        DocumentQuery().where("age", .greaterOrEqual(.int(lows[i]))).where(
                            "age", .less(.int(lows[i] + 2))
                        )
                        .orderBy("age").limit(50))
                }
                return (now() - start, queries, extra)
            }
            try measure("scaling", "range (age in [a, a+2), order by age, limit 50)", "sqlite-c") {
                var rows: Int32 = 0
                return (try c { cs_range(cdb, lows, Int32(queries), 2, 50, 0, &rows, $0) }, queries, extra)
            }
        }
    }
}
