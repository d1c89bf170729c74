/// A path to a value inside a JSON document: `age`, `address.city`, `tags[]` (each
/// element of the array `tags`), `items[].sku`.
public struct FieldPath: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    enum Segment: Sendable, Hashable {
        case field(String)
        case each

        /// Field names compare by code points, as JSON object keys do.
        static func == (a: Segment, b: Segment) -> Bool {
            switch (a, b) {
            case (.field(let x), .field(let y)): x.hasSameCodePoints(as: y)
            case (.each, .each): true
            default: false
            }
        }

        func hash(into hasher: inout Hasher) {
            switch self {
            case .field(let name): hasher.combine(0); JSONValue.hashCodePoints(name, into: &hasher)
            case .each: hasher.combine(1)
            }
        }
    }

    let segments: [Segment]
    /// The path as written.
    public let description: String

    /// - Throws: `.schema` for an empty path, an empty segment or misplaced `[]`.
    public init(_ text: String) throws {
        guard !text.isEmpty else { throw KVDocsError(.schema, "a field path cannot be empty") }
        var segments: [Segment] = []
        for part in text.split(separator: ".", omittingEmptySubsequences: false) {
            var name = Substring(part)
            var each = 0
            while name.hasSuffix("[]") {
                name = name.dropLast(2)
                each += 1
            }
            guard !name.isEmpty, !name.contains("["), !name.contains("]") else {
                throw KVDocsError(.schema, "invalid field path \"\(text)\": each segment is a field name, optionally followed by []")
            }
            segments.append(.field(String(name)))
            segments += Array(repeating: .each, count: each)
        }
        self.segments = segments
        self.description = text
    }

    /// A path from a literal. REQUIRES: a valid path (an invalid literal is a programming error).
    public init(stringLiteral value: String) {
        do {
            try self.init(value)
        } catch {
            preconditionFailure("invalid field path literal \"\(value)\": \(error)")
        }
    }

    /// Whether the path fans out over array elements (`[]`).
    public var isMultiValued: Bool { segments.contains(.each) }

    /// The values at the path: none when a field is missing (or a `[]` meets a non-array),
    /// several when the path fans out over arrays.
    public func values(in document: JSONValue) -> [JSONValue] {
        var current = [document]
        for segment in segments {
            var next: [JSONValue] = []
            for value in current {
                switch segment {
                case .field(let name):
                    if case .object(let o) = value, let v = o[name] { next.append(v) }
                case .each:
                    if case .array(let a) = value { next += a }
                }
            }
            current = next
            if current.isEmpty { break }
        }
        return current
    }
}
