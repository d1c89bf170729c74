import Foundation
import KVDocs

// The commands that read documents: queries, counts, plans, searches, geo queries, terms
// and the change feed.
extension CommandTable {
    static let queryKeywords = ["where", "and", "order", "by", "asc", "desc", "limit", "offset", "prefix", "in"]
    static let nearKeywords = ["within", "using", "where", "and", "limit", "offset"]

    @Sendable static func collectionQuery(_ s: inout LineScanner) throws -> ShellCommand.CollectionQuery {
        let (collection, query) = try query(&s)
        return .init(collection: collection, query: query)
    }

    static let find = CommandDefinition<ShellCommand.CollectionQuery>(
        "find",
        usage: "find COLLECTION [where FIELD OP VALUE [and …]] [order by FIELD [asc|desc]] [limit N] [offset N]",
        summary: "query documents; OP is = != < <= > >= prefix in, VALUE a JSON literal, in (v1, v2)", access: .read,
        completion: [.collection], keywords: queryKeywords, parse: collectionQuery
    ) { session, arguments in
        // Streamed from one snapshot: a result of any size prints in bounded memory.
        session.leadingColumns = [try session.documents().schema.collection(arguments.collection).primaryKey]
        let interactive = session.interactive
        try session.reading { tx in
            try session.streamRows(text: { interactive ? ShellDisplay.prettyJSON($0) : ShellDisplay.compactJSON($0) }) {
                row in
                try tx.forEach(arguments.collection, arguments.query, row)
            }
        }
    }

    static let count = CommandDefinition<ShellCommand.CollectionQuery>(
        "count", usage: "count COLLECTION [where …]", summary: "count matching documents", access: .read,
        completion: [.collection], keywords: queryKeywords, parse: collectionQuery
    ) { session, arguments in
        let n = try session.reading { try $0.count(arguments.collection, arguments.query) }
        session.emitRow(["count": .int(Int64(n))], "\(n)")
    }

    static let explain = CommandDefinition<ShellCommand.Explain>(
        "explain", usage: "explain find … | explain near … | explain knn …",
        summary:
            "the index and key ranges a find would use; the cells and ranges a near reads; how a knn finds its candidates",
        access: .read,
        completion: [.words(["find", "near", "knn"]), .collection], keywords: queryKeywords,
        displayName: {
            switch $0 {
            case .near: "explain near"
            case .knn: "explain knn"
            case .find: "explain find"
            }
        },
        parse: { s in
            if s.accept("near") { return .near(try near(&s)) }
            if s.accept("knn") { return .knn(try knn(&s)) }
            guard s.accept("find") else {
                throw s.fail(
                    "expected \"find\", \"near\" or \"knn\" after explain (explain find COLLECTION …, explain near COLLECTION …, explain knn COLLECTION …)"
                )
            }
            return .find(try collectionQuery(&s))
        }
    ) { session, arguments in
        switch arguments {
        case .find(let find): try session.explainFind(find)
        case .near(let near): try session.explainNear(near)
        case .knn(let knn): try session.explainKnn(knn)
        }
    }

    static let search = CommandDefinition<ShellCommand.Search>(
        "search", usage: "search COLLECTION \"QUERY\" [limit N] [highlight]",
        summary: "full-text search (FTS5 syntax), best first", access: .read, completion: [.collection],
        keywords: ["limit", "highlight"],
        parse: { s in
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
            return .init(collection: collection, text: text, limit: limit, highlight: highlight)
        }
    ) { session, search in try session.search(search) }

    static let near = CommandDefinition<ShellCommand.Near>(
        "near", usage: "near COLLECTION (LAT, LON) [within METERS] [using INDEX] [where …] [limit N] [offset N]",
        summary:
            "documents by distance from a point (degrees), nearest first, from a geo index; METERS is a radius, limit N alone the N nearest",
        access: .read, completion: [.collection], keywords: nearKeywords, parse: { s in try near(&s) }
    ) { session, near in try session.near(near) }

