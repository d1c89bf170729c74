import Foundation
import KVDocs

/// An independent statement of the query semantics, used as the brute-force reference:
/// written from the documented rules, not from the library's encoding.
enum ReferenceSemantics {
    /// Values at a path (`a.b`, `tags[]`).
    static func values(_ path: String, _ doc: JSONValue) -> [JSONValue] {
        var current = [doc]
        for var part in path.split(separator: ".").map(String.init) {
            var fanOut = false
            if part.hasSuffix("[]") {
                part.removeLast(2)
                fanOut = true
            }
            current = current.compactMap { $0[part] }
            if fanOut { current = current.flatMap { if case .array(let a) = $0 { return a } else { return [] } } }
        }
        return current
    }

    static func rank(_ v: JSONValue) -> Int {
        switch v {
        case .null: 0
        case .bool: 1
        case .int, .uint, .double: 2
        case .string: 3
        case .array: 4
        case .object: 5
        }
    }

    static func cmp<T: Comparable>(_ a: T, _ b: T) -> Int { a < b ? -1 : (a == b ? 0 : 1) }

    static func exact(_ v: JSONValue) -> Int128? {
        switch v {
        case .int(let i): return Int128(i)
        case .uint(let u): return Int128(u)
        case .double(let d) where d.rounded() == d && abs(d) < 1e38: return Int128(d)
        default: return nil
        }
    }

    static func asDouble(_ v: JSONValue) -> Double {
        switch v {
        case .int(let i): return Double(i)
        case .uint(let u): return Double(u)
        case .double(let d): return d
        default: return .nan
        }
    }

    /// Numbers numerically and exactly; strings by UTF-8; arrays element-wise; objects by canonical text.
    static func compare(_ a: JSONValue, _ b: JSONValue) -> Int {
        let r = cmp(rank(a), rank(b))
        if r != 0 { return r }
        switch (a, b) {
        case (.null, .null): return 0
        case (.bool(let x), .bool(let y)): return cmp(x ? 1 : 0, y ? 1 : 0)
        case (.string(let x), .string(let y)):
            return Array(x.utf8) == Array(y.utf8)
                ? 0 : (Array(x.utf8).lexicographicallyPrecedes(Array(y.utf8)) ? -1 : 1)
        case (.array(let x), .array(let y)):
            for (p, q) in zip(x, y) {
                let c = compare(p, q)
                if c != 0 { return c }
            }
            return cmp(x.count, y.count)
        case (.object, .object):
            return compare(.string(a.compactDescription), .string(b.compactDescription))
        default:
            if let x = exact(a), let y = exact(b) { return cmp(x, y) }
            return cmp(asDouble(a), asDouble(b))  // a non-integral double: far below 2^53, exact enough
        }
    }

    static func satisfies(_ v: JSONValue, _ op: QueryOperator) -> Bool {
        func same(_ x: JSONValue) -> Bool { rank(v) == rank(x) }
        switch op {
        case .equal(let x): return compare(v, x) == 0
        case .notEqual(let x): return compare(v, x) != 0
        case .less(let x): return same(x) && compare(v, x) < 0
        case .lessOrEqual(let x): return same(x) && compare(v, x) <= 0
        case .greater(let x): return same(x) && compare(v, x) > 0
        case .greaterOrEqual(let x): return same(x) && compare(v, x) >= 0
        case .between(let lo, let hi): return same(lo) && same(hi) && compare(v, lo) >= 0 && compare(v, hi) <= 0
        case .prefix(let p):
            if case .string(let s) = v { return Array(s.utf8).starts(with: Array(p.utf8)) } else { return false }
        case .in(let list): return list.contains { compare(v, $0) == 0 }
        }
    }

    static func idOrder(_ a: JSONValue, _ b: JSONValue) -> Int {
        // Tuple order of ids: strings (0x02) before integers (0x14).
        switch (a, b) {
        case (.string, .int): return -1
        case (.int, .string): return 1
        default: return compare(a, b)
        }
    }

    /// The ids `query` should return from `docs`.
    static func answer(_ docs: [JSONValue: JSONValue], _ query: DocumentQuery) -> [JSONValue] {
        let matching = docs.filter { _, doc in
            query.conditions.allSatisfy { c in values(c.field.description, doc).contains { satisfies($0, c.op) } }
        }
        let sorted = matching.sorted { a, b in
            var c = 0
            if let order = query.order {
                let va = values(order.field.description, a.value).first,
                    vb = values(order.field.description, b.value).first
                switch (va, vb) {
                case (nil, nil): c = 0
                case (nil, _): c = -1
                case (_, nil): c = 1
                case (let x?, let y?): c = compare(x, y)
                }
            }
            if c == 0 { c = idOrder(a.key, b.key) }
            return (query.order?.descending ?? false) ? c > 0 : c < 0
        }.map(\.key)
        let start = min(query.offset, sorted.count)
        let end = query.limit.map { min(start + $0, sorted.count) } ?? sorted.count
        return Array(sorted[start..<end])
    }
}

