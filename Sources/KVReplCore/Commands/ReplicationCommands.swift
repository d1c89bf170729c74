import Foundation
import KVDocs

// The commands of replicated collections: conflicts, revisions, replication and the server.
extension CommandTable {
    static let conflicts = CommandDefinition<String>(
        "conflicts", usage: "conflicts COLLECTION",
        summary: "a replicated collection's documents with conflicts: id, winning revision, conflicting revisions",
        access: .read, completion: [.collection], parse: { s in try s.expectWord("a collection name") }
    ) { session, collection in
        session.leadingColumns = ["id", "winner", "conflicts"]
        for c in try session.documents().collection(collection).conflicts() {
            session.emitRow(
                [
                    "id": .string(c.id), "winner": .string(c.winner.description),
                    "conflicts": .array(c.conflicts.map { .string($0.description) }),
                    "deleted_conflicts": .array(c.deletedConflicts.map { .string($0.description) })
                ],
                "\(JSONValue.string(c.id).compactDescription) \(c.winner) conflicts: \(c.conflicts.map(\.description).joined(separator: ", "))"
            )
        }
    }

    static let revs = CommandDefinition<ShellCommand.CollectionID>(
        "revs", usage: "revs COLLECTION ID",
        summary:
            "a replicated document's leaf revisions, winner first, each with its known history (ID is a JSON string: \"todo\")",
        access: .read, completion: [.collection],
        parse: { s in
            let collection = try s.expectWord("a collection name")
            return .init(collection: collection, id: try s.jsonValue("a document id (a JSON string)"))
        }
    ) { session, arguments in
        let id = try replicatedID(arguments.id)
        let store = try session.documents()
        let leaves = try store.collection(arguments.collection).revisionLeaves(id: id)
        guard !leaves.isEmpty else {
            throw KVDocsError(
                .notFound, "collection \"\(arguments.collection)\" has no document \(arguments.id.compactDescription)")
        }
        session.leadingColumns = ["rev", "winner", "deleted", "history"]
        for (i, leaf) in leaves.enumerated() {
            let history =
                try store.read { try $0.revisionHistory(arguments.collection, id: id, revision: leaf.revision) } ?? [
                    leaf.revision
                ]
            session.emitRow(
                [
                    "rev": .string(leaf.revision.description), "winner": .bool(i == 0),
                    "deleted": .bool(leaf.deleted),
                    "history": .array(history.map { .string($0.description) })
                ],
                "\(leaf.revision)\(i == 0 ? " (winner)" : "")\(leaf.deleted ? " deleted" : ""): \(history.map(\.description).joined(separator: " <- "))"
            )
        }
    }

    static let resolve = CommandDefinition<ShellCommand.Resolve>(
        "resolve", usage: "resolve COLLECTION ID REV",
        summary: "keep revision REV of a replicated document: its other non-deleted leaf revisions get tombstones",
        access: .write, completion: [.collection],
        parse: { s in
            let collection = try s.expectWord("a collection name")
            let id = try s.jsonValue("a document id (a JSON string)")
            return .init(collection: collection, id: id, revision: try s.expectWord("the revision to keep (N-HEX)"))
        }
    ) { session, arguments in
        let id = try replicatedID(arguments.id)
        let keep = try DocumentRevision.parse(arguments.revision)
        let tombstones = try session.documents().collection(arguments.collection).resolve(
            id: id, keep: keep, sync: session.sync)
        session.emit(
            [
                "ok": true, "id": arguments.id, "kept": .string(keep.description),
                "tombstones": .array(tombstones.map { .string($0.description) })
            ],
            "resolved \(arguments.id.compactDescription): kept \(keep), \(tombstones.count) tombstone\(tombstones.count == 1 ? "" : "s")"
        )
    }

    /// A replicated document's id, which is a string.
    @Sendable static func replicatedID(_ value: JSONValue) throws -> String {
        guard case .string(let id) = value else {
            throw KVDocsError(
                .invalidArgument, "a replicated document's id is a string, not \(value.compactDescription)")
        }
        return id
    }

