import Foundation

/// A file written through a buffer, for the exports (``LevelDB/dump(to:range:options:)``,
/// ``DocumentStore/exportJSONLines(from:to:)``): memory stays bounded by the buffer
/// whatever the file's size.
///
/// The file is created, or truncated, when opened. Every failure throws `.ioError` naming
/// the file. ``close()`` writes what is buffered and reports a failure of the last write;
/// a file dropped without ``close()`` (after an error) is closed unflushed.
package final class OutputFile {
    /// The bytes buffered before they are written: 1 MiB.
    static let bufferSize = 1 << 20

    let path: String
    private var fd: Int32
    private var buffer: [UInt8] = []

    /// Creates or truncates `path` (mode 0644 before the umask).
    /// - Throws: `.ioError` when it cannot be opened for writing.
    package init(path: String) throws {
        let fd = Foundation.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw KVDocsError(.ioError, "cannot open \(path) for writing: \(String(cString: strerror(errno)))")
        }
        self.fd = fd
        self.path = path
        buffer.reserveCapacity(Self.bufferSize)
    }

    deinit {
        if fd >= 0 { _ = Foundation.close(fd) }
    }

    /// Appends `bytes`, writing the buffer out when it is full.
    func write(_ bytes: UnsafeRawBufferPointer) throws {
        buffer.append(contentsOf: bytes)
        if buffer.count >= Self.bufferSize { try flush() }
    }

    /// Appends `bytes`, writing the buffer out when it is full.
    package func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    /// Appends the hexadecimal digits (lowercase, two per byte) of `bytes`.
    package func writeHex(_ bytes: UnsafeRawBufferPointer) throws {
        let digits: StaticString = "0123456789abcdef"
        digits.withUTF8Buffer { hex in
            for byte in bytes {
                buffer.append(hex[Int(byte >> 4)])
                buffer.append(hex[Int(byte & 0x0F)])
            }
        }
        if buffer.count >= Self.bufferSize { try flush() }
    }

    /// Writes the buffered bytes to the file.
    func flush() throws {
        guard fd >= 0 else { throw KVDocsError(.ioError, "\(path): the file is closed") }
        try buffer.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress else { return }
            var offset = 0
            while offset < bytes.count {
                let n = Foundation.write(fd, base + offset, bytes.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw KVDocsError(.ioError, "cannot write \(path): \(String(cString: strerror(errno)))")
                }
                offset += n
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes what is buffered and closes the file. Closing twice is harmless.
    package func close() throws {
        guard fd >= 0 else { return }
        try flush()
        let result = Foundation.close(fd)
        fd = -1
        if result != 0 {
            throw KVDocsError(.ioError, "cannot write \(path): \(String(cString: strerror(errno)))")
        }
    }
}

// An output file is written by one thread at a time.
@available(*, unavailable)
extension OutputFile: Sendable {}
