import Foundation
import KVDocs
import Testing

/// A uniquely named directory under the system temporary folder, removed on deinit.
final class TemporaryDirectory {
    let url: URL
    var path: String { url.path }

    init(_ label: String = "kvdocs") {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(label)-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// A path inside the directory (not created).
    func child(_ name: String) -> String { url.appendingPathComponent(name).path }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// Opens a fresh database in a temporary directory, runs `body`, closes and removes it.
@discardableResult
func withTemporaryDatabase<R>(
    options: Options = Options(),
    _ body: (Database, String) throws -> R
) throws -> R {
    let dir = TemporaryDirectory()
    let path = dir.child("db")
    let db = try Database(path: path, options: options)
    defer { db.close() }
    return try withExtendedLifetime(dir) { try body(db, path) }
}

/// A small deterministic pseudo-random generator (SplitMix64) so failures reproduce.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension Array where Element == UInt8 {
    var hex: String { map { String(format: "%02x", $0) }.joined() }
}

/// Runs a command and returns its exit status, standard output and standard error.
/// `input` is fed to its standard input from a file, so large inputs cannot deadlock.
@discardableResult
func runProcess(_ executable: String, _ arguments: [String], input: String? = nil) throws -> (status: Int32, stdout: String, stderr: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    var inputDirectory: TemporaryDirectory?
    if let input {
        let dir = TemporaryDirectory("stdin")
        let file = dir.child("input")
        try Data(input.utf8).write(to: URL(fileURLWithPath: file))
        process.standardInput = FileHandle(forReadingAtPath: file)
        inputDirectory = dir
    }
    defer { withExtendedLifetime(inputDirectory) {} }
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    let errData = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: outData, as: UTF8.self), String(decoding: errData, as: UTF8.self))
}

/// The repository's root directory.
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// The Python with the reference packages (plyvel, foundationdb), set up by scripts/install-deps.
func referencePython() throws -> String {
    let python = packageRoot.appendingPathComponent(".venv/bin/python3").path
    guard FileManager.default.isExecutableFile(atPath: python) else {
        throw KVDocsError(.notFound, "\(python) is missing: run scripts/install-deps")
    }
    return python
}

/// Runs a Python script of the repository with the reference Python; fails on a non-zero exit.
func runPython(_ script: String, _ arguments: [String] = [], input: String? = nil) throws -> String {
    let result = try runProcess(try referencePython(), [packageRoot.appendingPathComponent(script).path] + arguments, input: input)
    guard result.status == 0 else {
        throw KVDocsError(.ioError, "\(script) exited with \(result.status): \(result.stderr)")
    }
    return result.stdout
}

/// Expects `body` to throw a ``KVDocsError`` of `kind`, and returns it.
@discardableResult
func expectError<R>(_ kind: KVDocsError.Kind, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> R) -> KVDocsError? {
    do {
        _ = try body()
        Issue.record("expected a \(kind) error; nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as KVDocsError {
        #expect(error.kind == kind, "\(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected a \(kind) error, not \(error)", sourceLocation: sourceLocation)
    }
    return nil
}
