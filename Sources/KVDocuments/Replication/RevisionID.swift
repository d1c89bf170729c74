import KVSupport

/// The id part `X` of a revision `N-X`: either a 16-byte MD5 digest, written as 32
/// hexadecimal digits, or an opaque string of bytes.
///
/// CouchDB's `couch_doc:parse_revid/2` turns a 32-character id into its 16 bytes
/// (`binary:decode_hex`, either case; a 32-character id that is not hexadecimal is an
/// error) and keeps any other id as its raw bytes; `revid_to_str/2` writes 16 bytes back as
/// lowercase hexadecimal. KVDocs does the same, and keeps which of the two forms an id came
/// in as its ``Kind``.
///
/// Invariants: an ``Kind/md5`` id has exactly 16 bytes; an ``Kind/opaque`` id has 1…64
/// bytes, all printable ASCII other than space, `/`, `?` and `#`, and is not 32 hexadecimal
/// digits (that would be an MD5 id).
///
/// Order: bytewise on ``bytes`` (a shorter prefix first), which is Erlang's term order on
/// CouchDB's revision id binaries; for the one case CouchDB cannot tell apart — an MD5 id and
/// a 16-character opaque id with the same bytes — the MD5 id comes first, so that the order
/// agrees with `==`.
public struct RevisionID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// How an id is written on the wire and stored.
    public enum Kind: UInt8, Sendable {
        /// 16 bytes, written as 32 lowercase hexadecimal digits.
        case md5 = 0
        /// The id's own bytes, written as they are.
        case opaque = 1
    }

    /// The most bytes an opaque id may have (a KVDocs limit; CouchDB has none).
    public static let maximumOpaqueLength = 64

    /// Which form the id has.
    public let kind: Kind
    /// The stored bytes: the 16 bytes of an MD5 id, or an opaque id's characters.
    public let bytes: [UInt8]

    /// An id of `kind` with `bytes`, unchecked: for bytes that KVDocs made or has validated.
    package init(kind: Kind, bytes: [UInt8]) {
        self.kind = kind
        self.bytes = bytes
    }

    /// An MD5 id: the digest of `digest` (16 bytes, as ``MD5`` makes them).
    package init(md5 digest: [UInt8]) {
        self.init(kind: .md5, bytes: digest)
    }

    /// Parses the id part of a revision as `couch_doc:parse_revid/2` does for a position
    /// other than 0, with KVDocs' limits.
    ///
    /// - Throws: ``KVDocsError/Kind/invalidArgument`` with a message starting
    ///   `Invalid rev format` (CouchDB's reason text) and saying what is wrong.
    public init(parsing text: Substring) throws {
        let utf8 = Array(text.utf8)
        if let problem = RevisionID.problem(with: utf8) {
            throw RevisionID.invalid(String(text), problem)
        }
        if utf8.count == 32 {
            guard let digest = RevisionID.decodeHex(utf8) else {
                throw RevisionID.invalid(String(text), "a 32-character revision id must be hexadecimal (an MD5 digest)")
            }
            self.init(kind: .md5, bytes: digest)
        } else {
            self.init(kind: .opaque, bytes: utf8)
        }
    }

    /// Why `utf8` cannot be an id's text, or `nil` when it can (before the 32-character rule).
    static func problem(with utf8: [UInt8]) -> String? {
        if utf8.isEmpty { return "the revision id after '-' is empty" }
        if utf8.count > maximumOpaqueLength {
            return "the revision id is \(utf8.count) bytes long; at most \(maximumOpaqueLength) are allowed"
        }
        for byte in utf8 where !isAllowed(byte) {
            return byte < 0x80
                ? "the revision id contains the character \(describe(byte)), which is not allowed"
                : "the revision id contains a non-ASCII byte; only printable ASCII is allowed"
        }
        return nil
    }

    /// Printable ASCII other than space, `/`, `?`, `#`.
    private static func isAllowed(_ byte: UInt8) -> Bool {
        byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "/") && byte != UInt8(ascii: "?")
            && byte != UInt8(ascii: "#")
    }

    private static func describe(_ byte: UInt8) -> String {
        byte >= 0x20 && byte < 0x7F ? "'\(Character(Unicode.Scalar(byte)))'" : "0x" + hex([byte])
    }

    static func invalid(_ text: String, _ problem: String) -> KVDocsError {
        let shown = text.count > 80 ? String(text.prefix(80)) + "…" : text
        return KVDocsError(.invalidArgument, "Invalid rev format: \(problem) (in \"\(shown)\")")
    }

    /// The 16 bytes that 32 hexadecimal digits (either case) stand for, or `nil`.
    package static func decodeHex(_ digits: [UInt8]) -> [UInt8]? {
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        var i = 0
        while i < digits.count {
            guard let high = hexValue(digits[i]), let low = hexValue(digits[i + 1]) else { return nil }
            out.append(high << 4 | low)
            i += 2
        }
        return out
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// `bytes` as lowercase hexadecimal digits (`couch_util:to_hex_bin`).
    package static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The wire form: 32 lowercase hexadecimal digits for an MD5 id (`revid_to_str/2`), the
    /// bytes themselves for an opaque one.
    public var description: String {
        switch kind {
        case .md5: RevisionID.hex(bytes)
        case .opaque: String(decoding: bytes, as: UTF8.self)
        }
    }

    /// Bytewise on ``bytes``, then MD5 before opaque (see the type's order).
    public static func < (a: RevisionID, b: RevisionID) -> Bool {
        if a.bytes != b.bytes { return a.bytes.lexicographicallyPrecedes(b.bytes) }
        return a.kind.rawValue < b.kind.rawValue
    }
}
