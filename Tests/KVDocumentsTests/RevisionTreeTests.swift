import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// Node values of tree literals: a stored revision, a stored deletion, a revision known only
/// by its id (CouchDB's `?REV_MISSING`).
private let live = RevisionTree.NodeState.stored(deleted: false)
private let dead = RevisionTree.NodeState.stored(deleted: true)
private let absent = RevisionTree.NodeState.missing

/// The revision tree: CouchDB's own unit tests of `couch_key_tree` (ported), golden vectors
/// made by running CouchDB's `couch_key_tree.erl`, the winner rule, a differential test
/// against an independent Python model, and the stored record (round trip, damage).
@Suite struct RevisionTreeTests {
    typealias Value = RevisionTree.NodeState

    // MARK: - Literals

    /// A node of a tree literal, as CouchDB's tests write `{Key, Value, [Children]}`.
    struct N {
        var id: String
        var value: Value
        var children: [N]
        init(_ id: String, _ value: Value = .stored(deleted: false), _ children: [N] = []) {
            self.id = id
            self.value = value
            self.children = children
        }
    }

    /// The id written `text`: 32 hexadecimal digits are an MD5 id, anything else opaque.
    static func rid(_ text: String) -> RevisionID {
        if text.utf8.count == 32, let digest = RevisionID.decodeHex(Array(text.utf8)) { return RevisionID(md5: digest) }
        return RevisionID(kind: .opaque, bytes: Array(text.utf8))
    }

    static func rev(_ position: Int, _ id: String) -> DocumentRevision {
        DocumentRevision(position: position, id: rid(id))
    }

    /// A tree of `roots` (`[{Pos, Node}]`), in the order given.
    static func tree(_ roots: [(Int, N)]) throws -> RevisionTree {
        var visited: [RevisionTree.VisitedNode] = []
        func visit(_ node: N, _ position: Int) {
            visited.append(
                .init(position: position, id: rid(node.id), value: node.value, childCount: node.children.count))
            for child in node.children { visit(child, position + 1) }
        }
        for (position, node) in roots { visit(node, position) }
        return try RevisionTree(rootCount: roots.count, preorder: visited)
    }

    /// The path `{Start, Node}` of a chain literal.
    static func path(_ start: Int, _ node: N) throws -> RevisionTree.Path {
        var nodes: [RevisionTree.PathNode] = []
        var current: N? = node
        while let n = current {
            nodes.append(.init(id: rid(n.id), value: n.value))
            current = n.children.first
        }
        return try RevisionTree.Path(start: start, nodes: nodes)
    }

    // MARK: - CouchDB's couch_key_tree_tests.erl, ported

    /// `merge_and_stem/2` of couch_key_tree_tests.erl: merge, then stem to 10.
    static func mergeAndStem(_ tree: RevisionTree, _ path: RevisionTree.Path) -> (
        RevisionTree, RevisionTree.MergeResult
    ) {
        var tree = tree
        let result = tree.merge(path)
        tree.stem(limit: 10)
        return (tree, result)
    }

