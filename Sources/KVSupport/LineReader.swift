import Foundation

/// Reads a file line by line in fixed-size chunks, so memory stays bounded whatever the
/// file's size: a line is held whole, nothing more than the longest line plus one chunk.
///
/// Lines end with `\n`; a `\r` before it is dropped (`\r\n` files read like `\n` files).
/// The last line needs no newline (a `\r` ending it is then kept, as it ends no line).
/// Reading is linear in the file's size whatever the lines' lengths: each byte is
/// searched for a newline once, and moved at most once (when the buffer is refilled).
///
/// A line longer than ``maximumLineLength`` bytes (not counting its `\r\n`) is an error
/// rather than an unbounded allocation.
public struct LineReader {
    /// The default longest line: 64 MiB.
    public static let defaultMaximumLineLength = 64 << 20
    /// The size of each read from the file: 64 KiB.
    package static let chunkSize = 1 << 16

    /// The file read.
    public let path: String
    /// The longest line accepted, in bytes, not counting its line ending.
    public let maximumLineLength: Int
    /// The number of the line last returned, from 1.
    public private(set) var lineNumber = 0
    /// The bytes of the file consumed by the lines returned so far (line endings included).
    public private(set) var bytesConsumed = 0

    private let file: FileDescriptor
    /// Bytes read from the file: `buffer[start..<end]` are not yet returned as lines.
    private var buffer: [UInt8] = []
    private var start = 0
    private var end = 0
    /// `buffer[start..<scanned]` holds no newline: the next search starts at `scanned`.
    private var scanned = 0
    private var atEnd = false

    /// Opens `path` for reading.
    /// - Parameters:
    ///   - path: the file to read.
    ///   - maximumLineLength: the longest line accepted, in bytes (at least 1);
    ///     ``defaultMaximumLineLength`` by default.
    /// - Throws: `.ioError` when the file cannot be opened, `.invalidArgument` for a
    ///   maximum below 1.
    public init(path: String, maximumLineLength: Int = LineReader.defaultMaximumLineLength) throws {
        guard maximumLineLength >= 1 else {
            throw KVDocsError(
                .invalidArgument, "the maximum line length must be at least 1 byte, not \(maximumLineLength)")
        }
        let fd = Foundation.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw KVDocsError(.ioError, "cannot open \(path) for reading: \(String(cString: strerror(errno)))")
        }
        self.file = FileDescriptor(fd)
        self.path = path
        self.maximumLineLength = maximumLineLength
    }

    /// The next line without its newline (and without a `\r` before it), or `nil` at the end.
    /// - Throws: `.invalidArgument` for a line longer than ``maximumLineLength`` (naming the
    ///   file, the line number and the limit), `.ioError` when reading fails or the reader
    ///   is closed.
    public mutating func next() throws -> Data? {
        try withNextLine { Data($0) }
    }

    /// Lends the next line (without its `\n` or `\r\n`) to `body`, in place: the bytes
    /// are valid only inside `body`. Returns `nil` at the end of the file.
    /// - Throws: as ``next()``, or what `body` throws.
    public mutating func withNextLine<R>(_ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        guard let (lineStart, lineEnd, next) = try nextBounds() else { return nil }
        let result = try buffer.withUnsafeBytes { bytes in
            try body(UnsafeRawBufferPointer(rebasing: bytes[lineStart..<lineEnd]))
        }
        advance(to: next)
        return result
    }

    /// The bounds of the next line in the buffer, and where the line after it starts.
    private mutating func nextBounds() throws -> (Int, Int, Int)? {
        while true {
            if scanned < end, let newline = findNewline() {
                var lineEnd = newline
                if lineEnd > start && buffer[lineEnd - 1] == UInt8(ascii: "\r") { lineEnd -= 1 }
                try checkLength(lineEnd - start)
                return (start, lineEnd, newline + 1)
            }
            scanned = end
            try checkLength(end - start - (end > start && buffer[end - 1] == UInt8(ascii: "\r") ? 1 : 0))
            if atEnd {
                guard start < end else { return nil }
                try checkLength(end - start)
                return (start, end, end)
            }
            try refill()
        }
    }

    private mutating func advance(to next: Int) {
        bytesConsumed += next - start
        start = next
        scanned = next
        lineNumber += 1
    }

    /// Closes the file; later reads throw `.ioError`. Closing twice is harmless.
    public func close() { file.close() }

    /// The index of the first newline in `buffer[scanned..<end]`, or `nil`.
    private func findNewline() -> Int? {
        buffer.withUnsafeBytes { bytes -> Int? in
            guard let base = bytes.baseAddress,
                let found = memchr(base + scanned, Int32(UInt8(ascii: "\n")), end - scanned)
            else { return nil }
            return base.distance(to: UnsafeRawPointer(found))
        }
    }

    private func checkLength(_ length: Int) throws {
        guard length > maximumLineLength else { return }
        throw KVDocsError(
            .invalidArgument, "\(path):\(lineNumber + 1): line longer than the maximum of \(maximumLineLength) bytes")
    }

    /// Returns `buffer[start..<lineEnd]` and moves past it to `next`.
    private mutating func refill() throws {
        let fd = file.fd
        guard fd >= 0 else { throw KVDocsError(.ioError, "\(path): the line reader is closed") }
        let pending = end - start
        let needed = pending + Self.chunkSize
        if buffer.count < needed || buffer.count > 4 * max(needed, Self.chunkSize) {
            // Grow geometrically (linear total copying); shrink after a long line.
            var resized = [UInt8](repeating: 0, count: buffer.count < needed ? max(needed, 2 * buffer.count) : needed)
            buffer.withUnsafeBytes { old in
                resized.withUnsafeMutableBytes { new in
                    if pending > 0, let from = old.baseAddress, let to = new.baseAddress {
                        to.copyMemory(from: from + start, byteCount: pending)
                    }
                }
            }
            buffer = resized
        } else if start > 0 && pending > 0 {
            buffer.withUnsafeMutableBytes { bytes in
                if let base = bytes.baseAddress { memmove(base, base + start, pending) }
            }
        }
        scanned -= start
        start = 0
        end = pending
        let count = buffer.withUnsafeMutableBytes { bytes -> Int in
            guard let base = bytes.baseAddress else { return 0 }
            while true {
                let n = Foundation.read(fd, base + end, bytes.count - end)
                if n < 0 && errno == EINTR { continue }
                return n
            }
        }
        guard count >= 0 else {
            throw KVDocsError(.ioError, "\(path):\(lineNumber + 1): cannot read: \(String(cString: strerror(errno)))")
        }
        if count == 0 { atEnd = true }
        end += count
    }
}

/// An open file descriptor, closed once: by ``close()`` or when the last reader copy goes away.
private final class FileDescriptor {
    private(set) var fd: Int32

    init(_ fd: Int32) { self.fd = fd }

    func close() {
        if fd >= 0 { _ = Foundation.close(fd) }
        fd = -1
    }

    deinit { close() }
}
