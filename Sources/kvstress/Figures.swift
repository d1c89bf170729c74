import Foundation
import KVDocs

/// What a scenario ran and found: rounds or inputs, outcomes by kind, failures.
struct Figures {
    var scenario: String
    var rounds = 0
    var outcomes: [String: Int] = [:]
    var failures: [String] = []

    mutating func count(_ outcome: String) { outcomes[outcome, default: 0] += 1 }
    mutating func add(_ outcome: String, _ n: Int) { outcomes[outcome, default: 0] += n }
    mutating func fail(_ what: String) {
        failures.append(what)
        note("FAILURE: \(what)")
    }

    /// A summary for people, one outcome per line.
    var text: String {
        var lines = ["\(scenario): \(rounds) rounds, \(failures.count) failures"]
        for (outcome, n) in outcomes.sorted(by: { $0.key < $1.key }) { lines.append("  \(outcome): \(n)") }
        for f in failures.prefix(20) { lines.append("  FAILURE \(f)") }
        return lines.joined(separator: "\n")
    }

    /// The summary as one JSON object, the last line of the output.
    var json: String {
        let value: JSONValue = .object([
            "scenario": .string(scenario), "rounds": .int(Int64(rounds)), "failures": .int(Int64(failures.count)),
            "outcomes": .object(JSONObject(outcomes.mapValues { JSONValue.int(Int64($0)) })),
            "failure_details": .array(failures.prefix(20).map { .string($0) })
        ])
        return String(decoding: (try? value.canonicalData()) ?? Data(), as: UTF8.self)
    }
}
