import KVDocs

// The pieces command lines are made of, shared by the commands' parsers: file paths, scan
// options, queries (`where … order by … limit … offset …`), conditions, points and the
// clauses of `near`.
extension CommandTable {
    typealias ScanOptions = ShellCommand.ScanOptions
    typealias Near = ShellCommand.Near
    typealias Knn = ShellCommand.Knn
    typealias Hybrid = ShellCommand.Hybrid

    static func path(_ s: inout LineScanner) throws -> String {
        s.skipSpaces()
        if s.current == UInt8(ascii: "\"") {
            return String(decoding: try s.quoted(), as: UTF8.self)
        }
        return try s.expectWord("a file path")
    }

    static func scanOptions(_ s: inout LineScanner, allowPrefix: Bool, only: Set<String>? = nil) throws -> ScanOptions {
        var o = ScanOptions()
        while !s.atEnd {
            let option = s.peekWord() ?? ""
            if !option.hasPrefix("--") {
                guard allowPrefix, o.prefix == nil, o.from == nil, o.to == nil, !o.reverse, o.limit == nil else {
                    throw s.fail("unexpected \"\(option)\": expected an option such as --from KEY")
                }
                o.prefix = try s.keyLiteral("a prefix")
                continue
            }
            _ = s.word()
            if let only, !only.contains(option) {
                throw s.fail("unknown option \(option); expected \(only.sorted().joined(separator: " or "))")
            }
            switch option {
            case "--from": o.from = try s.keyLiteral("a key after --from")
            case "--to": o.to = try s.keyLiteral("a key after --to")
            case "--reverse": o.reverse = true
            case "--limit": o.limit = try s.expectCount("a number after --limit")
            case "--keys-only": o.keysOnly = true
            case "--count": o.count = true
            default:
                throw s.fail(
                    "unknown option \(option); expected --from, --to, --reverse, --limit, --keys-only or --count")
            }
        }
        return o
    }

    /// `COLLECTION [where COND [and COND]...] [order by FIELD [asc|desc]] [limit N] [offset N]`
    static func query(_ s: inout LineScanner) throws -> (String, DocumentQuery) {
        let collection = try s.expectWord("a collection name")
        var q = DocumentQuery()
        if s.accept("where") {
            repeat {
                q.conditions.append(try condition(&s))
            } while s.accept("and")
        }
        if s.accept("order") {
            guard s.accept("by") else { throw s.fail("expected \"by\" after order") }
            let field = try fieldPath(&s)
            var descending = false
            if s.accept("desc") { descending = true } else { _ = s.accept("asc") }
            q.order = DocumentQuery.Order(field: field, descending: descending)
        }
        if s.accept("limit") { q.limit = try s.expectCount("the limit") }
        if s.accept("offset") { q.offset = try s.expectCount("the offset") }
        if !s.atEnd, let w = s.peekWord() {
            throw s.fail("unexpected \"\(w)\": expected where, and, order by, limit or offset")
        }
        return (collection, q)
    }

    /// `COLLECTION (LAT, LON) [within METERS] [using INDEX] [where COND [and COND]...] [limit N] [offset N]`
    /// (the clauses in any order, each once).
    static func near(_ s: inout LineScanner) throws -> Near {
        let collection = try s.expectWord("a collection name")
        let center = try point(&s)
        var near = Near(collection: collection, center: center)
        try clauses(&s) { word, start, s in
            switch word {
            case "within":
                s.skipSpaces()
                let at = s.position
                let value = try s.jsonValue("a distance in metres after within")
                guard let metres = number(value), metres.isFinite, metres >= 0 else {
                    throw s.fail(
                        "within takes a distance in metres (a number, at least 0), not \(value.compactDescription)",
                        at: at)
                }
                near.within = metres
            case "using": near.index = try s.expectWord("a geo index name after using")
            case "where":
                repeat { near.query.conditions.append(try condition(&s)) } while s.accept("and")
            case "limit": near.query.limit = try s.expectCount("the limit")
            case "offset": near.query.offset = try s.expectCount("the offset")
            case "order":
                throw s.fail("near lists hits nearest first; it takes no order by", at: start)
            default:
                throw s.fail("unexpected \"\(word)\": expected within, using, where, limit or offset", at: start)
            }
        }
        return near
    }

