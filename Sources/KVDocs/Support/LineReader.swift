import Foundation

/// Reads a file line by line in fixed-size chunks, so memory stays bounded whatever the
/// file's size (a single line is held whole).
public struct LineReader {
    private let handle: FileHandle
    private var buffer = Data()
    private var atEnd = false
    /// The number of the line last returned, from 1.
    public private(set) var lineNumber = 0

    /// - Throws: `.ioError` when the file cannot be opened.
    public init(path: String) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw KVDocsError(.ioError, "cannot open \(path) for reading")
        }
        self.handle = handle
    }

    /// The next line without its newline (and without a trailing `\r`), or `nil` at the end.
    public mutating func next() throws -> Data? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                var line = buffer[buffer.startIndex..<newline]
                buffer = Data(buffer[(newline + 1)...])
                if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
                lineNumber += 1
                return Data(line)
            }
            if atEnd {
                guard !buffer.isEmpty else { return nil }
                let line = buffer
                buffer = Data()
                lineNumber += 1
                return line
            }
            let chunk = try handle.read(upToCount: 1 << 16) ?? Data()
            if chunk.isEmpty { atEnd = true } else { buffer.append(chunk) }
        }
    }

    public func close() { try? handle.close() }
}