    /// The "Key tree merge" group. Values `"foo"`, `"bar"`, … are stored revisions, `[]` is
    /// a missing one.
    @Test func couchKeyTreeMergeCases() throws {
        let one = N("1")
        let twoSibs = [(1, N("1")), (1, N("2"))]
        let twoChild = N("1", live, [N("1a", live, [N("1aa")])])
        let twoChildSibs = N("1", live, [N("1a"), N("1b")])
        let empty = RevisionTree()
        typealias Case = (
            name: String, tree: RevisionTree, path: RevisionTree.Path, expected: RevisionTree,
            result: RevisionTree.MergeResult
        )
        let cases: [Case] = [
            ("should_merge_with_empty_tree", empty, try Self.path(1, one), try Self.tree([(1, one)]), .newLeaf),
            (
                "should_merge_reflexive", try Self.tree([(1, one)]), try Self.path(1, one), try Self.tree([(1, one)]),
                .internalNode
            ),
            (
                "should_merge_prefix_of_a_tree_with_tree", try Self.tree(twoSibs), try Self.path(1, one),
                try Self.tree(twoSibs), .internalNode
            ),
            (
                "should_produce_conflict_on_merge_with_unrelated_branch", try Self.tree(twoSibs),
                try Self.path(1, N("3")),
                try Self.tree(twoSibs + [(1, N("3"))]), .newBranch
            ),
            (
                "should_merge_reflexive_for_child_nodes", try Self.tree([(1, twoChild)]), try Self.path(1, twoChild),
                try Self.tree([(1, twoChild)]), .internalNode
            ),
            (
                "should_merge_tree_of_odd_length", try Self.tree([(1, twoChildSibs)]), try Self.path(1, twoChild),
                try Self.tree([(1, N("1", live, [N("1a", live, [N("1aa")]), N("1b")]))]), .newLeaf
            ),
            (
                "should_merge_tree_with_stem", try Self.tree([(1, twoChildSibs)]), try Self.path(2, N("1a")),
                try Self.tree([(1, twoChildSibs)]), .internalNode
            ),
            (
                "should_merge_with_stem_at_deeper_level",
                try Self.tree([(1, N("1", live, [N("1a"), N("1b", live, [N("1bb")])]))]),
                try Self.path(3, N("1bb")), try Self.tree([(1, N("1", live, [N("1a"), N("1b", live, [N("1bb")])]))]),
                .internalNode
            ),
            (
                "should_merge_with_stem_at_deeper_level_with_deeper_paths",
                try Self.tree([(2, N("1a")), (2, N("1b", live, [N("1bb")]))]),
                try Self.path(3, N("1bb")), try Self.tree([(2, N("1a")), (2, N("1b", live, [N("1bb")]))]), .internalNode
            ),
            (
                "should_merge_single_tree_with_deeper_stem", try Self.tree([(1, twoChild)]), try Self.path(3, N("1aa")),
                try Self.tree([(1, twoChild)]), .internalNode
            ),
            (
                "should_merge_tree_with_large_stem", try Self.tree([(1, twoChild)]),
                try Self.path(2, N("1a", live, [N("1aa")])), try Self.tree([(1, twoChild)]), .internalNode
            ),
            (
                "should_merge_stems", try Self.tree([(2, N("1a", live, [N("1aa")]))]), try Self.path(3, N("1aa")),
                try Self.tree([(2, N("1a", live, [N("1aa")]))]), .internalNode
            ),
            (
                "should_create_conflicts_on_merge", try Self.tree([(1, N("1", live, [N("1a")]))]),
                try Self.path(3, N("1aa")),
                try Self.tree([(1, N("1", live, [N("1a")])), (3, N("1aa"))]), .newBranch
            ),
            (
                "should_create_no_conflicts_on_merge", try Self.tree([(1, N("1", live, [N("1a")])), (3, N("1aa"))]),
                try Self.path(1, twoChild),
                try Self.tree([(1, twoChild)]), .newLeaf
            ),
            // COUCHDB-902: the conflicting branch foo2 is left alone.
            (
                "should_ignore_conflicting_branch", try Self.tree([(1, N("foo", live, [N("foo2"), N("foo3")]))]),
                try Self.path(1, N("foo", absent, [N("foo3", absent, [N("foo4")])])),
                try Self.tree([(1, N("foo", live, [N("foo2"), N("foo3", live, [N("foo4")])]))]), .newLeaf
            )
        ]
        for c in cases {
            let (tree, result) = Self.mergeAndStem(c.tree, c.path)
            #expect(tree == c.expected, "\(c.name): \(tree) ≠ \(c.expected)")
            #expect(result == c.result, "\(c.name)")
        }

        // should_merge_tree_to_itself: each leaf's path (ancestors missing) merges as an
        // internal node and leaves the tree as it was.
        var tree = try Self.tree([(1, twoChildSibs)])
        for leaf in tree.leaves {
            let ids = try #require(tree.history(of: leaf.revision))
            let path = try RevisionTree.Path(position: leaf.revision.position, history: ids, leaf: leaf.value)
            let (merged, result) = Self.mergeAndStem(tree, path)
            #expect(result == .internalNode)
            tree = merged
        }
        #expect(tree == (try Self.tree([(1, twoChildSibs)])))
    }

