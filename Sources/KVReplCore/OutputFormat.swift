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
///
/// Stored data never reaches the terminal raw: every format escapes its control
/// characters (``ShellDisplay/escaped(_:keeping:)``, ``ShellDisplay/jsonSafe(_:)``), and `csv` puts a
/// `'` before a text cell that a spreadsheet would read as a formula.
public enum OutputFormat: String, CaseIterable, Sendable {
    /// Aligned columns in a box, one row per result; long values are cut with "…".
    case table
    /// One `field = value` line per field, a blank line between results.
    case line
    /// Each result as pretty-printed JSON.
    case json
    /// Each result as one line of compact JSON.
    case jsonl
    /// RFC 4180 CSV: a header of field names, one record per result, CRLF line ends. A
    /// text cell starting with `=`, `+`, `-`, `@`, a tab or a carriage return gets a `'`
    /// in front (OWASP's advice against formula injection); JSON numbers (`-5`) do not.
    case csv

    /// The widest a `table` cell is, in characters, before it is cut.
    public static let maximumCellWidth = 40

    /// The output for `rows`; `leading` names the columns that come first when present
    /// (the primary key of a collection's documents, say).
    public func render(_ rows: [JSONValue], leading: [String] = []) -> String {
        var layout = Layout(leading: leading, widths: self == .table)
        if needsLayout {
            for row in rows { layout.add(row) }
            layout = layout.frozen()
            guard !layout.columns.isEmpty else { return "" }
        }
        var pieces: [String] = []
        if let header = header(layout) { pieces.append(header) }
        pieces += rows.enumerated().map { record($1, first: $0 == 0, layout) }
        if let footer = footer(layout) { pieces.append(footer) }
        guard !pieces.isEmpty else { return "" }
        return self == .csv ? pieces.joined(separator: "\r\n") + "\r\n" : pieces.joined(separator: "\n")
    }

    // MARK: - Streaming

    /// Whether the output begins with a header that needs every row's columns (`table`
    /// also needs their widths): a streamed result set is then read twice, once for its
    /// ``Layout`` and once to print it. The other formats print each row as it comes.
    public var needsLayout: Bool { self == .table || self == .csv }

    /// What comes before the rows (`table`'s rules and column names, `csv`'s header
    /// record), or `nil`: also `nil` when there are no columns, as for no rows.
    public func header(_ layout: Layout) -> String? {
        guard needsLayout else { return nil }
        let columns = layout.columns
        guard !columns.isEmpty else { return nil }
        if self == .csv { return columns.map { Self.csvField($0, guarded: true) }.joined(separator: ",") }
        return [Self.rule(layout), Self.tableLine(columns.map(Self.tableCell), layout), Self.rule(layout)].joined(
            separator: "\n")
    }

    /// One row, without its line end (`csv`'s records end with CRLF: a streamed record is
    /// written with its CR, before the LF every output line gets). `first` is whether it is
    /// the first row (`line` puts a blank line before the others).
    public func record(_ row: JSONValue, first: Bool, _ layout: Layout) -> String {
        switch self {
        case .json: return ShellDisplay.prettyJSON(row)
        case .jsonl: return ShellDisplay.compactJSON(row)
        case .line: return (first ? "" : "\n") + Self.lines(row, leading: layout.leading)
        case .table: return Self.tableLine(layout.columns.map { Self.tableCell(Self.cell(row, $0)) }, layout)
        case .csv:
            return layout.columns.map { column in
                Self.csvField(Self.cell(row, column), guarded: !Self.isNumber(Self.value(row, column)))
            }.joined(separator: ",")
        }
    }

    /// What comes after the rows (`table`'s closing rule), or `nil`.
    public func footer(_ layout: Layout) -> String? {
        guard self == .table, !layout.columns.isEmpty else { return nil }
        return Self.rule(layout)
    }

    /// The columns of a result set, gathered one row at a time: the `leading` ones some row
    /// has, then every other field in order of first appearance (`value` for a row that is
    /// not an object); for `table`, each column's width.
    public struct Layout {
        /// The columns that come first when a row has them.
        public let leading: [String]
        /// The columns in order of first appearance, and the widest `table` cell of each.
        private var seen: [(name: String, width: Int)] = []
        private let measuring: Bool
        /// ``columns`` and ``widths`` once ``frozen()`` (every row added).
        private var cache: (columns: [String], widths: [Int])?

        /// An empty layout; `widths` measures the `table` cells of every row added.
        public init(leading: [String], widths: Bool) {
            self.leading = leading
            self.measuring = widths
        }

        /// The layout with its columns and widths worked out once, for printing every row.
        public func frozen() -> Layout {
            var copy = self
            copy.cache = (columns, widths)
            return copy
        }

