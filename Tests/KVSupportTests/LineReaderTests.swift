import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@Suite struct LineReaderTests {
    /// The lines of `bytes` split in memory: the reference LineReader must agree with.
    /// Lines end with `\n`, a `\r` before it is dropped, a last line without `\n` is kept as is.
    static func referenceLines(_ bytes: [UInt8]) -> [[UInt8]] {
        var pieces = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map(Array.init)
        let last = pieces.removeLast()  // after the last newline: a line only when not empty
        var lines = pieces.map { $0.last == UInt8(ascii: "\r") ? Array($0.dropLast()) : $0 }
        if !last.isEmpty { lines.append(last) }
        return lines
    }

    static func readAll(_ path: String, maximumLineLength: Int = LineReader.defaultMaximumLineLength) throws -> (
        lines: [[UInt8]], reader: LineReader
    ) {
        var reader = try LineReader(path: path, maximumLineLength: maximumLineLength)
        defer { reader.close() }
        var lines: [[UInt8]] = []
        while let line = try reader.next() { lines.append(Array(line)) }
        #expect(try reader.next() == nil)  // the end stays the end
        return (lines, reader)
    }

    /// Random bytes without newlines (a few `\r` inside, which are not line endings).
    static func lineContent(_ length: Int, _ rng: inout SplitMix64) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: length)
        var i = 0
        while i < length {
            var word = rng.next()
            for _ in 0..<8 where i < length {
                let b = UInt8(truncatingIfNeeded: word)
                bytes[i] = b == UInt8(ascii: "\n") ? UInt8(ascii: "x") : b
                word >>= 8
                i += 1
            }
        }
        return bytes
    }

    static func write(_ bytes: [UInt8], _ dir: TemporaryDirectory, _ name: String = "lines.txt") throws -> String {
        let path = dir.child(name)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func randomFilesReadLikeSplittingTheWholeFileInMemory() throws {
        let dir = TemporaryDirectory()
        let chunk = LineReader.chunkSize
        for seed in 0..<24 as Range<UInt64> {
            var rng = SplitMix64(seed: seed)
            var file: [UInt8] = []
            let lineCount = Int.random(in: 0...30, using: &rng)
            for _ in 0..<lineCount {
                let length: Int
                switch Int.random(in: 0..<10, using: &rng) {
                case 0, 1: length = 0  // empty lines
                case 2, 3, 4: length = Int.random(in: 1...200, using: &rng)
                case 5, 6: length = Int.random(in: 1...(3 * chunk), using: &rng)
                // ends at a chunk boundary
                case 7: length = chunk - (file.count % chunk) + Int.random(in: -3...2, using: &rng)
                default: length = Int.random(in: 0...(400 << 10), using: &rng)  // up to 400 KB
                }
                file += Self.lineContent(max(0, length), &rng)
                file += Bool.random(using: &rng) ? [0x0D, 0x0A] : [0x0A]
            }
            if Bool.random(using: &rng) {  // a last line without newline, perhaps ending in \r
                file += Self.lineContent(Int.random(in: 1...(2 * chunk), using: &rng), &rng)
                if Bool.random(using: &rng) { file.append(0x0D) }
            }
            let path = try Self.write(file, dir)
            let (lines, reader) = try Self.readAll(path)
            let expected = Self.referenceLines(file)
            #expect(lines.count == expected.count, "seed \(seed)")
            #expect(lines == expected, "seed \(seed)")
            #expect(reader.lineNumber == expected.count)
            #expect(reader.bytesConsumed == file.count)
        }
    }

    /// A `\r\n` or `\n` on each side of every chunk boundary, and files of exactly one chunk.
    @Test(arguments: [[0x0A], [0x0D, 0x0A], []] as [[UInt8]])
    func lineEndingsAtChunkBoundariesAreFound(ending: [UInt8]) throws {
        let dir = TemporaryDirectory()
        let chunk = LineReader.chunkSize
        var rng = SplitMix64(seed: 99)
        for length in [chunk - 3, chunk - 2, chunk - 1, chunk, chunk + 1, 2 * chunk - 1, 2 * chunk, 2 * chunk + 1] {
            for prefix in [[], [0x41, 0x0A]] as [[UInt8]] {
                let file = prefix + Self.lineContent(length, &rng) + ending + [0x42, 0x0D, 0x0A, 0x0A]
                let lines = try Self.readAll(try Self.write(file, dir)).lines
                #expect(lines == Self.referenceLines(file), "length \(length), prefix \(prefix.count)")
            }
        }
        // Empty file, a lone newline, a lone \r\n, a lone \r.
        for file in [[], [0x0A], [0x0D, 0x0A], [0x0D]] as [[UInt8]] {
            #expect(try Self.readAll(try Self.write(file, dir)).lines == Self.referenceLines(file))
        }
    }

    @Test func aLineLongerThanTheMaximumIsAnErrorNamingTheFileLineAndLimit() throws {
        let dir = TemporaryDirectory()
        let exact = [UInt8](repeating: 0x61, count: 100)
        // Exactly the maximum is accepted, with either ending and at the end of the file.
        var path = try Self.write(exact + [0x0D, 0x0A] + exact + [0x0A] + exact, dir)
        #expect(try Self.readAll(path, maximumLineLength: 100).lines == [exact, exact, exact])
        for (file, line) in [
            (Array("short\n".utf8) + exact + [0x61, 0x0A], 2),  // one byte too many
            (exact + [0x0A] + exact + [0x61], 2),  // …in a last line without newline
            (exact + [0x0D] + [0x61, 0x0A], 1),  // a \r not before \n is content
            ([UInt8](repeating: 0x62, count: 5 << 20), 1)
        ] {  // much longer than one chunk
            path = try Self.write(file, dir)
            var reader = try LineReader(path: path, maximumLineLength: 100)
            defer { reader.close() }
            do {
                while try reader.next() != nil {}
                Issue.record("read a line longer than 100 bytes")
            } catch let error as KVDocsError {
                #expect(error.kind == .invalidArgument)
                #expect(error.message == "\(path):\(line): line longer than the maximum of 100 bytes")
            }
        }
        #expect(throws: KVDocsError.self) { try LineReader(path: path, maximumLineLength: 0) }
        #expect(LineReader.defaultMaximumLineLength == 64 << 20)
    }

    /// With the old reader (a rescan of the whole buffer per 64 KB chunk) this took minutes.
    @Test func aSingleSixteenMegabyteLineIsRead() throws {
        let dir = TemporaryDirectory()
        let length = 16 << 20
        var file = [UInt8](repeating: 0x61, count: length)
        file[length / 2] = 0x0D
        file += [0x0D, 0x0A] + Array("after".utf8)
        var reader = try LineReader(path: try Self.write(file, dir))
        defer { reader.close() }
        let line = try #require(try reader.next())
        #expect(line.count == length)
        #expect(line.first == 0x61 && line.last == 0x61 && line[line.startIndex + length / 2] == 0x0D)
        #expect(try reader.next() == Data("after".utf8))
        #expect(try reader.next() == nil)
        #expect(reader.lineNumber == 2)
    }

    @Test func aMissingFileOrAClosedReaderIsAnIOError() throws {
        let dir = TemporaryDirectory()
        do {
            _ = try LineReader(path: dir.child("missing.txt"))
            Issue.record("opened a missing file")
        } catch let error as KVDocsError {
            #expect(error.kind == .ioError)
            #expect(error.message.contains(dir.child("missing.txt")))
        }
        var reader = try LineReader(path: try Self.write(Array("a\nb\n".utf8), dir))
        reader.close()
        reader.close()
        #expect(throws: KVDocsError.self) { try reader.next() }
    }
}