    /// The "Missing tree leaves", "Leaves retrieving", "Leaf counting" and "Stemming" groups
    /// (find_missing, get, get_full_key_paths, get_all_leafs, count_leafs, stem). CouchDB's
    /// cases put roots at position 0; positions here are one higher (every operation is the
    /// same under a shift, and KVDocs' positions start at 1).
    @Test func couchKeyTreeLookupAndStemCases() throws {
        let twoChildSibs = try Self.tree([(1, N("1", live, [N("1a"), N("1b")]))])
        let stemmed1 = try Self.tree([(2, N("1a", live, [N("1aa")]))])
        let stemmed2 = try Self.tree([(3, N("1aa"))])

        // find_missing
        func missing(_ tree: RevisionTree, _ revs: [(Int, String)]) -> [String] {
            revs.map { Self.rev($0.0, $0.1) }.filter { !tree.contains($0) }.map(\.description)
        }
        #expect(missing(twoChildSibs, [(1, "1"), (2, "1a")]) == [])
        #expect(missing(twoChildSibs, [(1, "1"), (1, "10"), (2, "1a"), (101, "x")]) == ["1-10", "101-x"])
        #expect(missing(stemmed1, [(1, "1"), (2, "1a"), (101, "x")]) == ["1-1", "101-x"])
        #expect(missing(stemmed2, [(1, "1"), (2, "1a"), (101, "x")]) == ["1-1", "2-1a", "101-x"])

        // get / get_full_key_paths: the path from a revision up to its root.
        #expect(twoChildSibs.history(of: Self.rev(1, "1")) == [Self.rid("1")])
        #expect(twoChildSibs.history(of: Self.rev(2, "1a")) == [Self.rid("1a"), Self.rid("1")])
        #expect(twoChildSibs.history(of: Self.rev(1, "x")) == nil)

        // get_all_leafs / get_all_leafs_full
        #expect(stemmed1.leaves.map(\.revision) == [Self.rev(3, "1aa")])
        #expect(stemmed1.history(of: Self.rev(3, "1aa")) == [Self.rid("1aa"), Self.rid("1a")])
        #expect(Set(twoChildSibs.leaves.map(\.revision)) == [Self.rev(2, "1a"), Self.rev(2, "1b")])
        #expect(twoChildSibs.history(of: Self.rev(2, "1b")) == [Self.rid("1b"), Self.rid("1")])

        // count_leafs
        #expect(RevisionTree().leaves.count == 0)
        #expect(try Self.tree([(1, N("1"))]).leaves.count == 1)
        #expect(twoChildSibs.leaves.count == 2)
        #expect(try Self.tree([(3, N("1bb"))]).leaves.count == 1)

        // stem
        let twoChild = try Self.tree([(1, N("1", live, [N("1a", live, [N("1aa")])]))])
        var stemmed = twoChild
        stemmed.stem(limit: 3)
        #expect(stemmed == twoChild)
        stemmed = twoChild
        stemmed.stem(limit: 1)
        #expect(stemmed == (try Self.tree([(3, N("1aa"))])))
        stemmed = twoChild
        stemmed.stem(limit: 2)
        #expect(stemmed == (try Self.tree([(2, N("1a", live, [N("1aa")]))])))
    }