    /// The query vector of `knn` and `hybrid`: a non-empty JSON array of finite numbers.
    static func queryVector(_ s: inout LineScanner) throws -> [Float] {
        s.skipSpaces()
        let at = s.position
        let value = try s.jsonValue("the query vector, a JSON array of numbers")
        guard case .array(let elements) = value, !elements.isEmpty else {
            throw s.fail("the query vector must be a JSON array of numbers, not \(value.compactDescription)", at: at)
        }
        var vector: [Float] = []
        vector.reserveCapacity(elements.count)
        for (i, element) in elements.enumerated() {
            guard let d = number(element), d.isFinite, Float(d).isFinite else {
                throw s.fail(
                    "element \(i) of the query vector is \(element.compactDescription), not a finite number", at: at)
            }
            vector.append(Float(d))
        }
        return vector
    }

    /// `knn COLLECTION INDEX VECTOR K [where COND [and COND]…] [exact | probes N]`, after the
    /// command's name.
    static func knn(_ s: inout LineScanner) throws -> Knn {
        let collection = try s.expectWord("a collection name")
        let index = try s.expectWord("a vector index name")
        let vector = try queryVector(&s)
        let k = try s.expectCount("K, how many nearest")
        var knn = Knn(collection: collection, index: index, vector: vector, k: k)
        try clauses(&s) { word, start, s in
            switch word {
            case "where":
                repeat { knn.query.conditions.append(try condition(&s)) } while s.accept("and")
            case "exact", "probes":
                guard knn.search == .approximate() else {
                    throw s.fail("knn takes one of exact and probes N, once", at: start)
                }
                knn.search = word == "exact" ? .exact : .approximate(probes: try s.expectCount("N, how many lists"))
                if knn.search == .approximate(probes: 0) {
                    throw s.fail("probes must be at least 1", at: start)
                }
            case "limit", "offset", "order":
                throw s.fail("knn returns the K nearest, nearest first; it takes no \(word)", at: start)
            default:
                throw s.fail("unexpected \"\(word)\": expected where, exact or probes", at: start)
            }
        }
        guard s.atEnd else { throw s.fail("expected where, exact or probes") }
        return knn
    }

    /// `hybrid COLLECTION K [text "QUERY"] [vector [..]] [using INDEX] [where …] [near (LAT, LON)
    /// within M]`, after the command's name.
    static func hybrid(_ s: inout LineScanner) throws -> Hybrid {
        let collection = try s.expectWord("a collection name")
        let k = try s.expectCount("K, how many hits")
        var hybrid = Hybrid(collection: collection, k: k)
        try clauses(&s) { word, start, s in
            switch word {
            case "text":
                s.skipSpaces()
                switch s.current {
                case UInt8(ascii: "\"")?: hybrid.text = String(decoding: try s.quoted(), as: UTF8.self)
                case UInt8(ascii: "'")?: hybrid.text = try s.singleQuoted()
                default: throw s.fail("text takes a quoted FTS5 query")
                }
            case "vector": hybrid.vector = try queryVector(&s)
            case "using": hybrid.vectorIndex = try s.expectWord("a vector index name after using")
            case "where":
                repeat { hybrid.query.conditions.append(try condition(&s)) } while s.accept("and")
            case "near":
                hybrid.center = try point(&s)
                guard s.accept("within") else { throw s.fail("near (LAT, LON) takes within METERS") }
                s.skipSpaces()
                let at = s.position
                let value = try s.jsonValue("a distance in metres after within")
                guard let metres = number(value), metres.isFinite, metres >= 0 else {
                    throw s.fail("within takes a distance in metres (a number, at least 0)", at: at)
                }
                hybrid.radius = metres
            default:
                throw s.fail("unexpected \"\(word)\": expected text, vector, using, where or near", at: start)
            }
        }
        guard s.atEnd else { throw s.fail("expected text, vector, using, where or near") }
        guard hybrid.text != nil || hybrid.vector != nil else {
            throw s.fail("hybrid takes text \"QUERY\", vector [..] or both")
        }
        return hybrid
    }

    /// Reads the clauses that follow a command's arguments, each a keyword (lower-cased) given
    /// at most once: `body` gets the keyword, where it starts and the scanner, and reads the
    /// rest of the clause. Stops at the end of the line or at something that is not a word.
    /// - Throws: a keyword given twice, or what `body` throws.
    static func clauses(
        _ s: inout LineScanner, _ body: (String, Int, inout LineScanner) throws -> Void
    ) throws {
        var seen = Set<String>()
        while !s.atEnd {
            s.skipSpaces()
            let start = s.position
            guard let word = s.word()?.lowercased() else { break }
            guard seen.insert(word).inserted else { throw s.fail("\(word) is given twice", at: start) }
            try body(word, start, &s)
        }
    }

