import KVDocs

/// The help text of kvrepl's commands.
enum Help {
    static let commands: [(name: String, usage: String, summary: String)] = [
        ("get", "get KEY", "the value stored under KEY"),
        ("put", "put KEY VALUE", "store VALUE (a literal, or the rest of the line as text) under KEY"),
        ("del", "del KEY", "remove KEY"),
        (
            "scan", "scan [PREFIX] [--from KEY] [--to KEY] [--reverse] [--limit N] [--keys-only] [--count]",
            "list entries (--to is exclusive)"
        ),
        (
            "delrange", "delrange [PREFIX] [--from KEY] [--to KEY] [--reverse] [--limit N]",
            "remove the entries a scan would list (asks first, interactively)"
        ),
        ("stats", "stats", "files per level, size, memory and LevelDB's compaction statistics"),
        (
            "property", "property NAME",
            "a LevelDB property (leveldb.stats, leveldb.sstables, leveldb.num-files-at-levelN, leveldb.approximate-memory-usage)"
        ),
        ("size", "size [--from KEY] [--to KEY]", "approximate bytes on disk of a key range"),
        ("compact", "compact [--from KEY] [--to KEY]", "compact a key range (everything by default)"),
        ("snapshot", "snapshot", "make later reads see the database as it is now"),
        ("release", "release", "release the snapshot"),
        ("dump", "dump FILE", "write every entry as JSON lines {\"key_hex\", \"value_hex\"}"),
        ("load", "load FILE", "put the entries of a dump file"),
        ("keyspaces", "keyspaces | keyspaces load FILE", "list the declared keyspaces, or store them from a JSON file"),
        (
            "sync", "sync [on|off]",
            "whether every write of the shell waits for the disk (survives a power loss; --sync starts with it on)"
        ),
        (
            "repair", "repair",
            "close the database, rebuild its metadata from its files (LevelDB's repair) and reopen it (asks first, interactively)"
        ),
        ("schema", "schema | schema load FILE", "show the document schema, or apply and store one"),
        ("collections", "collections", "the collections with their document counts"),
        ("indexes", "indexes COLLECTION", "a collection's secondary, geo and text indexes"),
        ("insert", "insert COLLECTION JSON", "add a document (fails if its id exists)"),
        ("upsert", "upsert COLLECTION JSON", "add or replace a document"),
        ("doc", "doc COLLECTION ID", "a document by primary key"),
        ("remove", "remove COLLECTION ID", "delete a document"),
        ("import", "import COLLECTION FILE", "import JSON lines"),
        ("export", "export COLLECTION FILE", "export JSON lines"),
        (
            "find", "find COLLECTION [where FIELD OP VALUE [and …]] [order by FIELD [asc|desc]] [limit N] [offset N]",
            "query documents; OP is = != < <= > >= prefix in, VALUE a JSON literal, in (v1, v2)"
        ),
        ("count", "count COLLECTION [where …]", "count matching documents"),
        (
            "explain", "explain find … | explain near …",
            "the index and key ranges a find would use; the cells and ranges a near reads"
        ),
        ("search", "search COLLECTION \"QUERY\" [limit N] [highlight]", "full-text search (FTS5 syntax), best first"),
        (
            "near", "near COLLECTION (LAT, LON) [within METERS] [using INDEX] [where …] [limit N] [offset N]",
            "documents by distance from a point (degrees), nearest first, from a geo index; METERS is a radius, limit N alone the N nearest"
        ),
        (
            "terms", "terms COLLECTION [INDEX] [PREFIX] [limit N]",
            "a text index's statistics, then its terms with the documents holding each"
        ),
        ("verify", "verify [COLLECTION]", "check that indexes match documents"),
        ("reindex", "reindex COLLECTION [INDEX]", "rebuild indexes"),
        (
            "optimize", "optimize COLLECTION [INDEX]",
            "merge the segments of a collection's text indexes (or of one) into one, as FTS5's 'optimize' does"
        ),
        (
            "salvage", "salvage [QUARANTINE]",
            "after a repair: move unreadable documents to a quarantine collection (default quarantine), rebuild every index, report what was lost"
        ),
        ("changes", "changes [since SEQ] [limit N]", "the change feed"),
        (
            "conflicts", "conflicts COLLECTION",
            "a replicated collection's documents with conflicts: id, winning revision, conflicting revisions"
        ),
        (
            "resolve", "resolve COLLECTION ID REV",
            "keep revision REV of a replicated document: its other non-deleted leaf revisions get tombstones"
        ),
        (
            "revs", "revs COLLECTION ID",
            "a replicated document's leaf revisions, winner first, each with its known history"
        ),
        (
            "replicate", "replicate SOURCE TARGET [--continuous]",
            "copy what TARGET lacks of SOURCE over CouchDB's replication protocol, resuming from the last checkpoint; each is a replicated collection of this store, PATH:COLLECTION (another database) or a URL; --continuous keeps copying new changes until interrupted (Ctrl-C)"
        ),
        (
            "serve", "serve [--port N] [--bind ADDR] [--user U --password-file F]",
            "serve this store's replicated collections over CouchDB's replication protocol, each at http://ADDR:N/COLLECTION, until interrupted (Ctrl-C); on loopback (127.0.0.1:5984) by default, another address needs --user and --password-file (the password is the file's first line)"
        ),
        ("layers", "layers", "a layered session (--base): the base and user databases and their sizes"),
        (
            "replace-base", "replace-base NEWBASE [--allow-unrelated]",
            "a layered session: swap the base for the database at NEWBASE atomically, keeping the user's documents and deletes; the new base is copied, read whole and checked (schema, unique values) first, and on any failure the old base stays; a base with no document store or none of the store's collections is refused unless --allow-unrelated"
        ),
        (
            "backup", "backup DIR",
            "write a consistent copy of the database (of the user database, in a layered session) into the new directory DIR, from one snapshot"
        ),
        (
            "format", "format [table|line|json|jsonl|csv|text]",
            "how results print (also: mode); without a format, the current one (--format sets it at start; --json is unchanged)"
        ),
        ("timer", "timer [on|off]", "print each command's wall time after it"),
        ("help", "help [COMMAND]", "this help"),
        ("quit", "quit", "leave")
    ]

    static func text(_ topic: String?) throws -> String {
        if var topic {
            if topic == "mode" || topic == ".mode" { topic = "format" }
            guard let c = commands.first(where: { $0.name == topic }) else {
                throw ShellCommandError(
                    message: "no command \"\(topic)\"; commands: \(commands.map(\.name).joined(separator: ", "))",
                    column: nil)
            }
            return "\(c.usage)\n  \(c.summary)"
        }
        let width = commands.map(\.usage.count).filter { $0 < 40 }.max() ?? 20
        var lines = commands.map { c in
            c.usage.count < 40
                ? c.usage.padding(toLength: width + 2, withPad: " ", startingAt: 0) + c.summary
                : c.usage + "\n" + String(repeating: " ", count: width + 2) + c.summary
        }
        lines.append("")
        lines.append("KEY: word | \"text\" (\\n \\t \\\" \\\\ \\xHH) | 0x68656c6c6f | (\"dep\", \"Perth\", 1700000000)")
        return lines.joined(separator: "\n")
    }
}
