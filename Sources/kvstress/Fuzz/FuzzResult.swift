import KVDocs
import KVReplCore

/// What became of one input.
enum FuzzResult {
    case accepted
    /// Rejected with a well-formed error, labelled by its kind.
    case rejected(String)
    /// A broken promise, described.
    case failed(String)

    /// What a thrown error says about the parser: a one-line, non-empty error of a
    /// documented type and kind is a rejection; anything else is a failure.
    static func judge(_ error: Error, kinds: Set<String>?, commandErrors: Bool = false) -> FuzzResult {
        let text: String
        let label: String
        if let e = error as? KVDocsError {
            text = e.description
            label = e.kind.rawValue
            if e.message.allSatisfy({ $0 == " " }) {
                return .failed("a KVDocsError with an empty message: \(FuzzShow.escaped(text))")
            }
            if let kinds, !kinds.contains(label) {
                return .failed(
                    "an error of kind \"\(label)\", but the parser documents only \(kinds.sorted().joined(separator: ", ")): \(FuzzShow.escaped(text))"
                )
            }
        } else if commandErrors, let e = error as? ShellCommandError {
            text = e.description
            label = "CommandError"
            if e.message.isEmpty { return .failed("a CommandError with an empty message: \(FuzzShow.escaped(text))") }
        } else {
            return .failed(
                "an error of type \(type(of: error)), not KVDocsError\(commandErrors ? " or CommandError" : ""): \(FuzzShow.escaped(String(describing: error)))"
            )
        }
        if text.isEmpty { return .failed("an error with an empty description") }
        // By bytes: "\r\n" is one Character, which `contains("\n")` would not find.
        if text.utf8.contains(0x0A) || text.utf8.contains(0x0D) {
            return .failed("an error of more than one line: \(FuzzShow.escaped(text))")
        }
        return .rejected(label)
    }

    /// Runs a check made after an input was accepted: its errors are failures.
    static func after(_ what: String, _ check: () throws -> String?) -> String? {
        do {
            return try check()
        } catch {
            return "\(what) threw \(FuzzShow.escaped(String(describing: error)))"
        }
    }
}
