#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Forces the data of the open file (or directory) `descriptor` to stable storage, as
/// LevelDB's synced writes do; returns 0, or -1 with `errno` set.
///
/// On Apple platforms `fsync` only hands the data to the drive, which may keep it in its
/// cache past a power loss: `fcntl(F_FULLFSYNC)` flushes that cache too. LevelDB built with
/// `HAVE_FULLFSYNC` (firebase/leveldb, the bundled LevelDB of Apple platforms) syncs its log,
/// manifest and tables that way, and so does KVDocs for the files it makes durable itself
/// (backups, base copies, the layers record, a cut log tail). Where the file system refuses
/// `F_FULLFSYNC` (some network and FUSE file systems), `fsync` is used, as LevelDB does. Elsewhere
/// (Linux), `fsync`, which flushes the drive's cache.
package func fullSync(_ descriptor: Int32) -> Int32 {
    #if canImport(Darwin)
    if fcntl(descriptor, F_FULLFSYNC) == 0 { return 0 }
    #endif
    return fsync(descriptor)
}
