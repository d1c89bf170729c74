import KVSupport

/// Reads a LevelDB log file's framing (`db/log_format.h`) and finds where its intact part
/// ends, so that a repair can keep a consistent prefix of the writes.
///
/// A log is a sequence of 32 KiB blocks. Each record fragment has a 7-byte header (the
/// masked CRC-32C of its type and payload, its length, its type) and never crosses a block;
/// a logical record (one write batch) is one `full` fragment, or `first`, `middle`…, `last`.
/// Fewer than 7 bytes left in a block are padding.
///
/// LevelDB's repairer replays logs without checking their checksums, so a damaged record
/// could put garbled keys, or part of a batch, into the repaired database. Cutting the log
/// at the first damaged record instead loses the writes from there on, whole, and keeps
/// every batch all-or-nothing.
package struct LogFileCheck: Equatable {
    /// The bytes up to the end of the last whole logical record before the first damage.
    package var intactLength: Int
    /// The number of logical records in the intact part.
    package var records: Int
    /// The first `keeping` logical records of the intact part (see `init`).
    package var payloads: [[UInt8]] = []
    /// What was wrong at `intactLength`, or `nil` when the log is sound (a record cut short
    /// at the very end, as a writer that died leaves it, is sound: LevelDB ignores it too).
    package var damage: String?
    /// Where the damage of ``damage`` begins: the offset of the fragment that failed its
    /// check (at or after ``intactLength``); `nil` for a sound log.
    var damageOffset: Int?
    /// The end of the last fragment that passed its checks, whole record or not: where the
    /// log stops being a chain of intact fragments (at or after ``intactLength``).
    var chainEnd: Int

    package static let blockSize = 32_768
    package static let headerSize = 7

    /// Checks the log in `bytes`, keeping the first `keeping` logical records in ``payloads``.
    package init(_ bytes: UnsafeRawBufferPointer, keeping: Int = 0) {
        var payloads: [[UInt8]] = []
        var pending: [UInt8] = []
        var offset = 0
        var inFragmentedRecord = false
        var intact = 0
        var records = 0
        var damage: String?
        var damageOffset: Int?
        var chainEnd = 0
        let size = bytes.count

        scan: while offset < size {
            let blockEnd = min(size, (offset / Self.blockSize + 1) * Self.blockSize)
            if blockEnd - offset < Self.headerSize {
                // Padding at the end of a block, or a header cut short at the end of the file.
                offset = blockEnd
                continue
            }
            let length = Int(bytes[offset + 4]) | Int(bytes[offset + 5]) << 8
            let type = bytes[offset + 6]
            if type == 0 && length == 0 {
                // Preallocated zeroes: the rest of the block holds nothing.
                offset = blockEnd
                continue
            }
            if offset + Self.headerSize + length > blockEnd {
                if blockEnd == size {
                    // A fragment cut short by the end of the file: the writer died while writing it.
                    break scan
                }
                damage = "bad record length at offset \(offset)"
                damageOffset = offset
                break scan
            }
            let stored =
                UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8
                | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24
            let crc = CRC32C.checksum(
                UnsafeRawBufferPointer(rebasing: bytes[(offset + 6)..<(offset + Self.headerSize + length)]))
            guard CRC32C.mask(crc) == stored else {
                damage = "checksum mismatch at offset \(offset)"
                damageOffset = offset
                break scan
            }
            switch type {
            case 1, 2:  // full, first
                if inFragmentedRecord {
                    damage = "a record without its last fragment before offset \(offset)"
                    damageOffset = offset
                    break scan
                }
                inFragmentedRecord = type == 2
            case 3, 4:  // middle, last
                if !inFragmentedRecord {
                    damage = "a record fragment without its first fragment at offset \(offset)"
                    damageOffset = offset
                    break scan
                }
                inFragmentedRecord = type == 3
            default:
                damage = "unknown record type \(type) at offset \(offset)"
                damageOffset = offset
                break scan
            }
            if payloads.count < keeping {
                if type == 1 || type == 2 { pending.removeAll(keepingCapacity: true) }
                pending.append(
                    contentsOf: UnsafeRawBufferPointer(
                        rebasing: bytes[(offset + Self.headerSize)..<(offset + Self.headerSize + length)]))
            }
            offset += Self.headerSize + length
            chainEnd = offset
            if !inFragmentedRecord {
                records += 1
                intact = offset
                if payloads.count < keeping { payloads.append(pending) }
            }
        }
        self.intactLength = intact
        self.records = records
        self.payloads = payloads
        self.damage = damage
        self.damageOffset = damageOffset
        self.chainEnd = chainEnd
    }
}
