import KVKeys
import KVStorage
import KVSupport

/// How a query is answered: which index and key ranges, or a full scan.
public struct QueryPlan: Sendable, CustomStringConvertible {
    /// The collection the query reads.
    public let collection: String
    /// The index scanned, or `nil` for a scan of every document.
    public let index: String?
    /// The key ranges scanned, in scan order.
    public let ranges: [KeyRange]
    /// The conditions the ranges encode.
    public let rangeConditions: [QueryCondition]
    /// The conditions checked on each fetched document: those the ranges do not
    /// guarantee (a condition the scanned ranges already encode is not re-checked).
    public let filter: [QueryCondition]
    /// Whether the scan yields documents already in the requested order, so the scan
    /// stops after `offset + limit` matches (and the rest of the last one's ties, when
    /// ``tiesSortedByID``).
    public let orderedByScan: Bool
    /// For a scan ordered by an index field that other fields follow: the number of index
    /// values (the equalities and the order's field) whose encodings form an entry's order
    /// value. Entries sharing it (ties of the order) come sorted by the later fields, so each
    /// run of them is sorted by id before it is returned. `nil` otherwise.
    let tieValues: Int?
    /// Whether ties of the order are sorted by id as they come off the scan (see
    /// ``orderedByScan``).
    public var tiesSortedByID: Bool { tieValues != nil }
    let reverse: Bool
    let mayRepeat: Bool
    /// The length of the scanned subspace's prefix: an entry's key is this prefix, then
    /// the index values, then the document id (its last element).
    let keyPrefixLength: Int
    /// The requested order (`nil`: primary key).
    let order: DocumentQuery.Order?
    /// Whether an entry's value is its document's id (a unique index: one entry per value)
    /// rather than its key's last element.
    let idInValue: Bool
    /// Whether the index's entries carry every field the query reads (a covering index):
    /// documents are read from the entries, never fetched.
    public let covering: Bool
    /// For a full scan (``index`` is `nil`) returned by `explain`: the documents the scan
    /// reads, counted at the explained snapshot; `nil` for an index plan.
    public internal(set) var scannedDocuments: Int?
    /// For a full scan returned by `explain`: what would let an index serve the query (an
    /// existing index and the condition it lacks, or an index to declare); `nil` when no
    /// index could serve it (no condition and no order) or for an index plan.
    public internal(set) var suggestion: String?

    init(
        collection: String, index: String?, ranges: [KeyRange], rangeConditions: [QueryCondition], query: DocumentQuery,
        orderedByScan: Bool, reverse: Bool, mayRepeat: Bool, keyPrefixLength: Int, idInValue: Bool = false,
        covering: Bool = false,
        tieValues: Int? = nil
    ) {
        self.idInValue = idInValue
        self.tieValues = tieValues
        self.covering = covering
        let conditions = query.conditions
        self.order = query.order
        self.collection = collection
        self.index = index
        self.ranges = ranges
        self.rangeConditions = rangeConditions
        self.filter = conditions.filter { !rangeConditions.contains($0) }
        self.orderedByScan = orderedByScan
        self.reverse = reverse
        self.mayRepeat = mayRepeat
        self.keyPrefixLength = keyPrefixLength
    }

