import KVSupport
import KVText

/// The revision tree of one replicated document: every known revision, with the parent each
/// was made from, as CouchDB keeps it (`couch_key_tree`).
///
/// The tree is a list of roots. A root is the oldest revision KVDocs still knows on its
/// branch: position 1 for a complete history, a later position once older revisions were
/// stemmed away (``stem(limit:)``) or when a replicated edit arrived with a shortened history.
/// Leaves are the heads of branches; more than one non-deleted leaf is a conflict.
///
/// The algorithms are ports of CouchDB's `couch_key_tree.erl` (merge/2, merge_tree/3,
/// merge_at/3, merge_extend/2, value_pref/2, stem/2, repair_tree/2, get_all_leafs/1,
/// get_full_key_paths/2) and of the winner rule of `couch_doc:to_doc_info_path/1`, written
/// without recursion so that a tree as deep as the largest revision limit (or a damaged
/// record claiming more) cannot exhaust a thread's stack.
///
/// Invariants:
/// - The roots are sorted by `(position, id)`, as `lists:sort` leaves them in `merge/2` and
///   `stem/2`; every node's children are sorted by id (the order `merge_extend/2` keeps),
///   without two children of one node having the same id.
/// - A child's position is its parent's plus one; every position is in
///   1…``DocumentRevision/maximumPosition``.
/// - Every node in the node storage is reachable from a root (operations that drop nodes
///   rebuild the storage).
///
/// The same `(position, id)` can occur twice in a tree: CouchDB's merge allows it (a revision
/// reached through two different parents, or a history that bridges two roots), and only
/// `stem/2`'s repair removes some of these cases. ``hasDuplicateRevisions`` says when it
/// happens; ``RevisionTreeCodec`` refuses to store such a tree.
package struct RevisionTree: Sendable, Equatable, CustomStringConvertible {
    /// What the tree knows about one revision: CouchDB's node value, reduced to what KVDocs
    /// stores.
    ///
    /// A value without a body stands for CouchDB's `?REV_MISSING`: a revision known only as
    /// an ancestor in someone's history. Invariant: none (any combination is a value).
    package struct NodeState: Hashable, Sendable {
        /// Whether the revision is a deletion (a tombstone). Meaningful for leaves.
        package var deleted: Bool
        /// Whether KVDocs has the revision's body (CouchDB: the value is not `?REV_MISSING`).
        package var hasBody: Bool

        /// A revision known only by its id.
        package static let missing = NodeState(deleted: false, hasBody: false)

        /// A revision whose body KVDocs has, deleted or not.
        package static func stored(deleted: Bool) -> NodeState { NodeState(deleted: deleted, hasBody: true) }

        /// `couch_key_tree:value_pref/2` for KVDocs' values: the existing value, unless it is
        /// missing, then the new one. (CouchDB's first two clauses, for the old 3- and 4-tuple
        /// leaf values, cannot occur.)
        static func preferred(existing: NodeState, new: NodeState) -> NodeState {
            existing.hasBody ? existing : new
        }

        /// A rank that orders values as Erlang orders the terms the golden vectors use for
        /// them (`dead < live < []`): the tie-break of `repair_tree/2`'s sort of paths.
        fileprivate var rank: Int { hasBody ? (deleted ? 0 : 1) : 2 }
    }

    /// How a merge changed the tree (`couch_key_tree:merge/2`'s second result).
    package enum MergeResult: Sendable, Equatable {
        /// The path extended an existing leaf, or the tree was empty.
        case newLeaf
        /// The path added a branch: a sibling of existing revisions, or a new root.
        case newBranch
        /// Every revision of the path was already in the tree.
        case internalNode
    }

    /// One revision of a ``Path``.
    package struct PathNode: Sendable, Equatable {
        /// The revision's id.
        package var id: RevisionID
        /// What the path says about it.
        var value: NodeState

        package init(id: RevisionID, value: NodeState) {
            self.id = id
            self.value = value
        }
    }

    /// A chain of revisions, oldest first, to merge into a tree: what one replicated edit
    /// brings (`couch_doc:to_path/1`).
    ///
    /// Invariants: at least one node; `1 <= start` and the last node's position
    /// `start + nodes.count - 1 <= DocumentRevision.maximumPosition`.
    package struct Path: Sendable, Equatable {
        /// The position of the first (oldest) node.
        package let start: Int
        /// The revisions, oldest first; the last one is the path's leaf.
        let nodes: [PathNode]

        /// A path starting at `start`.
        /// - Throws: ``KVDocsError/Kind/invalidArgument`` when `nodes` is empty or a position
        ///   falls outside 1…``DocumentRevision/maximumPosition``.
        package init(start: Int, nodes: [PathNode]) throws {
            guard !nodes.isEmpty else { throw KVDocsError(.invalidArgument, "a revision path has no revisions") }
            guard start >= 1 else {
                throw KVDocsError(.invalidArgument, "a revision path starts at position \(start); positions start at 1")
            }
            guard start <= DocumentRevision.maximumPosition - (nodes.count - 1) else {
                throw KVDocsError(
                    .invalidArgument, "a revision path goes past position \(DocumentRevision.maximumPosition)")
            }
            self.start = start
            self.nodes = nodes
        }

        /// The path of a revision and its history as `_revisions` gives it
        /// (`couch_doc:to_path/1`): `ids` newest first, the newest at position `position`;
        /// the newest gets `leaf`, its ancestors are ``NodeState/missing``.
        /// - Throws: ``KVDocsError/Kind/invalidArgument`` when `ids` is empty or longer than
        ///   `position` (the oldest would be at a position below 1).
        package init(position: Int, history ids: [RevisionID], leaf: NodeState) throws {
            guard !ids.isEmpty else { throw KVDocsError(.invalidArgument, "a revision history has no ids") }
            guard ids.count <= position else {
                throw KVDocsError(
                    .invalidArgument, "a revision history of \(ids.count) ids cannot end at position \(position)")
            }
            var nodes = ids.reversed().map { PathNode(id: $0, value: .missing) }
            nodes[nodes.count - 1].value = leaf
            try self.init(start: position - ids.count + 1, nodes: nodes)
        }
    }

    /// A leaf of the tree: a revision no other revision was made from.
    package struct Leaf: Sendable, Equatable {
        /// The leaf's revision.
        package var revision: DocumentRevision
        /// What the tree knows about it.
        package var value: NodeState
        /// Whether the leaf is a deletion.
        package var deleted: Bool { value.deleted }
    }

    /// One node in the storage. Invariant: `children` are indices into `nodes`, sorted by id.
    private struct Node: Sendable {
        var position: Int
        var id: RevisionID
        var value: NodeState
        var children: [Int]
    }

    /// The node storage; a node's index is stable until an operation rebuilds the storage.
    private var nodes: [Node] = []
    /// The indices of the roots, sorted by `(position, id)`.
    private var roots: [Int] = []

    /// An empty tree (a document with no revisions).
    package init() {}

    /// Whether the tree has no revisions.
    package var isEmpty: Bool { roots.isEmpty }

    /// The number of revisions in the tree.
    package var count: Int { nodes.count }

    // MARK: - Merge (couch_key_tree:merge/2)

    /// Merges `path` into the tree as `couch_key_tree:merge/2` does, and says how it changed
    /// the tree.
    ///
    /// `merge_tree/3`: the path is tried against each root in order; the first root it
    /// merges with takes it (the root's position becomes the smaller of the two); when none
    /// does, the path becomes a new root. `merge_at/3`: when the root starts deeper than the
    /// path, the path's first nodes are skipped until the depths agree and become the
    /// root's new ancestors; when the root starts shallower, the tree is searched (depth
    /// first, children in order) for the node at the path's start position with the path's
    /// first id. `merge_extend/2` then walks down the rest of the path, inserting the first
    /// revision the tree lacks among its siblings in id order. `value_pref/2` decides the
    /// value of a revision both have. The roots are sorted afterwards.
    @discardableResult
    package mutating func merge(_ path: Path) -> MergeResult {
        let result: MergeResult
        if roots.isEmpty {
            roots = [append(path, from: 0)]
            result = .newLeaf
        } else {
            var merged: MergeResult?
            for (index, root) in roots.enumerated() {
                if let (newRoot, how) = mergeAt(root: root, path: path) {
                    roots[index] = newRoot
                    merged = how
                    break
                }
            }
            if let merged {
                result = merged
            } else {
                roots.append(append(path, from: 0))
                result = .newBranch
            }
        }
        sortRoots()
        return result
    }

    /// `merge_at/3` against one root: `nil` when the path does not merge with it (`fail`),
    /// else the (possibly new) root index and the result. Changes the tree only on success.
    private mutating func mergeAt(root: Int, path: Path) -> (root: Int, result: MergeResult)? {
        let depth = nodes[root].position
        let difference = depth - path.start
        if difference > 0 {
            // The root starts deeper than the path: discard from the path until the depths
            // agree (merge_at/3's clauses for Pos > 0); the discarded nodes wrap the root.
            guard difference < path.nodes.count, nodes[root].id == path.nodes[difference].id else { return nil }
            let result = extend(node: root, path: path, at: difference)
            var top = root
            for k in stride(from: difference - 1, through: 0, by: -1) {
                let wrapper = Node(
                    position: path.start + k, id: path.nodes[k].id, value: path.nodes[k].value, children: [top])
                nodes.append(wrapper)
                top = nodes.count - 1
            }
            return (top, result)
        }
        // The root starts at or above the path: find the node at the path's start position
        // with its first id (merge_at/3's clauses for Pos < 0 and Pos = 0).
        guard let target = find(id: path.nodes[0].id, depth: -difference, below: root) else { return nil }
        return (root, extend(node: target, path: path, at: 0))
    }

    /// The first node, in merge_at/3's search order, that is `depth` levels below `root`
    /// and has `id`. Siblings are sorted, so a level's scan stops at the first larger id
    /// (merge_at/3's `K1 > K2` clause).
    private func find(id: RevisionID, depth: Int, below root: Int) -> Int? {
        if depth == 0 { return nodes[root].id == id ? root : nil }
        // Depth-first over the nodes `depth - 1` levels below the root, children in order;
        // at that level, look among the node's children.
        var stack: [(node: Int, level: Int)] = [(root, 0)]
        while let (node, level) = stack.popLast() {
            if level == depth - 1 {
                for child in nodes[node].children {
                    if nodes[child].id == id { return child }
                    if id < nodes[child].id { break }
                }
            } else {
                for child in nodes[node].children.reversed() { stack.append((child, level + 1)) }
            }
        }
        return nil
    }

    /// `merge_extend/2` from `node`, which has the id of `path.nodes[offset]`: applies
    /// `value_pref/2` to it and walks down the rest of the path.
    private mutating func extend(node start: Int, path: Path, at offset: Int) -> MergeResult {
        var node = start
        var k = offset
        while true {
            nodes[node].value = NodeState.preferred(existing: nodes[node].value, new: path.nodes[k].value)
            k += 1
            // merge_extend(A, []): the path ends at an existing node.
            guard k < path.nodes.count else { return .internalNode }
            let children = nodes[node].children
            // merge_extend([], B): the path extends a leaf.
            guard !children.isEmpty else {
                nodes[node].children = [append(path, from: k)]
                return .newLeaf
            }
            let id = path.nodes[k].id
            var next: Int?
            var insertAt = children.count
            for (i, child) in children.enumerated() {
                if nodes[child].id == id {
                    next = child
                    break
                }
                if id < nodes[child].id {
                    insertAt = i
                    break
                }
            }
            if let next {
                node = next
                continue
            }
            // A sibling that sorts before an existing child, or after all of them: a new branch.
            let added = append(path, from: k)
            nodes[node].children.insert(added, at: insertAt)
            return .newBranch
        }
    }

    /// Appends `path.nodes[from...]` as a chain of new nodes and returns the first one's index.
    private mutating func append(_ path: Path, from first: Int) -> Int {
        var below: Int?
        for k in stride(from: path.nodes.count - 1, through: first, by: -1) {
            nodes.append(
                Node(
                    position: path.start + k, id: path.nodes[k].id, value: path.nodes[k].value,
                    children: below.map { [$0] } ?? []))
            below = nodes.count - 1
        }
        return below ?? 0
    }

    /// Sorts the roots by `(position, id)` (merge/2's and stem/2's `lists:sort`). Two roots
    /// never share both; the original order breaks a tie all the same.
    private mutating func sortRoots() {
        roots = roots.enumerated().sorted { a, b in
            let x = nodes[a.element], y = nodes[b.element]
            if x.position != y.position { return x.position < y.position }
            if x.id != y.id { return x.id < y.id }
            return a.offset < b.offset
        }.map(\.element)
    }

    // MARK: - Stem (couch_key_tree:stem/2)

    /// Keeps only the last `limit` revisions of every branch, as `couch_key_tree:stem/2` does.
    ///
    /// A revision is kept when one of the leaves below it is fewer than `limit` revisions
    /// away (`stem_tree/4`); a kept revision whose parent is not kept becomes a root at its
    /// own position. When a revision id occurs twice anywhere in the tree (`check_key/2`
    /// throws `dupe_keys`), CouchDB falls back to `repair_tree/2`: every root-to-leaf path is
    /// cut to its last `limit` revisions and the paths are merged again, in sorted order,
    /// into an empty tree. A `limit` below 1 is taken as 1.
    package mutating func stem(limit: Int) {
        let limit = max(1, limit)
        if hasDuplicateIDs {
            repair(limit: limit)
            return
        }
        // Distance from each node down to its nearest leaf, children before parents.
        let order = preorder()
        var distance = [Int](repeating: 0, count: nodes.count)
        for node in order.reversed() {
            let children = nodes[node].children
            if !children.isEmpty { distance[node] = 1 + (children.map { distance[$0] }.min() ?? 0) }
        }
        var rebuilt: [Node] = []
        var newRoots: [Int] = []
        var newIndex = [Int](repeating: -1, count: nodes.count)
        // Preorder: a parent is placed before its children.
        var parentOf = [Int](repeating: -1, count: nodes.count)
        for node in order {
            for child in nodes[node].children { parentOf[child] = node }
        }
        for node in order where distance[node] < limit {
            var copy = nodes[node]
            copy.children = []
            rebuilt.append(copy)
            let index = rebuilt.count - 1
            newIndex[node] = index
            let parent = parentOf[node]
            if parent >= 0, newIndex[parent] >= 0 {
                rebuilt[newIndex[parent]].children.append(index)
            } else {
                newRoots.append(index)
            }
        }
        nodes = rebuilt
        roots = newRoots
        sortRoots()
    }

    /// Whether some revision id occurs more than once in the tree, at any positions
    /// (what makes `stem/2`'s `check_key/2` throw `dupe_keys`).
    private var hasDuplicateIDs: Bool {
        var seen = Set<RevisionID>()
        for node in nodes where !seen.insert(node.id).inserted { return true }
        return false
    }

    /// Whether the same revision — position and id — occurs more than once in the tree.
    package var hasDuplicateRevisions: Bool {
        var seen = Set<DocumentRevision>()
        for node in nodes where !seen.insert(DocumentRevision(position: node.position, id: node.id)).inserted {
            return true
        }
        return false
    }

    /// `repair_tree/2`: every root-to-leaf path cut to its last `limit` revisions, sorted as
    /// Erlang sorts `{StartPos, Path}` (start, then the path leaf first, comparing ids, then
    /// values), merged one by one into an empty tree.
    private mutating func repair(limit: Int) {
        var paths: [Path] = []
        for leafPath in allLeafPaths() {
            let kept = Array(leafPath.nodes.suffix(limit))
            // The cut keeps the newest nodes, so its start moves down by what was dropped;
            // positions stay valid because they were valid before.
            if let path = try? Path(start: leafPath.start + leafPath.nodes.count - kept.count, nodes: kept) {
                paths.append(path)
            }
        }
        paths.sort { a, b in
            if a.start != b.start { return a.start < b.start }
            // Erlang compares the paths as lists of {Key, Value}, leaf first.
            for (x, y) in zip(a.nodes.reversed(), b.nodes.reversed()) {
                if x.id != y.id { return x.id < y.id }
                if x.value.rank != y.value.rank { return x.value.rank < y.value.rank }
            }
            return a.nodes.count < b.nodes.count
        }
        var tree = RevisionTree()
        for path in paths { tree.merge(path) }
        self = tree
    }

    /// Every root-to-leaf path (`get_all_leafs_full/1`), as paths oldest first.
    private func allLeafPaths() -> [Path] {
        let parent = parents()
        var result: [Path] = []
        for leaf in preorder() where nodes[leaf].children.isEmpty {
            var chain: [PathNode] = []
            var node = leaf
            while node >= 0 {
                chain.append(PathNode(id: nodes[node].id, value: nodes[node].value))
                if parent[node] < 0 { break }
                node = parent[node]
            }
            if let path = try? Path(start: nodes[node].position, nodes: chain.reversed()) { result.append(path) }
        }
        return result
    }

    /// Every node's parent index, or -1 for a root.
    private func parents() -> [Int] {
        var parent = [Int](repeating: -1, count: nodes.count)
        for (index, node) in nodes.enumerated() {
            for child in node.children { parent[child] = index }
        }
        return parent
    }

    // MARK: - Leaves, winner, conflicts

    /// The leaves, in the order of `couch_doc:to_doc_info_path/1`: the winner first, then
    /// the others sorted the same way (non-deleted before deleted, then higher position, then
    /// greater id).
    package var leaves: [Leaf] {
        var result: [Leaf] = []
        for node in nodes where node.children.isEmpty {
            result.append(Leaf(revision: DocumentRevision(position: node.position, id: node.id), value: node.value))
        }
        return result.sorted(by: RevisionTree.winsOver)
    }

    /// `couch_doc:to_doc_info_path/1`'s order: descending by `{not Deleted, {Pos, RevId}}`.
    static func winsOver(_ a: Leaf, _ b: Leaf) -> Bool {
        if a.deleted != b.deleted { return !a.deleted }
        return b.revision < a.revision
    }

    /// The winning revision: the leaf first in ``leaves``; `nil` for an empty tree.
    package var winner: Leaf? {
        var best: Leaf?
        for node in nodes where node.children.isEmpty {
            let leaf = Leaf(revision: DocumentRevision(position: node.position, id: node.id), value: node.value)
            if best.map({ RevisionTree.winsOver(leaf, $0) }) ?? true { best = leaf }
        }
        return best
    }

    /// The non-deleted leaves other than the winner (`_conflicts`), in ``leaves`` order.
    package var conflicts: [DocumentRevision] {
        leaves.dropFirst().filter { !$0.deleted }.map(\.revision)
    }

    /// The deleted leaves other than the winner (`_deleted_conflicts`), in ``leaves`` order.
    package var deletedConflicts: [DocumentRevision] {
        leaves.dropFirst().filter(\.deleted).map(\.revision)
    }

    /// Every revision in the tree, in preorder (roots in order, children in order).
    package var revisions: [DocumentRevision] {
        preorder().map { DocumentRevision(position: nodes[$0].position, id: nodes[$0].id) }
    }

    /// Whether the tree has `revision`.
    package func contains(_ revision: DocumentRevision) -> Bool {
        nodes.contains { $0.position == revision.position && $0.id == revision.id }
    }

    /// The value of `revision` (the first one in preorder), or `nil` when the tree lacks it.
    package func value(of revision: DocumentRevision) -> NodeState? {
        preorder().first { nodes[$0].position == revision.position && nodes[$0].id == revision.id }.map {
            nodes[$0].value
        }
    }

    /// The ids of `revision` and its known ancestors, newest first: `_revisions.ids`, whose
    /// `start` is the revision's position (`get_full_key_paths/2`; the first occurrence in
    /// preorder when the revision occurs twice). `nil` when the tree lacks the revision.
    package func history(of revision: DocumentRevision) -> [RevisionID]? {
        guard
            let found = preorder().first(where: {
                nodes[$0].position == revision.position && nodes[$0].id == revision.id
            })
        else {
            return nil
        }
        let parent = parents()
        var ids: [RevisionID] = []
        var node = found
        while node >= 0 {
            ids.append(nodes[node].id)
            node = parent[node]
        }
        return ids
    }

    /// Drops the bodies of revisions that are no longer leaves (KVDocs keeps bodies only for
    /// leaves; CouchDB keeps them until compaction): their values become
    /// ``NodeState/missing``. Returns the revisions whose bodies were dropped.
    @discardableResult
    package mutating func dropInternalBodies() -> [DocumentRevision] {
        var dropped: [DocumentRevision] = []
        for i in nodes.indices where !nodes[i].children.isEmpty && nodes[i].value != .missing {
            if nodes[i].value.hasBody { dropped.append(DocumentRevision(position: nodes[i].position, id: nodes[i].id)) }
            nodes[i].value = .missing
        }
        return dropped
    }

    // MARK: - New revision ids

    /// The id of a revision made by a local edit (design §1.3): the MD5 of
    /// `"kvdocs-rev-2" 0x00 u8(deleted) varint(parentPosition) u8(parentKind)
    /// varint(parentIdLength) parentIdBytes canonicalBody`, with parent position 0, kind 0
    /// and no id bytes for a first revision. The parent's id is length-prefixed, so no two
    /// different inputs hash the same bytes. Deterministic, so the same edit made on two
    /// peers gives the same revision; unlike CouchDB's `couch_db:new_revid/1` (an MD5 of
    /// Erlang's external term format) it is not meant to match any other system.
    package static func newRevisionID(parent: DocumentRevision?, deleted: Bool, canonicalBody: [UInt8]) -> RevisionID {
        var md5 = MD5()
        var header = Array("kvdocs-rev-2".utf8) + [0, deleted ? 1 : 0]
        Varint.append(parent?.position ?? 0, to: &header)
        header.append(parent?.id.kind.rawValue ?? 0)
        Varint.append(parent?.id.bytes.count ?? 0, to: &header)
        md5.update(header)
        if let parent { md5.update(parent.id.bytes) }
        md5.update(canonicalBody)
        return RevisionID(md5: md5.finalize())
    }

    // MARK: - Traversal, building, equality

    /// The node indices in preorder: roots in order, each node before its children, children
    /// in order.
    private func preorder() -> [Int] {
        var result: [Int] = []
        result.reserveCapacity(nodes.count)
        var stack = roots.reversed() as [Int]
        while let node = stack.popLast() {
            result.append(node)
            stack.append(contentsOf: nodes[node].children.reversed())
        }
        return result
    }

    /// One node as a traversal sees it: what ``visit(_:)`` reports and ``init(preorder:)``
    /// takes.
    package struct VisitedNode: Sendable, Equatable {
        /// The node's position.
        package var position: Int
        /// The node's id.
        package var id: RevisionID
        /// The node's value.
        package var value: NodeState
        /// How many children the node has.
        package var childCount: Int

        package init(position: Int, id: RevisionID, value: NodeState, childCount: Int) {
            self.position = position
            self.id = id
            self.value = value
            self.childCount = childCount
        }
    }

    /// The roots' nodes in preorder, with their child counts: the tree's whole shape.
    package var flattened: [VisitedNode] {
        preorder().map {
            VisitedNode(
                position: nodes[$0].position, id: nodes[$0].id, value: nodes[$0].value,
                childCount: nodes[$0].children.count)
        }
    }

    /// A tree from its nodes in preorder with child counts (`flattened`'s form), the roots
    /// one after another. Used by the codec, which has validated positions and order.
    /// - Throws: ``KVDocsError/Kind/corruption`` when the counts do not describe
    ///   `rootCount` complete trees.
    package init(rootCount: Int, preorder visited: [VisitedNode]) throws {
        var index = 0
        for _ in 0..<rootCount {
            guard index < visited.count else {
                throw KVDocsError(.corruption, "revision tree record: fewer nodes than its roots and child counts need")
            }
            let root = nodes.count
            nodes.append(
                Node(
                    position: visited[index].position, id: visited[index].id, value: visited[index].value, children: [])
            )
            index += 1
            var open: [(node: Int, remaining: Int)] = [(root, visited[index - 1].childCount)]
            while let last = open.last {
                if last.remaining == 0 {
                    open.removeLast()
                    continue
                }
                open[open.count - 1].remaining -= 1
                guard index < visited.count else {
                    throw KVDocsError(
                        .corruption, "revision tree record: fewer nodes than its roots and child counts need")
                }
                let child = nodes.count
                nodes.append(
                    Node(
                        position: visited[index].position, id: visited[index].id, value: visited[index].value,
                        children: []))
                nodes[last.node].children.append(child)
                open.append((child, visited[index].childCount))
                index += 1
            }
            roots.append(root)
        }
        guard index == visited.count else {
            throw KVDocsError(
                .corruption, "revision tree record: more nodes than its roots and child counts account for")
        }
    }

    /// Equal shapes: the same roots in the same order, with the same nodes, values and
    /// children in the same order (the storage layout does not matter).
    package static func == (a: RevisionTree, b: RevisionTree) -> Bool {
        a.roots.count == b.roots.count && a.flattened == b.flattened
    }

    /// The tree in a CouchDB-like notation, for messages and debugging:
    /// `[{1, a [b, c(deleted)]}]`, where a value without a body is marked `?`.
    package var description: String {
        var out = "["
        for (r, root) in roots.enumerated() {
            if r > 0 { out += ", " }
            out += "{\(nodes[root].position), "
            // Preorder with explicit close markers.
            var stack: [(node: Int, close: Bool)] = [(root, false)]
            var first = true
            while let (node, close) = stack.popLast() {
                if close {
                    out += "]"
                    continue
                }
                if !first, out.last != "[" { out += ", " }
                first = false
                let n = nodes[node]
                out += n.id.description
                if !n.value.hasBody { out += "?" }
                if n.value.deleted { out += "(deleted)" }
                if !n.children.isEmpty {
                    out += " ["
                    stack.append((node, true))
                    for child in n.children.reversed() { stack.append((child, false)) }
                }
            }
            out += "}"
        }
        return out + "]"
    }
}