        /// Adds the fields of `row`.
        public mutating func add(_ row: JSONValue) {
            cache = nil
            guard case .object(let fields) = row else {
                note("value", row)
                return
            }
            for (name, _) in fields { note(name, row) }
        }

        private mutating func note(_ name: String, _ row: JSONValue) {
            let width = measuring ? OutputFormat.tableCell(OutputFormat.cell(row, name)).count : 0
            if let i = seen.firstIndex(where: { $0.name.sameCodePoints(name) }) {
                seen[i].width = max(seen[i].width, width)
            } else {
                seen.append((name, max(width, measuring ? OutputFormat.tableCell(name).count : 0)))
            }
        }

        /// The columns, in order.
        public var columns: [String] {
            if let cache { return cache.columns }
            let lead = leading.filter { name in seen.contains { $0.name.sameCodePoints(name) } }
            return lead + seen.map(\.name).filter { name in !lead.contains { $0.sameCodePoints(name) } }
        }

        /// The widths of ``columns``' `table` cells.
        var widths: [Int] {
            if let cache { return cache.widths }
            return columns.map { name in seen.first { $0.name.sameCodePoints(name) }?.width ?? 0 }
        }
    }

    // MARK: - Cells

    /// The columns of `rows` (see ``Layout``).
    static func columns(_ rows: [JSONValue], leading: [String] = []) -> [String] {
        var layout = Layout(leading: leading, widths: false)
        for row in rows { layout.add(row) }
        return layout.columns
    }

    /// A row's field: the object's field, or the row itself for `value` when it is not an object.
    static func value(_ row: JSONValue, _ column: String) -> JSONValue? {
        if case .object(let fields) = row { return fields[column] }
        return column == "value" ? row : nil
    }

    /// A row's field as text: strings as they are, `null` and missing fields empty, other
    /// values as compact JSON. (Not yet escaped: each format escapes its own way.)
    static func cell(_ row: JSONValue, _ column: String) -> String {
        switch value(row, column) {
        case nil, .null?: return ""
        case .string(let s)?: return s
        case let other?: return other.compactDescription
        }
    }

    static func isNumber(_ value: JSONValue?) -> Bool {
        switch value {
        case .int?, .uint?, .double?: return true
        default: return false
        }
    }

    /// One line: control characters (a newline in a value) shown as escapes
    /// (``ShellDisplay/escaped(_:keeping:)``), and cut to `maximumCellWidth` characters.
    static func tableCell(_ text: String) -> String {
        let shown = ShellDisplay.escaped(text)
        guard shown.count > maximumCellWidth else { return shown }
        return String(shown.prefix(maximumCellWidth - 1)) + "…"
    }

    static func rule(_ layout: Layout) -> String {
        "+" + layout.widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "+") + "+"
    }

    static func tableLine(_ values: [String], _ layout: Layout) -> String {
        func pad(_ s: String, _ width: Int) -> String { s + String(repeating: " ", count: max(0, width - s.count)) }
        return "| " + zip(values, layout.widths).map { pad($0, $1) }.joined(separator: " | ") + " |"
    }

    /// One `name = value` line per field, names right-aligned; both escaped, so that each
    /// field stays on its line.
    static func lines(_ row: JSONValue, leading: [String]) -> String {
        let columns = columns([row], leading: leading)
        let names = columns.map { ShellDisplay.escaped($0) }
        let width = names.map(\.count).max() ?? 0
        return zip(columns, names).map { column, name in
            String(repeating: " ", count: width - name.count) + name + " = " + ShellDisplay.escaped(cell(row, column))
        }.joined(separator: "\n")
    }

    /// The characters that make a spreadsheet read a cell as a formula (OWASP's CSV
    /// injection advice): such a cell gets a `'` in front.
    static let formulaStarts: Set<Unicode.Scalar> = ["=", "+", "-", "@", "\t", "\r"]

    /// An RFC 4180 field: control characters escaped but line feeds and tabs (a multi-line
    /// cell stays one), a `'` before a text that starts like a formula when `guarded` (JSON
    /// numbers are not: `-5` stays a number), quoted when it holds a comma, a quote or a
    /// line feed.
    static func csvField(_ text: String, guarded: Bool) -> String {
        var s = ShellDisplay.escaped(text, keeping: ["\n", "\t"])
        if guarded, let first = text.unicodeScalars.first, formulaStarts.contains(first) { s = "'" + s }
        guard s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" }) else { return s }
        return "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

extension String {
    /// Equal by code points (Swift's `==` compares by canonical equivalence, which would
    /// merge two fields whose names differ only in Unicode normalisation).
    func sameCodePoints(_ other: String) -> Bool { utf8.elementsEqual(other.utf8) }
}
