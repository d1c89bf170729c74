import Foundation
import KVSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Finds the tables of a database that hold Snappy-compressed blocks, from the one-byte
/// compression type after each block (`table/format.h`), so that a build without Snappy
/// (``LevelDBOptions/Compression/snappyIsAvailable``) reports such a database as exactly
/// that, before LevelDB reads it: LevelDB would call each compressed block "corrupted
/// compressed block contents", and a repair would then drop it.
///
/// A quick look reads, per table, the footer, the index block and the type bytes of the
/// metaindex block and of the first and last data blocks: a few small reads, whatever the
/// table's size. LevelDB compresses a block only when Snappy saves an eighth of it, so a
/// table of data too random to compress may show no compressed block in those places and
/// still hold one; reads of such a block are then reported as `.unsupportedCompression` too
/// (``KVDocsError`` from LevelDB's status). A thorough look reads every table whole and
/// checks every block: repair and salvage use it.
package enum SnappyTables {
    /// The table files (`.ldb`, `.sst`) of the database at `path` that hold Snappy-compressed
    /// blocks, sorted, each as `NAME (what is compressed)`. Tables that cannot be read or
    /// parsed are left out (LevelDB reports those).
    package static func find(in path: String, thorough: Bool) -> [String] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [])
            .filter { $0.hasSuffix(".ldb") || $0.hasSuffix(".sst") }.sorted()
        var found: [String] = []
        for name in names {
            let file = path + "/" + name
            if thorough {
                guard let bytes = readFileBytes(file) else { continue }
                let check = bytes.withUnsafeBytes { TableFileCheck($0) }
                if check.snappyBlocks > 0 { found.append("\(name) (\(check.snappyBlocks) Snappy blocks)") }
            } else if let what = probe(file) {
                found.append("\(name) (\(what))")
            }
        }
        return found
    }

    /// Throws `.unsupportedCompression` naming the Snappy-compressed tables of the database
    /// at `path` when this build has no Snappy; does nothing in a build with Snappy, or when
    /// none is found.
    /// - Parameter operation: what is refused, for the message: `"open"`, `"repair"`, ….
    package static func refuse(_ operation: String, at path: String, thorough: Bool) throws {
        guard !LevelDBOptions.Compression.snappyIsAvailable else { return }
        let tables = find(in: path, thorough: thorough)
        guard !tables.isEmpty else { return }
        let listed = tables.prefix(5).joined(separator: ", ") + (tables.count > 5 ? ", …" : "")
        throw KVDocsError(
            .unsupportedCompression,
            "\(path): \(tables.count) table(s) hold Snappy-compressed blocks (\(listed)), and this build's LevelDB has no Snappy (the bundled LevelDB of Apple platforms): \(operation) refused, nothing was changed. The data is not damaged: rewrite it without compression with a build that has Snappy (kvrepl's write-base DIR, LayeredDocumentStore.writeBase(of:to:progress:), or LevelDB.backup(to:options:progress:) with compression .none)",
            path: path)
    }

    /// What the quick look finds Snappy-compressed in the table at `file`, or `nil`.
    static func probe(_ file: String) -> String? {
        let fd = open(file, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { return nil }
        let size = Int(status.st_size)
        let footerSize = TableFileCheck.footerSize
        guard size >= footerSize, let footer = read(fd, at: size - footerSize, count: footerSize) else { return nil }
        var magic: UInt64 = 0
        for i in 0..<8 { magic |= UInt64(footer[footerSize - 8 + i]) << (8 * i) }
        guard magic == TableFileCheck.magic else { return nil }
        var p = 0
        guard
            let (metaindex, index) = footer.withUnsafeBytes({ bytes in
                try? (
                    TableFileCheck.handle(bytes, &p, limit: footerSize - 8),
                    TableFileCheck.handle(bytes, &p, limit: footerSize - 8)
                )
            }),
            index.size >= 4, index.size <= size, index.offset <= size - index.size - 5,
            let indexBlock = read(fd, at: index.offset, count: index.size + 1)
        else { return nil }
        var compressed: [String] = []
        if metaindex.offset >= 0, metaindex.offset <= size - metaindex.size - 5,
            read(fd, at: metaindex.offset + metaindex.size, count: 1) == [1]
        {
            compressed.append("the metaindex block")
        }
        if indexBlock[index.size] == 1 {
            // The data blocks' handles are inside the compressed index: not readable here.
            compressed.append("the index block")
            return compressed.joined(separator: ", ")
        }
        // A damaged index leaves no data block to look at (LevelDB reports the damage).
        let handles =
            (try? indexBlock.withUnsafeBytes {
                try TableFileCheck.dataHandles(UnsafeRawBufferPointer(rebasing: $0[0..<index.size]))
            }) ?? []
        for (which, h) in [("the first data block", handles.first), ("the last data block", handles.last)] {
            guard let h, h.offset >= 0, h.size >= 0, h.offset <= size - h.size - 5 else { continue }
            if read(fd, at: h.offset + h.size, count: 1) == [1] { compressed.append(which) }
            if handles.count == 1 { break }
        }
        return compressed.isEmpty ? nil : compressed.joined(separator: ", ")
    }

    /// `count` bytes at `offset`, or `nil` when the file is shorter or cannot be read.
    private static func read(_ fd: Int32, at offset: Int, count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = bytes.withUnsafeMutableBytes { buffer in
                pread(fd, buffer.baseAddress.map { $0 + done }, count - done, off_t(offset + done))
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return nil }
            done += n
        }
        return bytes
    }
}