    static let knn = CommandDefinition<ShellCommand.Knn>(
        "knn", usage: "knn COLLECTION INDEX VECTOR K [where …] [exact | probes N]",
        summary:
            "the K documents whose vectors are nearest to VECTOR (a JSON array of numbers) in a vector index, nearest first, with their distances; approximate (N lists of the index's inverted file read) unless exact",
        access: .read, completion: [.collection], keywords: ["where", "and", "exact", "probes"],
        parse: { s in try knn(&s) }
    ) { session, knn in try session.knn(knn) }

    static let hybrid = CommandDefinition<ShellCommand.Hybrid>(
        "hybrid",
        usage:
            "hybrid COLLECTION K [text \"QUERY\"] [vector [..]] [using INDEX] [where …] [near (LAT, LON) within METERS]",
        summary:
            "the K best documents by reciprocal rank fusion (constant 60) of a text query (BM25) and a vector query, among those meeting the conditions",
        access: .read, completion: [.collection],
        keywords: ["text", "vector", "using", "where", "and", "near", "within"], parse: { s in try hybrid(&s) }
    ) { session, hybrid in try session.hybrid(hybrid) }

    static let terms = CommandDefinition<ShellCommand.Terms>(
        "terms", usage: "terms COLLECTION [INDEX] [PREFIX] [limit N]",
        summary: "a text index's statistics, then its terms with the documents holding each", access: .read,
        completion: [.collection, .textIndex], keywords: ["limit"],
        parse: { s in
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
            return .init(collection: collection, index: index, prefix: prefix, limit: limit)
        }
    ) { session, terms in
        let (stats, found) = try session.reading { tx in
            (
                try tx.textStatistics(terms.collection, index: terms.index),
                try tx.textTerms(terms.collection, index: terms.index, prefix: terms.prefix, limit: terms.limit)
            )
        }
        if !session.json {
            session.emit(
                .null,
                "\(stats.documents) documents, \(stats.tokens) tokens (\(String(format: "%.1f", stats.averageLength)) per document)"
            )
        }
        session.leadingColumns = ["term", "documents"]
        for t in found {
            session.emitRow(
                ["term": .string(t.term), "documents": .int(Int64(t.documents))],
                "\(ShellDisplay.escaped(t.term))  \(t.documents)")
        }
    }

    static let changes = CommandDefinition<ShellCommand.Changes>(
        "changes", usage: "changes [since SEQ] [limit N]", summary: "the change feed", access: .read,
        keywords: ["since", "limit"],
        parse: { s in
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
            return .init(since: since, limit: limit)
        }
    ) { session, arguments in
        session.leadingColumns = ["sequence", "operation", "collection", "id"]
        for c in try session.documents().changes(since: arguments.since, limit: arguments.limit) {
            session.emitRow(
                [
                    "sequence": .int(c.sequence), "collection": .string(c.collection), "id": c.id,
                    "operation": .string(c.operation.rawValue)
                ], c.description)
        }
    }
}

extension ShellSession {
    /// The markers of an interactive search's bold matches (private-use characters).
    static let boldOn = "\u{E000}", boldOff = "\u{E001}"

    func explainFind(_ find: ShellCommand.CollectionQuery) throws {
        let plan = try documents().collection(find.collection).explain(find.query)
        emit(
            [
                "collection": .string(find.collection), "index": plan.index.map { .string($0) } ?? .null,
                "ranges": .array(plan.ranges.map { .string(QueryPlan.describe($0)) }),
                "range_conditions": .array(plan.rangeConditions.map { .string($0.description) }),
                "filter": .array(plan.filter.map { .string($0.description) }),
                "ordered_by_scan": .bool(plan.orderedByScan), "covering": .bool(plan.covering),
                "scanned_documents": plan.scannedDocuments.map { .int(Int64($0)) } ?? .null,
                "suggestion": plan.suggestion.map { .string($0) } ?? .null,
                "plan": .string(plan.description)
            ],
            plan.description)
    }