/// Random documents shaped like the schema's example, with the awkward cases: missing
/// fields, numbers spelled as integers and decimals, integers beyond 2^53, mixed types.
enum DocumentGenerator {
    static let lasts: [JSONValue] = ["Smith", "smith", "Åberg", "Zed", "", "O'Neil", "Ng"]
    static let firsts: [JSONValue] = ["Ann", "Bob", "Émile", "zoë", "Al"]
    static let cities: [JSONValue] = ["Perth", "Fremantle", "Perthshire", "Armadale", "Midland", .null]
    static let tags: [JSONValue] = ["a", "b", "c", "long tag", "é", .int(3)]
    static let ages: [JSONValue] = [
        .int(30), .double(30.0), .double(29.5), .int(-1), .int(0), .double(-0.0), .int(9007199254740993),
        .int(9007199254740992), .double(9007199254740992), .uint(18446744073709551615), .int(.min), .string("30"),
        .null, .bool(true), .double(1e300)
    ]

    static func pick(_ values: [JSONValue], _ rng: inout SplitMix64) -> JSONValue { values.randomElement(using: &rng)! }

    static func document(id: JSONValue, _ rng: inout SplitMix64) -> JSONValue {
        var o: JSONObject = ["id": id]
        if Int.random(in: 0..<6, using: &rng) > 0 {
            o["age"] = Bool.random(using: &rng) ? pick(ages, &rng) : .int(Int64.random(in: 0...100, using: &rng))
        }
        if Int.random(in: 0..<5, using: &rng) > 0 { o["last"] = pick(lasts, &rng) }
        if Int.random(in: 0..<4, using: &rng) > 0 { o["first"] = pick(firsts, &rng) }
        if Int.random(in: 0..<3, using: &rng) > 0 {
            o["email"] = .string("u\(Int.random(in: 0..<60, using: &rng))@x.org")
        }
        if Int.random(in: 0..<4, using: &rng) > 0 {
            o["tags"] = .array((0..<Int.random(in: 0...3, using: &rng)).map { _ in pick(tags, &rng) })
        }
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: break
        case 1: o["address"] = ["zip": "6000"]
        default: o["address"] = ["city": pick(cities, &rng)]
        }
        return .object(o)
    }

    static func operand(_ field: String, _ rng: inout SplitMix64) -> JSONValue {
        switch field {
        case "age": return Bool.random(using: &rng) ? pick(ages, &rng) : .int(Int64.random(in: 0...100, using: &rng))
        case "last": return pick(lasts, &rng)
        case "first": return pick(firsts, &rng)
        case "email": return .string("u\(Int.random(in: 0..<60, using: &rng))@x.org")
        case "tags[]": return pick(tags, &rng)
        default: return pick(cities, &rng)
        }
    }

    static func condition(_ rng: inout SplitMix64) -> QueryCondition {
        let field = ["age", "last", "first", "email", "tags[]", "address.city"].randomElement(using: &rng)!
        let v = operand(field, &rng)
        let op: QueryOperator
        switch Int.random(in: 0..<10, using: &rng) {
        case 0, 1: op = .equal(v)
        case 2: op = .notEqual(v)
        case 3: op = .less(v)
        case 4: op = .lessOrEqual(v)
        case 5: op = .greater(v)
        case 6: op = .greaterOrEqual(v)
        case 7: op = .between(v, operand(field, &rng))
        case 8:
            if case .string(let s) = v {
                op = .prefix(String(s.prefix(Int.random(in: 0...2, using: &rng))))
            } else {
                op = .prefix("P")
            }
        default: op = .in((0..<Int.random(in: 1...3, using: &rng)).map { _ in operand(field, &rng) })
        }
        return QueryCondition(field: try! FieldPath(field), op: op)
    }

    static func query(_ rng: inout SplitMix64) -> DocumentQuery {
        var q = DocumentQuery(conditions: (0..<Int.random(in: 0...3, using: &rng)).map { _ in condition(&rng) })
        switch Int.random(in: 0..<5, using: &rng) {
        case 0: q.order = .init(field: "age", descending: Bool.random(using: &rng))
        case 1: q.order = .init(field: "last", descending: Bool.random(using: &rng))
        case 2: q.order = .init(field: "address.city", descending: Bool.random(using: &rng))
        default: break
        }
        if Bool.random(using: &rng) { q.limit = Int.random(in: 0...8, using: &rng) }
        if Int.random(in: 0..<3, using: &rng) == 0 { q.offset = Int.random(in: 0...5, using: &rng) }
        return q
    }
}
