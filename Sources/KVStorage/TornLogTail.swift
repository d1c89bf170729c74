import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The end of the newest log file that an open dropped because it was torn, as a power
/// loss or an operating-system crash leaves it: see ``LevelDB/recoveredTornTail``.
///
/// LevelDB appends every write to its log and, for a write made with `sync: true`, forces
/// the log to the disk before returning. A power loss can leave the bytes written after the
/// last synced write zeroed, garbled or missing. With ``LevelDBOptions/paranoidChecks`` LevelDB
/// refuses to open a log whose end is garbled ("checksum mismatch"), and it drops a record
/// cut short without a word. KVDocs instead cuts the log at the end of its last whole
/// record, keeps the dropped bytes in `lost/`, reports it, and opens. The writes lost are
/// the latest ones, none of them synced, each one whole: the writes kept are a prefix.
///
/// ```swift
/// let db = try LevelDB(path: path)
/// if let tail = db.recoveredTornTail {
///     print(tail)   // "dropped a torn tail of 000012.log: 5130 bytes from offset 81920 …"
/// }
/// ```
public struct TornLogTail: Sendable, Hashable, CustomStringConvertible {
    /// The log file that was cut, by name (`000012.log`), in the database directory.
    public var logFile: String
    /// Where the log now ends: the end of its last whole record. Every write whose record
    /// ended at or before it is kept.
    public var offset: Int
    /// The bytes dropped from the log (its size before the cut, minus ``offset``).
    public var droppedBytes: Int
    /// The file holding the dropped bytes, under the database's `lost/` directory. For a
    /// private copy (``LevelDB/openPrivateCopy(of:options:under:)``) it is inside the copy,
    /// and goes with it.
    public var savedAs: String
    /// What was wrong where the damage began ("checksum mismatch at offset 81927").
    public var damage: String

    /// A tail of `droppedBytes` bytes cut from `logFile` at `offset`, kept in `savedAs`.
    public init(logFile: String, offset: Int, droppedBytes: Int, savedAs: String, damage: String) {
        self.logFile = logFile
        self.offset = offset
        self.droppedBytes = droppedBytes
        self.savedAs = savedAs
        self.damage = damage
    }

    /// One line: the log, the offset, the bytes dropped and where they are kept.
    public var description: String {
        "dropped a torn tail of \(logFile): \(droppedBytes) bytes from offset \(offset) (\(damage)), writes that were not synced when the system or the process stopped; the bytes are kept in \(savedAs)"
    }
}
