/// A query on one collection: conditions combined with `and`, an order, a limit and an offset.
///
/// ```swift
/// Query()
///     .where("age", .greaterOrEqual(18))
///     .where("address.city", .in(["Perth", "Fremantle"]))
///     .orderBy("age", descending: true)
///     .limit(10)
/// ```
///
/// **Semantics.** A condition on a field matches a document when some value at the path
/// satisfies it (a `[]` path has one value per array element); a document missing the
/// field never matches, whatever the operator (`!=` included). Values compare in
/// ``ValueOrder``: `=` and `in` match equal values of any type (`30 == 30.0`); the range
/// operators (`<`, `<=`, `>`, `>=`, `between`) and `prefix` match only values of the
/// operand's type (numbers with numbers, strings with strings, …).
///
/// **Order.** With ``orderBy(_:descending:)``, documents sort by the field's value in
/// ``ValueOrder`` (missing first), ties broken by primary key in the same direction;
/// without it they come in primary-key order (the tuple order of ids: strings, then integers).
public struct Query: Sendable, Hashable {
    public var conditions: [Condition] = []
    public var order: Order?
    public var limit: Int?
    public var offset: Int = 0

    public struct Order: Sendable, Hashable {
        public var field: FieldPath
        public var descending: Bool
        public init(field: FieldPath, descending: Bool = false) {
            self.field = field
            self.descending = descending
        }
    }

    public init(conditions: [Condition] = [], order: Order? = nil, limit: Int? = nil, offset: Int = 0) {
        self.conditions = conditions
        self.order = order
        self.limit = limit
        self.offset = offset
    }

    /// Adds a condition (all conditions must hold).
    public func `where`(_ field: FieldPath, _ op: Operator) -> Query {
        var q = self
        q.conditions.append(Condition(field: field, op: op))
        return q
    }

    /// Orders by a field.
    public func orderBy(_ field: FieldPath, descending: Bool = false) -> Query {
        var q = self
        q.order = Order(field: field, descending: descending)
        return q
    }

    public func limit(_ n: Int) -> Query {
        var q = self
        q.limit = n
        return q
    }

    public func offset(_ n: Int) -> Query {
        var q = self
        q.offset = n
        return q
    }

    /// Whether `document` satisfies every condition.
    public func matches(_ document: JSONValue) -> Bool {
        conditions.allSatisfy { $0.matches(document) }
    }

    func validate() throws {
        if let limit, limit < 0 { throw KVDocsError(.invalidArgument, "limit must not be negative (got \(limit))") }
        guard offset >= 0 else { throw KVDocsError(.invalidArgument, "offset must not be negative (got \(offset))") }
        if let order, order.field.isMultiValued {
            throw KVDocsError(.invalidArgument, "cannot order by the multi-valued field \(order.field)")
        }
    }
}

/// A comparison of one field.
public enum Operator: Sendable, Hashable {
    case equal(JSONValue)
    case notEqual(JSONValue)
    case less(JSONValue)
    case lessOrEqual(JSONValue)
    case greater(JSONValue)
    case greaterOrEqual(JSONValue)
    /// `low <= value <= high`.
    case between(JSONValue, JSONValue)
    /// A string value starting with the given string (compared as UTF-8 bytes).
    case prefix(String)
    /// Equal to one of the values.
    case `in`([JSONValue])
}

/// A condition on one field.
public struct Condition: Sendable, Hashable, CustomStringConvertible {
    public var field: FieldPath
    public var op: Operator

    public init(field: FieldPath, op: Operator) {
        self.field = field
        self.op = op
    }

    /// Whether some value of the field in `document` satisfies the operator.
    public func matches(_ document: JSONValue) -> Bool {
        field.values(in: document).contains { satisfies($0) }
    }

    func satisfies(_ v: JSONValue) -> Bool {
        func sameType(_ x: JSONValue) -> Bool { ValueOrder.tag(of: v) == ValueOrder.tag(of: x) }
        switch op {
        case .equal(let x): return ValueOrder.compare(v, x) == 0
        case .notEqual(let x): return ValueOrder.compare(v, x) != 0
        case .less(let x): return sameType(x) && ValueOrder.compare(v, x) < 0
        case .lessOrEqual(let x): return sameType(x) && ValueOrder.compare(v, x) <= 0
        case .greater(let x): return sameType(x) && ValueOrder.compare(v, x) > 0
        case .greaterOrEqual(let x): return sameType(x) && ValueOrder.compare(v, x) >= 0
        case .between(let lo, let hi):
            return sameType(lo) && sameType(hi) && ValueOrder.compare(v, lo) >= 0 && ValueOrder.compare(v, hi) <= 0
        case .prefix(let p):
            guard case .string(let s) = v else { return false }
            return s.utf8.starts(with: p.utf8)
        case .in(let list): return list.contains { ValueOrder.compare(v, $0) == 0 }
        }
    }

    public var description: String {
        switch op {
        case .equal(let x): "\(field) = \(x.compactDescription)"
        case .notEqual(let x): "\(field) != \(x.compactDescription)"
        case .less(let x): "\(field) < \(x.compactDescription)"
        case .lessOrEqual(let x): "\(field) <= \(x.compactDescription)"
        case .greater(let x): "\(field) > \(x.compactDescription)"
        case .greaterOrEqual(let x): "\(field) >= \(x.compactDescription)"
        case .between(let lo, let hi): "\(field) between \(lo.compactDescription) and \(hi.compactDescription)"
        case .prefix(let p): "\(field) prefix \(JSONValue.string(p).compactDescription)"
        case .in(let list): "\(field) in (\(list.map(\.compactDescription).joined(separator: ", ")))"
        }
    }
}
