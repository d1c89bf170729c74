/// The parsers fuzzed: each a file of this folder (its seed inputs, dictionary and grammar,
/// and its checks) that both front doors run.
enum FuzzTarget: String, CaseIterable {
    case tuple, command, fts5, schema
    case importer = "import"
    case json

    /// The target's inputs and checks.
    var checks: any FuzzChecks.Type {
        switch self {
        case .tuple: FuzzTuples.self
        case .command: FuzzCommands.self
        case .fts5: FuzzQueries.self
        case .schema: FuzzSchemas.self
        case .importer: FuzzImports.self
        case .json: FuzzJSON.self
        }
    }

    var salt: UInt64 { UInt64((FuzzTarget.allCases.firstIndex(of: self) ?? 0) + 1) }
}

/// What a target gives the harness: how its inputs are made, and how one is checked.
///
/// Every input must be accepted (and then pass the target's own checks: round trips, the
/// importer's all-or-nothing first pass) or rejected with a one-line `KVDocsError` of a kind
/// the parser documents (``FuzzResult/judge(_:kinds:commandErrors:)``).
protocol FuzzChecks {
    /// The target's inputs: its seed inputs and dictionary (for mutations) and its grammar
    /// (fresh and deeply nested inputs), drawn from `r`.
    static func plan(_ r: inout FuzzRandom) -> FuzzPlan

    /// Ready to check inputs (the importer opens its store).
    init() throws

    /// Checks one input; `r` is the input's own generator, for the choices its check makes
    /// (a tokenizer, which loader).
    mutating func check(_ bytes: [UInt8], _ r: inout FuzzRandom) -> FuzzResult

    /// Checks made between inputs, after input `index`: what is wrong, or `nil`.
    mutating func checkpoint(after index: Int) -> String?

    /// Counts beyond accepted and rejected inputs (`fuzz-grammar` reports them).
    var outcomes: [String: Int] { get }

    /// Releases what the checks hold (the importer's store and files).
    mutating func close()
}

extension FuzzChecks {
    mutating func checkpoint(after index: Int) -> String? { nil }
    var outcomes: [String: Int] { [:] }
    mutating func close() {}
}