    /// A plan that scans entries of a registered kind's index, for
    /// ``IndexMaintainer/candidatePlan(for:)``: each entry's key is the index's subspace
    /// prefix (`keyPrefixLength` bytes), then tuple-encoded values, then the document's id as
    /// the last tuple element; the entries of `ranges` are exactly the documents matching
    /// `rangeConditions` (the query's other conditions are checked on each document).
    /// - Parameters:
    ///   - collection: the collection queried.
    ///   - index: the index's name.
    ///   - ranges: the key ranges to scan, in scan order.
    ///   - rangeConditions: the query's conditions that the ranges guarantee.
    ///   - query: the query planned.
    ///   - keyPrefixLength: the length of the index's subspace prefix.
    ///   - orderedByScan: whether the scan yields the documents in the query's order.
    ///   - reverse: whether the ranges are scanned backwards.
    ///   - mayRepeat: whether a document can have several entries in the ranges.
    public init(
        collection: String, index: String, ranges: [KeyRange], rangeConditions: [QueryCondition], query: DocumentQuery,
        keyPrefixLength: Int, orderedByScan: Bool, reverse: Bool = false, mayRepeat: Bool = false
    ) {
        self.init(
            collection: collection, index: index as String?, ranges: ranges, rangeConditions: rangeConditions,
            query: query, orderedByScan: orderedByScan, reverse: reverse, mayRepeat: mayRepeat,
            keyPrefixLength: keyPrefixLength)
    }

    /// How results reach the requested order, for ``description``.
    package var orderDescription: String {
        if orderedByScan, tieValues != nil {
            return
                "from the scan\(reverse ? " (reverse)" : ""), each run of equal order values sorted by id, stopping after offset + limit matches"
        }
        if orderedByScan {
            return "from the scan\(reverse ? " (reverse)" : ""), stopping after offset + limit matches"
        }
        if index != nil, sortsByID {
            return
                "primary key: per-value streams of the index (each sorted by id) merged by id, stopping after offset + limit matches; past \(QueryExecution.maximumMergedStreams) values, a top-k heap of offset + limit ids"
        }
        return "top-k heap of offset + limit matches (every match is read)"
    }

    /// Whether the results are in primary-key order (no `order by`).
    var sortsByID: Bool { order == nil }

    public var description: String {
        var lines: [String] = []
        if let index {
            lines.append(
                "collection \(collection): index \(index), \(ranges.count) key range\(ranges.count == 1 ? "" : "s")")
            lines.append(
                "  range: "
                    + (rangeConditions.isEmpty
                        ? "the whole index" : rangeConditions.map(\.description).joined(separator: " and ")))
            for r in ranges.prefix(5) { lines.append("  keys: " + Self.describe(r)) }
            if ranges.count > 5 { lines.append("  keys: … \(ranges.count - 5) more") }
        } else {
            lines.append(
                "collection \(collection): SCAN, a full scan of every document (no usable index)"
                    + (scannedDocuments.map { ", reads \($0) document\($0 == 1 ? "" : "s")" } ?? ""))
            if let suggestion { lines.append("  suggestion: " + suggestion) }
        }
        lines.append("  filter: " + (filter.isEmpty ? "none" : filter.map(\.description).joined(separator: " and ")))
        if covering { lines.append("  covering: answered from the index entries alone (no document read)") }
        lines.append("  order: " + orderDescription)
        return lines.joined(separator: "\n")
    }

    /// A key range with its bounds decoded as tuples where they are.
    public static func describe(_ range: KeyRange) -> String {
        if let lower = range.lower, lower.isIncluded, let upper = range.upper, !upper.isIncluded,
            KeyRange.prefixSuccessor(lower.key) == upper.key
        {
            if let t = try? Tuple(decoding: lower.key) { return "every key starting with \(t)" }
        }
        func key(_ b: KeyRange.Bound) -> String {
            if let t = try? Tuple(decoding: b.key) { return t.description }
            if b.key.last == 0xFF, let t = try? Tuple(decoding: b.key.dropLast()) { return t.description + "+0xff" }
            return "0x" + b.key.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
        }
        let l = range.lower.map { ($0.isIncluded ? "[" : "(") + key($0) } ?? "(-inf"
        let u = range.upper.map { key($0) + ($0.isIncluded ? "]" : ")") } ?? "+inf)"
        return "\(l) … \(u)"
    }
}

