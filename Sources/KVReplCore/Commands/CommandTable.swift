import KVDocs

/// Every kvrepl command, each declared once (its ``CommandDefinition`` in one of the files
/// of `Commands/`): the parser, `help`, completion and dispatch read this table, and the
/// commands of registered index kinds (``IndexKind/commands``) join it.
///
/// Adding a command is its definition (name, usage, summary, access, target, completion,
/// parse, run) and its line in ``builtIn``.
enum CommandTable {
    /// The built-in commands, in the order `help` lists them.
    static let builtIn: [any ShellCommandDefinition] = [
        get, put, del, scan, delrange, stats, property, size, compact, snapshot, release, dump, load, keyspaces,
        sync, repair,
        schema, collections, indexes, insert, upsert, doc, remove, importFile, exportFile, find, count, explain,
        search, near, knn, hybrid, terms, verify, reindex, optimize, salvage, changes,
        conflicts, resolve, revs, replicate, serve,
        layers, replaceBase, backup, writeBase,
        format, timer, help, quit
    ]

    /// Every command: the built-in ones, then those of the registered index kinds (a kind's
    /// command whose name a built-in command has is left out).
    static var all: [any ShellCommandDefinition] {
        let taken = Set(builtIn.flatMap { [$0.name] + $0.aliases })
        var seen = taken
        var result = builtIn
        for kind in IndexKindRegistry.registered {
            for command in kind.commands where seen.insert(command.name).inserted {
                result.append(kindCommand(command))
            }
        }
        return result
    }

    /// The command named (or aliased) `name`, lower case.
    static func definition(named name: String) -> (any ShellCommandDefinition)? {
        if let found = builtIn.first(where: { $0.name == name || $0.aliases.contains(name) }) { return found }
        return all.first { $0.name == name }
    }

    /// The command names and aliases (a leading `.` left out), for completion and typos.
    static var names: [String] {
        all.flatMap { [$0.name] + $0.aliases.filter { !$0.hasPrefix(".") } }
    }

    /// The command name nearest `word` by edit distance (insertions, deletions,
    /// substitutions and swaps of neighbours), when it is near enough to be a typo: at most
    /// one edit for words of up to seven letters, two for longer ones. Ties go to the
    /// earlier name of ``names``.
    static func nearestName(to word: String) -> String? {
        let typed = Array(word.lowercased().unicodeScalars)
        // One edit (a letter wrong, missing, extra or two swapped) below 8 letters, two from
        // 8 on: "clear" is 2 edits from "near" and gets no suggestion.
        let allowed = typed.count < 8 ? 1 : 2
        var best: (name: String, distance: Int)?
        for name in names {
            // The distance is at least the difference in length: a long word (a pasted
            // value, say) is compared with nothing, in time linear in its length.
            let candidate = Array(name.unicodeScalars)
            guard abs(candidate.count - typed.count) <= allowed else { continue }
            let d = editDistance(typed, candidate)
            if d <= allowed, d < (best?.distance ?? Int.max) { best = (name, d) }
        }
        return best?.name
    }

    /// The optimal-string-alignment distance between `a` and `b`.
    static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var before = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], before[j - 2] + 1)
                }
            }
            (before, previous, current) = (previous, current, before)
        }
        return previous[b.count]
    }

    // MARK: - Help

    /// `help` (every command, one line each) or `help COMMAND`.
    static func helpText(_ topic: String?) throws -> String {
        let commands = all
        if let topic {
            guard let c = definition(named: topic) else {
                throw ShellCommandError(
                    message: "no command \"\(topic)\"; commands: \(commands.map(\.name).joined(separator: ", "))",
                    column: nil)
            }
            let also = c.aliases.filter { !$0.hasPrefix(".") }
            return "\(c.usage)\n  \(c.summary)" + (also.isEmpty ? "" : "\n  also: \(also.joined(separator: ", "))")
        }
        let width = commands.map(\.usage.count).filter { $0 < 40 }.max() ?? 20
        var lines = commands.map { c in
            c.usage.count < 40
                ? c.usage.padding(toLength: width + 2, withPad: " ", startingAt: 0) + c.summary
                : c.usage + "\n" + String(repeating: " ", count: width + 2) + c.summary
        }
        lines.append("")
        lines.append("KEY: word | \"text\" (\\n \\t \\\" \\\\ \\xHH) | 0x68656c6c6f | (\"dep\", \"Perth\", 1700000000)")
        lines.append("ID, VALUE, JSON: a JSON literal: \"text\", 42, true, {\"a\": 1}")
        return lines.joined(separator: "\n")
    }
}
