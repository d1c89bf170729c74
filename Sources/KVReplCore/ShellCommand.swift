import KVDocs

/// One kvrepl command, parsed.
public enum ShellCommand: Equatable, Sendable {
    // Raw layer
    case get([UInt8])
    case put([UInt8], [UInt8])
    case del([UInt8])
    case scan(ScanOptions)
    case delrange(ScanOptions)
    case stats
    case property(String)
    case size(from: [UInt8]?, to: [UInt8]?)
    case compact(from: [UInt8]?, to: [UInt8]?)
    case snapshot
    case release
    case dump(String)
    case load(String)
    case keyspaces
    case keyspacesLoad(String)
    /// `sync on|off`: whether the session's writes are synced; `nil` (`sync` alone) shows it.
    case sync(Bool?)
    /// Close, repair (LevelDB's RepairDB) and reopen the database.
    case repair
    /// `format [table|line|json|jsonl|csv|text]` (or `mode …`): how results print; `nil`
    /// shows the current format; `.some(nil)` (`text`) prints them as kvrepl always has.
    case format(OutputFormat??)
    /// `timer [on|off]`: whether each command's wall time is printed; `nil` shows it.
    case timer(Bool?)
    case help(String?)
    case quit
    // Document layer
    case schema
    case schemaLoad(String)
    case collections
    case indexes(String)
    case insert(String, JSONValue)
    case upsert(String, JSONValue)
    case doc(String, JSONValue)
    case remove(String, JSONValue)
    case importFile(String, String)
    case exportFile(String, String)
    case find(String, DocumentQuery)
    case count(String, DocumentQuery)
    case explain(String, DocumentQuery)
    case search(String, String, limit: Int?, highlight: Bool)
    /// `near COLLECTION (LAT, LON) [within METERS] [using INDEX] [where …] [limit N] [offset N]`
    case near(Near)
    /// `explain near …`
    case explainNear(Near)
    case terms(String, index: String?, prefix: String, limit: Int?)
    case verify(String?)
    case reindex(String, String?)
    /// `optimize COLLECTION [INDEX]`: merge a text index's segments into one.
    case optimize(String, String?)
    case salvage(quarantine: String?)
    case changes(since: Int64, limit: Int?)
    /// `conflicts COLLECTION`: the documents of a replicated collection with conflicts.
    case conflicts(String)
    /// `resolve COLLECTION ID REV`: keep REV, tombstone the document's other non-deleted leaves.
    case resolve(String, JSONValue, String)
    /// `revs COLLECTION ID`: a replicated document's leaf revisions and their histories.
    case revs(String, JSONValue)
    /// `replicate SOURCE TARGET [--continuous]`: copies what TARGET lacks of SOURCE
    /// (each a collection of the open store, `PATH:COLLECTION` or a URL).
    case replicate(source: String, target: String, continuous: Bool)
    /// `serve [--port N] [--bind ADDR] [--user U --password-file F]`: serves the store's
    /// replicated collections over CouchDB's replication protocol until interrupted.
    case serve(port: Int, bind: String, user: String?, passwordFile: String?)
    /// `layers`: the base and user databases of a layered session, with their sizes.
    case layers
    /// `replace-base NEWBASE [--allow-unrelated]`
    case replaceBase(String, allowingUnrelated: Bool)
    /// `backup DIR`
    case backup(String)

    /// A geo query: the documents of `collection` nearest `center`, within `within` metres,
    /// passing `query`'s conditions, after its offset, up to its limit.
    public struct Near: Equatable, Sendable {
        public var collection: String
        public var center: GeoPoint
        public var within: Double?
        public var index: String?
        public var query: DocumentQuery
        public init(
            collection: String, center: GeoPoint, within: Double? = nil, index: String? = nil,
            query: DocumentQuery = DocumentQuery()
        ) {
            self.collection = collection
            self.center = center
            self.within = within
            self.index = index
            self.query = query
        }
    }

    /// `scan` and `delrange` options.
    public struct ScanOptions: Equatable, Sendable {
        public var prefix: [UInt8]?
        public var from: [UInt8]?
        public var to: [UInt8]?
        public var reverse = false
        public var limit: Int?
        public var keysOnly = false
        public var count = false
        public init() {}

