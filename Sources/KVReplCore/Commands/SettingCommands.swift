import KVDocs

// The shell's own commands: its settings, help and quit.
extension CommandTable {
    static let sync = CommandDefinition<Bool?>(
        "sync", usage: "sync [on|off]",
        summary:
            "whether every write of the shell waits for the disk (survives a power loss; --sync starts with it on)",
        access: .read, completion: [.words(["on", "off"])],
        parse: { s in try onOff(&s, after: "sync") }
    ) { session, on in
        if let on { session.sync = on }
        session.emit(
            ["sync": .bool(session.sync)],
            session.sync
                ? "sync on: every write waits for the disk"
                : "sync off: writes survive a crash of kvrepl, not of the machine")
    }

    /// The formats `format` takes: the ``OutputFormat``s and `text`, kvrepl's own.
    static let formatNames = OutputFormat.allCases.map(\.rawValue) + ["text"]

    static let format = CommandDefinition<OutputFormat??>(
        "format", aliases: ["mode", ".mode"], usage: "format [table|line|json|jsonl|csv|text]",
        summary:
            "how results print (also: mode); without a format, the current one (--format sets it at start; --json is unchanged)",
        access: .setting, completion: [.words(formatNames)],
        parse: { s in
            s.skipSpaces()
            let start = s.position
            guard let word = s.word() else { return nil }
            if word.lowercased() == "text" { return .some(nil) }
            guard let format = OutputFormat(rawValue: word.lowercased()) else {
                throw s.fail("expected a format (\(formatNames.joined(separator: ", "))), not \"\(word)\"", at: start)
            }
            return .some(format)
        }
    ) { session, chosen in
        if let chosen { session.format = chosen }
        let name = session.format?.rawValue ?? "text"
        if session.json {
            session.emit(["format": .string(name), "json": true], "")
        } else {
            session.out(chosen == nil ? "format \(name)" : "results print as \(name)")
        }
    }

    static let timer = CommandDefinition<Bool?>(
        "timer", aliases: [".timer"], usage: "timer [on|off]", summary: "print each command's wall time after it",
        access: .setting, completion: [.words(["on", "off"])],
        parse: { s in try onOff(&s, after: "timer") }
    ) { session, on in
        if let on { session.timer = on }
        session.emit(
            ["timer": .bool(session.timer)],
            session.timer ? "timer on: each command's wall time prints after it" : "timer off")
    }

    static let help = CommandDefinition<String?>(
        "help", usage: "help [COMMAND]", summary: "this help", access: .read,
        completion: [.words([])],  // completed with the command names (CommandTable.completions)
        parse: { s in s.word()?.lowercased() }
    ) { session, topic in
        let text = try helpText(topic)
        session.emit(["help": .string(text)], text)
    }

    static let quit = CommandDefinition<NoArguments>(
        "quit", aliases: ["exit"], usage: "quit", summary: "leave", access: .read, parse: { _ in NoArguments() }
    ) { session, _ in session.quitting = true }

    /// `on`, `off` or nothing (`nil`: show the setting).
    @Sendable static func onOff(_ s: inout LineScanner, after name: String) throws -> Bool? {
        s.skipSpaces()
        let start = s.position
        guard let word = s.word() else { return nil }
        switch word.lowercased() {
        case "on": return true
        case "off": return false
        default: throw s.fail("expected on or off after \(name), not \"\(word)\"", at: start)
        }
    }
}