    func explainNear(_ near: ShellCommand.Near) throws {
        let plan = try reading {
            try $0.explainNear(near.collection, near.center, within: near.within, query: near.query, index: near.index)
        }
        let rings: [JSONValue] = plan.rings.map { ring in
            [
                "radius": .double(ring.radius), "cells": .array(ring.cells.map { .string($0) }),
                "ranges": .array(ring.ranges.map { .string($0) })
            ]
        }
        emit(
            [
                "collection": .string(plan.collection), "index": .string(plan.index), "center": plan.center.json,
                "within": plan.within.map { .double($0) } ?? .null, "rings": .array(rings),
                "cells": .array(plan.rings.flatMap { $0.cells.map { .string($0) } }),
                "ranges": .array(plan.rings.flatMap { $0.ranges.map { .string($0) } }),
                "filter": .array(plan.filter.map { .string($0.description) }),
                "candidates": .int(Int64(plan.candidates)), "hits": .int(Int64(plan.hits)),
                "plan": .string(plan.description)
            ],
            plan.description)
    }

    func explainKnn(_ knn: ShellCommand.Knn) throws {
        let plan = try reading {
            try $0.explainNearest(
                knn.collection, to: knn.vector, k: knn.k, query: knn.query, index: knn.index, search: knn.search)
        }
        let strategy: String
        var through: JSONValue = .null
        switch plan.strategy {
        case .scan: strategy = "scan"
        case .scanWithFilter: strategy = "scan_with_filter"
        case .candidates(let index):
            strategy = "prefilter"
            through = .string(index)
        }
        emit(
            [
                "collection": .string(plan.collection), "index": .string(plan.index),
                "metric": .string(plan.metric.rawValue), "k": .int(Int64(plan.k)),
                "exact": .bool(plan.listsRead == nil),
                "lists": plan.lists.map { .int(Int64($0)) } ?? .null,
                "lists_read": plan.listsRead.map { .int(Int64($0)) } ?? .null,
                "strategy": .string(strategy), "prefilter_index": through,
                "filter": .array(plan.filter.map { .string($0.description) }),
                "vectors": .int(Int64(plan.vectors)), "candidates": plan.candidates.map { .int(Int64($0)) } ?? .null,
                "blocks_read": .int(Int64(plan.blocksRead)), "vectors_scanned": .int(Int64(plan.vectorsScanned)),
                "exact_distances": .int(Int64(plan.exactDistances)),
                "documents_checked": .int(Int64(plan.documentsChecked)), "hits": .int(Int64(plan.hits)),
                "plan": .string(plan.description)
            ],
            plan.description)
    }

    func hybrid(_ hybrid: ShellCommand.Hybrid) throws {
        var query = HybridQuery(text: hybrid.text, vector: hybrid.vector, k: hybrid.k, conditions: hybrid.query)
        query.vectorIndex = hybrid.vectorIndex
        if let center = hybrid.center, let radius = hybrid.radius { query.near = (center, radius) }
        let hits = try reading { try $0.hybrid(hybrid.collection, query) }
        let primaryKey = try documents().schema.collection(hybrid.collection).primaryKey
        leadingColumns = [primaryKey, "score"]
        for hit in hits {
            let text = hit.textRank.map { .int(Int64($0)) } ?? JSONValue.null
            let vector = hit.vectorRank.map { .int(Int64($0)) } ?? JSONValue.null
            var row: JSONObject = [primaryKey: hit.id]
            if case .object(let fields) = hit.document { row = fields }
            row["score"] = .double(hit.score)
            emitRow(
                [
                    "id": hit.id, "score": .double(hit.score), "text_rank": text, "vector_rank": vector,
                    "distance": hit.distance.map { .double($0) } ?? .null, "document": hit.document
                ],
                "\(ShellDisplay.compactJSON(hit.id))  \(String(format: "%.6f", hit.score))  text \(hit.textRank.map(String.init) ?? "-")  vector \(hit.vectorRank.map(String.init) ?? "-")  \(ShellDisplay.compactJSON(hit.document))",
                row: .object(row))
        }
    }

