import Foundation
import KVDocs

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
@discardableResult
func runProcess(_ executable: String, _ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    let errData = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: outData, as: UTF8.self), String(decoding: errData, as: UTF8.self))
}