/// Chooses how a query is answered: which ready index and which of its key ranges, or a
/// scan of every document.
///
/// A planner is made from one ``CompiledCatalog``: the schema and the index states of the
/// very snapshot whose data the plan will scan, so a plan never uses an index that its
/// snapshot does not hold ready.
///
/// An index serves equality (`=`, `in`) on any of its leading fields, then a range or the
/// requested order on the next one, as a SQLite index does; a sparse index
/// (``SecondaryIndexDefinition/sparse``, or a unique one) only when every one of its fields has a
/// condition (documents missing a field are not in it). Among the indexes that serve, the
/// plan with the most leading equality fields wins, then one with a range on the next
/// field, then one whose scan gives the requested order.
struct QueryPlanner {
    /// The most key ranges a plan expands `in` lists into.
    static let maximumRanges = 1000

    let catalog: CompiledCatalog
    let layout: Layout

    /// Chooses how to answer `query` on `collection`.
    /// - Parameter cached: whether the choice may come from (and goes to) the catalog's
    ///   ``PlanCache``; `false` plans from scratch, as the differential tests compare.
    /// - Throws: `.invalidArgument` for an invalid query, `.schema` for an unknown collection.
    func plan(_ collectionName: String, _ query: DocumentQuery, cached: Bool = true) throws -> QueryPlan {
        try query.validate()
        _ = try catalog.schema.collection(collectionName)
        let maintainers = catalog.maintainers(of: collectionName)
        guard cached else { return best(collectionName, query, maintainers).plan }
        // The choice of index depends on the query's shape only; the cache remembers it per
        // catalog generation, so only the chosen index computes its ranges.
        let shape = QueryShape(collection: collectionName, query: query)
        if let chosen = catalog.plans.choice(for: shape) {
            if chosen >= 0, chosen < maintainers.count, let candidate = maintainers[chosen].candidatePlan(for: query) {
                return candidate.plan
            }
            if chosen < 0 { return fullScan(collectionName, query) }
        }
        let best = best(collectionName, query, maintainers)
        catalog.plans.remember(best.position, for: shape)
        return best.plan
    }

    /// The plan of the ready index whose candidate scores best (the first declared among
    /// equals) and its position among `maintainers`, or a full scan (position -1).
    private func best(_ collectionName: String, _ query: DocumentQuery, _ maintainers: [any IndexMaintainer])
        -> (plan: QueryPlan, position: Int)
    {
        var best: (score: Int, plan: QueryPlan, position: Int)?
        for (position, maintainer) in maintainers.enumerated() where catalog.isReady(maintainer.identity) {
            guard let candidate = maintainer.candidatePlan(for: query) else { continue }
            if let current = best, current.score >= candidate.score { continue }
            best = (candidate.score, candidate.plan, position)
        }
        guard let best else { return (fullScan(collectionName, query), -1) }
        return (best.plan, best.position)
    }

    /// What would let an index serve `query`, which a full scan answers: an existing index
    /// whose leading fields the query constrains but whose other fields lack a condition, or
    /// an index to declare (equality fields, then the first range field, else the order
    /// field). `nil` when the query has no condition an index could use and no order.
    func suggestion(_ collectionName: String, _ query: DocumentQuery) -> String? {
        var equalities: [FieldPath] = [], ranges: [FieldPath] = []
        for c in query.conditions {
            switch c.op {
            case .equal, .in: if !equalities.contains(c.field) { equalities.append(c.field) }
            case .less, .lessOrEqual, .greater, .greaterOrEqual, .between, .prefix:
                if !ranges.contains(c.field) { ranges.append(c.field) }
            case .notEqual: break
            }
        }
        var fields = equalities
        if let range = ranges.first(where: { !fields.contains($0) }) {
            fields.append(range)
        } else if let order = query.order?.field, !fields.contains(order), !order.description.hasSuffix("[]") {
            fields.append(order)
        }
        guard !fields.isEmpty else { return nil }
        let constrained = Set(query.conditions.map(\.field))
        let quoted = { (f: [FieldPath]) in "(" + f.map(\.description).joined(separator: ", ") + ")" }
        if let schema = catalog.schema[collection: collectionName] {
            for index in schema.indexes
            where index.isSparse && index.fields.first.map({ constrained.contains($0) }) == true {
                let missing = index.fields.filter { !constrained.contains($0) }
                guard !missing.isEmpty else { continue }
                let kind = index.unique ? "unique (so sparse)" : "sparse"
                return
                    "index \(index.name) on \(quoted(index.fields)) is \(kind) and serves a query only with a condition on each of its fields (documents missing one are not in it): add one on \(quoted(missing)) (for example >= the smallest value), or declare an index on \(quoted(fields))"
            }
        }
        let name =
            "by_"
            + fields.map {
                $0.description.replacingOccurrences(of: "[]", with: "").replacingOccurrences(of: ".", with: "_")
            }.joined(separator: "_")
        let json = fields.map { "\"\($0.description)\"" }.joined(separator: ", ")
        return "declare an index on \(quoted(fields)): {\"name\": \"\(name)\", \"fields\": [\(json)]}"
    }

