/// CRC-32C (Castagnoli), the checksum LevelDB stores with every log record and table block,
/// and LevelDB's masking of stored checksums (`util/crc32c.h`).
///
/// Table-driven, one byte at a time: it is used to check log files before a repair, where
/// the disk, not the checksum, sets the pace.
package enum CRC32C {
    /// The reflected Castagnoli polynomial.
    private static let polynomial: UInt32 = 0x82F6_3B78

    private static let table: [UInt32] = (0..<256).map { byte in
        var crc = UInt32(byte)
        for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ polynomial : crc >> 1 }
        return crc
    }

    /// The CRC-32C of `bytes`, continuing from `crc` (the CRC of the bytes before them; 0 to start).
    package static func checksum<Bytes: Sequence<UInt8>>(_ bytes: Bytes, continuing crc: UInt32 = 0) -> UInt32 {
        var c = ~crc
        for byte in bytes { c = table[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
        return ~c
    }

    /// The CRC-32C of a raw buffer, continuing from `crc`.
    package static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        var c = ~crc
        table.withUnsafeBufferPointer { t in
            for byte in bytes { c = t[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
        }
        return ~c
    }

    /// LevelDB stores `mask(crc)` rather than the CRC itself, because computing the CRC of
    /// a string that contains embedded CRCs is problematic.
    package static func mask(_ crc: UInt32) -> UInt32 {
        ((crc >> 15) | (crc << 17)) &+ 0xA282_EAD8
    }
}
