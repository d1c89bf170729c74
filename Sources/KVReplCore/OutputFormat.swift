import Foundation
import KVDocs

/// How kvrepl prints a command's results, like the sqlite3 shell's `.mode`: chosen with
/// `--format` or the `format` command. Without one, results print as they always have (and
/// `--json` keeps its contract: one compact JSON object per result line).
///
/// A command's results are its rows: the documents of `find`, the hits of `search` and
/// `near`, the entries of `scan`, one row for a command with one result. A row is the object
/// `--json` prints for it; the columns of `table` and `csv` are the rows' top-level fields,
/// in the order they first appear.
public enum OutputFormat: String, CaseIterable, Sendable {
    /// Aligned columns in a box, one row per result; long values are cut with "…".
    case table
    /// One `field = value` line per field, a blank line between results.
    case line
    /// Each result as pretty-printed JSON.
    case json
    /// Each result as one line of compact JSON.
    case jsonl
    /// RFC 4180 CSV: a header of field names, one record per result, CRLF line ends.
    case csv

    /// The widest a `table` cell is, in characters, before it is cut.
    public static let maximumCellWidth = 40

    /// The output for `rows`; `leading` names the columns that come first when present
    /// (the primary key of a collection's documents, say).
    public func render(_ rows: [JSONValue], leading: [String] = []) -> String {
        switch self {
        case .json: return rows.map { Display.prettyJSON($0) }.joined(separator: "\n")
        case .jsonl: return rows.map { $0.compactDescription }.joined(separator: "\n")
        case .table: return Self.table(rows, leading: leading)
        case .line: return Self.lines(rows, leading: leading)
        case .csv: return Self.csv(rows, leading: leading)
        }
    }

    /// The columns of `rows`: the `leading` ones some row has, then every other field in
    /// order of first appearance (`value` for a row that is not an object).
    static func columns(_ rows: [JSONValue], leading: [String] = []) -> [String] {
        var names: [String] = leading.filter { name in
            rows.contains { row in if case .object(let fields) = row { return fields[name] != nil } else { return false } }
        }
        for row in rows {
            guard case .object(let fields) = row else {
                if !names.contains(where: { $0.sameCodePoints("value") }) { names.append("value") }
                continue
            }
            for (name, _) in fields where !names.contains(where: { $0.sameCodePoints(name) }) { names.append(name) }
        }
        return names
    }

    /// A row's field as text: strings as they are, `null` and missing fields empty, other
    /// values as compact JSON.
    static func cell(_ row: JSONValue, _ column: String) -> String {
        let value: JSONValue?
        if case .object(let fields) = row {
            value = fields[column]
        } else {
            value = column == "value" ? row : nil
        }
        switch value {
        case nil, .null?: return ""
        case .string(let s)?: return s
        case let other?: return other.compactDescription
        }
    }

    /// One line: control characters (a newline in a value) shown as escapes, and cut to
    /// `maximumCellWidth` characters.
    static func tableCell(_ text: String) -> String {
        var shown = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": shown += "\\n"
            case "\r": shown += "\\r"
            case "\t": shown += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F { shown += "\\u{\(String(scalar.value, radix: 16))}" } else { shown.unicodeScalars.append(scalar) }
            }
        }
        guard shown.count > maximumCellWidth else { return shown }
        return String(shown.prefix(maximumCellWidth - 1)) + "…"
    }

    static func table(_ rows: [JSONValue], leading: [String]) -> String {
        let columns = columns(rows, leading: leading)
        guard !columns.isEmpty else { return "" }
        let cells = rows.map { row in columns.map { tableCell(cell(row, $0)) } }
        let widths = columns.indices.map { c in max(tableCell(columns[c]).count, cells.map { $0[c].count }.max() ?? 0) }
        func pad(_ s: String, _ width: Int) -> String { s + String(repeating: " ", count: width - s.count) }
        let rule = "+" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "+") + "+"
        func line(_ values: [String]) -> String {
            "| " + zip(values, widths).map { pad($0, $1) }.joined(separator: " | ") + " |"
        }
        var out = [rule, line(columns.map(tableCell)), rule]
        out += cells.map(line)
        out.append(rule)
        return out.joined(separator: "\n")
    }

    static func lines(_ rows: [JSONValue], leading: [String]) -> String {
        rows.map { row in
            let columns = columns([row], leading: leading)
            let width = columns.map(\.count).max() ?? 0
            return columns.map { String(repeating: " ", count: width - $0.count) + $0 + " = " + cell(row, $0) }.joined(separator: "\n")
        }.joined(separator: "\n\n")
    }

    static func csv(_ rows: [JSONValue], leading: [String]) -> String {
        let columns = columns(rows, leading: leading)
        guard !columns.isEmpty else { return "" }
        func field(_ s: String) -> String {
            guard s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }) else { return s }
            return "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }
        var records = [columns.map(field).joined(separator: ",")]
        records += rows.map { row in columns.map { field(cell(row, $0)) }.joined(separator: ",") }
        return records.joined(separator: "\r\n") + "\r\n"
    }
}

extension String {
    /// Equal by code points (Swift's `==` compares by canonical equivalence, which would
    /// merge two fields whose names differ only in Unicode normalisation).
    func sameCodePoints(_ other: String) -> Bool { utf8.elementsEqual(other.utf8) }
}
