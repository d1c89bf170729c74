/// A query compiled for evaluation one document at a time: its nodes in pre-order, each
/// with the range of phrases below it, so a document is evaluated with one pass over a
/// flat list and no recursion, whatever the query's depth.
struct CompiledQuery {
    enum Kind { case phrase, near, and, or, not }
    struct Node {
        let kind: Kind
        let operands: Int
        /// The phrases of the subtree (contiguous in ``TextQuery/phrases`` order).
        let phrases: Range<Int>
    }

    let nodes: [Node]
    let phrases: [TextQuery.Phrase]
    /// For each phrase: whether every match of the query matches it (so it can drive the
    /// candidates), and whether it can add to a score (not below a NOT's excluded side).
    let required: [Bool]
    let contributes: [Bool]
    /// For each phrase: the NEAR group it belongs to (its phrases' range), if any.
    let nearGroup: [Range<Int>?]
    let nearDistance: [Int]
    let nearColumns: [TextQuery.ColumnFilter?]

    init(_ query: TextQuery) {
        let items = query.preorder
        var nodes: [Node] = []
        var phrases: [TextQuery.Phrase] = []
        var required: [Bool] = [], contributes: [Bool] = []
        var nearGroup: [Range<Int>?] = [], nearDistance: [Int] = [], nearColumns: [TextQuery.ColumnFilter?] = []
        // Open operator nodes: where they are, how many operands are still to come, where
        // their phrases start, and their own flags.
        struct Open {
            let node: Int
            let kind: Kind
            let operands: Int
            var left: Int
            let start: Int
            let required: Bool
            let contributes: Bool
        }
        var open: [Open] = []
        for item in items {
            // The flags this node inherits from its parent and its place among the operands.
            var isRequired = true, isContributing = true
            if let parent = open.last {
                let operand = parent.operands - parent.left
                isContributing = parent.contributes && !(parent.kind == .not && operand > 0)
                isRequired = parent.required && (parent.kind == .and || (parent.kind == .not && operand == 0))
            }
            let first = phrases.count
            var operatorOperands: Int?
            switch item {
            case .phrase(let p):
                phrases.append(p)
                required.append(isRequired)
                contributes.append(isContributing)
                nearGroup.append(nil)
                nearDistance.append(0)
                nearColumns.append(nil)
                nodes.append(Node(kind: .phrase, operands: 0, phrases: first..<phrases.count))
            case .near(let ps, let distance, let columns):
                for p in ps {
                    phrases.append(p)
                    required.append(isRequired)
                    contributes.append(isContributing)
                }
                for _ in ps {
                    nearGroup.append(first..<phrases.count)
                    nearDistance.append(distance)
                    nearColumns.append(columns)
                }
                nodes.append(Node(kind: .near, operands: 0, phrases: first..<phrases.count))
            case .and(let n):
                nodes.append(Node(kind: .and, operands: n, phrases: first..<first))
                open.append(
                    Open(
                        node: nodes.count - 1, kind: .and, operands: n, left: n, start: first, required: isRequired,
                        contributes: isContributing))
                operatorOperands = n
            case .or(let n):
                nodes.append(Node(kind: .or, operands: n, phrases: first..<first))
                open.append(
                    Open(
                        node: nodes.count - 1, kind: .or, operands: n, left: n, start: first, required: isRequired,
                        contributes: isContributing))
                operatorOperands = n
            case .not(let excluded):
                nodes.append(Node(kind: .not, operands: excluded + 1, phrases: first..<first))
                open.append(
                    Open(
                        node: nodes.count - 1, kind: .not, operands: excluded + 1, left: excluded + 1, start: first,
                        required: isRequired, contributes: isContributing))
                operatorOperands = excluded + 1
            }
            // A leaf, or an operator with no operands, is complete: close the operators it completes.
            var completed = operatorOperands == nil || operatorOperands == 0
            if operatorOperands == 0 { open.removeLast() }
            while completed, var parent = open.popLast() {
                parent.left -= 1
                if parent.left == 0 {
                    let n = nodes[parent.node]
                    nodes[parent.node] = Node(kind: n.kind, operands: n.operands, phrases: parent.start..<phrases.count)
                } else {
                    open.append(parent)
                    completed = false
                }
            }
        }
        self.nodes = nodes
        self.phrases = phrases
        self.required = required
        self.contributes = contributes
        self.nearGroup = nearGroup
        self.nearDistance = nearDistance
        self.nearColumns = nearColumns
    }

    /// Whether the query matches a row, given which phrases report instances there
    /// (`reported`) and, for each phrase of a NEAR group, whether its group matches
    /// (`nearMatched`; for other phrases the same as `reported`). On return `reported`
    /// holds the phrases whose instances count in the row's score and highlights.
    ///
    /// This follows what FTS5 reports through `xInst`, which is not simply "the phrases of
    /// the sub-expressions that match": a failing AND reports nothing below it (FTS5 zeroes
    /// its position lists), a NOT whose excluded side matches reports nothing, but a NEAR
    /// group that does not match in a row where all its terms occur keeps reporting the
    /// position lists its test left behind (the phrases tested before the one that failed,
    /// and the others' lists from an earlier row), under an OR or a NOT that matches.
    /// `stack` is scratch space, reused between calls.
    func evaluate(_ reported: inout [Bool], nearMatched: [Bool], stack: inout [Bool]) -> Bool {
        stack.removeAll(keepingCapacity: true)
        for node in nodes.reversed() {
            var matched: Bool
            switch node.kind {
            case .phrase:
                matched = reported[node.phrases.lowerBound]
            case .near:
                matched = nearMatched[node.phrases.lowerBound]
            case .and:
                matched = true
                for _ in 0..<node.operands { matched = (stack.popLast() ?? false) && matched }
                if !matched { for i in node.phrases { reported[i] = false } }
            case .or:
                matched = false
                for _ in 0..<node.operands { matched = (stack.popLast() ?? false) || matched }
            case .not:
                let base = stack.popLast() ?? false
                var excluded = false
                for _ in 1..<max(node.operands, 1) where stack.popLast() ?? false { excluded = true }
                matched = base && !excluded
                if excluded { for i in node.phrases { reported[i] = false } }
            }
            stack.append(matched)
        }
        return stack.last ?? false
    }
}
