import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// The stored record of a revision tree (design §1.2): random trees round-trip, every kind
/// of damage is named, and damaged records never crash the decoder.
@Suite struct RevisionTreeCodecTests {
    /// A random tree as replication builds it: merges of paths (complete or shortened
    /// histories of a random edit history with MD5 and opaque ids of every length, some
    /// deleted, some ids reused at other positions), stems at random limits, and sometimes
    /// internal bodies dropped as writes will do.
    static func randomTree(_ rng: inout SplitMix64) throws -> RevisionTree {
        var ids: [RevisionID] = []
        var position: [Int] = [], parent: [Int?] = [], deleted: [Bool] = []
        let base = Int.random(in: 0..<3, using: &rng) == 0 ? Int.random(in: 0...2000, using: &rng) : 0
        for _ in 0..<Int.random(in: 1...30, using: &rng) {
            let p: Int? =
                ids.isEmpty || Int.random(in: 0..<10, using: &rng) == 0
                ? nil : Int.random(in: 0..<ids.count, using: &rng)
            position.append(p.map { position[$0] + 1 } ?? base + Int.random(in: 1...3, using: &rng))
            parent.append(p)
            deleted.append(Int.random(in: 0..<4, using: &rng) == 0)
            switch Int.random(in: 0..<6, using: &rng) {
            case 0, 1: ids.append(RevisionID(md5: (0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) }))
            case 2 where !ids.isEmpty: ids.append(ids[Int.random(in: 0..<ids.count, using: &rng)])
            default:
                var length = Int.random(in: 1...RevisionID.maximumOpaqueLength, using: &rng)
                if length == 32 { length = 33 }
                let allowed = Array("abcXYZ019-_.~!$%&'()*+,;=:@[]".utf8)
                ids.append(
                    RevisionID(
                        kind: .opaque,
                        bytes: (0..<(Bool.random(using: &rng) ? min(length, 3) : length)).map { _ in
                            allowed[Int.random(in: 0..<allowed.count, using: &rng)]
                        }))
            }
        }
        var tree = RevisionTree()
        for _ in 0..<Int.random(in: 1...10, using: &rng) {
            let leaf = Int.random(in: 0..<ids.count, using: &rng)
            var chain = [leaf]
            while let p = parent[chain[chain.count - 1]] { chain.append(p) }
            chain.reverse()
            if Bool.random(using: &rng) { chain = Array(chain.suffix(Int.random(in: 1...chain.count, using: &rng))) }
            tree.merge(
                try RevisionTree.Path(
                    start: position[chain[0]],
                    nodes: chain.map {
                        .init(id: ids[$0], value: $0 == leaf ? .stored(deleted: deleted[leaf]) : .missing)
                    }))
            tree.stem(limit: Int.random(in: 0..<3, using: &rng) == 0 ? Int.random(in: 1...5, using: &rng) : 1000)
            if Bool.random(using: &rng) { tree.dropInternalBodies() }
        }
        return tree
    }

    @Test func randomTreesRoundTrip() throws {
        var rng = SplitMix64(seed: 0xC0DEC)
        var stored = 0
        var refusedBodies = 0
        for _ in 0..<2000 {
            let original = try Self.randomTree(&rng)
            let sequence = Int64.random(in: 0...Int64.max >> Int64.random(in: 0...62, using: &rng), using: &rng)
            // Only leaves keep bodies: a tree with the body of an internal revision is refused
            // until the write path drops it.
            var tree = original
            if !tree.dropInternalBodies().isEmpty && !tree.hasDuplicateRevisions {
                refusedBodies += 1
                expectError(.invalidArgument) { try RevisionTreeCodec.encode(original, sequence: sequence) }
            }
            guard !tree.hasDuplicateRevisions else {
                // CouchDB's merge can leave a revision twice; such a tree is refused, not stored.
                expectError(.invalidArgument) { try RevisionTreeCodec.encode(tree, sequence: sequence) }
                continue
            }
            let bytes = try RevisionTreeCodec.encode(tree, sequence: sequence)
            let (decoded, decodedSequence) = try RevisionTreeCodec.decode(bytes)
            #expect(decoded == tree, "\(tree)")
            #expect(decodedSequence == sequence)
            #expect(decoded.winner == tree.winner)
            #expect(try RevisionTreeCodec.encode(decoded, sequence: sequence) == bytes)
            // Slices of stored bytes decode the same.
            let padded = [0xEE] + bytes + [0xEE]
            #expect(try RevisionTreeCodec.decode(padded[1..<padded.count - 1]).tree == tree)
            stored += 1
        }
        #expect(stored > 1500)
        #expect(refusedBodies > 100)
        #expect(try RevisionTreeCodec.encode(RevisionTree(), sequence: 0) == [1, 0, 0])
        #expect(try RevisionTreeCodec.decode([1, 0, 0]).tree.isEmpty)
        expectError(.invalidArgument) { try RevisionTreeCodec.encode(RevisionTree(), sequence: -1) }
    }

    /// Random byte flips, overwrites, insertions, deletions and truncations of valid records:
    /// the decoder only ever throws `.corruption`, or returns a tree whose record is exactly
    /// the damaged bytes (a valid, different tree).
    @Test func damagedRecordsAreCorruptionOrAnotherValidTree() throws {
        var rng = SplitMix64(seed: 0xF022)
        var corrupt = 0, valid = 0
        for _ in 0..<600 {
            var tree = try Self.randomTree(&rng)
            tree.dropInternalBodies()
            guard !tree.hasDuplicateRevisions else { continue }
            let record = try RevisionTreeCodec.encode(tree, sequence: Int64.random(in: 0...100_000, using: &rng))
            for _ in 0..<40 {
                var bytes = record
                for _ in 0..<Int.random(in: 1...3, using: &rng) {
                    let i = Int.random(in: 0..<max(1, bytes.count), using: &rng)
                    switch Int.random(in: 0..<6, using: &rng) {
                    case 0 where i < bytes.count: bytes[i] ^= UInt8(1) << UInt8.random(in: 0...7, using: &rng)
                    case 1 where i < bytes.count: bytes[i] = UInt8.random(in: 0...255, using: &rng)
                    case 2: bytes.insert(UInt8.random(in: 0...255, using: &rng), at: min(i, bytes.count))
                    case 3 where i < bytes.count: bytes.remove(at: i)
                    case 4: bytes = Array(bytes.prefix(i))
                    default:
                        if i < bytes.count {
                            bytes[i] = [0, 1, 2, 4, 6, 0x7F, 0x80, 0xFF][Int.random(in: 0..<8, using: &rng)]
                        }
                    }
                }
                do {
                    let (decoded, sequence) = try RevisionTreeCodec.decode(bytes)
                    valid += 1
                    #expect(try RevisionTreeCodec.encode(decoded, sequence: sequence) == bytes, "\(decoded)")
                } catch let error as KVDocsError {
                    corrupt += 1
                    #expect(error.kind == .corruption, "\(error)")
                    #expect(error.message.hasPrefix("revision tree record: "))
                } catch {
                    Issue.record("unexpected error \(error)")
                }
            }
        }
        #expect(corrupt > 1000)
        #expect(valid > 0)
    }

    // MARK: - Each kind of damage, named

    /// An opaque node: kind 1, length, bytes, flags, child count.
    static func node(_ id: String, _ flags: UInt8, _ children: UInt8) -> [UInt8] {
        [1, UInt8(id.utf8.count)] + Array(id.utf8) + [flags, children]
    }

    /// `{1, a → (b, c)}`, both leaves with bodies, `c` the winner; sequence 7.
    static let valid: [UInt8] = [1, 7, 1, 1] + node("a", 0, 2) + node("b", 2, 0) + node("c", 6, 0)

    @Test func namesEachKindOfDamage() throws {
        let (tree, sequence) = try RevisionTreeCodec.decode(Self.valid)
        #expect(sequence == 7)
        #expect(tree.description == "[{1, a? [b, c]}]")
        #expect(try RevisionTreeCodec.encode(tree, sequence: 7) == Self.valid)

        let n = Self.node
        let cases: [([UInt8], String)] = [
            ([], "ends before the version byte"),
            ([2] + Self.valid.dropFirst(), "unknown version 2"),
            (Array(Self.valid.dropLast()), "the record ends before a revision's child count"),
            ([1, 7, 1, 1, 1, 1, 0x61, 6, 0x80], "a revision's child count is a truncated or overlong varint"),
            (Self.valid + [0], "1 bytes follow the last revision"),
            ([1, 0x87, 0x00, 1, 1] + n("a", 0, 2) + n("b", 2, 0) + n("c", 6, 0), "needless zero bytes"),
            ([1, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0], "truncated or overlong varint"),
            ([1, 7, 100, 1] + n("a", 0, 2) + n("b", 2, 0) + n("c", 6, 0), "the root count is 100, more than"),
            ([1, 7, 1, 1] + n("a", 0, 90) + n("b", 2, 0), "child count is 90, more than"),
            ([1, 7, 2, 1] + n("a", 0, 2) + n("b", 2, 0) + n("c", 6, 0), "the record ends before a root's position"),
            ([1, 7, 1, 0] + n("a", 6, 0), "a root's position 0 is outside 1…2147483647"),
            ([1, 7, 1, 0xFF, 0xFF, 0xFF, 0xFF, 0x07] + n("a", 0, 1) + n("b", 6, 0), "is past 2147483647"),
            ([1, 7, 1, 1, 2, 1, 0x61, 6, 0], "unknown revision id kind 2"),
            ([1, 7, 1, 1, 0, 1, 2, 3], "ends inside an MD5 revision id"),
            ([1, 7, 1, 1] + n("a b", 6, 0), "the character ' '"),
            ([1, 7, 1, 1, 1, 0, 6, 0], "is empty"),
            ([1, 7, 1, 1] + n(String(repeating: "a", count: 65), 6, 0), "65 bytes long"),
            ([1, 7, 1, 1] + n(String(repeating: "a", count: 32), 6, 0), "has 32 characters"),
            ([1, 7, 1, 1] + n("a", 0x0E, 0), "unknown flags 0x0e"),
            ([1, 7, 1, 1] + n("a", 2, 2) + n("b", 2, 0) + n("c", 6, 0), "1-a has a body but is not a leaf"),
            ([1, 7, 1, 1] + n("a", 4, 2) + n("b", 2, 0) + n("c", 6, 0), "1-a is marked the winner but is not a leaf"),
            ([1, 7, 1, 1] + n("a", 0, 2) + n("c", 6, 0) + n("b", 2, 0), "not in increasing order (c before b)"),
            ([1, 7, 1, 1] + n("a", 0, 2) + n("b", 2, 0) + n("b", 6, 0), "revision 2-b occurs twice"),
            ([1, 7, 2, 1] + n("a", 0, 1) + n("b", 6, 0) + [2] + n("b", 2, 0), "revision 2-b occurs twice"),
            ([1, 7, 2, 1] + n("b", 6, 0) + [1] + n("a", 2, 0), "roots are not in increasing order (1-b before 1-a)"),
            (
                [1, 7, 1, 1] + n("a", 0, 2) + n("b", 2, 0) + n("c", 2, 0),
                "no leaf is marked the winner (it should be 2-c)"
            ),
            (
                [1, 7, 1, 1] + n("a", 0, 2) + n("b", 6, 0) + n("c", 2, 0),
                "2-b is marked the winner, but the winner is 2-c"
            ),
            ([1, 7, 1, 1] + n("a", 0, 2) + n("b", 6, 0) + n("c", 6, 0), "2 leaves are marked the winner (2-b, 2-c)"),
            ([1, 7, 0, 0], "1 bytes follow")
        ]
        for (bytes, problem) in cases {
            let error = expectError(.corruption) { try RevisionTreeCodec.decode(bytes) }
            #expect(
                error?.message.contains(problem) == true, "\(bytes): \(String(describing: error)) should say \(problem)"
            )
        }
    }

    /// A tree as deep as the largest revision limit, and a record claiming a chain far deeper,
    /// are handled without recursion.
    @Test func deepTreesNeedNoRecursion() throws {
        let depth = 20_000
        let ids = (0..<depth).map { RevisionID(kind: .opaque, bytes: Array("r\($0)".utf8)) }
        var tree = RevisionTree()
        tree.merge(try RevisionTree.Path(position: depth, history: ids.reversed(), leaf: .stored(deleted: false)))
        tree.merge(
            try RevisionTree.Path(
                position: depth + 1, history: [RevisionID(kind: .opaque, bytes: Array("x".utf8))] + ids.reversed(),
                leaf: .stored(deleted: false)))
        tree.dropInternalBodies()
        #expect(tree.count == depth + 1)
        let bytes = try RevisionTreeCodec.encode(tree, sequence: 1)
        #expect(try RevisionTreeCodec.decode(bytes).tree == tree)
        #expect(
            tree.history(
                of: DocumentRevision(position: depth + 1, id: RevisionID(kind: .opaque, bytes: Array("x".utf8))))?
                .count == depth + 1)
        tree.stem(limit: 10_000)
        #expect(tree.count == 10_000)
        #expect(tree.winner?.revision.description == "\(depth + 1)-x")
    }
}
