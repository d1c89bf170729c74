import KVSupport

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
            case .field(let name):
                hasher.combine(0)
                JSONValue.hashCodePoints(name, into: &hasher)
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
                throw KVDocsError(
                    .schema, "invalid field path \"\(text)\": each segment is a field name, optionally followed by []")
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
        var values: [JSONValue] = []
        forEachValue(in: document) { values.append($0) }
        return values
    }

    /// Calls `body` with each value at the path, in the order of ``values(in:)``, without
    /// collecting them.
    func forEachValue(in document: JSONValue, _ body: (JSONValue) throws -> Void) rethrows {
        // A top-level field (most indexed paths): one member lookup, no recursion.
        if segments.count == 1, case .field(let name) = segments[0] {
            guard case .object(let o) = document, let v = o[name] else { return }
            return try body(v)
        }
        try forEachValue(in: document, from: segments[...], body)
    }

    private func forEachValue(in value: JSONValue, from rest: ArraySlice<Segment>, _ body: (JSONValue) throws -> Void)
        rethrows
    {
        guard let segment = rest.first else { return try body(value) }
        switch segment {
        case .field(let name):
            if case .object(let o) = value, let v = o[name] { try forEachValue(in: v, from: rest.dropFirst(), body) }
        case .each:
            if case .array(let a) = value {
                for element in a { try forEachValue(in: element, from: rest.dropFirst(), body) }
            }
        }
    }
}

// MARK: - Projection

extension FieldPath {
    /// The names of the path up to its first `[]`: the whole field that holds its values.
    var wholeField: [String] {
        var names: [String] = []
        for segment in segments {
            guard case .field(let name) = segment else { break }
            names.append(name)
        }
        return names
    }

    /// Whether the whole field `path` is inside one of `fields` (each given as whole-field
    /// names): a field covers itself and everything under it.
    static func covers(_ fields: [[String]], _ path: [String]) -> Bool {
        fields.contains { field in
            field.count <= path.count && zip(field, path).allSatisfy { $0.hasSameCodePoints(as: $1) }
        }
    }

    /// The object holding only the values of `document` at `fields` (whole-field names), at
    /// the same places; a field missing from the document is missing from the result.
    package static func project(_ document: JSONValue, onto fields: [[String]]) -> JSONValue {
        var result = JSONObject()
        for field in fields {
            guard let first = field.first else { continue }
            var value: JSONValue? = document
            for name in field { value = value?[name] }
            guard let value else { continue }
            result[first] = insert(value, at: field.dropFirst(), into: result[first])
        }
        return .object(result)
    }

    /// ``project(_:onto:)`` of a document stored in the binary form, reading only the
    /// members on the fields' paths (each found by a binary search of its object's keys):
    /// no document is built.
    /// - Throws: `BinaryJSON.Damage` when the bytes read are damaged.
    package static func project(binary bytes: [UInt8], onto fields: [[String]]) throws -> JSONValue {
        try bytes.withUnsafeBytes { try project(binary: $0, onto: fields) }
    }

    /// ``project(binary:onto:)`` of bytes read in place.
    /// - Throws: `BinaryJSON.Damage` when the bytes read are damaged.
    package static func project(binary bytes: UnsafeRawBufferPointer, onto fields: [[String]]) throws -> JSONValue {
        try BinaryJSONDecoder.Storage.borrowing(bytes.assumingMemoryBound(to: UInt8.self)) {
            try project(binary: $0, onto: fields)
        }
    }

    private static func project(binary storage: BinaryJSONDecoder.Storage, onto fields: [[String]]) throws -> JSONValue
    {
        var result = JSONObject()
        for field in fields {
            guard let first = field.first else { continue }
            var position: Int? = 1  // the document, after the marker
            for name in field {
                guard let at = position, let object = try BinaryJSONDecoder.ObjectHeader(storage, at: at) else {
                    position = nil
                    break
                }
                position = try object.find(name, in: storage)
            }
            guard let position else { continue }
            result[first] = insert(try storage.value(at: position), at: field.dropFirst(), into: result[first])
        }
        return .object(result)
    }

    /// `existing` with `value` placed at `path` (objects made as needed; a value already
    /// taken whole is kept whole).
    private static func insert(_ value: JSONValue, at path: ArraySlice<String>, into existing: JSONValue?) -> JSONValue
    {
        guard let name = path.first else { return value }
        if let existing {
            guard case .object(var o) = existing else { return existing }
            o[name] = insert(value, at: path.dropFirst(), into: o[name])
            return .object(o)
        }
        var o = JSONObject()
        o[name] = insert(value, at: path.dropFirst(), into: nil)
        return .object(o)
    }
}