    static let replicate = CommandDefinition<ShellCommand.Replicate>(
        "replicate", usage: "replicate SOURCE TARGET [--continuous]",
        summary:
            "copy what TARGET lacks of SOURCE over CouchDB's replication protocol, resuming from the last checkpoint; each is a replicated collection of this store, PATH:COLLECTION (another database) or a URL; --continuous keeps copying new changes until interrupted (Ctrl-C)",
        access: .read, completion: [.collection, .collection], keywords: ["--continuous"],
        parse: { s in
            var endpoints: [String] = []
            var continuous = false
            while !s.atEnd {
                if s.accept("--continuous") {
                    continuous = true
                } else if endpoints.count < 2 {
                    endpoints.append(try path(&s))
                } else {
                    throw s.fail("expected \"--continuous\" after SOURCE and TARGET")
                }
            }
            guard endpoints.count == 2 else {
                throw s.fail(
                    "expected \(endpoints.isEmpty ? "SOURCE and TARGET" : "TARGET"): a collection of this store, PATH:COLLECTION or a URL"
                )
            }
            return .init(source: endpoints[0], target: endpoints[1], continuous: continuous)
        }
    ) { session, arguments in
        let handler = try session.syncHandler()
        let summary = try handler.replicate(
            source: arguments.source, target: arguments.target, continuous: arguments.continuous, store: session.store,
            readOnly: session.readOnly
        ) { json, text in
            if session.interactive, let progress = session.progress {
                progress(text)
            } else if arguments.continuous {
                session.emit(json, text)
                // A program reading the reports through a pipe sees each as it comes.
                fflush(nil)
            }
        }
        session.emit(summary.json, summary.text)
    }

    static let serve = CommandDefinition<ShellCommand.Serve>(
        "serve", usage: "serve [--port N] [--bind ADDR] [--user U --password-file F]",
        summary:
            "serve this store's replicated collections over CouchDB's replication protocol, each at http://ADDR:N/COLLECTION, until interrupted (Ctrl-C); on loopback (127.0.0.1:5984) by default, another address needs --user and --password-file (the password is the file's first line)",
        access: .write, keywords: ["--port", "--bind", "--user", "--password-file"],
        parse: { s in
            var serve = ShellCommand.Serve(port: 5984, bind: "127.0.0.1")
            while !s.atEnd {
                if s.accept("--port") {
                    serve.port = try s.expectCount("a port number")
                    guard serve.port <= 65535 else { throw s.fail("the port must be at most 65535") }
                } else if s.accept("--bind") {
                    serve.bind = try s.expectWord("an address to listen on")
                } else if s.accept("--user") {
                    serve.user = try s.expectWord("a user name")
                } else if s.accept("--password-file") {
                    serve.passwordFile = try path(&s)
                } else {
                    throw s.fail("expected --port N, --bind ADDR, --user U or --password-file F")
                }
            }
            guard (serve.user == nil) == (serve.passwordFile == nil) else {
                throw s.fail("--user and --password-file go together")
            }
            return serve
        }
    ) { session, arguments in
        let handler = try session.syncHandler()
        let summary = try handler.serve(
            port: arguments.port, bind: arguments.bind, user: arguments.user, passwordFile: arguments.passwordFile,
            store: try session.documents()
        ) { json, text in
            session.emit(json, text)
            // A program reading through a pipe learns the port at once.
            fflush(nil)
        }
        session.emit(summary.json, summary.text)
    }
}

extension ShellSession {
    /// The sync commands' handler.
    /// - Throws: `.notSupported` in a shell built without KVDocsSync.
    func syncHandler() throws -> any SyncCommandHandler {
        guard let syncCommands else {
            throw KVDocsError(.notSupported, "this shell has no sync commands (it was built without KVDocsSync)")
        }
        return syncCommands
    }
}
