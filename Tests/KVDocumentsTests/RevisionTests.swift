import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// Revisions as the replication protocol writes them (`N-X`), their order, and the MD5 that
/// revision ids are made with.
@Suite struct RevisionTests {
    // MARK: - MD5

    /// RFC 1321 §A.5's test suite.
    @Test func md5MatchesTheRFCTestSuite() {
        let vectors: [(String, String)] = [
            ("", "d41d8cd98f00b204e9800998ecf8427e"),
            ("a", "0cc175b9c0f1b6a831c399e269772661"),
            ("abc", "900150983cd24fb0d6963f7d28e17f72"),
            ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
            ("abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"),
            ("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "d174ab98d277d9f5a5611c2c9f419d9f"),
            (
                "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
                "57edf4a22be3c955ac49da2e2107b67a"
            )
        ]
        for (input, digest) in vectors {
            #expect(MD5.hexDigest(Array(input.utf8)) == digest, "MD5(\"\(input)\")")
        }
    }

    /// Feeding the input in pieces gives the digest of the whole, and finalizing does not
    /// change the state.
    @Test func md5IncrementalUpdatesAgree() {
        var rng = SplitMix64(seed: 1321)
        for _ in 0..<200 {
            let bytes = (0..<Int.random(in: 0...300, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            var md5 = MD5()
            var i = 0
            while i < bytes.count {
                let n = Int.random(in: 0...70, using: &rng)
                md5.update(bytes[i..<min(bytes.count, i + n)])
                i += n
            }
            #expect(md5.finalize() == MD5.digest(bytes))
            #expect(md5.finalize() == MD5.digest(bytes))
            // A sequence without contiguous storage takes the byte-by-byte path.
            #expect(MD5.digest(bytes.lazy.map { $0 }) == MD5.digest(bytes))
            var mixed = MD5()
            mixed.update(bytes.prefix(7).lazy.map { $0 })
            mixed.update(bytes.dropFirst(7))
            #expect(mixed.finalize() == MD5.digest(bytes))
        }
        // Megabytes, in one piece and in odd pieces.
        let large = (0..<3_000_001).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) }
        var pieces = MD5()
        var i = 0
        while i < large.count {
            pieces.update(large[i..<min(large.count, i + 1_000_003)])
            i += 1_000_003
        }
        #expect(pieces.finalize() == MD5.digest(large))
    }

    /// 3,002 random inputs (every length around the 64-byte block and 56-byte padding
    /// boundaries, random lengths up to 5,000 bytes, one of a megabyte) against Python's `hashlib.md5`.
    @Test(.requires(.python)) func md5MatchesPythonHashlib() throws {
        var rng = SplitMix64(seed: 0x6d64_35)
        var inputs: [[UInt8]] = (0...200).map { n in (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) } }
        for _ in 0..<2800 {
            let n = Int.random(in: 0...(Bool.random(using: &rng) ? 130 : 5000), using: &rng)
            inputs.append((0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) })
        }
        inputs.append((0..<1_000_000).map { _ in UInt8.random(in: 0...255, using: &rng) })
        let script =
            "import sys, hashlib\nfor line in sys.stdin.read().split('\\n'):\n    if line != '-': print(hashlib.md5(bytes.fromhex(line[1:])).hexdigest())\n"
        let input = inputs.map { "x" + RevisionID.hex($0) }.joined(separator: "\n") + "\n-"
        let result = try runProcess(try referencePython(), ["-c", script], input: input)
        try #require(result.status == 0, "\(result.stderr)")
        let expected = result.stdout.split(separator: "\n").map(String.init)
        try #require(expected.count == inputs.count)
        for (bytes, digest) in zip(inputs, expected) {
            #expect(MD5.hexDigest(bytes) == digest, "input of \(bytes.count) bytes")
        }
    }

    // MARK: - Parsing and printing

    @Test func parsesMD5AndOpaqueRevisions() throws {
        let md5 = try DocumentRevision.parse("3-917fa2381192822767f010b95b45325b")
        #expect(md5.position == 3)
        #expect(md5.id.kind == .md5)
        #expect(md5.id.bytes.count == 16)
        #expect(md5.id.bytes.first == 0x91)
        #expect(md5.description == "3-917fa2381192822767f010b95b45325b")

        // Either case is accepted; the id is written back in lowercase (revid_to_str).
        let upper = try DocumentRevision.parse("3-917FA2381192822767F010B95B45325B")
        #expect(upper == md5)
        #expect(upper.description == "3-917fa2381192822767f010b95b45325b")

        // Anything else is opaque and printed as it came, '-' included (split at the first).
        for text in [
            "1-abc", "12-x-y", "2147483647-a", "1-" + String(repeating: "z", count: 64),
            "1-abcdef0123456789abcdef0123456789a", "1-abcdef0123456789abcdef012345678",
            "5-%20", "1-~!$&'()*+,;=:@[]"
        ] {
            let revision = try DocumentRevision.parse(text)
            #expect(revision.id.kind == .opaque, "\(text)")
            #expect(revision.description == text)
            #expect(DocumentRevision(text) == revision)
        }
        #expect(try DocumentRevision.parse("12-x-y").id.description == "x-y")
    }

    /// Every bad input is refused with CouchDB's reason text and what is wrong.
    @Test func refusesBadRevisionsWithClearErrors() {
        let cases: [(String, String)] = [
            ("", "no '-'"),
            ("abc", "no '-'"),
            ("-abc", "position before '-' is empty"),
            ("x-abc", "not a decimal number"),
            ("+1-abc", "not a decimal number"),
            (" 1-abc", "not a decimal number"),
            ("1.0-abc", "not a decimal number"),
            ("01-abc", "leading zero"),
            ("0-abc", "position 0 is only for _local"),
            ("0-1", "position 0 is only for _local"),
            ("2147483648-abc", "larger than 2147483647"),
            ("99999999999999999999-abc", "larger than 2147483647"),
            ("1-", "id after '-' is empty"),
            ("1-" + String(repeating: "z", count: 65), "65 bytes long"),
            ("1-abc def", "' '"),
            ("1-a/b", "'/'"),
            ("1-a?b", "'?'"),
            ("1-a#b", "'#'"),
            ("1-a\u{7F}", "0x7f"),
            ("1-a\nb", "0x0a"),
            ("1-\u{0}", "0x00"),
            ("1-é", "non-ASCII"),
            ("1-917fa2381192822767f010b95b45325g", "must be hexadecimal"),
            ("1-917fa2381192822767f010b95b45325-", "must be hexadecimal")
        ]
        for (text, problem) in cases {
            let error = expectError(.invalidArgument) { try DocumentRevision.parse(text) }
            #expect(error?.message.hasPrefix("Invalid rev format: ") == true, "\(text): \(String(describing: error))")
            #expect(
                error?.message.contains(problem) == true, "\(text): \(String(describing: error)) should say \(problem)")
            #expect(DocumentRevision(text) == nil)
        }
    }

    // MARK: - Order

    /// Erlang term order on `{Pos, RevIdBinary}`: position, then the bytes (a prefix first),
    /// whatever the kind; the MD5 kind breaks the one tie.
    @Test func ordersAsErlangOrdersPositionAndIdBinary() throws {
        let sorted = try [
            "1-b", "1-ba", "1-c", "2-0000000000000000000000000000000a", "2-A", "2-a", "2-aa",
            "2-ffffffffffffffffffffffffffffffff", "10-a"
        ].map(DocumentRevision.parse)
        // 16 bytes 00…0a sort before "A" (0x41); "A" before "a"; "a" before "aa"; 0xff… last.
        for (i, a) in sorted.enumerated() {
            for (j, b) in sorted.enumerated() {
                #expect((a < b) == (i < j), "\(a) < \(b)")
                #expect((a == b) == (i == j))
            }
        }
        // The same 16 bytes as an MD5 id and as an opaque id: different, MD5 first.
        let opaque = try DocumentRevision.parse("1-AAAAAAAAAAAAAAAA")
        let md5 = try DocumentRevision.parse("1-41414141414141414141414141414141")
        #expect(opaque.id.bytes == md5.id.bytes)
        #expect(opaque != md5)
        #expect(md5 < opaque)
        #expect(!(opaque < md5))
    }

    /// Lowercase 32-hex ids order as PouchDB's string comparison orders them.
    @Test func md5OrderAgreesWithStringOrder() throws {
        var rng = SplitMix64(seed: 77)
        for _ in 0..<500 {
            let a =
                "\(Int.random(in: 1...3, using: &rng))-"
                + RevisionID.hex((0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) })
            let b =
                "\(Int.random(in: 1...3, using: &rng))-"
                + RevisionID.hex((0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) })
            let (x, y) = (try DocumentRevision.parse(a), try DocumentRevision.parse(b))
            let stringOrder = x.position != y.position ? x.position < y.position : a < b
            #expect((x < y) == stringOrder)
        }
    }

    // MARK: - New revision ids

    /// A local edit's id (design §1.3): deterministic, lowercase 32-hex, and different when
    /// the parent, the deletion flag or the body differ. The first value pins the byte layout.
    @Test func newRevisionIDsAreDeterministicAndDistinct() throws {
        let body = Array("{\"a\":1}".utf8)
        let first = RevisionTree.newRevisionID(parent: nil, deleted: false, canonicalBody: body)
        #expect(first.kind == .md5)
        var layout = Array("kvdocs-rev-2".utf8) + [0, 0, 0, 0, 0]
        layout += body
        #expect(first.bytes == MD5.digest(layout))
        #expect(first == RevisionTree.newRevisionID(parent: nil, deleted: false, canonicalBody: body))

        let parent = try DocumentRevision.parse("1-\(first)")
        var layout2 = Array("kvdocs-rev-2".utf8) + [0, 1, 1, 0, 16] + first.bytes
        layout2 += body
        #expect(
            RevisionTree.newRevisionID(parent: parent, deleted: true, canonicalBody: body).bytes == MD5.digest(layout2))

        let variants = [
            RevisionTree.newRevisionID(parent: nil, deleted: false, canonicalBody: body),
            RevisionTree.newRevisionID(parent: nil, deleted: true, canonicalBody: body),
            RevisionTree.newRevisionID(parent: parent, deleted: false, canonicalBody: body),
            RevisionTree.newRevisionID(
                parent: try DocumentRevision.parse("2-\(first)"), deleted: false, canonicalBody: body),
            RevisionTree.newRevisionID(
                parent: try DocumentRevision.parse("1-abc"), deleted: false, canonicalBody: body),
            RevisionTree.newRevisionID(parent: nil, deleted: false, canonicalBody: Array("{\"a\":2}".utf8)),
            // The same bytes as an MD5 id and as an opaque one; a parent id's bytes moved
            // into the body.
            RevisionTree.newRevisionID(
                parent: try DocumentRevision.parse(
                    "1-" + String(decoding: Array(repeating: UInt8(ascii: "a"), count: 16), as: UTF8.self)),
                deleted: false, canonicalBody: body),
            RevisionTree.newRevisionID(
                parent: try DocumentRevision.parse("1-" + String(repeating: "61", count: 16)), deleted: false,
                canonicalBody: body),
            RevisionTree.newRevisionID(
                parent: try DocumentRevision.parse("1-ab"), deleted: false, canonicalBody: Array("c".utf8) + body)
        ]
        #expect(Set(variants).count == variants.count)
        #expect(try DocumentRevision.parse("2-\(variants[2])").id == variants[2])
    }
}
