import KVSupport
import KVText

/// The stored form of a document's revision tree (design: docs/design/sync.md §1.2), the
/// value of the key `("r", collection, "t", id)`.
///
/// ```text
/// u8 version=1 | varint seq | varint rootCount | root*
/// root  = varint startPos | node
/// node  = revid | u8 flags | varint childCount | node*
/// revid = u8 kind (0 = 16-byte MD5, 1 = opaque) | (16 bytes | varint len, bytes)
/// flags = bit0 deleted, bit1 hasBody (leaf only), bit2 winner (exactly one leaf)
/// ```
///
/// Roots come sorted by `(startPos, revid)` and every node's children by revid, as
/// ``RevisionTree`` keeps them. Varints are ``Varint``'s LEB128.
///
/// Invariants: ``decode(_:)`` accepts exactly what ``encode(_:sequence:)`` can produce: the
/// version byte is 1; positions are 1…``DocumentRevision/maximumPosition`` and a child's is its
/// parent's plus one; ids satisfy ``RevisionID``'s invariants; roots and siblings are in
/// strictly increasing order; no `(position, revid)` occurs twice (CouchDB's `check_key`
/// `dupe_keys`); only leaves have a body or the winner flag; exactly one leaf, the one
/// `couch_doc:to_doc_info_path/1` picks, has the winner flag (none in an empty tree); every
/// count is bounded by the bytes left; nothing follows the last node. Anything else is
/// ``KVDocsError/Kind/corruption``, with a message saying what is wrong; no input makes it
/// trap, recurse or allocate more than a small multiple of the input's size.
package enum RevisionTreeCodec {
    /// The format version this code writes and reads.
    static let version: UInt8 = 1

    private static let deletedFlag: UInt8 = 1
    private static let hasBodyFlag: UInt8 = 2
    private static let winnerFlag: UInt8 = 4

    /// The record of `tree`, last changed at `sequence`.
    /// - Throws: ``KVDocsError/Kind/invalidArgument`` when the tree has a revision twice
    ///   (such a tree cannot be stored; see ``RevisionTree/hasDuplicateRevisions``), a
    ///   revision that is not a leaf still has a body (see
    ///   ``RevisionTree/dropInternalBodies()``), or `sequence` is negative.
    package static func encode(_ tree: RevisionTree, sequence: Int64) throws -> [UInt8] {
        guard sequence >= 0 else {
            throw KVDocsError(.invalidArgument, "a revision tree's sequence is negative (\(sequence))")
        }
        guard !tree.hasDuplicateRevisions else {
            throw KVDocsError(
                .invalidArgument, "the revision tree has a revision twice, so it cannot be stored: \(tree)")
        }
        let winner = tree.winner?.revision
        var out: [UInt8] = [version]
        Varint.append(Int(sequence), to: &out)
        let visited = tree.flattened
        // Roots are the nodes no parent's child count covers; count them from the shape.
        var rootCount = 0
        var open = 0
        for node in visited {
            if open == 0 { rootCount += 1 } else { open -= 1 }
            open += node.childCount
        }
        Varint.append(rootCount, to: &out)
        open = 0
        for node in visited {
            if open == 0 { Varint.append(node.position, to: &out) } else { open -= 1 }
            open += node.childCount
            out.append(node.id.kind.rawValue)
            switch node.id.kind {
            case .md5: out.append(contentsOf: node.id.bytes)
            case .opaque:
                Varint.append(node.id.bytes.count, to: &out)
                out.append(contentsOf: node.id.bytes)
            }
            var flags: UInt8 = node.value.deleted ? deletedFlag : 0
            guard node.childCount == 0 || !node.value.hasBody else {
                throw KVDocsError(
                    .invalidArgument,
                    "revision \(DocumentRevision(position: node.position, id: node.id)) has a body but is not a leaf; only leaves keep bodies (drop the others first)"
                )
            }
            if node.childCount == 0 {
                if node.value.hasBody { flags |= hasBodyFlag }
                if DocumentRevision(position: node.position, id: node.id) == winner { flags |= winnerFlag }
            }
            out.append(flags)
            Varint.append(node.childCount, to: &out)
        }
        return out
    }

    /// The tree and sequence stored in `bytes`.
    /// - Throws: ``KVDocsError/Kind/corruption`` saying what is wrong when `bytes` is not a
    ///   record ``encode(_:sequence:)`` could have written.
    package static func decode<Bytes: RandomAccessCollection>(_ bytes: Bytes) throws -> (
        tree: RevisionTree, sequence: Int64
    )
    where Bytes.Element == UInt8, Bytes.Index == Int {
        var reader = Reader(bytes: bytes)
        let version = try reader.byte("the version byte")
        guard version == RevisionTreeCodec.version else {
            throw corrupt("unknown version \(version) (this KVDocs reads version \(RevisionTreeCodec.version))")
        }
        let sequence = try reader.varint("the sequence")
        let rootCount = try reader.count("the root count")

        var visited: [RevisionTree.VisitedNode] = []
        var seen = Set<DocumentRevision>()
        var winnerFlags: [DocumentRevision] = []
        var previousRoot: DocumentRevision?
        // The open nodes: position, children still to read, the last child's id.
        var open: [(position: Int, remaining: Int, lastChild: RevisionID?)] = []
        var rootsRead = 0
        while rootsRead < rootCount || !open.isEmpty {
            let position: Int
            if let last = open.last {
                if last.remaining == 0 {
                    open.removeLast()
                    continue
                }
                position = last.position + 1
                guard position <= DocumentRevision.maximumPosition else {
                    throw corrupt("a revision's position is past \(DocumentRevision.maximumPosition)")
                }
            } else {
                position = try reader.varint("a root's position")
                guard position >= 1, position <= DocumentRevision.maximumPosition else {
                    throw corrupt("a root's position \(position) is outside 1…\(DocumentRevision.maximumPosition)")
                }
                rootsRead += 1
            }
            let id = try reader.revisionID()
            let flags = try reader.byte("a revision's flags")
            let childCount = try reader.count("a revision's child count")
            let revision = DocumentRevision(position: position, id: id)

            guard flags & ~(deletedFlag | hasBodyFlag | winnerFlag) == 0 else {
                throw corrupt("revision \(revision) has unknown flags 0x\(RevisionID.hex([flags]))")
            }
            if childCount > 0 {
                guard flags & hasBodyFlag == 0 else {
                    throw corrupt("revision \(revision) has a body but is not a leaf")
                }
                guard flags & winnerFlag == 0 else {
                    throw corrupt("revision \(revision) is marked the winner but is not a leaf")
                }
            }
            if flags & winnerFlag != 0 { winnerFlags.append(revision) }
            guard seen.insert(revision).inserted else { throw corrupt("revision \(revision) occurs twice") }

            // Order: roots by (position, id), siblings by id, each strictly increasing.
            if let last = open.last {
                if let previous = last.lastChild, !(previous < id) {
                    throw corrupt(
                        "the children of a revision at position \(last.position) are not in increasing order (\(previous) before \(id))"
                    )
                }
                open[open.count - 1].remaining -= 1
                open[open.count - 1].lastChild = id
            } else {
                if let previousRoot, !(previousRoot < revision) {
                    throw corrupt("the roots are not in increasing order (\(previousRoot) before \(revision))")
                }
                previousRoot = revision
            }
            visited.append(
                RevisionTree.VisitedNode(
                    position: position, id: id,
                    value: RevisionTree.NodeState(deleted: flags & deletedFlag != 0, hasBody: flags & hasBodyFlag != 0),
                    childCount: childCount))
            open.append((position, childCount, nil))
        }
        guard reader.isAtEnd else { throw corrupt("\(reader.remaining) bytes follow the last revision") }

        let tree = try RevisionTree(rootCount: rootCount, preorder: visited)
        let winner = tree.winner?.revision
        switch (winnerFlags.count, winner) {
        case (0, nil): break
        case (0, let winner?): throw corrupt("no leaf is marked the winner (it should be \(winner))")
        case (1, let winner?) where winnerFlags[0] == winner: break
        case (1, let winner?): throw corrupt("\(winnerFlags[0]) is marked the winner, but the winner is \(winner)")
        default:
            throw corrupt(
                "\(winnerFlags.count) leaves are marked the winner (\(winnerFlags.map(\.description).joined(separator: ", "))); exactly one must be"
            )
        }
        return (tree, Int64(sequence))
    }

    static func corrupt(_ problem: String) -> KVDocsError {
        KVDocsError(.corruption, "revision tree record: \(problem)")
    }

    /// Reads a record front to back; every read checks the bytes left.
    private struct Reader<Bytes: RandomAccessCollection> where Bytes.Element == UInt8, Bytes.Index == Int {
        let bytes: Bytes
        var index: Int

        init(bytes: Bytes) {
            self.bytes = bytes
            index = bytes.startIndex
        }

        var isAtEnd: Bool { index == bytes.endIndex }
        var remaining: Int { bytes.endIndex - index }

        mutating func byte(_ what: String) throws -> UInt8 {
            guard index < bytes.endIndex else { throw corrupt("the record ends before \(what)") }
            defer { index += 1 }
            return bytes[index]
        }

        /// A varint that fits in 0…Int.max.
        mutating func varint(_ what: String) throws -> Int {
            guard index < bytes.endIndex else { throw corrupt("the record ends before \(what)") }
            let start = index
            let value: Int
            do {
                value = try Varint.read(bytes, &index)
            } catch {
                throw corrupt("\(what) is a truncated or overlong varint")
            }
            guard value >= 0 else { throw corrupt("\(what) is out of range") }
            // Only the shortest form, so that every record has one encoding.
            guard index - start == 1 || bytes[index - 1] != 0 else {
                throw corrupt("\(what) is a varint with needless zero bytes")
            }
            return value
        }

        /// A count of items that each take at least one byte: bounded by the bytes left.
        mutating func count(_ what: String) throws -> Int {
            let value = try varint(what)
            guard value <= remaining else {
                throw corrupt("\(what) is \(value), more than the \(remaining) bytes left could hold")
            }
            return value
        }

        mutating func revisionID() throws -> RevisionID {
            let kind = try byte("a revision id's kind")
            switch RevisionID.Kind(rawValue: kind) {
            case .md5?:
                guard remaining >= 16 else { throw corrupt("the record ends inside an MD5 revision id") }
                let digest = Array(bytes[index..<index + 16])
                index += 16
                return RevisionID(md5: digest)
            case .opaque?:
                let length = try count("an opaque revision id's length")
                let text = Array(bytes[index..<index + length])
                index += length
                if let problem = RevisionID.problem(with: text) {
                    throw corrupt("an opaque revision id is invalid: \(problem)")
                }
                guard text.count != 32 else {
                    throw corrupt("an opaque revision id has 32 characters (only MD5 ids do)")
                }
                return RevisionID(kind: .opaque, bytes: text)
            case nil:
                throw corrupt("unknown revision id kind \(kind)")
            }
        }
    }
}
