import Foundation

extension JSONValue {
    /// The JSON of an `Encodable` value, built directly (no JSON text in between).
    ///
    /// The result is the value that parsing `JSONEncoder`'s output would give with its
    /// default strategies, except for dates, written as `dates` says (``DateStrategy``):
    /// integers stay integers, a `Double` with an integral value up to 2^53 becomes an
    /// integer, `Data` is base64 text, `URL` its absolute string, `UUID` its
    /// `uuidString`. Object keys keep their code points; of duplicate keys the last wins.
    ///
    /// <!-- doc-code: preamble=examples -->
    /// ```swift
    /// struct Athlete: Codable { var id: Int; var name: String; var born: Date }
    /// let json = try JSONValue(encoding: Athlete(id: 7, name: "Ada", born: .now))
    /// let back = try json.decode(Athlete.self)
    /// ```
    ///
    /// A ``DocumentStore`` writes typed documents with its own strategy,
    /// ``DocumentStore/dateStrategy``: to write a converted value through an untyped API,
    /// pass `dates: store.dateStrategy` (or use the typed API, which does).
    ///
    /// - Parameters:
    ///   - value: the value to convert.
    ///   - dates: how to write `Date`s; ``DateStrategy/default`` (Unix seconds) unless given.
    /// - Throws: `.invalidArgument` when the value cannot be encoded (a non-finite number),
    ///   naming its coding path.
    public init<T: Encodable>(encoding value: T, dates: DateStrategy = .default) throws {
        do {
            self = try JSONValueEncoder.encode(value, dates: dates)
        } catch let error as EncodingError {
            throw KVDocsError(.invalidArgument, "cannot encode \(T.self) as JSON: \(error.summary)")
        } catch {
            throw KVDocsError(.invalidArgument, "cannot encode \(T.self) as JSON: \(error)")
        }
    }

    /// This value decoded as a `T`, read directly (no JSON text in between).
    ///
    /// Accepts what `JSONDecoder` accepts for the same JSON with its default strategies,
    /// except for dates, read as `dates` says: an integer type takes any number with an
    /// integral value in its range (`1.0`, `1e2`), a floating-point type any number in its
    /// range. Object keys are matched by exact code points.
    ///
    /// <!-- doc-code: preamble=examples -->
    /// ```swift
    /// let hits = try stations.near(here, within: 1500)
    /// let nearest = try hits.first?.document.decode(Station.self, dates: store.dateStrategy)
    /// ```
    ///
    /// - Parameters:
    ///   - type: the type to decode.
    ///   - dates: how `Date`s were written; ``DateStrategy/default`` unless given.
    /// - Throws: `.decoding`, naming the coding path and what was expected and found.
    public func decode<T: Decodable>(_ type: T.Type = T.self, dates: DateStrategy = .default) throws -> T {
        do {
            return try JSONValueDecoder.decode(T.self, from: self, dates: dates)
        } catch let error as DecodingError {
            throw KVDocsError(.decoding, "the JSON does not decode as \(T.self): \(error.summary)")
        } catch {
            throw KVDocsError(.decoding, "the JSON does not decode as \(T.self): \(error)")
        }
    }
}

extension DecodingError {
    /// What failed and where, for messages: `at address.zip: expected Int, found a string ("x")`.
    package var summary: String {
        let context: Context
        switch self {
        case .typeMismatch(_, let c), .valueNotFound(_, let c), .keyNotFound(_, let c), .dataCorrupted(let c):
            context = c
        @unknown default: return "\(self)"
        }
        return "at \(Self.path(context.codingPath)): \(context.debugDescription)"
    }

    static func path(_ keys: [any CodingKey]) -> String {
        keys.isEmpty
            ? "the top level"
            : keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
                .replacingOccurrences(of: ".[", with: "[")
    }
}

extension EncodingError {
    /// What failed and where, for messages.
    var summary: String {
        switch self {
        case .invalidValue(_, let c): return "at \(DecodingError.path(c.codingPath)): \(c.debugDescription)"
        @unknown default: return "\(self)"
        }
    }
}
