import Foundation
import KVSupport

#if canImport(Glibc)
import Glibc
#endif

extension LevelDB {
    /// The file that marks a backup's temporary directory (`DIR.partial-UUID`) as a backup
    /// in progress. A later backup to `DIR` removes a directory of that name only when it
    /// holds this file, with ``backupMarkerContents``, and no running backup holds its lock.
    package static let backupMarkerName = "KVDOCS-BACKUP-IN-PROGRESS"
    /// What ``backupMarkerName`` holds, for a person who finds the directory.
    package static let backupMarkerContents =
        "KVDocs backup in progress. If no backup is running, one was interrupted here: the next backup to the same directory removes this one.\n"
}

/// Where ``LevelDB/backup(to:options:progress:)`` writes: the target as given, without
/// trailing slashes, and the same directory as an absolute path with its existing part's
/// symbolic links, `.` and `..` resolved, which every file operation uses.
struct BackupTarget {
    /// The target as given, without trailing slashes (for messages and the report).
    let path: String
    /// The target, absolute and resolved.
    let resolved: String
    /// The directory that holds it, absolute and resolved.
    let parent: String
    /// Its last component.
    let name: String

    /// - Throws: `.invalidArgument` when `given` names no new directory (`/`, `.`, `..`)
    ///   or names one that exists (a file, a directory, a symbolic link, even a dangling one).
    init(_ given: String) throws {
        var path = given
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        self.path = path
        let components = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard let last = components.last, last != ".", last != ".." else {
            throw KVDocsError(
                .invalidArgument, "cannot back up to \(given.isEmpty ? "\"\"" : given): it names no new directory",
                path: given)
        }
        try Self.refuseExisting(path, shown: path)
        // The longest part of the path that exists, resolved; the rest does not exist yet,
        // so its `.` and `..` are resolved by name.
        let absolute =
            path.hasPrefix("/")
            ? components
            : FileManager.default.currentDirectoryPath
                .split(separator: "/", omittingEmptySubsequences: true).map(String.init) + components
        var resolved: [String] = []
        var rest = absolute[...]
        for count in stride(from: absolute.count - 1, through: 0, by: -1) {
            if let real = Self.realPath("/" + absolute.prefix(count).joined(separator: "/")) {
                resolved = real.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
                rest = absolute.dropFirst(count)
                break
            }
        }
        for component in rest {
            switch component {
            case ".": continue
            case "..": _ = resolved.popLast()
            default: resolved.append(component)
            }
        }
        guard let name = resolved.last else {
            throw KVDocsError(.invalidArgument, "cannot back up to \(path): it names no new directory", path: path)
        }
        self.name = name
        self.resolved = "/" + resolved.joined(separator: "/")
        self.parent = "/" + resolved.dropLast().joined(separator: "/")
        if self.resolved != path { try Self.refuseExisting(self.resolved, shown: path) }
    }

    private static func refuseExisting(_ path: String, shown: String) throws {
        var status = stat()
        guard lstat(path, &status) != 0 else {
            throw KVDocsError(
                .invalidArgument, "cannot back up to \(shown): it exists (a backup goes to a new directory)",
                path: shown)
        }
    }

    private static func realPath(_ path: String) -> String? {
        guard let real = realpath(path, nil) else { return nil }
        defer { free(real) }
        return String(cString: real)
    }

    /// Refuses a target inside a layered database's layers directory (`USER.layers`: it
    /// holds `LAYERS.json`, or `USER` beside it is a database). The layered database keeps
    /// its base copies there and removes the directories it does not use, a backup too.
    /// - Throws: `.invalidArgument` naming the layers directory.
    func refuseLayersDirectory() throws {
        let fm = FileManager.default
        var directory = parent
        while directory != "/" {
            if directory.hasSuffix(".layers"),
                fm.fileExists(atPath: directory + "/LAYERS.json")
                    || fm.fileExists(atPath: directory + "/LAYERS.json.new")
                    || fm.fileExists(atPath: String(directory.dropLast(".layers".count)) + "/CURRENT")
            {
                throw KVDocsError(
                    .invalidArgument,
                    "cannot back up to \(path): it is inside the layers directory \(directory) of a layered database, which keeps its base copies there and removes every other directory in it; choose a directory outside it",
                    path: path)
            }
            directory = (directory as NSString).deletingLastPathComponent
        }
    }

    /// Makes the missing directories above the target, outermost first.
    /// - Returns: the directories made, outermost first, for removal if the backup fails.
    /// - Throws: `.invalidArgument` when the nearest existing one is not a directory;
    ///   `.ioError` naming the directory that cannot be made (none is left made).
    func makeParents() throws -> [String] {
        var missing: [String] = []
        var directory = parent
        var isDirectory: ObjCBool = false
        while directory != "/", !FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
            missing.append(directory)
            directory = (directory as NSString).deletingLastPathComponent
        }
        guard directory == "/" || isDirectory.boolValue else {
            throw KVDocsError(
                .invalidArgument, "cannot back up to \(path): \(directory) is not a directory", path: path)
        }
        var made: [String] = []
        for directory in missing.reversed() {
            do {
                try Self.makeDirectory(directory)
                made.append(directory)
            } catch let error as KVDocsError {
                for done in made.reversed() { _ = rmdir(done) }
                throw KVDocsError(.ioError, "cannot back up to \(path): \(error.message)", path: path)
            }
        }
        return made
    }

    /// Makes one directory (its parent exists).
    /// - Throws: `.ioError` naming the directory and the system's reason.
    static func makeDirectory(_ directory: String) throws {
        guard mkdir(directory, 0o755) == 0 else {
            throw KVDocsError(
                .ioError, "cannot create the directory \(directory): \(String(cString: strerror(errno)))",
                path: directory)
        }
    }

    /// Removes the temporary directories of earlier backups to this target that were
    /// interrupted: each named `NAME.partial-UUID`, a directory (not a link), holding the
    /// marker with its contents, which no running backup holds locked. Nothing else.
    func removeLeftovers() {
        let fm = FileManager.default
        guard let names = try? fm.contentsOfDirectory(atPath: parent) else { return }
        let prefix = name + ".partial-"
        for entry in names
        where entry.hasPrefix(prefix) && UUID(uuidString: String(entry.dropFirst(prefix.count))) != nil {
            let directory = parent + "/" + entry
            var status = stat()
            guard lstat(directory, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else { continue }
            BackupMarker.removeIfAbandoned(directory)
        }
    }
}

