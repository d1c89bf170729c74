import KVSupport

/// A query on one collection: conditions combined with `and`, an order, a limit and an offset.
///
/// ```swift
/// DocumentQuery()
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
public struct DocumentQuery: Sendable, Hashable {
    /// The conditions, all of which a document must satisfy; none matches every document.
    public var conditions: [QueryCondition] = []
    /// The order of the results; `nil` for primary-key order.
    public var order: Order?
    /// The most documents returned, after the offset; `nil` for no limit. A negative limit
    /// makes `find` and `explain` throw `.invalidArgument`; `count` ignores the limit.
    public var limit: Int?
    /// The number of matching documents skipped, in the query's order, before the first
    /// returned. A negative offset makes `find` and `explain` throw `.invalidArgument`;
    /// `count` ignores the offset.
    public var offset: Int = 0
    /// The fields each returned document keeps (whole fields, no `[]`), or `nil` for the
    /// whole document. A query whose conditions, order and selected fields are all carried
    /// by a covering index (``SecondaryIndexDefinition/include``) reads no document.
    public var fields: [FieldPath]?

    /// An order of the results: by one field's value in ``ValueOrder``, ties broken by
    /// primary key in the same direction.
    public struct Order: Sendable, Hashable {
        /// The field to order by. It must be single-valued (no `[]`): with a multi-valued
        /// field, `find` and `explain` throw `.invalidArgument`. Documents missing it come
        /// first (last when descending).
        public var field: FieldPath
        /// Whether the largest values (and primary keys, among ties) come first.
        public var descending: Bool
        /// An order by `field`, ascending unless `descending`.
        /// - Parameters:
        ///   - field: the single-valued field to order by.
        ///   - descending: whether the largest values come first.
        public init(field: FieldPath, descending: Bool = false) {
            self.field = field
            self.descending = descending
        }
    }

    /// A query from its parts; `DocumentQuery()` matches every document, in primary-key order.
    /// Nothing is checked here: with a negative limit or offset, or an order by a
    /// multi-valued field, `find` and `explain` throw `.invalidArgument`.
    /// - Parameters:
    ///   - conditions: conditions that must all hold.
    ///   - order: the order of the results; `nil` for primary-key order.
    ///   - limit: the most documents returned; `nil` for all.
    ///   - offset: the matching documents skipped before the first returned.
    public init(conditions: [QueryCondition] = [], order: Order? = nil, limit: Int? = nil, offset: Int = 0) {
        self.conditions = conditions
        self.order = order
        self.limit = limit
        self.offset = offset
    }

    /// Adds a condition (all conditions must hold).
    public func `where`(_ field: FieldPath, _ op: QueryOperator) -> DocumentQuery {
        var q = self
        q.conditions.append(QueryCondition(field: field, op: op))
        return q
    }

    /// Orders by a field.
    public func orderBy(_ field: FieldPath, descending: Bool = false) -> DocumentQuery {
        var q = self
        q.order = Order(field: field, descending: descending)
        return q
    }

    /// This query returning at most `n` documents (after the offset); with a negative `n`,
    /// `find` and `explain` throw `.invalidArgument`.
    public func limit(_ n: Int) -> DocumentQuery {
        var q = self
        q.limit = n
        return q
    }

    /// This query skipping its first `n` matching documents; with a negative `n`, `find`
    /// and `explain` throw `.invalidArgument`.
    public func offset(_ n: Int) -> DocumentQuery {
        var q = self
        q.offset = n
        return q
    }

    /// This query returning only `fields` of each document (each whole field at its place;
    /// a field a document lacks is left out). With a `[]` path, `find` and `explain` throw
    /// `.invalidArgument`.
    public func select(_ fields: [FieldPath]) -> DocumentQuery {
        var q = self
        q.fields = fields
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
        if let each = fields?.first(where: \.isMultiValued) {
            throw KVDocsError(.invalidArgument, "select takes whole fields, not array elements: \(each)")
        }
    }
}

/// A comparison of one field.
public enum QueryOperator: Sendable, Hashable {
    /// Equal in ``ValueOrder``, whatever the type (`30` equals `30.0`).
    case equal(JSONValue)
    /// Not equal in ``ValueOrder``; a document missing the field still never matches.
    case notEqual(JSONValue)
    /// Less than the operand, among values of the operand's type.
    case less(JSONValue)
    /// Less than or equal to the operand, among values of the operand's type.
    case lessOrEqual(JSONValue)
    /// Greater than the operand, among values of the operand's type.
    case greater(JSONValue)
    /// Greater than or equal to the operand, among values of the operand's type.
    case greaterOrEqual(JSONValue)
    /// `low <= value <= high`.
    case between(JSONValue, JSONValue)
    /// A string value starting with the given string (compared as UTF-8 bytes).
    case prefix(String)
    /// Equal to one of the values.
    case `in`([JSONValue])
}

/// A condition on one field.
public struct QueryCondition: Sendable, Hashable, CustomStringConvertible {
    /// The field compared; with `[]`, each element of the array is compared.
    public var field: FieldPath
    /// The comparison some value of the field must satisfy.
    public var op: QueryOperator

    /// A condition that `field` satisfies `op`.
    /// - Parameters:
    ///   - field: the field compared.
    ///   - op: the comparison.
    public init(field: FieldPath, op: QueryOperator) {
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