        /// The key range: the prefix, from `from` (inclusive), to `to` (exclusive).
        public var range: KeyRange {
            var r = prefix.map { KeyRange.prefix($0) } ?? .all
            if let from { r = r.starting(at: from) }
            if let to { r = r.ending(before: to) }
            return r
        }
    }

    /// Whether the command changes the database (refused with `--read-only`).
    public var isWrite: Bool {
        switch self {
        case .put, .del, .delrange, .compact, .load, .keyspacesLoad, .schemaLoad, .insert, .upsert, .remove,
            .importFile, .reindex, .optimize, .repair, .salvage, .replaceBase,
            .resolve, .serve:
            return true
        default:
            return false
        }
    }

    /// Whether the command only changes how the shell prints (`timer`, `format`).
    public var isShellSetting: Bool {
        switch self {
        case .timer, .format: return true
        default: return false
        }
    }

    /// Whether the command reads or writes the raw key-value layer of one database.
    public var isRaw: Bool {
        switch self {
        case .get, .put, .del, .scan, .delrange, .stats, .property, .size, .compact, .snapshot, .release, .dump, .load,
            .keyspaces, .keyspacesLoad, .repair:
            return true
        default:
            return false
        }
    }

    /// The command names, for help and completion.
    public static let names = [
        "get", "put", "del", "scan", "delrange", "stats", "property", "size", "compact", "snapshot", "release",
        "dump", "load", "keyspaces", "sync", "repair", "help", "quit", "schema", "collections", "indexes", "insert",
        "upsert", "doc",
        "remove", "import", "export", "find", "count", "explain", "search", "near", "terms", "verify", "reindex",
        "optimize", "salvage", "changes",
        "layers", "replace-base", "backup", "format", "mode", "timer", "conflicts", "resolve", "revs",
        "replicate", "serve"
    ]
}

extension ShellCommand {
    /// The command name nearest `word` by edit distance (insertions, deletions,
    /// substitutions and swaps of neighbours), when it is near enough to be a typo: at most
    /// one edit for words of up to four letters, two for longer ones. Ties go to the
    /// earlier name of ``names``.
    static func nearestName(to word: String) -> String? {
        let typed = Array(word.lowercased().unicodeScalars)
        // One edit (a letter wrong, missing, extra or two swapped) below 8 letters, two from
        // 8 on: "clear" is 2 edits from "near" and gets no suggestion.
        let allowed = typed.count < 8 ? 1 : 2
        var best: (name: String, distance: Int)?
        for name in names {
            // The distance is at least the difference in length: a long word (a pasted
            // value, say) is compared with nothing, in time linear in its length.
            let candidate = Array(name.unicodeScalars)
            guard abs(candidate.count - typed.count) <= allowed else { continue }
            let d = editDistance(typed, candidate)
            if d <= allowed, d < (best?.distance ?? Int.max) { best = (name, d) }
        }
        return best?.name
    }