    /// The number a JSON literal holds.
    static func number(_ value: JSONValue) -> Double? {
        switch value {
        case .int(let i): return Double(i)
        case .uint(let u): return Double(u)
        case .double(let d): return d
        default: return nil
        }
    }

    /// `(LAT, LON)` in degrees.
    static func point(_ s: inout LineScanner) throws -> GeoPoint {
        s.skipSpaces()
        let start = s.position
        guard s.current == UInt8(ascii: "(") else { throw s.fail("expected a point (LAT, LON) in degrees") }
        s.position += 1
        func coordinate(_ what: String, _ range: ClosedRange<Double>) throws -> Double {
            s.skipSpaces()
            let at = s.position
            let value = try s.jsonValue("the \(what) (a number)")
            guard let x = number(value), range.contains(x) else {
                throw s.fail(
                    "the \(what) must be a number in [\(Int(range.lowerBound)), \(Int(range.upperBound))], not \(value.compactDescription)",
                    at: at)
            }
            return x
        }
        let latitude = try coordinate("latitude", -90...90)
        s.skipSpaces()
        guard s.current == UInt8(ascii: ",") else {
            throw s.fail("expected \",\" between the latitude and the longitude: (LAT, LON)")
        }
        s.position += 1
        let longitude = try coordinate("longitude", -180...180)
        s.skipSpaces()
        guard s.current == UInt8(ascii: ")") else { throw s.fail("expected \")\" after the longitude: (LAT, LON)") }
        s.position += 1
        do {
            return try GeoPoint(latitude: latitude, longitude: longitude)
        } catch let e as KVDocsError {
            throw s.fail(e.message, at: start)
        }
    }

    static func fieldPath(_ s: inout LineScanner) throws -> FieldPath {
        let start = s.position
        let text = try s.expectWord("a field name")
        do { return try FieldPath(text) } catch { throw s.fail("invalid field \"\(text)\"", at: start) }
    }

    static func condition(_ s: inout LineScanner) throws -> QueryCondition {
        s.skipSpaces()
        // FIELD OP VALUE; the operator may touch the field (age>30).
        let start = s.position
        var fieldText = ""
        var op = ""
        var rest = LineScanner("")
        var opStart = start
        if let w = s.peekWord(), let r = w.range(of: #"(!=|<=|>=|=|<|>)"#, options: .regularExpression),
            r.lowerBound != w.startIndex
        {
            _ = s.word()
            fieldText = String(w[..<r.lowerBound])
            op = String(w[r])
            let after = String(w[r.upperBound...])
            if !after.isEmpty { rest = LineScanner(after) }
        } else {
            fieldText = try s.expectWord("a field name after where")
            s.skipSpaces()
            opStart = s.position
            op = try s.expectWord("an operator (= != < <= > >= prefix in)").lowercased()
        }
        guard let field = try? FieldPath(fieldText) else { throw s.fail("invalid field \"\(fieldText)\"", at: start) }
        func value() throws -> JSONValue {
            if !rest.atEnd { return try rest.jsonValue() }
            return try s.jsonValue("a JSON value after \(op)")
        }
        switch op {
        case "=", "==": return QueryCondition(field: field, op: .equal(try value()))
        case "!=": return QueryCondition(field: field, op: .notEqual(try value()))
        case "<": return QueryCondition(field: field, op: .less(try value()))
        case "<=": return QueryCondition(field: field, op: .lessOrEqual(try value()))
        case ">": return QueryCondition(field: field, op: .greater(try value()))
        case ">=": return QueryCondition(field: field, op: .greaterOrEqual(try value()))
        case "prefix":
            guard case .string(let p) = try value() else { throw s.fail("prefix takes a JSON string") }
            return QueryCondition(field: field, op: .prefix(p))
        case "in":
            s.skipSpaces()
            guard s.current == UInt8(ascii: "(") else { throw s.fail("expected \"(\" after in: in (v1, v2)") }
            var values: [JSONValue] = []
            // Consume "(" then values separated by ",".
            var inner = s
            inner.position += 1
            while true {
                inner.skipSpaces()
                if inner.current == UInt8(ascii: ")") {
                    inner.position += 1
                    break
                }
                values.append(try inner.jsonValue("a JSON value in the list"))
                inner.skipSpaces()
                if inner.current == UInt8(ascii: ",") {
                    inner.position += 1
                    continue
                }
                guard inner.current == UInt8(ascii: ")") else {
                    throw inner.fail("expected \",\" or \")\" in the list")
                }
            }
            s = inner
            return QueryCondition(field: field, op: .in(values))
        default:
            throw s.fail("unknown operator \"\(op)\"; expected = != < <= > >= prefix in", at: opStart)
        }
    }
}
