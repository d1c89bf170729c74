import KVDocs

/// The shell's sync commands (`replicate`), run by a handler that lives outside the
/// command language, so that KVReplCore does not depend on the sync stack (KVDocsSync).
/// kvrepl installs KVReplSync's handler in ``ShellSession/syncCommands``.
public protocol SyncCommandHandler: AnyObject {
    /// Runs `replicate SOURCE TARGET [--continuous]`.
    /// - Parameters:
    ///   - source: where revisions are read: a replicated collection of `store`,
    ///     `PATH:COLLECTION` or a URL.
    ///   - target: where they are written, spelled the same way.
    ///   - continuous: keep copying new changes until interrupted.
    ///   - store: the session's document store, if it has one.
    ///   - readOnly: whether the session refuses writes (then `store` cannot be the target).
    ///   - report: called with each progress report, as a JSON object and a line of text.
    /// - Returns: the final report, as a JSON object and a line of text.
    func replicate(
        source: String, target: String, continuous: Bool, store: DocumentStore?, readOnly: Bool,
        report: (JSONValue, String) -> Void
    ) throws -> (json: JSONValue, text: String)

    /// Runs `serve`: serves `store`'s replicated collections until interrupted.
    /// - Parameters:
    ///   - port: the port (0: any free one).
    ///   - bind: the address to listen on.
    ///   - user: the user requests must name, with the password in `passwordFile`.
    ///   - passwordFile: a file whose first line is the password.
    ///   - store: the session's document store.
    ///   - report: called once the server listens, with where (a JSON object and a line).
    /// - Returns: the final report.
    func serve(
        port: Int, bind: String, user: String?, passwordFile: String?, store: DocumentStore?,
        report: (JSONValue, String) -> Void
    ) throws -> (json: JSONValue, text: String)
}
