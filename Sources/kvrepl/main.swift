// kvrepl: an interactive and scriptable shell for LevelDB databases. This file only reads
// lines and prints; the command language lives in KVReplCore.
import ArgumentParser
import Foundation
import KVDocs
import KVDocsEtcd
import KVReplCore
import KVReplSync

struct KVRepl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kvrepl",
        abstract: "Inspect and query a LevelDB database: raw keys, documents, indexes and full-text search.",
        discussion: """
            Interactive when standard input is a terminal and no -c is given; otherwise each -c \
            command, or each line of standard input, runs in order; words after PATH are one more \
            command (kvrepl notes.db serve --port 5984; kvrepl notes.db help serve). Exit status: 0 \
            when every command succeeded, 1 when any failed, 2 for a usage error. Type `help` for the \
            commands.
            """)

    @Argument(help: "The database directory (with --demo: where to build the sample database, default ./kvrepl-demo).")
    var path: String?

    @Option(
        help:
            "Open a store on an etcd cluster instead of a directory: the client URLs of one or more members, comma-separated (http://127.0.0.1:2379,…). Needs --root."
    )
    var etcd: String?

    @Option(help: "With --etcd: the store's name in the cluster (its keys are under (\"kvdocs\", NAME)).")
    var root: String?

    @Option(
        name: .customLong("etcd-max-txn-ops"),
        help:
            "With --etcd: the cluster's --max-txn-ops (etcd's default: 128; scripts/etcd-cluster runs 4096). A write that needs more operations is refused."
    )
    var etcdMaxTxnOps = 128

    @Flag(help: "Create the database if it does not exist.")
    var create = false

    @Flag(name: .customLong("read-only"), help: "Refuse every write; the directory is never modified.")
    var readOnly = false

    @Flag(help: "Print each result as one JSON object per line; errors as {\"error\": …} on standard error.")
    var json = false

    @Option(
        help:
            "How results print, like sqlite3's .mode: table, line, json (pretty), jsonl, csv, or text (the default: as kvrepl has always printed). The format command changes it."
    )
    var format: String?

    @Flag(
        help:
            "Sync every write to the disk before acknowledging it, so it survives a power loss or an OS crash (without it, writes survive a crash of kvrepl only). The sync command turns it on or off."
    )
    var sync = false

    @Flag(
        help:
            "Repair the database before opening it (LevelDB's repair: rebuild its metadata from its table and log files, moving unreadable files to lost/), for a database too damaged to open. The repair command does the same on an open database."
    )
    var repair = false

    @Option(help: "A schema file (JSON) to apply and store before running commands.")
    var schema: String?

    @Option(
        help:
            "A read-only base database to open PATH over: PATH is the user database, every read sees both merged, every write goes to PATH (a layered session)."
    )
    var base: String?

    @Option(name: .customShort("c"), help: "A command to run (repeatable); then exit.")
    var command: [String] = []

    @Flag(help: "Create (or reuse) the sample database of train stations and departures, and open it.")
    var demo = false

    func validate() throws {
        if etcd != nil {
            if root == nil { throw ValidationError("--etcd needs --root NAME: the store's name in the cluster") }
            if path != nil || demo || base != nil || repair || create {
                throw ValidationError(
                    "--etcd opens a store on a cluster: it takes no PATH, --demo, --base, --repair or --create")
            }
        } else if root != nil {
            throw ValidationError("--root names a store on an etcd cluster: give the cluster with --etcd")
        }
        if path == nil && !demo && etcd == nil { throw ValidationError("missing the database PATH (or use --demo)") }
        if let format, format != "text", OutputFormat(rawValue: format) == nil {
            throw ValidationError(
                "--format takes table, line, json, jsonl, csv or text, not \"\(format)\"")
        }
        if json && format != nil {
            throw ValidationError(
                "--json prints one JSON object per result (its output is a contract); it cannot be combined with --format"
            )
        }
        if repair && readOnly {
            throw ValidationError("--repair modifies the database: it cannot be used with --read-only")
        }
        if demo && readOnly && !FileManager.default.fileExists(atPath: (path ?? "kvrepl-demo") + "/CURRENT") {
            throw ValidationError("--demo --read-only needs an existing sample database")
        }
    }
}

func standardError(_ text: String) { FileHandle.standardError.write(Data((text + "\n").utf8)) }

/// The arguments split where a command given after PATH begins (`kvrepl notes.db serve --port
/// 5984`): kvrepl's own arguments, then the command's words. The first word that is not an
/// option or an option's value is PATH (with --etcd there is none); from the next one on, every
/// word is the command's, options included.
func splitCommand(_ arguments: [String]) -> (own: [String], command: [String]) {
    let takesValue: Set<String> = ["--etcd", "--root", "--etcd-max-txn-ops", "--format", "--schema", "--base", "-c"]
    let etcd = arguments.contains("--etcd") || arguments.contains { $0.hasPrefix("--etcd=") }
    var positionals = 0
    var i = 0
    while i < arguments.count {
        let argument = arguments[i]
        if argument == "--" { return (arguments, []) }
        if argument.hasPrefix("-") {
            i += takesValue.contains(argument) ? 2 : 1
            continue
        }
        positionals += 1
        if positionals == (etcd ? 1 : 2) { return (Array(arguments[..<i]), Array(arguments[i...])) }
        i += 1
    }
    return (arguments, [])
}

