import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Finds the damaged file of a database whose LevelDB error does not name it: a record of
/// the manifest or a log that fails its checksum (``LogFileCheck``), or a table block that
/// does (``TableFileCheck``).
enum DamageLocator {
    /// Table files are read whole; past this many bytes of tables, only the manifest and
    /// logs are checked, so that an error on a large database stays quick.
    static let tableBytesLimit = 256 << 20

    /// The first damaged file, as `PATH/NAME: what and where`, or `nil` when none is found.
    /// `status` is LevelDB's message, which may name the kind of file without its path.
    static func locate(in path: String, status: String = "") -> String? {
        if status.contains("CURRENT") { return path + "/CURRENT" }
        let fm = FileManager.default
        let names = ((try? fm.contentsOfDirectory(atPath: path)) ?? []).sorted()
        var logs = names.filter { $0.hasSuffix(".log") }
        if let current = try? String(contentsOfFile: path + "/CURRENT", encoding: .utf8) {
            let manifest = current.trimmingCharacters(in: .whitespacesAndNewlines)
            if names.contains(manifest) { logs.insert(manifest, at: 0) }
        }
        for name in logs {
            guard let data = readFileBytes(path + "/" + name) else { continue }
            if let damage = data.withUnsafeBytes({ LogFileCheck($0) }).damage { return "\(path)/\(name): \(damage)" }
        }
        let tables = names.filter { $0.hasSuffix(".ldb") || $0.hasSuffix(".sst") }
        let total = tables.reduce(0) { $0 + ((try? fm.attributesOfItem(atPath: path + "/" + $1)[.size] as? Int) ?? 0) }
        guard total <= tableBytesLimit else { return nil }
        for name in tables {
            guard let data = readFileBytes(path + "/" + name) else { continue }
            if let damage = data.withUnsafeBytes({ TableFileCheck($0) }).damage { return "\(path)/\(name): \(damage)" }
        }
        return nil
    }
}

/// The bytes of the file at `path` (at most `limit` of them), read with POSIX calls; `nil`
/// when it cannot be read. (`FileManager.contents(atPath:)` leaked each file's buffer under
/// AddressSanitizer's leak checker.)
func readFileBytes(_ path: String, limit: Int = .max) -> [UInt8]? {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var status = stat()
    guard fstat(fd, &status) == 0 else { return nil }
    let size = min(Int(status.st_size), limit)
    var bytes = [UInt8](repeating: 0, count: size)
    var done = 0
    while done < size {
        let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + done, size - done) }
        if n < 0 && errno == EINTR { continue }
        guard n > 0 else { break }
        done += n
    }
    return done == size ? bytes : Array(bytes[0..<done])
}
