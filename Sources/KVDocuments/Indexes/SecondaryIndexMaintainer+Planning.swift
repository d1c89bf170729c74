import Foundation
import KVKeys
import KVStorage
import KVSupport

/// How a secondary index serves `find` queries: the key ranges of its entries that hold
/// the matches, chosen from the query's conditions (see ``QueryPlanner``).
extension SecondaryIndexMaintainer {
    /// What a plan on one index binds: equality values of the leading fields, then at most
    /// one range (or prefix) on the next field, and the conditions that encode them.
    struct Bindings {
        var equalities: [[JSONValue]] = []
        var used: [QueryCondition] = []
        var rangeField: FieldPath?
        var lower: (JSONValue, Bool)?  // value, inclusive
        var upper: (JSONValue, Bool)?
        var prefix: String?
    }

    /// A plan that scans this index for `query`, with its score, or `nil` when the index
    /// cannot answer it. Every document has entries in an index that is not sparse, so any
    /// leading prefix of its fields serves; a sparse index leaves out documents missing a
    /// field, so every one of its fields needs a condition (which no missing field meets).
    /// The score counts leading equality fields (8 each), a unique index bound on every
    /// field (7), a range on the next field (4), a scan in the requested order (2) and
    /// covering (1); a plan needs more than covering alone, and a plan of the order alone
    /// (no equality, no range) needs a limit.
    package func candidatePlan(for query: DocumentQuery) -> (score: Int, plan: QueryPlan)? {
        let index = definition, collectionName = identity.collection
        // A query has a handful of conditions: scanning them per field costs less than
        // grouping them in a dictionary (hashing every field path).
        let conditions = query.conditions
        if index.isSparse {
            guard index.fields.allSatisfy({ field in conditions.contains { $0.field == field } }) else { return nil }
        }
        var bindings = Bindings()
        bindEqualities(index, conditions, &bindings)
        bindRange(index, conditions, &bindings)
        let scanOrder = ordersByScan(index, query, bindings)
        let ordered = scanOrder != .none
        // Among equals, a covering index wins (it reads no document).
        let covering = covers(query)
        // Reading a whole index in order, one document get per entry, beats a scan and a sort
        // only when a limit stops it early.
        if bindings.equalities.isEmpty, bindings.rangeField == nil, query.limit == nil, !covering { return nil }
        // A unique index bound on every field is one point read: it wins among plans with as
        // many equalities (a prefix of another index may match many documents).
        let point = index.unique && bindings.equalities.count == index.fields.count ? 7 : 0
        let score =
            8 * bindings.equalities.count + point + (bindings.rangeField != nil ? 4 : 0) + (ordered ? 2 : 0)
            + (covering ? 1 : 0)
        guard score > 1 else { return nil }
        var ranges = keyRanges(subspace, bindings)
        let reverse = ordered && (query.order?.descending ?? false)
        if reverse { ranges.reverse() }
        let plan = QueryPlan(
            collection: collectionName, index: index.name, ranges: ranges, rangeConditions: bindings.used,
            query: query, orderedByScan: ordered, reverse: reverse,
            mayRepeat: index.fields.contains(where: \.isMultiValued), keyPrefixLength: subspace.prefix.count,
            idInValue: idInValue, covering: covering,
            tieValues: scanOrder == .tiesByLaterFields ? bindings.equalities.count + 1 : nil)
        return (score, plan)
    }

    /// Leading fields with an equality (or non-empty `in`) condition, while the number of
    /// combinations stays within ``maximumRanges``.
    private func bindEqualities(
        _ index: SecondaryIndexDefinition, _ conditions: [QueryCondition], _ bindings: inout Bindings
    ) {
        var combinations = 1
        for field in index.fields {
            guard
                let condition = conditions.first(where: {
                    guard $0.field == field else { return false }
                    if case .equal = $0.op { return true }
                    if case .in(let list) = $0.op { return !list.isEmpty }
                    return false
                })
            else { break }
            var values: [JSONValue]
            switch condition.op {
            case .equal(let v): values = [v]
            case .in(let list):
                var unique: [[UInt8]: JSONValue] = [:]
                for v in list { unique[ValueOrder.key(v)] = v }
                values = unique.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map(\.value)
            default: values = []
            }
            guard combinations * values.count <= QueryPlanner.maximumRanges else { break }
            combinations *= values.count
            bindings.equalities.append(values)
            bindings.used.append(condition)
        }
    }

