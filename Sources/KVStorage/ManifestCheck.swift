import Foundation
import KVSupport

/// Detects a manifest that lost its latest edits before LevelDB opens it.
///
/// A manifest cut at a record boundary (or inside its last record) reads as a sound, shorter
/// manifest: LevelDB would recover the file set of an earlier moment, find the tables
/// written since "obsolete", delete them, and open without an error, having lost their
/// data. The sign of it is a gap in the sequence numbers: the manifest's last sequence
/// number is far below the first write of the oldest log LevelDB would replay (in a sound
/// database, each log starts at most one past the sequence the manifest recorded when it
/// switched to that log).
package enum ManifestCheck {
    /// The manifest's final state: the last sequence number and the log numbers to replay.
    struct State: Equatable {
        var lastSequence: UInt64?
        var logNumber: UInt64?
        var previousLogNumber: UInt64?
    }

    /// The state the version edits of a manifest's records describe, or `nil` when a record
    /// cannot be parsed (LevelDB reports that itself).
    static func state(of records: [[UInt8]]) -> State? {
        var state = State()
        for record in records {
            var p = 0
            func varint() -> UInt64? {
                var value: UInt64 = 0
                var shift: UInt64 = 0
                while p < record.count, shift < 64 {
                    let byte = record[p]
                    p += 1
                    value |= UInt64(byte & 0x7F) << shift
                    if byte & 0x80 == 0 { return value }
                    shift += 7
                }
                return nil
            }
            func skipSlice() -> Bool {
                guard let n = varint(), n <= UInt64(record.count - p) else { return false }
                p += Int(n)
                return true
            }
            while p < record.count {
                guard let tag = varint() else { return nil }
                switch tag {
                case 1: guard skipSlice() else { return nil }  // comparator
                case 2:
                    guard let v = varint() else { return nil }
                    state.logNumber = v
                case 3: guard varint() != nil else { return nil }  // next file number
                case 4:
                    guard let v = varint() else { return nil }
                    state.lastSequence = v
                case 5: guard varint() != nil, skipSlice() else { return nil }  // compact pointer
                case 6: guard varint() != nil, varint() != nil else { return nil }  // deleted file
                case 7:  // new file
                    guard varint() != nil, varint() != nil, varint() != nil, skipSlice(), skipSlice() else {
                        return nil
                    }
                case 9:
                    guard let v = varint() else { return nil }
                    state.previousLogNumber = v
                default: return nil
                }
            }
        }
        return state
    }

    /// A description of the gap, when the database at `path` has one; `nil` otherwise (a
    /// sound database, or damage LevelDB reports itself).
    package static func lostEdits(in path: String) -> String? {
        let fm = FileManager.default
        guard let current = try? String(contentsOfFile: path + "/CURRENT", encoding: .utf8) else { return nil }
        let manifest = current.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let data = readFileBytes(path + "/" + manifest) else { return nil }
        let check = data.withUnsafeBytes { LogFileCheck($0, keeping: .max) }
        guard check.damage == nil, let state = state(of: check.payloads), let last = state.lastSequence,
            let logNumber = state.logNumber
        else { return nil }
        // The logs LevelDB would replay: numbered from the manifest's log number on (and its
        // previous log number), as in `DBImpl::Recover`.
        let names = (try? fm.contentsOfDirectory(atPath: path)) ?? []
        let logs = names.compactMap { name -> UInt64? in
            guard name.hasSuffix(".log"), let n = UInt64(name.dropLast(4)) else { return nil }
            return n >= logNumber || n == state.previousLogNumber ? n : nil
        }.sorted()
        for number in logs {
            let name = String(format: "%06llu.log", number)
            guard let head = readFileBytes(path + "/" + name, limit: LogFileCheck.blockSize) else { continue }
            // The log's first fragment (a whole record, or the first part of one that spans
            // blocks), checked; its payload, a write batch, starts with the batch's sequence
            // number (8 bytes, little-endian).
            let bytes = head
            guard bytes.count >= LogFileCheck.headerSize + 12 else { continue }
            let length = Int(bytes[4]) | Int(bytes[5]) << 8
            let type = bytes[6]
            guard type == 1 || type == 2, length >= 12, LogFileCheck.headerSize + length <= bytes.count else {
                continue
            }
            var stored: UInt32 = 0
            for i in 0..<4 { stored |= UInt32(bytes[i]) << (8 * i) }
            guard CRC32C.mask(CRC32C.checksum(bytes[6..<(LogFileCheck.headerSize + length)])) == stored else {
                continue
            }
            var sequence: UInt64 = 0
            for i in 0..<8 { sequence |= UInt64(bytes[LogFileCheck.headerSize + i]) << (8 * i) }
            if sequence > last &+ 1 {
                return
                    "\(path)/\(manifest) ends at sequence \(last), but the oldest log to replay, \(name), starts at \(sequence): the manifest lost its latest edits (cut short?), and opening would drop the tables written since. Run LevelDB.repair(path:) to rebuild it from every table and log"
            }
            return nil
        }
        return nil
    }
}