    private func fullScan(_ collectionName: String, _ query: DocumentQuery) -> QueryPlan {
        let docs = layout.documents(collectionName)
        return QueryPlan(
            collection: collectionName, index: nil, ranges: [docs.range], rangeConditions: [], query: query,
            orderedByScan: query.order == nil, reverse: false, mayRepeat: false, keyPrefixLength: docs.prefix.count)
    }
}

/// What the planner's choice of index depends on: the collection, each condition's field,
/// operator and operand types (and `in` list sizes), the order, the selected fields and
/// whether there is a limit; not the operand values.
package struct QueryShape: Hashable, Sendable {
    let collection: String
    /// Each condition's field (compared by code points).
    let conditions: [FieldPath]
    /// Each condition's operator and operand types, as numbers one after another: the
    /// operator's code, then its operands' ``ValueOrder`` tags (for `in`, the number of
    /// distinct values instead, which decides whether the list fits the range limit).
    let operators: [Int64]
    let order: DocumentQuery.Order?
    let fields: [FieldPath]?
    /// Whether the query has a limit: an index read only for its order serves only then.
    let limited: Bool

    package init(collection: String, query: DocumentQuery) {
        self.collection = collection
        self.conditions = query.conditions.map(\.field)
        var operators: [Int64] = []
        operators.reserveCapacity(query.conditions.count * 3)
        func tag(_ v: JSONValue) -> Int64 { ValueOrder.tag(of: v).rawValue }
        for c in query.conditions {
            switch c.op {
            case .equal(let v): operators += [0, tag(v)]
            case .notEqual(let v): operators += [1, tag(v)]
            case .less(let v): operators += [2, tag(v)]
            case .lessOrEqual(let v): operators += [3, tag(v)]
            case .greater(let v): operators += [4, tag(v)]
            case .greaterOrEqual(let v): operators += [5, tag(v)]
            case .between(let lo, let hi): operators += [6, tag(lo), tag(hi)]
            case .prefix: operators += [7]
            case .in(let list): operators += [8, Int64(Set(list.map(ValueOrder.key)).count)]
            }
        }
        self.operators = operators
        self.order = query.order
        self.fields = query.fields
        self.limited = query.limit != nil
    }
}

/// The planner's choices by query shape, for one catalog generation (a new schema or index
/// state makes a new catalog, and a new, empty cache). Bounded: past ``capacity`` shapes it
/// starts over.
final class PlanCache: Sendable {
    static let capacity = 512
    private let choices = Locked<[QueryShape: Int]>([:])

    /// The position of the chosen index among the collection's maintainers (-1: a full
    /// scan), or `nil` when the shape was not planned yet.
    func choice(for shape: QueryShape) -> Int? {
        choices.withLock { $0[shape] }
    }

    func remember(_ choice: Int, for shape: QueryShape) {
        choices.withLock {
            if $0.count >= Self.capacity { $0.removeAll(keepingCapacity: true) }
            $0[shape] = choice
        }
    }
}
