import KVDocs

/// One kvrepl command line, parsed: which command (a ``CommandDefinition`` of the
/// ``CommandTable``) and its arguments.
///
/// Two commands are equal when they are the same command with equal arguments.
public struct ShellCommand: Equatable, Sendable, CustomStringConvertible {
    /// The command's definition.
    let definition: any ShellCommandDefinition
    /// The arguments, of the definition's `Arguments` type.
    let arguments: any Sendable

    /// The command's name (`"get"`, `"keyspaces"`).
    public var name: String { definition.name }

    /// The command's name for messages, with its subcommand (`"keyspaces load"`).
    public var displayName: String { definition.displayName(self) }

    /// Whether the command changes the database (refused with `--read-only`).
    public var isWrite: Bool { definition.isWrite(self) }

    /// Whether the command only changes how the shell prints (`timer`, `format`): not timed.
    public var isShellSetting: Bool { definition.access == .setting }

    /// Whether the command reads or writes the raw keys of one LevelDB database (refused in
    /// a layered session and on another store).
    public var isRaw: Bool { definition.target == .rawKeys }

    /// Whether the command works on a LevelDB database's files (refused on another store).
    var needsLevelDB: Bool { definition.target != .anyStore }

    public var description: String { "\(name) \(arguments)" }

    public static func == (a: ShellCommand, b: ShellCommand) -> Bool {
        a.name == b.name && a.definition.argumentsEqual(a.arguments, b.arguments)
    }

    /// Parses one line; `nil` for an empty line or a `#` comment.
    /// - Throws: ``ShellCommandError`` naming what was expected and where.
    public static func parse(_ line: String) throws -> ShellCommand? {
        var s = LineScanner(line)
        guard let name = s.word() else { return nil }
        if name.hasPrefix("#") { return nil }
        guard let definition = CommandTable.definition(named: name.lowercased()) else {
            if let nearest = CommandTable.nearestName(to: name.lowercased()) {
                throw ShellCommandError(
                    message: "unknown command \"\(name.lowercased())\"; did you mean \(nearest)? (try: help)", column: 1
                )
            }
            throw ShellCommandError(message: "unknown command \"\(name.lowercased())\"; try: help", column: 1)
        }
        let command = try definition.parse(&s)
        guard s.atEnd else {
            throw ShellCommandError(
                message: "unexpected \"\(s.rest())\" after \(name) (see: help \(name.lowercased()))", column: nil)
        }
        return command
    }

    /// Every command name and alias, for help and completion.
    public static var names: [String] { CommandTable.names }

    /// What `help TOPIC` prints (every command without a topic).
    /// - Throws: ``ShellCommandError`` for a topic that names no command.
    public static func help(_ topic: String?) throws -> String { try CommandTable.helpText(topic) }
}

/// Whether a command reads, writes, or only changes the shell.
enum CommandAccess: Sendable, Equatable {
    /// Reads (allowed with `--read-only`).
    case read
    /// Changes the database (refused with `--read-only`).
    case write
    /// Changes how the shell prints (`format`, `timer`): allowed anywhere, not timed.
    case setting
}

/// What a command works on, which decides where it is refused.
enum CommandTarget: Sendable, Equatable {
    /// The shell, or the document layer over any store (LevelDB, layered, etcd).
    case anyStore
    /// A LevelDB database's files (`backup`, `salvage`, `layers`): refused on another store.
    case levelDBFiles
    /// One LevelDB database's raw keys (`get`, `scan`, `dump`): refused in a layered session
    /// (it would read one layer) and on another store.
    case rawKeys
}

/// What completes an argument of a command.
enum CompletionSource: Sendable, Equatable {
    /// A collection of the schema.
    case collection
    /// An index of the collection named before (any kind).
    case index
    /// A text index of the collection named before.
    case textIndex
    /// A key of the database (a prefix scan of what is typed).
    case key
    /// One of these words.
    case words([String])
}