    /// The design's probe (docs/design/sync-probes/couch_key_tree_probe.erl): CouchDB keeps
    /// `root → ccc → bbb` connected when stemming to 2, where PouchDB's stem splits it.
    @Test func stemKeepsABranchConnectedAsCouchDBDoes() throws {
        var tree = RevisionTree()
        for (ids, value) in [(["root", "aaa"], live), (["root", "ccc", "bbb"], dead), (["root", "abc"], live)] {
            tree.merge(
                try RevisionTree.Path(
                    start: 1,
                    nodes: ids.enumerated().map {
                        .init(id: Self.rid($0.element), value: $0.offset == ids.count - 1 ? value : .missing)
                    }))
        }
        tree.stem(limit: 2)
        #expect(
            tree == (try Self.tree([(1, N("root", absent, [N("aaa"), N("abc"), N("ccc", absent, [N("bbb", dead)])]))])))
        #expect(tree.winner?.revision == Self.rev(2, "abc"))
        #expect(tree.conflicts == [Self.rev(2, "aaa")])
        #expect(tree.deletedConflicts == [Self.rev(3, "bbb")])
    }

    // MARK: - Golden vectors from CouchDB's couch_key_tree

    /// Node values in the vectors: `live`, `dead`, `missing` (`[]`).
    static func value(_ text: String) throws -> Value {
        switch text {
        case "live": return live
        case "dead": return dead
        case "missing": return .missing
        default: throw KVDocsError(.decoding, "unknown value \(text)")
        }
    }

    /// A tree in the vectors' form: `[[pos, [key, value, [children]]], …]`.
    static func vectorTree(_ json: Any) throws -> RevisionTree {
        func node(_ json: Any) throws -> N {
            let parts = try #require(json as? [Any])
            let key = try #require(parts[0] as? String), value = try #require(parts[1] as? String)
            let children = try #require(parts[2] as? [Any])
            return N(key, try Self.value(value), try children.map(node))
        }
        let roots = try #require(json as? [[Any]])
        return try Self.tree(roots.map { (try #require($0[0] as? Int), try node($0[1])) })
    }

    /// Tests/Fixtures/couch_key_tree_vectors.jsonl: 1,200 random scenarios of merges (random
    /// paths, and windows of the tree's own paths moved up or extended, so stemmed roots and
    /// bridging merges occur) and stems at limits 1…5, run through CouchDB's
    /// `couch_key_tree:merge/2` and `stem/2` (commit in the file's header line; generator
    /// docs/design/sync-probes/couch_key_tree_vectors.erl). After every step the KVDocs tree
    /// must have exactly the same roots, nodes, values and order, the merge the same result,
    /// and the leaves the order `couch_doc:to_doc_info_path/1` sorts them in.
    @Test func reproducesCouchKeyTreeGoldenVectors() throws {
        let url = packageRoot.appendingPathComponent("Tests/Fixtures/couch_key_tree_vectors.jsonl")
        let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n")
        let header = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        #expect((header["source"] as? String)?.hasPrefix("apache/couchdb ") == true)
        #expect(lines.count - 1 == header["scenarios"] as? Int)
        var steps = 0, failures = 0
        for line in lines.dropFirst() where failures < 5 {
            let scenario = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let n = scenario["n"] as? Int ?? 0
            var tree = RevisionTree()
            for step in try #require(scenario["steps"] as? [[String: Any]]) {
                steps += 1
                let what: String
                if let merge = step["merge"] as? [String: Any] {
                    let nodes = try #require(merge["path"] as? [[String]]).map {
                        RevisionTree.PathNode(id: Self.rid($0[0]), value: try Self.value($0[1]))
                    }
                    let path = try RevisionTree.Path(start: try #require(merge["start"] as? Int), nodes: nodes)
                    let result = tree.merge(path)
                    let expected = try #require(step["result"] as? String)
                    let name =
                        switch result {
                        case .newLeaf: "new_leaf"
                        case .newBranch: "new_branch"
                        case .internalNode: "internal_node"
                        }
                    what = "scenario \(n): merge \(path.start) \(nodes.map(\.id))"
                    if name != expected { failures += 1 }
                    #expect(name == expected, "\(what)")
                } else {
                    let limit = try #require(step["stem"] as? Int)
                    tree.stem(limit: limit)
                    what = "scenario \(n): stem \(limit)"
                }
                let expected = try Self.vectorTree(step["tree"] as Any)
                if tree != expected { failures += 1 }
                #expect(tree == expected, "\(what): \(tree) ≠ \(expected)")
                let leaves = try #require(step["leaves"] as? [[Any]]).map {
                    "\($0[0] as? Int ?? 0)-\($0[1] as? String ?? "")\(($0[2] as? Bool) == true ? "(deleted)" : "")"
                }
                let ours = tree.leaves.map { "\($0.revision)\($0.deleted ? "(deleted)" : "")" }
                #expect(ours == leaves, "\(what): leaves")
            }
        }
        #expect(steps > 5000)
    }

    // MARK: - Winner

    /// `couch_doc:to_doc_info_path/1`: non-deleted beats deleted, then the higher position,
    /// then the greater id; conflicts and deleted conflicts in the same order.
    @Test func winnerRule() throws {
        func tree(_ leaves: [(String, Value)]) throws -> RevisionTree {
            var tree = RevisionTree()
            for (text, value) in leaves {
                let revision = try DocumentRevision.parse(text)
                var ids = [revision.id]
                // Give every leaf its own history so that positions are real.
                for p in stride(from: revision.position - 1, through: 1, by: -1) {
                    ids.append(Self.rid("h\(p)\(text)"))
                }
                tree.merge(try RevisionTree.Path(position: revision.position, history: ids, leaf: value))
            }
            return tree
        }
        let cases: [([(String, Value)], String, [String], [String])] = [
            ([("2-a", live), ("5-z", dead)], "2-a", [], ["5-z"]),
            ([("2-a", live), ("3-a", live)], "3-a", ["2-a"], []),
            ([("3-a", live), ("3-b", live), ("3-ab", live)], "3-b", ["3-ab", "3-a"], []),
            ([("10-a", live), ("9-z", live)], "10-a", ["9-z"], []),
            ([("1-a", dead), ("4-b", dead), ("4-a", dead)], "4-b", [], ["4-a", "1-a"]),
            ([("1-a", .missing), ("1-b", dead)], "1-a", [], ["1-b"]),
            (
                [("2-ffffffffffffffffffffffffffffffff", live), ("2-g", live)], "2-ffffffffffffffffffffffffffffffff",
                ["2-g"], []
            ),
            (
                [("2-00000000000000000000000000000000", live), ("2-A", live)], "2-A",
                ["2-00000000000000000000000000000000"], []
            )
        ]
        for (leaves, winner, conflicts, deletedConflicts) in cases {
            let t = try tree(leaves)
            #expect(t.winner?.revision.description == winner, "\(t)")
            #expect(t.leaves.first?.revision.description == winner)
            #expect(t.conflicts.map(\.description) == conflicts, "\(t)")
            #expect(t.deletedConflicts.map(\.description) == deletedConflicts, "\(t)")
        }
        #expect(RevisionTree().winner == nil)
    }

    // MARK: - Differential against an independent model

    /// Random histories as replication produces them: a universe of revisions made by
    /// editing (each id names one revision, some MD5, some opaque; some deletions), merged as
    /// paths — complete histories or the last few revisions of one — each followed by a stem
    /// to the default limit of 1,000, as writes will do; then one stem to a small limit.
    /// After every step the tree must agree with Tests/python/revision_tree_model.py, written
    /// from the documented rules: the same revisions with the same parents and values, roots,
    /// leaves in winner order, winner, conflicts and deleted conflicts.
    @Test(.requires(.python)) func differentialAgainstPythonModel() throws {
        var rng = SplitMix64(seed: 0x5eed_7265_7674)
        struct Universe {
            var position: [Int] = []
            var id: [String] = []
            var parent: [Int?] = []
            var deleted: [Bool] = []
        }
        var scenarios: [[[String: Any]]] = []
        // The tree after each op; `nil` after a merge, which is compared only once stemmed
        // (before that, CouchDB's merge may hold a revision twice, which stem repairs).
        var trees: [[RevisionTree?]] = []
        for _ in 0..<400 {
            var universe = Universe()
            var used = Set<String>()
            func newID() -> String {
                while true {
                    let id =
                        Int.random(in: 0..<3, using: &rng) == 0
                        ? RevisionID.hex((0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) })
                        : String(
                            (0..<Int.random(in: 1...3, using: &rng)).map { _ in
                                "abcdefgh".randomElement(using: &rng) ?? "a"
                            })
                    if used.insert(id).inserted { return id }
                }
            }
            for _ in 0..<Int.random(in: 1...40, using: &rng) {
                let parent: Int? =
                    universe.id.isEmpty || Int.random(in: 0..<12, using: &rng) == 0
                    ? nil : Int.random(in: 0..<universe.id.count, using: &rng)
                universe.position.append(parent.map { universe.position[$0] + 1 } ?? 1)
                universe.id.append(newID())
                universe.parent.append(parent)
                universe.deleted.append(Int.random(in: 0..<5, using: &rng) == 0)
            }
            var ops: [[String: Any]] = []
            var tree = RevisionTree()
            var states: [RevisionTree?] = []
            for _ in 0..<Int.random(in: 1...12, using: &rng) {
                let leaf = Int.random(in: 0..<universe.id.count, using: &rng)
                var chain = [leaf]
                while let p = universe.parent[chain[chain.count - 1]] { chain.append(p) }
                chain.reverse()
                if Bool.random(using: &rng) {
                    chain = Array(chain.suffix(Int.random(in: 1...chain.count, using: &rng)))
                }
                let start = universe.position[chain[0]]
                let ids = chain.map { universe.id[$0] }
                ops.append(["merge": ["start": start, "ids": ids, "deleted": universe.deleted[leaf]]])
                tree.merge(
                    try RevisionTree.Path(
                        start: start,
                        nodes: chain.map {
                            .init(
                                id: Self.rid(universe.id[$0]),
                                value: $0 == leaf ? .stored(deleted: universe.deleted[leaf]) : .missing)
                        }))
                tree.stem(limit: 1000)
                ops.append(["stem": 1000])
                states.append(nil)
                states.append(tree)
            }
            let limit = Int.random(in: 1...6, using: &rng)
            tree.stem(limit: limit)
            ops.append(["stem": limit])
            states.append(tree)
            scenarios.append(ops)
            trees.append(states)
        }
        let input = try scenarios.map {
            String(decoding: try JSONSerialization.data(withJSONObject: ["ops": $0]), as: UTF8.self)
        }.joined(separator: "\n")
        let output = try runPython("Tests/python/revision_tree_model.py", input: input).split(separator: "\n")
        try #require(output.count == scenarios.count)
        var failures = 0
        for (s, line) in output.enumerated() where failures < 5 {
            let expectedStates = try #require(
                try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [[String: Any]])
            try #require(expectedStates.count == trees[s].count)
            for (k, (state, expected)) in zip(trees[s], expectedStates).enumerated() {
                guard let tree = state else { continue }
                let ours = Self.modelState(tree)
                let theirs = try JSONSerialization.data(withJSONObject: expected, options: [.sortedKeys])
                let mine = try JSONSerialization.data(withJSONObject: ours, options: [.sortedKeys])
                if mine != theirs { failures += 1 }
                #expect(
                    mine == theirs,
                    "scenario \(s) step \(k) (\(scenarios[s][k])): \(tree)\nKVDocs: \(String(decoding: mine, as: UTF8.self))\nmodel:  \(String(decoding: theirs, as: UTF8.self))"
                )
            }
        }
    }

    /// The tree in the Python model's output form.
    static func modelState(_ tree: RevisionTree) -> [String: Any] {
        var nodes: [[Any]] = []
        var roots: [[Any]] = []
        var open: [(id: String, remaining: Int)] = []
        for node in tree.flattened {
            while let last = open.last, last.remaining == 0 { open.removeLast() }
            let parent: Any
            if let last = open.last {
                open[open.count - 1].remaining -= 1
                parent = last.id
            } else {
                parent = NSNull()
                roots.append([node.position, node.id.description])
            }
            nodes.append([node.position, node.id.description, parent, node.value.hasBody, node.value.deleted])
            open.append((node.id.description, node.childCount))
        }
        nodes.sort { a, b in
            let (pa, pb) = (a[0] as? Int ?? 0, b[0] as? Int ?? 0)
            return pa != pb ? pa < pb : (a[1] as? String ?? "") < (b[1] as? String ?? "")
        }
        func list(_ revisions: [DocumentRevision]) -> [[Any]] { revisions.map { [$0.position, $0.id.description] } }
        return [
            "nodes": nodes,
            "roots": roots,
            "leaves": tree.leaves.map { [$0.revision.position, $0.revision.id.description, $0.deleted] },
            "winner": tree.winner.map { [$0.revision.position, $0.revision.id.description] } ?? NSNull(),
            "conflicts": list(tree.conflicts),
            "deleted_conflicts": list(tree.deletedConflicts)
        ]
    }
}
