import Foundation
import KVSupport

/// One file of a LevelDB directory, identified by its content: its name, size and CRC-32C,
/// with the `stat` facts (inode, modification and status-change times) that tell cheaply
/// whether the content may have changed since.
package struct DatabaseFile: Codable, Equatable, Sendable {
    /// The file's name in its directory.
    package var name: String
    /// Its size in bytes.
    var size: Int
    /// CRC-32C (Castagnoli) of its bytes.
    var crc32c: UInt32
    /// `st_dev`.
    var device: UInt64
    /// `st_ino`.
    var inode: UInt64
    /// `st_mtim`, in nanoseconds since 1970.
    var modified: Int64
    /// `st_ctim`, in nanoseconds since 1970: set by the kernel on every change of the file's
    /// content or metadata, and not settable by programs.
    var statusChanged: Int64

    /// Whether `other` has the same content (name, size and checksum).
    func sameContent(as other: DatabaseFile) -> Bool {
        name == other.name && size == other.size && crc32c == other.crc32c
    }
}

/// The files of a LevelDB directory that make its contents (`CURRENT`, manifests, logs and
/// tables; not `LOCK` or the informational `LOG`), copied and identified by content.
///
/// **Invariants.** A copy is byte for byte, never a hard link: a file overwritten in place
/// in the source (`cp new/* shipped.db/`) leaves the copy as it was. The checksums of a copy
/// are those of the bytes copied, and the source is checked unchanged (same `stat`) across
/// the copy.
package enum DatabaseFiles {
    /// The names of the content files of `directory`, sorted.
    static func names(in directory: String) throws -> [String] {
        let all: [String]
        do {
            all = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw KVDocsError(.ioError, "cannot list \(directory): \(error.localizedDescription)", path: directory)
        }
        return all.filter(isContent).sorted()
    }

    static func isContent(_ name: String) -> Bool {
        name == "CURRENT" || name.hasPrefix("MANIFEST-") || name.hasSuffix(".log") || name.hasSuffix(".ldb")
            || name.hasSuffix(".sst")
    }

    /// The `stat` facts of `path`, with `crc32c` 0 (not read).
    static func status(_ path: String, name: String) throws -> DatabaseFile {
        var s = stat()
        guard stat(path, &s) == 0 else {
            throw KVDocsError(.ioError, "cannot stat \(path): \(String(cString: strerror(errno)))", path: path)
        }
        guard (s.st_mode & S_IFMT) == S_IFREG else {
            throw KVDocsError(.invalidArgument, "\(path) is not a regular file", path: path)
        }
        // Darwin names the times' fields st_mtimespec and st_ctimespec.
        #if canImport(Darwin)
        let (modified, changed) = (s.st_mtimespec, s.st_ctimespec)
        #else
        let (modified, changed) = (s.st_mtim, s.st_ctim)
        #endif
        return DatabaseFile(
            name: name, size: Int(s.st_size), crc32c: 0, device: UInt64(s.st_dev), inode: UInt64(s.st_ino),
            modified: Int64(modified.tv_sec) * 1_000_000_000 + Int64(modified.tv_nsec),
            statusChanged: Int64(changed.tv_sec) * 1_000_000_000 + Int64(changed.tv_nsec))
    }

    /// The content of every content file of `directory`. A file whose `stat` facts (size,
    /// device, inode, modification and status-change times) equal those of its entry in
    /// `known` keeps that entry's checksum; any other file is read. On file systems whose
    /// status-change time is not kept (FAT, some network mounts), a file rewritten in place
    /// with the same size and a restored modification time is not noticed.
    package static func fingerprint(_ directory: String, known: [DatabaseFile] = []) throws -> [DatabaseFile] {
        let byName = Dictionary(known.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        return try names(in: directory).map { name in
            let path = directory + "/" + name
            var file = try status(path, name: name)
            if let old = byName[name], old.size == file.size, old.device == file.device, old.inode == file.inode,
                old.modified == file.modified,
                old.statusChanged == file.statusChanged
            {
                file.crc32c = old.crc32c
            } else {
                file.crc32c = try checksum(path)
            }
            return file
        }
    }

    /// Whether two fingerprints name the same files with the same content.
    package static func sameContent(_ a: [DatabaseFile], _ b: [DatabaseFile]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { $0.sameContent(as: $1) }
    }

    /// CRC-32C of the bytes of the file at `path`.
    static func checksum(_ path: String) throws -> UInt32 {
        try readChunks(path) { _ in }
    }

    /// Reads the file at `path` in chunks of 1 MiB, handing each to `body`; returns the
    /// CRC-32C of all of them.
    private static func readChunks(_ path: String, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> UInt32 {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else {
            throw KVDocsError(.ioError, "cannot open \(path): \(String(cString: strerror(errno)))", path: path)
        }
        defer { close(fd) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        var crc: UInt32 = 0
        while true {
            let n = read(fd, buffer.baseAddress, buffer.count)
            if n < 0 {
                if errno == EINTR { continue }
                throw KVDocsError(.ioError, "cannot read \(path): \(String(cString: strerror(errno)))", path: path)
            }
            if n == 0 { return crc }
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
            crc = CRC32C.checksum(chunk, continuing: crc)
            try body(chunk)
        }
    }

    /// Copies the content files of `source` into the new directory `destination` (made
    /// here; removed again on failure), each synced, then the directory; calls `progress`
    /// with (files copied, files in all). Returns the files as copied.
    /// - Throws: `.ioError` naming the file; a source file that changes while it is copied
    ///   fails the copy ("changed while it was copied").
    package static func copy(from source: String, to destination: String, progress: ((Int, Int) -> Void)? = nil) throws
        -> [DatabaseFile]
    {
        let fm = FileManager.default
        do {
            try fm.createDirectory(atPath: destination, withIntermediateDirectories: false)
        } catch {
            throw KVDocsError(
                .ioError, "cannot create \(destination): \(error.localizedDescription)", path: destination)
        }
        do {
            let names = try names(in: source)
            var files: [DatabaseFile] = []
            for (i, name) in names.enumerated() {
                files.append(try copyFile(source + "/" + name, to: destination + "/" + name, name: name))
                progress?(i + 1, names.count)
            }
            try LevelDB.syncDirectory(destination)
            return files
        } catch {
            try? fm.removeItem(atPath: destination)
            throw error
        }
    }

    private static func copyFile(_ from: String, to: String, name: String) throws -> DatabaseFile {
        var file = try status(from, name: name)
        let output = open(to, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        guard output >= 0 else {
            throw KVDocsError(.ioError, "cannot create \(to): \(String(cString: strerror(errno)))", path: to)
        }
        defer { close(output) }
        var total = 0
        let crc = try readChunks(from) { chunk in
            guard let start = chunk.baseAddress else { return }
            var offset = 0
            while offset < chunk.count {
                let w = write(output, start + offset, chunk.count - offset)
                if w < 0 {
                    if errno == EINTR { continue }
                    throw KVDocsError(.ioError, "cannot write \(to): \(String(cString: strerror(errno)))", path: to)
                }
                offset += w
            }
            total += chunk.count
        }
        guard fullSync(output) == 0 else {
            throw KVDocsError(.ioError, "cannot sync \(to): \(String(cString: strerror(errno)))", path: to)
        }
        let after = try status(from, name: name)
        guard total == file.size, after.size == file.size, after.modified == file.modified,
            after.statusChanged == file.statusChanged
        else {
            throw KVDocsError(.ioError, "\(from) changed while it was copied", path: from)
        }
        file.crc32c = crc
        return file
    }
}