    func knn(_ knn: ShellCommand.Knn) throws {
        let hits = try reading {
            try $0.nearest(
                knn.collection, to: knn.vector, k: knn.k, query: knn.query, index: knn.index, search: knn.search)
        }
        let primaryKey = try documents().schema.collection(knn.collection).primaryKey
        leadingColumns = [primaryKey, "distance"]
        for hit in hits {
            var row: JSONObject = [primaryKey: hit.id]
            if case .object(let fields) = hit.document { row = fields }
            row["distance"] = .double(hit.distance)
            emitRow(
                ["id": hit.id, "distance": .double(hit.distance), "document": hit.document],
                "\(ShellDisplay.compactJSON(hit.id))  \(hit.distance)  \(ShellDisplay.compactJSON(hit.document))",
                row: .object(row))
        }
    }

    func search(_ search: ShellCommand.Search) throws {
        // A format's rows are the documents hit, with their scores (as near's are with
        // their distances); text and --json print ids and scores.
        let rowsHaveDocuments = format != nil && !json
        // Interactively, matches are bold. The highlighter wraps them in two private-use
        // characters, turned into the terminal's bold on and off only after the stored
        // text around them is escaped (a stored U+E000 turns bold on, nothing worse).
        let bold = interactive && !json && format == nil
        let highlight = search.highlight
        let options = SearchOptions(
            limit: search.limit,
            highlight: highlight ? .init(open: bold ? Self.boldOn : "[", close: bold ? Self.boldOff : "]") : nil,
            includeDocuments: rowsHaveDocuments)
        let primaryKey = try documents().schema.collection(search.collection).primaryKey
        leadingColumns = [primaryKey, "score"]
        for hit in try reading({ try $0.search(search.collection, search.text, options: options) }) {
            var o: JSONObject = ["id": hit.id, "score": .double(hit.score)]
            if highlight { o["highlights"] = .object(JSONObject(hit.highlights.mapValues { .string($0) })) }
            var row: JSONObject = [primaryKey: hit.id]
            if case .object(let fields) = hit.document { row = fields }
            row["score"] = .double(hit.score)
            if highlight { row["highlights"] = o["highlights"] }
            let fields = hit.highlights.sorted { $0.key < $1.key }.filter { !$0.value.isEmpty }
                .map { "  \(ShellDisplay.escaped($0.key)): \(ShellDisplay.escaped($0.value))" }
            let text = (["\(ShellDisplay.compactJSON(hit.id))  \(String(format: "%.6f", hit.score))"] + fields)
                .joined(separator: "\n")
            if bold {
                out(
                    text.replacingOccurrences(of: Self.boldOn, with: "\u{1B}[1m").replacingOccurrences(
                        of: Self.boldOff, with: "\u{1B}[0m"))
            } else {
                emitRow(.object(o), text, row: .object(row))
            }
        }
    }

    func near(_ near: ShellCommand.Near) throws {
        let hits = try reading {
            try $0.near(
                near.collection, near.center, within: near.within, query: near.query, index: near.index,
                includeDocuments: !json)
        }
        let primaryKey = try documents().schema.collection(near.collection).primaryKey
        leadingColumns = [primaryKey, "distance"]
        for hit in hits {
            var row: JSONObject = [primaryKey: hit.id]
            if case .object(let fields) = hit.document { row = fields }
            // Shown to 0.1 m in table, line and csv; json and jsonl keep the exact value.
            let exact = format == .json || format == .jsonl
            row["distance"] = .double(exact ? hit.distance : (hit.distance * 10).rounded() / 10)
            emitRow(
                ["id": hit.id, "distance": .double(hit.distance)],
                "\(ShellDisplay.compactJSON(hit.id))  \(ShellDisplay.metres(hit.distance))  \(ShellDisplay.compactJSON(hit.document))",
                row: .object(row))
        }
    }
}