// `kvrepl COMMAND --help` (no database): the command's help, as `help COMMAND` prints it.
let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.contains(where: { $0 == "--help" || $0 == "-h" }),
    let first = arguments.first(where: { !$0.hasPrefix("-") }), ShellCommand.names.contains(first.lowercased()),
    let text = try? ShellCommand.help(first.lowercased())
{
    print(text)
    exit(0)
}
let (ownArguments, commandWords) = splitCommand(arguments)
let options: KVRepl
do {
    options = try KVRepl.parse(ownArguments)
} catch {
    if KVRepl.exitCode(for: error) == .success {
        print(KVRepl.fullMessage(for: error))
        exit(0)
    }
    standardError(KVRepl.fullMessage(for: error))
    standardError(KVRepl.usageString())
    exit(2)
}

// A command after PATH: `kvrepl DB serve --help` is `help serve`; otherwise its words are one
// more command line, after the -c ones.
var commands = options.command
if let name = commandWords.first {
    if commandWords.dropFirst().contains(where: { $0 == "--help" || $0 == "-h" }) {
        commands.append("help \(name)")
    } else {
        commands.append(commandWords.joined(separator: " "))
    }
}
let path = options.path ?? "kvrepl-demo"
let interactive = commands.isEmpty && isatty(STDIN_FILENO) == 1
let session: ShellSession
do {
    if options.demo && !options.readOnly {
        if interactive { standardError("building the sample database at \(path)…") }
        try DemoDatabase.build(at: path)
    }
    if options.repair {
        let report = try LevelDB.repair(path: path)
        print(
            options.json
                ? String(decoding: (try? report.json.canonicalData()) ?? Data(), as: UTF8.self) : report.text(path))
    }
    if let endpoints = options.etcd, let root = options.root {
        let store = try EtcdKeyValueStore(
            endpoints: endpoints.split(separator: ",").map(String.init), root: root,
            options: .init(maxTxnOps: options.etcdMaxTxnOps))
        session = try ShellSession.open(
            store: store, readOnly: options.readOnly, json: options.json, schemaFile: options.schema,
            progress: interactive ? { standardError($0) } : nil)
    } else {
        session = try ShellSession.open(
            path: path, create: options.create || options.demo, readOnly: options.readOnly, json: options.json,
            schemaFile: options.schema, base: options.base, progress: interactive ? { standardError($0) } : nil)
    }
    if let failure = session.layers?.baseChangeFailure, let layers = session.layers {
        standardError(
            ShellDisplay.terminalSafe(
                "kvrepl: warning: the base \(options.base ?? "") changed or differs from the one in force, and replacing it failed: \(failure.message); the base in force is still \(layers.basePath) (fix the new base and reopen, or replace-base it)"
            ))
    }
    if let tail = session.leveldb?.recoveredTornTail {
        // One line: what the open dropped (the unsynced writes a power loss tore), and where it is kept.
        let copy = options.readOnly ? " (in the private copy; \(path) itself is unchanged)" : ""
        if options.json {
            standardError(
                ShellDisplay.jsonSafe(
                    String(
                        decoding: (try? JSONValue.object(["notice": .string("\(tail)\(copy)")]).canonicalData())
                            ?? Data(), as: UTF8.self)))
        } else {
            standardError(ShellDisplay.terminalSafe("kvrepl: notice: the open \(tail)\(copy)"))
        }
    }
    if let damage = session.storeDamage {
        standardError(
            ShellDisplay.terminalSafe(
                "kvrepl: warning: the document layer could not be opened: \(damage.message); \(ShellAdvice.storeDamage(damage))"
            ))
    }
} catch let e as KVDocsError {
    var message = e.message
    if options.etcd == nil,
        let advice = ShellAdvice.opening(
            e, path: path, base: options.base, readOnly: options.readOnly, repairing: options.repair)
    {
        message += " (\(advice))"
    }
    if options.json {
        standardError(
            ShellDisplay.jsonSafe(
                String(
                    decoding: (try? JSONValue.object(["error": .string(message)]).canonicalData()) ?? Data(),
                    as: UTF8.self)))
    } else {
        standardError("kvrepl: " + ShellDisplay.terminalSafe(message))
    }
    exit(1)
} catch {
    standardError("kvrepl: \(error)")
    exit(1)
}

session.sync = options.sync
session.syncCommands = SyncCommands()
session.format = options.format.flatMap(OutputFormat.init(rawValue:))

var failed = false
if !commands.isEmpty {
    for line in commands {
        let outcome = session.run(line)
        if outcome == .failed { failed = true }
        if outcome == .quit { break }
    }
} else if interactive {
    session.interactive = true
    LineEditor.run(session)
} else {
    while let line = readLine(strippingNewline: true) {
        let outcome = session.run(line)
        // Flush each command's output, so a program driving kvrepl through pipes sees it
        // (and knows the command's writes were acknowledged) before it sends the next line.
        fflush(nil)  // all output streams (stdout is not concurrency-safe to name in Swift 6)
        if outcome == .failed { failed = true }
        if outcome == .quit { break }
    }
}
session.close()
exit(failed ? 1 : 0)