    /// At most one range condition (or several on one field, tightened) on the field after
    /// the equalities.
    private func bindRange(
        _ index: SecondaryIndexDefinition, _ conditions: [QueryCondition], _ bindings: inout Bindings
    ) {
        let k = bindings.equalities.count
        guard k < index.fields.count else { return }
        let field = index.fields[k]
        // On a multi-valued field, two conditions may hold for different elements,
        // so only one of them can bound the scan.
        for condition in conditions where condition.field == field && Self.isRange(condition.op) {
            if field.isMultiValued && bindings.rangeField != nil { break }
            let before = (bindings.lower, bindings.upper, bindings.prefix)
            // A condition joins the range only when the range then guarantees it (the plan
            // does not re-check it): a bound of another type than the side's current one,
            // or a second prefix, stays a residual condition.
            func sameType(_ current: (JSONValue, Bool)?, _ v: JSONValue) -> Bool {
                current.map { ValueOrder.tag(of: $0.0) == ValueOrder.tag(of: v) } ?? true
            }
            switch condition.op {
            case .greater(let v), .greaterOrEqual(let v): if !sameType(bindings.lower, v) { continue }
            case .less(let v), .lessOrEqual(let v): if !sameType(bindings.upper, v) { continue }
            case .between(let lo, let hi):
                if !sameType(bindings.lower, lo) || !sameType(bindings.upper, hi) { continue }
            case .prefix: if bindings.prefix != nil { continue }
            default: break
            }
            switch condition.op {
            case .greater(let v): bindings.lower = Self.tighter(bindings.lower, (v, false), lower: true)
            case .greaterOrEqual(let v): bindings.lower = Self.tighter(bindings.lower, (v, true), lower: true)
            case .less(let v): bindings.upper = Self.tighter(bindings.upper, (v, false), lower: false)
            case .lessOrEqual(let v): bindings.upper = Self.tighter(bindings.upper, (v, true), lower: false)
            case .between(let lo, let hi):
                bindings.lower = Self.tighter(bindings.lower, (lo, true), lower: true)
                bindings.upper = Self.tighter(bindings.upper, (hi, true), lower: false)
            case .prefix(let p): bindings.prefix = p
            default: break
            }
            // Bounds of different types (e.g. > 5 and < "x") cannot share one range; keep the first.
            if let l = bindings.lower, let u = bindings.upper, ValueOrder.tag(of: l.0) != ValueOrder.tag(of: u.0) {
                (bindings.lower, bindings.upper, bindings.prefix) = before
                continue
            }
            if bindings.prefix != nil,
                (bindings.lower.map { ValueOrder.tag(of: $0.0) != .string } ?? false)
                    || (bindings.upper.map { ValueOrder.tag(of: $0.0) != .string } ?? false)
            {
                (bindings.lower, bindings.upper, bindings.prefix) = before
                continue
            }
            bindings.rangeField = field
            bindings.used.append(condition)
        }
    }

    /// How scanning the ranges relates to the query's order (or primary-key order without one).
    enum ScanOrder {
        /// The scan does not give the order.
        case none
        /// The scan gives the order exactly.
        case exact
        /// The scan gives the order's values in order, but ties come sorted by the index's
        /// later fields, not by id.
        case tiesByLaterFields
    }

