import Foundation
import KVSupport

/// A directory's identity on its file system (device and inode), whatever the path
/// (relative, through a symbolic link) that names it.
struct DirectoryIdentity: Hashable, Sendable {
    let device: UInt64
    let inode: UInt64

    /// The identity of the directory at `path`; `nil` when it cannot be read.
    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}

extension LevelDB {
    /// The directories this process has open as databases.
    static let openDirectories = Locked<Set<DirectoryIdentity>>([])
    /// The directories a thread of this process is opening (from before a torn log tail is
    /// cut until the handle is in ``openDirectories`` or the open failed).
    static let openingDirectories = Locked<Set<DirectoryIdentity>>([])

    /// Why the database directory at `path` is in use, or `nil` when no handle of this
    /// process and no other process has it open.
    ///
    /// LevelDB holds a POSIX lock on `path/LOCK` while a database is open. A process cannot
    /// see its own POSIX locks, and closing any descriptor of a file it has locked releases
    /// them; so this process's own handles are found in ``openDirectories`` first, and only
    /// then is the lock queried (`F_GETLK`, never taking a lock), on a descriptor whose
    /// closing can release nothing.
    static func holder(of path: String) -> String? {
        if let identity = DirectoryIdentity(path: path),
            openDirectories.withLock({ $0.contains(identity) })
        {
            return "a handle of this process"
        }
        let fd = Foundation.open(path + "/LOCK", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { Foundation.close(fd) }
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        guard fcntl(fd, F_GETLK, &lock) == 0, lock.l_type != Int16(F_UNLCK) else { return nil }
        return "another process (pid \(lock.l_pid))"
    }
}
