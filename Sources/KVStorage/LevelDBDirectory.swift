import Foundation
import KVSupport

/// Where an app keeps its databases: the directories an app on iOS, watchOS, tvOS, visionOS
/// or macOS gives its own data, as paths for ``LevelDB/init(path:options:)`` and the stores
/// above it.
///
/// <!-- doc-code: preamble=examples -->
/// ```swift
/// let path = try LevelDBDirectory.applicationSupport("stations.db")
/// var options = LevelDBOptions()
/// options.fileProtection = .completeUntilFirstUserAuthentication
/// let db = try LevelDB(path: path, options: options)
/// ```
///
/// **Invariants.** Each function returns the path of a database directory inside a parent
/// that exists (it is created when missing); the database directory itself is not created
/// (``LevelDB/init(path:options:)`` does). An App Group container shares the files between an
/// app and its extensions, not the open database: LevelDB lets one process hold a database
/// at a time, so the second opener gets `.locked` until the first closes it.
public enum LevelDBDirectory {
    /// `name` inside the app's Application Support directory (`Library/Application Support`
    /// of its container on Apple platforms; `~/.local/share` or `$XDG_DATA_HOME` on Linux),
    /// which is created when missing. The directory an app keeps data in that the user does
    /// not see as documents, and that the system backs up.
    /// - Throws: `.invalidArgument` for a `name` that is empty or leaves the directory
    ///   (`..`, a leading `/`); `.ioError` when the directory cannot be found or created.
    public static func applicationSupport(_ name: String) throws -> String {
        try checked(name)
        let url: URL
        do {
            url = try FileManager.default.url(
                for: .applicationSupportDirectory, in: .userDomainMask, appropriateFor: nil, create: true)
        } catch {
            throw KVDocsError(
                .ioError, "cannot find or create the Application Support directory: \(error.localizedDescription)")
        }
        return url.appendingPathComponent(name).path
    }

    /// `name` inside `Library/Application Support` of the App Group container `identifier`
    /// (`group.com.example.app`), which the app and its extensions (a widget, a watch
    /// complication, a share extension) all see when their entitlements name the group.
    /// Apple platforms only.
    /// - Throws: `.invalidArgument` for a bad `name`, or an `identifier` that the app's
    ///   entitlements do not grant (the system gives no container); `.ioError` when the
    ///   directory cannot be created; `.notSupported` on other platforms, which have no App Groups.
    public static func appGroup(_ identifier: String, _ name: String) throws -> String {
        try checked(name)
        #if canImport(Darwin)
        guard let container = FileManager.default.containerURL(forSecurityApplicationGroupIdentifier: identifier)
        else {
            throw KVDocsError(
                .invalidArgument,
                "no container for the App Group \"\(identifier)\": the app's entitlements (com.apple.security.application-groups) must name it"
            )
        }
        let directory = container.appendingPathComponent("Library/Application Support", isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw KVDocsError(
                .ioError, "cannot create \(directory.path): \(error.localizedDescription)", path: directory.path)
        }
        return directory.appendingPathComponent(name).path
        #else
        throw KVDocsError(
            .notSupported,
            "App Group containers (\"\(identifier)\") exist only on Apple platforms: use applicationSupport(_:) or a path of your own"
        )
        #endif
    }

    /// Refuses a name that is not one relative path inside the parent directory.
    private static func checked(_ name: String) throws {
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        guard !name.isEmpty, !name.hasPrefix("/"), !parts.contains(where: { $0 == ".." || $0 == "." || $0.isEmpty })
        else {
            throw KVDocsError(
                .invalidArgument,
                "database name \"\(name)\": give a relative path inside the directory, without empty, \".\" or \"..\" parts"
            )
        }
    }
}
