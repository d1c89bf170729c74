import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// How a child process ended.
struct ChildResult {
    enum Ending: Equatable {
        case exited(Int32)
        case signaled(Int32)
        case timedOut
    }
    var ending: Ending
    var stdout: String
    var stderr: String
}

/// This executable's path, to run its hidden subcommands as children.
let selfExecutable: String = {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
}()

/// Runs this executable with `arguments`, killing it after `timeout` seconds, or as soon
/// as it prints a line on which `trigger` holds, or `killDelay` seconds after that line (the
/// ending is then `.signaled`).
func runChild(
    _ arguments: [String], timeout: Double, killWhen trigger: ((String) -> Bool)? = nil, killDelay: Double = 0
) throws -> ChildResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: selfExecutable)
    process.arguments = arguments
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let pid = process.processIdentifier
    let timedOut = TimeoutFlag()
    let timer = DispatchWorkItem {
        timedOut.set()
        kill(pid, SIGKILL)
    }
    DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: timer)
    // Read both pipes while the child runs, so a chatty child cannot block on a full pipe.
    let group = DispatchGroup()
    let errData = DataBox()
    group.enter()
    DispatchQueue.global().async {
        errData.data = err.fileHandleForReading.readDataToEndOfFile()
        group.leave()
    }
    var outData = Data()
    if let trigger {
        // Read line by line, to kill the child on the line it printed.
        var lineStart = 0
        var killed = false
        let delayedKill = DispatchWorkItem { kill(pid, SIGKILL) }
        defer { delayedKill.cancel() }
        while case let chunk = out.fileHandleForReading.availableData, !chunk.isEmpty {
            outData.append(chunk)
            while let newline = outData[lineStart...].firstIndex(of: 0x0A) {
                let line = String(decoding: outData[lineStart..<newline], as: UTF8.self)
                lineStart = newline + 1
                if !killed, trigger(line) {
                    killed = true
                    if killDelay > 0 {
                        DispatchQueue.global().asyncAfter(deadline: .now() + killDelay, execute: delayedKill)
                    } else {
                        kill(pid, SIGKILL)
                    }
                }
            }
        }
    } else {
        outData = out.fileHandleForReading.readDataToEndOfFile()
    }
    group.wait()
    process.waitUntilExit()
    timer.cancel()
    let ending: ChildResult.Ending
    if timedOut.isSet {
        ending = .timedOut
    } else if process.terminationReason == .uncaughtSignal {
        ending = .signaled(process.terminationStatus)
    } else {
        ending = .exited(process.terminationStatus)
    }
    return ChildResult(
        ending: ending, stdout: String(decoding: outData, as: UTF8.self),
        stderr: String(decoding: errData.data, as: UTF8.self))
}

/// Standard error as read by another thread; read after `group.wait()`.
final class DataBox: @unchecked Sendable {
    var data = Data()
}

final class TimeoutFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}

/// Copies the directory `from` to `to` (which must not exist).
func copyDirectory(_ from: String, _ to: String) throws {
    try FileManager.default.copyItem(atPath: from, toPath: to)
}

/// A fresh directory under the temporary folder, for one run's files.
func makeWorkDirectory(_ label: String) throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("kvstress-\(label)-\(UUID().uuidString)")
        .path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// Prints to standard error.
func note(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