/// A kvrepl command, as the ``CommandTable`` holds it: everything about the command in one
/// place. Implemented by ``CommandDefinition``.
protocol ShellCommandDefinition: Sendable {
    var name: String { get }
    var aliases: [String] { get }
    var usage: String { get }
    var summary: String { get }
    var access: CommandAccess { get }
    var target: CommandTarget { get }
    /// What completes the argument at each position after the name (1-based), in order.
    var completion: [CompletionSource] { get }
    /// Words completed at any later position (options, clause keywords).
    var keywords: [String] { get }
    /// Parses the line after the command's name.
    func parse(_ s: inout LineScanner) throws -> ShellCommand
    /// Runs a command this definition parsed, in `session`.
    func run(_ command: ShellCommand, in session: ShellSession) throws
    func isWrite(_ command: ShellCommand) -> Bool
    func displayName(_ command: ShellCommand) -> String
    func argumentsEqual(_ a: any Sendable, _ b: any Sendable) -> Bool
}

/// A kvrepl command: its name and aliases, its usage line and help, whether it writes, what
/// it works on, how its arguments complete, how its line parses into `Arguments`, and what
/// running it does. The parser, `help`, completion, the read-only and layered checks and
/// dispatch all read it; nothing else names the command.
struct CommandDefinition<Arguments: Equatable & Sendable>: ShellCommandDefinition {
    let name: String
    let aliases: [String]
    let usage: String
    let summary: String
    let access: CommandAccess
    let target: CommandTarget
    let completion: [CompletionSource]
    let keywords: [String]
    /// Whether these arguments write, when that depends on them (`keyspaces load`); else
    /// ``access`` says.
    let writes: (@Sendable (Arguments) -> Bool)?
    /// The name for messages, when it depends on the arguments (`keyspaces load`).
    let displayNames: (@Sendable (Arguments) -> String)?
    let parseArguments: @Sendable (inout LineScanner) throws -> Arguments
    let runArguments: @Sendable (ShellSession, Arguments) throws -> Void

    init(
        _ name: String, aliases: [String] = [], usage: String, summary: String, access: CommandAccess,
        target: CommandTarget = .anyStore, completion: [CompletionSource] = [], keywords: [String] = [],
        writes: (@Sendable (Arguments) -> Bool)? = nil, displayName: (@Sendable (Arguments) -> String)? = nil,
        parse: @escaping @Sendable (inout LineScanner) throws -> Arguments,
        run: @escaping @Sendable (ShellSession, Arguments) throws -> Void
    ) {
        self.name = name
        self.aliases = aliases
        self.usage = usage
        self.summary = summary
        self.access = access
        self.target = target
        self.completion = completion
        self.keywords = keywords
        self.writes = writes
        self.displayNames = displayName
        self.parseArguments = parse
        self.runArguments = run
    }

    /// The command with `arguments` (what parsing a line gives).
    func callAsFunction(_ arguments: Arguments) -> ShellCommand {
        ShellCommand(definition: self, arguments: arguments)
    }

    func parse(_ s: inout LineScanner) throws -> ShellCommand {
        self(try parseArguments(&s))
    }

    func run(_ command: ShellCommand, in session: ShellSession) throws {
        try runArguments(session, try arguments(of: command))
    }

    func isWrite(_ command: ShellCommand) -> Bool {
        if let writes, let arguments = command.arguments as? Arguments { return writes(arguments) }
        return access == .write
    }

    func displayName(_ command: ShellCommand) -> String {
        if let displayNames, let arguments = command.arguments as? Arguments { return displayNames(arguments) }
        return name
    }

    func argumentsEqual(_ a: any Sendable, _ b: any Sendable) -> Bool {
        guard let a = a as? Arguments, let b = b as? Arguments else { return false }
        return a == b
    }

    private func arguments(of command: ShellCommand) throws -> Arguments {
        guard let arguments = command.arguments as? Arguments else {
            throw KVDocsError(.invalidArgument, "kvrepl: \(name) was given the arguments of \(command.name)")
        }
        return arguments
    }
}

/// The arguments of a command that takes none.
struct NoArguments: Equatable, Sendable, CustomStringConvertible {
    var description: String { "" }
}