    /// How scanning the ranges yields the query's order: only when every equality binds one
    /// value. An order on the field after the equalities (which a range may bound) comes
    /// from the scan, its ties sorted by id afterwards when other fields follow it.
    private func ordersByScan(_ index: SecondaryIndexDefinition, _ query: DocumentQuery, _ bindings: Bindings)
        -> ScanOrder
    {
        let k = bindings.equalities.count
        let lastField = index.fields.count - 1
        guard bindings.equalities.allSatisfy({ $0.count == 1 }) else { return .none }
        if let order = query.order {
            if k <= lastField, bindings.rangeField == nil || bindings.rangeField == order.field,
                order.field == index.fields[k], !order.field.isMultiValued
            {
                return k == lastField ? .exact : .tiesByLaterFields
            }
            return k == index.fields.count && index.fields.contains(order.field) ? .exact : .none
        }
        return k == index.fields.count ? .exact : .none
    }

    /// One key range per combination of equality values, bounded by the range or prefix.
    private func keyRanges(_ subspace: Subspace, _ bindings: Bindings) -> [KeyRange] {
        // A tuple's encoding is its elements' encodings one after another, so each key
        // prefix is the subspace's followed by the values' encodings, built as bytes.
        var prefixes: [[UInt8]]
        if bindings.equalities.allSatisfy({ $0.count == 1 }) {
            // One value per field (no `in` list): one key prefix, encoded in place.
            var encoder = TupleEncoder(prefix: subspace.prefix, reserving: 32)
            for values in bindings.equalities { ValueOrder.append(values[0], to: &encoder) }
            prefixes = [encoder.bytes]
        } else {
            prefixes = [subspace.prefix]
            for values in bindings.equalities {
                let encoded = values.map(ValueOrder.key)
                prefixes = prefixes.flatMap { p in encoded.map { p + $0 } }
            }
        }
        return prefixes.map { base in
            if let prefix = bindings.prefix {
                let encoded = Tuple([.int(ValueOrder.Tag.string.rawValue), .string(prefix)]).encoded
                var range = KeyRange.prefix(base + encoded.dropLast())  // without the string's terminator
                if let lower = bindings.lower { range = range.intersection(Self.bound(base, lower, isLower: true)) }
                if let upper = bindings.upper { range = range.intersection(Self.bound(base, upper, isLower: false)) }
                return range
            }
            if bindings.lower == nil && bindings.upper == nil { return KeyRange.prefix(base) }
            let tagValue = bindings.lower?.0 ?? bindings.upper?.0 ?? .null
            let bracket = base + Tuple([.int(ValueOrder.tag(of: tagValue).rawValue)]).encoded
            var range = KeyRange(lower: .included(bracket), upper: .excluded(bracket + [0xFF]))
            if let lower = bindings.lower { range = range.intersection(Self.bound(base, lower, isLower: true)) }
            if let upper = bindings.upper { range = range.intersection(Self.bound(base, upper, isLower: false)) }
            return range
        }
    }

    static func isRange(_ op: QueryOperator) -> Bool {
        switch op {
        case .less, .lessOrEqual, .greater, .greaterOrEqual, .between, .prefix: return true
        default: return false
        }
    }

    /// The tighter of two bounds of the same side.
    static func tighter(_ a: (JSONValue, Bool)?, _ b: (JSONValue, Bool), lower: Bool) -> (JSONValue, Bool) {
        guard let a else { return b }
        guard ValueOrder.tag(of: a.0) == ValueOrder.tag(of: b.0) else { return a }
        let c = ValueOrder.compare(a.0, b.0)
        if c == 0 { return a.1 ? b : a }
        return (c > 0) == lower ? a : b
    }

    /// The key range of index entries whose value (after `base`) is beyond a bound.
    /// Entries of a value are `base + value + id`, and an id never starts with 0xFF.
    static func bound(_ base: [UInt8], _ b: (JSONValue, Bool), isLower: Bool) -> KeyRange {
        let key = base + ValueOrder.key(b.0)
        if isLower {
            return KeyRange(lower: .included(b.1 ? key : key + [0xFF]), upper: nil)
        }
        return KeyRange(lower: nil, upper: .excluded(b.1 ? key + [0xFF] : key))
    }
}
