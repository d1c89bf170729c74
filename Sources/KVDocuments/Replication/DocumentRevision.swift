/// A revision of a replicated document: `N-X` on the wire, where `N` is the revision's
/// position (its depth in the document's revision tree, 1 for a first edit) and `X` its
/// ``RevisionID``.
///
/// Parsing follows CouchDB's `couch_doc:parse_rev/1` — split at the first `-`, a decimal
/// position, then `parse_revid/2` for the rest — with KVDocs' limits: the position is
/// 1…2147483647 written without sign or leading zeros (position 0 is only for `_local`
/// documents, which have no revision tree), and the id is at most 64 bytes of printable ASCII
/// without space, `/`, `?` or `#`. Printing is `rev_to_str/1`: 32-hex ids come back in
/// lowercase, so `"1-ABC…"` prints as `"1-abc…"`.
///
/// Invariants: `1 <= position <= 2147483647`; ``id`` satisfies ``RevisionID``'s invariants.
///
/// Order: Erlang's term order on CouchDB's `{Pos, RevIdBinary}`: by position, then by id
/// (``RevisionID``'s order). This is the order of siblings in a tree and the tie-break of
/// the winning revision.
public struct DocumentRevision: Hashable, Comparable, Sendable, LosslessStringConvertible {
    /// The largest position: CouchDB stores positions as integers without a bound; KVDocs
    /// bounds them to what every peer (PouchDB in JavaScript, too) handles exactly.
    public static let maximumPosition = Int(Int32.max)

    /// The revision's depth in its tree, counted from 1 at the document's first edit.
    public let position: Int
    /// The revision's id.
    public let id: RevisionID

    /// The revision at `position` with `id`, unchecked: for positions that KVDocs made or has
    /// validated.
    package init(position: Int, id: RevisionID) {
        self.position = position
        self.id = id
    }

    /// Parses `N-X`, or returns `nil` when `text` is not a valid revision
    /// (``parse(_:)`` says why).
    public init?(_ text: String) {
        guard let revision = try? DocumentRevision.parse(text) else { return nil }
        self = revision
    }

    /// Parses `N-X` as CouchDB's `couch_doc:parse_rev/1` does, with KVDocs' limits.
    ///
    /// - Throws: ``KVDocsError/Kind/invalidArgument`` with a message starting
    ///   `Invalid rev format` (CouchDB's reason text) and saying what is wrong.
    public static func parse(_ text: String) throws -> DocumentRevision {
        guard let dash = text.utf8.firstIndex(of: UInt8(ascii: "-")) else {
            throw RevisionID.invalid(text, "there is no '-' between the position and the revision id")
        }
        let digits = text.utf8[..<dash]
        let position = try parsePosition(Array(digits), text: text)
        let after = text.utf8.index(after: dash)
        let id = try RevisionID(parsing: Substring(text[after...]))
        return DocumentRevision(position: position, id: id)
    }

    /// The position written as `digits`: decimal, no sign, no leading zero, 1…``maximumPosition``.
    private static func parsePosition(_ digits: [UInt8], text: String) throws -> Int {
        guard !digits.isEmpty else { throw RevisionID.invalid(text, "the position before '-' is empty") }
        guard digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            throw RevisionID.invalid(text, "the position before '-' is not a decimal number")
        }
        guard digits.count == 1 || digits[0] != UInt8(ascii: "0") else {
            throw RevisionID.invalid(text, "the position has a leading zero")
        }
        guard digits.count <= 10 else {
            throw RevisionID.invalid(text, "the position is larger than \(maximumPosition)")
        }
        let value = digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        guard value != 0 else {
            throw RevisionID.invalid(text, "position 0 is only for _local documents")
        }
        guard value <= maximumPosition else {
            throw RevisionID.invalid(text, "the position is larger than \(maximumPosition)")
        }
        return value
    }

    /// `N-X`, as CouchDB's `couch_doc:rev_to_str/1` writes it.
    public var description: String { "\(position)-\(id)" }

    /// By position, then by id.
    public static func < (a: DocumentRevision, b: DocumentRevision) -> Bool {
        a.position != b.position ? a.position < b.position : a.id < b.id
    }
}
