import Foundation
import KVDocs

/// A uniquely named directory under the system temporary folder, removed on deinit.
package final class TemporaryDirectory {
    /// The directory, created by `init`.
    package let url: URL
    /// The directory's path.
    package var path: String { url.path }

    /// Creates `<temporary folder>/<label>-<UUID>`.
    package init(_ label: String = "kvdocs") {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(label)-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// A path inside the directory (not created).
    package func child(_ name: String) -> String { url.appendingPathComponent(name).path }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// Opens a fresh database in a temporary directory, runs `body` with it and its path,
/// then closes and removes it.
@discardableResult
package func withTemporaryDatabase<R>(
    options: LevelDBOptions = LevelDBOptions(),
    _ body: (LevelDB, String) throws -> R
) throws -> R {
    let dir = TemporaryDirectory()
    let path = dir.child("db")
    let db = try LevelDB(path: path, options: options)
    defer { db.close() }
    return try withExtendedLifetime(dir) { try body(db, path) }
}

extension Array where Element == UInt8 {
    /// The bytes in lower-case hex, without a prefix.
    package var hex: String { map { String(format: "%02x", $0) }.joined() }
}
