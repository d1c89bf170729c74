import CLevelDB
import KVSupport

/// Reads a LevelDB table file's structure (`table/format.h`) and checks the checksum of
/// every block, to name the table a `block checksum mismatch` came from (LevelDB's message
/// does not say).
///
/// A table ends with a 48-byte footer: the handles (offset and size, as varints) of the
/// metaindex and index blocks, padding, and a magic number. The index block maps keys to
/// the handles of the data blocks. Every block is followed by a one-byte compression type
/// (0 none, 1 Snappy) and the masked CRC-32C of the block and that byte.
///
/// In a build without Snappy (``LevelDBOptions/Compression/snappyIsAvailable``), a
/// Snappy-compressed block is counted in ``snappyBlocks``, never reported as damage; when
/// the index block itself is compressed, the data blocks cannot be found and are not checked.
package struct TableFileCheck: Equatable {
    /// The blocks whose checksums were checked.
    package var blocks = 0
    /// The checked blocks that are Snappy-compressed.
    package var snappyBlocks = 0
    /// What was wrong, or `nil` when every block is sound.
    package var damage: String?

    static let footerSize = 48
    static let magic: UInt64 = 0xDB47_7524_8B80_FB57

    package init(_ bytes: UnsafeRawBufferPointer) {
        do {
            try check(bytes)
        } catch let failure as Damage {
            damage = failure.description
        } catch {
            damage = "\(error)"
        }
    }

    private struct Damage: Error, CustomStringConvertible {
        var description: String
    }

    private mutating func check(_ bytes: UnsafeRawBufferPointer) throws {
        guard bytes.count >= Self.footerSize else {
            throw Damage(description: "shorter than a table footer (\(bytes.count) bytes)")
        }
        let footer = bytes.count - Self.footerSize
        var magic: UInt64 = 0
        for i in 0..<8 { magic |= UInt64(bytes[bytes.count - 8 + i]) << (8 * i) }
        guard magic == Self.magic else { throw Damage(description: "no table magic number at the end") }
        var position = footer
        let metaindex = try Self.handle(bytes, &position, limit: bytes.count - 8)
        let index = try Self.handle(bytes, &position, limit: bytes.count - 8)
        _ = try block(bytes, metaindex, what: "metaindex")
        guard let indexBlock = try block(bytes, index, what: "index") else { return }
        for data in try indexBlock.withUnsafeBytes({ try Self.dataHandles($0) })
        where try verified(bytes, data, what: "data") == 1 {
            snappyBlocks += 1
        }
    }

    /// The data block handles of an uncompressed index block. Its entries: shared, unshared
    /// and value lengths (varint32), the unshared key bytes, the value (a block handle).
    /// Restart offsets and their count end it.
    static func dataHandles(_ entries: UnsafeRawBufferPointer) throws -> [(offset: Int, size: Int)] {
        guard entries.count >= 4 else { throw Damage(description: "index block of \(entries.count) bytes") }
        var restarts = 0
        for i in 0..<4 { restarts |= Int(entries[entries.count - 4 + i]) << (8 * i) }
        guard restarts >= 1, restarts <= (entries.count - 4) / 4 else {
            throw Damage(description: "index block with \(restarts) restart points")
        }
        let end = entries.count - 4 - 4 * restarts
        var handles: [(offset: Int, size: Int)] = []
        var p = 0
        while p < end {
            _ = try varint(entries, &p, limit: end)
            let unshared = try varint(entries, &p, limit: end)
            let valueLength = try varint(entries, &p, limit: end)
            guard unshared <= end - p else { throw Damage(description: "index entry past the index block") }
            p += unshared
            guard valueLength <= end - p else { throw Damage(description: "index entry past the index block") }
            var q = p
            handles.append(try handle(entries, &q, limit: p + valueLength))
            p += valueLength
        }
        return handles
    }

    /// A block handle: offset and size, as varints.
    static func handle(_ bytes: UnsafeRawBufferPointer, _ p: inout Int, limit: Int) throws -> (offset: Int, size: Int) {
        (try varint(bytes, &p, limit: limit), try varint(bytes, &p, limit: limit))
    }

    private static func varint(_ bytes: UnsafeRawBufferPointer, _ p: inout Int, limit: Int) throws -> Int {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while p < limit, shift < 64 {
            let byte = bytes[p]
            p += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 {
                guard value <= UInt64(Int.max) else { break }
                return Int(value)
            }
            shift += 7
        }
        throw Damage(description: "a damaged varint at offset \(p)")
    }

    /// Checks a block's checksum and returns its type.
    private mutating func verified(_ bytes: UnsafeRawBufferPointer, _ h: (offset: Int, size: Int), what: String) throws
        -> UInt8
    {
        guard h.offset >= 0, h.size >= 0, h.offset <= bytes.count, h.size <= bytes.count - h.offset,
            bytes.count - h.offset - h.size >= 5
        else {
            throw Damage(description: "\(what) block at offset \(h.offset) (\(h.size) bytes) past the end of the file")
        }
        let end = h.offset + h.size
        let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[h.offset...end]))
        var stored: UInt32 = 0
        for i in 0..<4 { stored |= UInt32(bytes[end + 1 + i]) << (8 * i) }
        guard CRC32C.mask(crc) == stored else {
            throw Damage(description: "\(what) block at offset \(h.offset): checksum mismatch")
        }
        blocks += 1
        return bytes[end]
    }

    /// A verified block's contents, uncompressed; `nil` for a Snappy-compressed block in a
    /// build without Snappy.
    private mutating func block(_ bytes: UnsafeRawBufferPointer, _ h: (offset: Int, size: Int), what: String) throws
        -> [UInt8]?
    {
        let type = try verified(bytes, h, what: what)
        let raw = UnsafeRawBufferPointer(rebasing: bytes[h.offset..<(h.offset + h.size)])
        switch type {
        case 0:
            return Array(raw)
        case 1:
            snappyBlocks += 1
            #if KVDOCS_WITHOUT_SNAPPY
            return nil
            #else
            let input = raw.baseAddress?.assumingMemoryBound(to: CChar.self)
            var length = 0
            guard let input, snappy_uncompressed_length(input, raw.count, &length) == SNAPPY_OK, length <= 1 << 30
            else {
                throw Damage(description: "\(what) block at offset \(h.offset): bad Snappy data")
            }
            var output = [UInt8](repeating: 0, count: length)
            let status = output.withUnsafeMutableBytes { out in
                snappy_uncompress(input, raw.count, out.baseAddress?.assumingMemoryBound(to: CChar.self), &length)
            }
            guard status == SNAPPY_OK else {
                throw Damage(description: "\(what) block at offset \(h.offset): bad Snappy data")
            }
            return Array(output.prefix(length))
            #endif
        default:
            throw Damage(description: "\(what) block at offset \(h.offset): unknown compression type \(type)")
        }
    }
}
