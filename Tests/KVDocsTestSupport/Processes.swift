import Foundation
import KVDocs

/// The repository's root directory.
package let packageRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// What a finished process printed and how it exited.
package struct ProcessResult: Sendable {
    /// The exit status.
    package var status: Int32
    /// Everything written to standard output, as UTF-8.
    package var stdout: String
    /// Everything written to standard error, as UTF-8.
    package var stderr: String
}

/// Runs `executable` to completion.
///
/// Standard input is `input` (empty when `nil`), read from a file so that a large input
/// cannot deadlock and the process never reads the terminal; standard output and error are
/// collected separately.
@discardableResult
package func runProcess(
    _ executable: String, _ arguments: [String], input: String? = nil,
    environment: [String: String]? = nil
) throws -> ProcessResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    let inputDirectory = TemporaryDirectory("stdin")
    let file = inputDirectory.child("input")
    try Data((input ?? "").utf8).write(to: URL(fileURLWithPath: file))
    process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: file))
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    return try withExtendedLifetime(inputDirectory) {
        try process.run()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return ProcessResult(
            status: process.terminationStatus,
            stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self))
    }
}

/// ``runProcess(_:_:input:environment:)`` for an async test whose process talks to a
/// server running in the test's own process: the wait happens on a thread of its own, so
/// that it does not hold one of the cooperative pool's few threads, which the server's
/// work needs (two tests waiting so on two cores would deadlock until their timeouts).
package func runProcessAwaiting(_ executable: String, _ arguments: [String], input: String? = nil) async throws
    -> ProcessResult
{
    try await withCheckedThrowingContinuation { continuation in
        Thread {
            continuation.resume(with: Result { try runProcess(executable, arguments, input: input) })
        }.start()
    }
}

/// The Python with the reference packages (`.venv/bin/python3`, made by scripts/install-deps).
/// - Throws: `.notFound` naming the path and the fix when it is missing.
package func referencePython() throws -> String {
    let python = packageRoot.appendingPathComponent(".venv/bin/python3").path
    guard FileManager.default.isExecutableFile(atPath: python) else {
        throw KVDocsError(.notFound, "\(python) is missing: run scripts/install-deps")
    }
    return python
}

/// Runs a Python script of the repository (a path relative to its root) with the reference
/// Python and returns its standard output.
/// - Throws: when the reference Python is missing, or the script exits with a non-zero
///   status (the error carries its standard error).
package func runPython(_ script: String, _ arguments: [String] = [], input: String? = nil) throws -> String {
    let result = try runProcess(
        try referencePython(), [packageRoot.appendingPathComponent(script).path] + arguments, input: input)
    guard result.status == 0 else {
        throw KVDocsError(.ioError, "\(script) exited with \(result.status): \(result.stderr)")
    }
    return result.stdout
}

/// `s` as a Python string literal.
package func pythonString(_ s: String) -> String {
    "'" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
}

/// Another process, Python's plyvel (a LevelDB client other than KVDocs), holding a
/// database open until this object goes away, for tests of what a locked database does.
package final class PlyvelHolder {
    private let process = Process()
    private let stdin = Pipe()
    private var closed = false

    /// Starts the holder and waits (up to 30 s) until it has the database at `path` open.
    /// - Throws: when the reference Python is missing or cannot start, or it did not open
    ///   the database in time.
    package init(path: String) throws {
        let ready = TemporaryDirectory("plyvel-ready")
        let flag = ready.child("ready")
        process.executableURL = URL(fileURLWithPath: try referencePython())
        process.arguments = [
            "-c",
            """
            import plyvel, sys, pathlib
            db = plyvel.DB(\(pythonString(path)))
            pathlib.Path(\(pythonString(flag))).touch()
            sys.stdin.read()
            """
        ]
        process.standardInput = stdin
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: flag) && process.isRunning && Date() < deadline {
            usleep(20_000)
        }
        guard FileManager.default.fileExists(atPath: flag) else {
            close()
            throw KVDocsError(.ioError, "python3-plyvel could not open the database at \(path)")
        }
    }

    /// The holder's process id (what a lock error names).
    package var processIdentifier: Int32 { process.processIdentifier }

    /// Ends the holder (closing its standard input) and waits for it. Calling it again does nothing.
    package func close() {
        guard !closed else { return }
        closed = true
        try? stdin.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    deinit { close() }
}

/// A server process that says where it listens on the first line of its standard output,
/// and runs until it is stopped (or this object goes).
package final class ServerProcess {
    /// The running process.
    package let process = Process()
    /// The first line it printed, without its newline.
    package let firstLine: String

    /// Starts `executable` and waits for its first line of output.
    /// - Throws: `.ioError` when it exits before printing a whole line.
    package init(_ executable: String, _ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line = Data()
        while !line.contains(0x0A) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        guard let end = line.firstIndex(of: 0x0A) else {
            kill(process.processIdentifier, SIGKILL)
            throw KVDocsError(
                .ioError,
                "\(executable) exited before saying where it listens: \(String(decoding: line, as: UTF8.self))")
        }
        firstLine = String(decoding: line[..<end], as: UTF8.self)
    }

    /// Sends `signal` and waits for the exit status. Not from an async test: waiting spins
    /// a run loop, which a test's task does not have (deinit stops without waiting).
    package func stop(_ signal: Int32 = SIGINT) -> Int32 {
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Stops the server without waiting (Foundation reaps the process). SIGKILL: a child
    /// started by Foundation's `Process` inherits the signal mask of the thread that ran it,
    /// in which SIGTERM and SIGINT may be blocked, so that a SIGTERM would leave it running
    /// after the tests (a reference server left behind by every run, seen here).
    deinit { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
}

/// The kvrepl binary built by `swift build`.
package func kvreplBinary() throws -> String {
    let path = packageRoot.appendingPathComponent(".build/debug/kvrepl").path
    guard FileManager.default.isExecutableFile(atPath: path) else {
        throw KVDocsError(.notFound, "\(path) is missing: run swift build first (scripts/test does)")
    }
    return path
}
