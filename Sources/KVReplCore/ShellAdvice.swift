import KVDocs

/// The recovery advice kvrepl adds to an error: a command that fixes that failure, in that
/// session. One place decides it, from the error and the session's shape.
///
/// A layered session (`kvrepl USER --base BASE`) fails in places a plain one has not: a
/// lock held on the user database, the copy of the base in `USER.layers/base-…`, the record
/// `USER.layers/LAYERS.json`. `--repair USER` fixes none of them (the repair command is
/// refused in a layered session), so each gets its own advice.
public enum ShellAdvice {
    /// The advice for a failure to open the database at `path`, over `base` in a layered
    /// session; `nil` when there is none to give.
    public static func opening(_ error: KVDocsError, path: String, base: String?, readOnly: Bool, repairing: Bool)
        -> String?
    {
        if error.kind == .locked { return locked }
        if let base {
            if let copy = baseCopy(in: error, user: path) {
                return baseCopyAdvice(copy, user: path, base: base, quitting: false)
            }
            if mentions(error, path + ".layers/LAYERS.json") {
                return error.kind == .corruption ? layersRecordAdvice(user: path, base: base) : nil
            }
        }
        guard (error.kind == .corruption || error.message.hasPrefix("IO error: ")) && !repairing && !readOnly else {
            return nil
        }
        if let base {
            return
                "if the user database is damaged, kvrepl \(path) --base \(base) --repair rebuilds it from what it can read"
        }
        return "if the database is damaged, kvrepl --repair \(path) rebuilds it from what it can read"
    }

    /// The advice for a command that failed with `error` in `session`, or `nil`.
    static func command(_ error: KVDocsError, in session: ShellSession) -> String? {
        if let layers = session.layers {
            if let copy = baseCopy(in: error, user: layers.userPath) {
                return baseCopyAdvice(copy, user: layers.userPath, base: layers.basePath, quitting: true)
            }
            guard damaged(error, under: layers.userPath) else { return nil }
            return
                "if the user database is damaged: quit, then run kvrepl \(layers.userPath) --base \(layers.basePath) --repair, which rebuilds it from what it can read"
        }
        guard let database = session.leveldb, damaged(error, under: database.path), !session.readOnly else {
            return nil
        }
        return "if the database is damaged, the repair command rebuilds it from what it can read"
    }

    /// What to do about a document layer that could not be opened (`damage` is what opening
    /// it threw): the command that makes it open again.
    public static func storeDamage(_ damage: KVDocsError) -> String {
        switch DocumentStore.remedy(for: damage) {
        case .salvage:
            return "run salvage to set damaged documents aside, repair the catalog and rebuild the indexes"
        case .repair:
            return "run repair (LevelDB's repair rebuilds the database from what it can read), then salvage"
        case .reloadSchema:
            return
                "the stored schema cannot be read: run schema load FILE with the database's schema (every index is built again)"
        case .none:
            return "nothing rebuilds this record of the catalog: restore the database from a backup"
        }
    }

    /// A layered backup, or a copy of a user layer, opened on its own.
    static func userLayerWithoutBase(_ path: String) -> String {
        "\(path) is the user layer of a layered database (a backup or a copy of one: its values carry layer tags): open it with --base BASE, the base it was made over"
    }

    // MARK: - Failures

    private static let locked =
        "another process, or another handle in this one, has it open: quit that kvrepl or app, then open it again"

    /// LevelDB's own damage reports, for a file of the database at `path`.
    private static func damaged(_ error: KVDocsError, under path: String) -> Bool {
        error.message.hasPrefix("Corruption: ")
            || (error.message.hasPrefix("IO error: ") && error.message.contains(path + "/"))
    }

    private static func mentions(_ error: KVDocsError, _ text: String) -> Bool {
        error.message.contains(text) || (error.path?.hasPrefix(text) ?? false)
    }

    /// The directory of the base copy, `USER.layers/base-…`, that the error names, if any.
    private static func baseCopy(in error: KVDocsError, user: String) -> String? {
        let prefix = user + ".layers/base-"
        for text in [error.message, error.path ?? ""] {
            guard let start = text.range(of: prefix) else { continue }
            let name = text[start.upperBound...].prefix { $0 != "/" && $0 != ":" && $0 != " " && $0 != ")" }
            return prefix + name
        }
        return nil
    }

    private static func baseCopyAdvice(_ copy: String, user: String, base: String, quitting: Bool) -> String {
        "the copy of the base in \(copy) is damaged: \(quitting ? "quit, " : "")remove that directory, then open \(user) again with --base \(base), which copies the base again (if \(base) itself is damaged, restore it first)"
    }

    private static func layersRecordAdvice(user: String, base: String) -> String {
        "remove \(user).layers/LAYERS.json, then open \(user) again with --base \(base): the user database is taken over \(base) and its indexes made exact over it"
    }
}