/// The marker of a backup in progress: the file ``LevelDB/backupMarkerName`` in its
/// temporary directory, held locked (`flock`) by the backup while it runs, so that a
/// concurrent backup to the same target never takes it for a leftover. The lock goes with
/// the open file: when the process dies, the directory becomes a leftover.
package final class BackupMarker {
    private var descriptor: Int32
    private let path: String

    /// Writes and locks the marker in `directory`.
    /// - Throws: `.ioError` naming the file.
    package init(creatingIn directory: String) throws {
        path = directory + "/" + LevelDB.backupMarkerName
        descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw KVDocsError(.ioError, "cannot create \(path): \(String(cString: strerror(errno)))", path: path)
        }
        // Locked before it holds its contents, so a backup looking for leftovers never
        // reads them from a marker whose backup is running. Blocking: such a backup holds
        // the lock only while it reads the file.
        let locked = flock(descriptor, LOCK_EX) == 0
        let bytes = Array(LevelDB.backupMarkerContents.utf8)
        let written = locked ? bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } : -1
        guard locked, written == bytes.count else {
            let reason = String(cString: strerror(errno))
            release()
            throw KVDocsError(.ioError, "cannot write and lock \(path): \(reason)", path: path)
        }
    }

    deinit { release() }

    /// Deletes the marker (the backup is complete), then lets go of the lock.
    /// - Throws: `.ioError` when the file cannot be deleted.
    func remove() throws {
        defer { release() }
        guard unlink(path) == 0 else {
            throw KVDocsError(.ioError, "cannot remove \(path): \(String(cString: strerror(errno)))", path: path)
        }
    }

    /// Lets go of the lock, leaving the file.
    package func release() {
        if descriptor >= 0 { _ = Foundation.close(descriptor) }
        descriptor = -1
    }

    /// Removes `directory` when it holds a marker with the marker's contents that no
    /// backup holds locked. Anything it cannot read is left alone.
    static func removeIfAbandoned(_ directory: String) {
        let path = directory + "/" + LevelDB.backupMarkerName
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        defer { _ = Foundation.close(descriptor) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { return }  // a backup is running
        let expected = Array(LevelDB.backupMarkerContents.utf8)
        var buffer = [UInt8](repeating: 0, count: expected.count + 1)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count == expected.count, Array(buffer.prefix(count)) == expected else { return }
        try? FileManager.default.removeItem(atPath: directory)
    }
}
