import Foundation

/// How a `Date` in a `Codable` value is written as JSON, and read back.
///
/// A document store keeps one strategy for all its typed documents, recorded in its
/// catalog (see ``DocumentStore/dateStrategy``), so that every query compares dates with
/// the numbers or text the strategy writes:
///
/// <!-- doc-code: preamble=examples -->
/// ```swift
/// struct Run: Codable { var id: Int; var at: Date }
/// // with the default, .secondsSince1970, `at` is stored as Unix seconds:
/// let recent = try runs.find(DocumentQuery().where("at", .greater(1_700_000_000)))
/// ```
///
/// Every strategy reads back exactly the `Date` it wrote, except ``iso8601``, which keeps
/// whole seconds.
public enum DateStrategy: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Seconds since 1970-01-01 00:00 UTC (Unix time) as a JSON number: an integer for a
    /// whole second, else a decimal. The default of a new store.
    case secondsSince1970
    /// Milliseconds since 1970-01-01 00:00 UTC as a JSON number (JavaScript's `Date.now()`).
    case millisecondsSince1970
    /// ISO 8601 text in UTC to the second, `2024-05-01T12:30:00Z`, as `JSONEncoder`'s
    /// `.iso8601` writes it: text order is time order. Fractions of a second are dropped
    /// when written; text with a fraction (`…00.250Z`) or another offset is read.
    case iso8601
    /// Seconds since 2001-01-01 00:00 UTC as a JSON number: `JSONEncoder`'s default
    /// (`deferredToDate`), and what KVDocs wrote before stores recorded a strategy. Stores
    /// that hold documents but no recorded strategy are read with it.
    case secondsSince2001

    /// The strategy of a new store and of ``JSONValue/init(encoding:dates:)``:
    /// ``secondsSince1970``.
    public static let `default` = DateStrategy.secondsSince1970

    /// The strategy's name, as the catalog records it (its raw value).
    public var description: String { rawValue }

    /// The JSON of `date` under this strategy.
    func json(_ date: Date, path: @autoclosure () -> [any CodingKey]) throws -> JSONValue {
        switch self {
        case .secondsSince1970: return try JSONValueEncoder.number(date.timeIntervalSince1970, path: path())
        case .millisecondsSince1970: return try JSONValueEncoder.number(date.timeIntervalSince1970 * 1000, path: path())
        case .secondsSince2001: return try JSONValueEncoder.number(date.timeIntervalSinceReferenceDate, path: path())
        case .iso8601:
            return .string(
                Date(timeIntervalSinceReferenceDate: date.timeIntervalSinceReferenceDate.rounded(.down)).formatted(
                    Self.iso8601Style))
        }
    }

    /// The date `value` holds under this strategy.
    /// - Throws: `DecodingError` for a value of another type or text that is not ISO 8601.
    func date(_ value: JSONValue, path: @autoclosure () -> [any CodingKey]) throws -> Date {
        switch self {
        case .secondsSince1970: return Date(timeIntervalSince1970: try JSONValueDecoder.double(value, path()))
        case .millisecondsSince1970:
            return Date(timeIntervalSince1970: try JSONValueDecoder.double(value, path()) / 1000)
        case .secondsSince2001: return Date(timeIntervalSinceReferenceDate: try JSONValueDecoder.double(value, path()))
        case .iso8601:
            let text = try JSONValueDecoder.string(value, path())
            if let date = try? Date(text, strategy: Self.iso8601Style) { return date }
            if let date = try? Date(text, strategy: Self.fractionalStyle) { return date }
            throw DecodingError.dataCorrupted(
                .init(codingPath: path(), debugDescription: "expected an ISO 8601 date, found \"\(text.prefix(40))\""))
        }
    }

    private static let iso8601Style = Date.ISO8601FormatStyle(timeZone: TimeZone(secondsFromGMT: 0) ?? .gmt)
    private static let fractionalStyle = Date.ISO8601FormatStyle(
        includingFractionalSeconds: true, timeZone: TimeZone(secondsFromGMT: 0) ?? .gmt)
}
