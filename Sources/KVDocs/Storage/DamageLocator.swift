import Foundation

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
            guard let data = fm.contents(atPath: path + "/" + name) else { continue }
            if let damage = data.withUnsafeBytes({ LogFileCheck($0) }).damage { return "\(path)/\(name): \(damage)" }
        }
        let tables = names.filter { $0.hasSuffix(".ldb") || $0.hasSuffix(".sst") }
        let total = tables.reduce(0) { $0 + ((try? fm.attributesOfItem(atPath: path + "/" + $1)[.size] as? Int) ?? 0) }
        guard total <= tableBytesLimit else { return nil }
        for name in tables {
            guard let data = fm.contents(atPath: path + "/" + name) else { continue }
            if let damage = data.withUnsafeBytes({ TableFileCheck($0) }).damage { return "\(path)/\(name): \(damage)" }
        }
        return nil
    }
}