    /// The optimal-string-alignment distance between `a` and `b`.
    static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var before = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], before[j - 2] + 1)
                }
            }
            (before, previous, current) = (previous, current, before)
        }
        return previous[b.count]
    }

    /// Parses one line; `nil` for an empty line or a `#` comment.
    /// - Throws: ``ShellCommandError`` naming what was expected and where.
    public static func parse(_ line: String) throws -> ShellCommand? {
        var s = LineScanner(line)
        guard let name = s.word() else { return nil }
        if name.hasPrefix("#") { return nil }
        let command = try parse(name.lowercased(), &s)
        guard s.atEnd else {
            throw ShellCommandError(
                message: "unexpected \"\(s.rest())\" after \(name) (see: help \(name.lowercased()))", column: nil)
        }
        return command
    }

    static func parse(_ name: String, _ s: inout LineScanner) throws -> ShellCommand {
        switch name {
        case "get": return .get(try s.keyLiteral())
        case "put":
            let key = try s.keyLiteral()
            s.skipSpaces()
            guard !s.atEnd else { throw s.fail("expected a value after the key") }
            if let c = s.current,
                c == UInt8(ascii: "\"") || c == UInt8(ascii: "(") || s.peekWord()?.lowercased().hasPrefix("0x") == true
            {
                return .put(key, try s.keyLiteral("a value"))
            }
            return .put(key, Array(s.rest().utf8))  // the rest of the line, as text
        case "del": return .del(try s.keyLiteral())
        case "scan": return .scan(try scanOptions(&s, allowPrefix: true))
        case "delrange": return .delrange(try scanOptions(&s, allowPrefix: true))
        case "stats": return .stats
        case "property": return .property(try s.expectWord("a property name, such as leveldb.stats"))
        case "size", "compact":
            let o = try scanOptions(&s, allowPrefix: false, only: ["--from", "--to"])
            return name == "size" ? .size(from: o.from, to: o.to) : .compact(from: o.from, to: o.to)
        case "snapshot": return .snapshot
        case "release": return .release
        case "dump": return .dump(try path(&s))
        case "load": return .load(try path(&s))
        case "keyspaces":
            if s.accept("load") { return .keyspacesLoad(try path(&s)) }
            return .keyspaces
        case "sync":
            s.skipSpaces()
            let start = s.position
            guard let word = s.word() else { return .sync(nil) }
            switch word.lowercased() {
            case "on": return .sync(true)
            case "off": return .sync(false)
            default: throw s.fail("expected on or off after sync, not \"\(word)\"", at: start)
            }
        case "repair": return .repair
        case "format", "mode", ".mode":
            s.skipSpaces()
            let start = s.position
            guard let word = s.word() else { return .format(nil) }
            if word.lowercased() == "text" { return .format(.some(nil)) }
            guard let format = OutputFormat(rawValue: word.lowercased()) else {
                let names = (OutputFormat.allCases.map(\.rawValue) + ["text"]).joined(separator: ", ")
                throw s.fail("expected a format (\(names)), not \"\(word)\"", at: start)
            }
            return .format(.some(format))
        case "timer", ".timer":
            s.skipSpaces()
            let start = s.position
            guard let word = s.word() else { return .timer(nil) }
            switch word.lowercased() {
            case "on": return .timer(true)
            case "off": return .timer(false)
            default: throw s.fail("expected on or off after timer, not \"\(word)\"", at: start)
            }
        case "help": return .help(s.word()?.lowercased())
        case "quit", "exit": return .quit
        case "schema":
            if s.accept("load") { return .schemaLoad(try path(&s)) }
            return .schema
        case "collections": return .collections
        case "indexes": return .indexes(try s.expectWord("a collection name"))
        case "insert", "upsert":
            let collection = try s.expectWord("a collection name")
            let document = try s.jsonValue("a JSON document")
            return name == "insert" ? .insert(collection, document) : .upsert(collection, document)
        case "doc", "remove":
            let collection = try s.expectWord("a collection name")
            let id = try s.jsonValue("an id (a JSON string or number)")
            return name == "doc" ? .doc(collection, id) : .remove(collection, id)
        case "import", "export":
            let collection = try s.expectWord("a collection name")
            let file = try path(&s)
            return name == "import" ? .importFile(collection, file) : .exportFile(collection, file)
        case "find":
            let (c, q) = try query(&s)
            return .find(c, q)
        case "count":
            let (c, q) = try query(&s)
            return .count(c, q)
        case "explain":
            if s.accept("near") { return .explainNear(try near(&s)) }
            guard s.accept("find") else {
                throw s.fail(
                    "expected \"find\" or \"near\" after explain (explain find COLLECTION …, explain near COLLECTION …)"
                )
            }
            let (c, q) = try query(&s)
            return .explain(c, q)
        case "near": return .near(try near(&s))
        case "search":
            let collection = try s.expectWord("a collection name")
            s.skipSpaces()
            let text: String
            switch s.current {
            case UInt8(ascii: "\"")?:
                text = String(decoding: try s.quoted(), as: UTF8.self)
            case UInt8(ascii: "'")?:
                text = try s.singleQuoted()
            case nil:
                throw s.fail("expected a search query (quoted)")
            default:
                text = try s.expectWord("a search query")
            }
            var limit: Int?
            var highlight = false
            while !s.atEnd {
                if s.accept("limit") {
                    limit = try s.expectCount("the limit")
                } else if s.accept("highlight") {
                    highlight = true
                } else {
                    throw s.fail("expected \"limit N\" or \"highlight\"")
                }
            }
            return .search(collection, text, limit: limit, highlight: highlight)
        case "terms":
            let collection = try s.expectWord("a collection name")
            var index: String?
            var prefix = ""
            var limit: Int?
            while !s.atEnd {
                if s.accept("limit") {
                    limit = try s.expectCount("the limit")
                } else if s.current == UInt8(ascii: "\"") {
                    prefix = String(decoding: try s.quoted(), as: UTF8.self)
                } else if let word = s.word() {
                    if index == nil { index = word } else { prefix = word }
                } else {
                    throw s.fail("expected an index name, a prefix or \"limit N\"")
                }
            }
            return .terms(collection, index: index, prefix: prefix, limit: limit)
        case "verify": return .verify(s.word())
        case "conflicts": return .conflicts(try s.expectWord("a collection name"))
        case "revs", "resolve":
            let collection = try s.expectWord("a collection name")
            let id = try s.jsonValue("a document id (a JSON string)")
            if name == "revs" { return .revs(collection, id) }
            return .resolve(collection, id, try s.expectWord("the revision to keep (N-HEX)"))
        case "replicate":
            var endpoints: [String] = []
            var continuous = false
            while !s.atEnd {
                if s.accept("--continuous") {
                    continuous = true
                } else if endpoints.count < 2 {
                    endpoints.append(try path(&s))
                } else {
                    throw s.fail("expected \"--continuous\" after SOURCE and TARGET")
                }
            }
            guard endpoints.count == 2 else {
                throw s.fail(
                    "expected \(endpoints.isEmpty ? "SOURCE and TARGET" : "TARGET"): a collection of this store, PATH:COLLECTION or a URL"
                )
            }
            return .replicate(source: endpoints[0], target: endpoints[1], continuous: continuous)
        case "serve":
            var port = 5984
            var bind = "127.0.0.1"
            var user: String?
            var passwordFile: String?
            while !s.atEnd {
                if s.accept("--port") {
                    port = try s.expectCount("a port number")
                    guard port <= 65535 else { throw s.fail("the port must be at most 65535") }
                } else if s.accept("--bind") {
                    bind = try s.expectWord("an address to listen on")
                } else if s.accept("--user") {
                    user = try s.expectWord("a user name")
                } else if s.accept("--password-file") {
                    passwordFile = try path(&s)
                } else {
                    throw s.fail("expected --port N, --bind ADDR, --user U or --password-file F")
                }
            }
            guard (user == nil) == (passwordFile == nil) else {
                throw s.fail("--user and --password-file go together")
            }
            return .serve(port: port, bind: bind, user: user, passwordFile: passwordFile)
        case "reindex":
            let collection = try s.expectWord("a collection name")
            return .reindex(collection, s.word())
        case "optimize":
            let collection = try s.expectWord("a collection name")
            return .optimize(collection, s.word())
        case "salvage": return .salvage(quarantine: s.word())
        case "layers": return .layers
        case "replace-base":
            let newBase = try path(&s)
            s.skipSpaces()
            let allowing = s.accept("--allow-unrelated")
            return .replaceBase(newBase, allowingUnrelated: allowing)
        case "backup": return .backup(try path(&s))
        case "changes":
            var since: Int64 = 0
            var limit: Int?
            while !s.atEnd {
                if s.accept("since") {
                    since = Int64(try s.expectCount("a sequence number"))
                } else if s.accept("limit") {
                    limit = try s.expectCount("the limit")
                } else {
                    throw s.fail("expected \"since SEQ\" or \"limit N\"")
                }
            }
            return .changes(since: since, limit: limit)
        default:
            if let nearest = nearestName(to: name) {
                throw ShellCommandError(
                    message: "unknown command \"\(name)\"; did you mean \(nearest)? (try: help)", column: 1)
            }
            throw ShellCommandError(message: "unknown command \"\(name)\"; try: help", column: 1)
        }
    }

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
        var seen = Set<String>()
        while !s.atEnd {
            s.skipSpaces()
            let start = s.position
            guard let word = s.word()?.lowercased() else { break }
            guard seen.insert(word).inserted else { throw s.fail("\(word) is given twice", at: start) }
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
