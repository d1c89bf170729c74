import Foundation
import KVStorage
import KVSupport

/// `USER.layers/LAYERS.json`: the base in force, and a replacement committed but not yet
/// applied.
///
/// Formats:
/// - 1: each base file identified by `name:size`; base copies hard-linked; a pending
///   replacement recorded before it was checked.
/// - 2: each base file identified by its content (``DatabaseFile``); copies are byte
///   copies; a pending replacement is recorded only once its derived data is complete and
///   checked in its staging directory, so finishing it cannot fail on the data.
///
/// A format-1 record is read as format 2 with ``legacy`` set: its base's content is unknown,
/// so the next open re-derives over the base through a checked replacement and writes
/// format 2.
package struct LayersRecord: Equatable {
    static let format = 2

    /// The base's directory, as given (absolute).
    var base: String
    /// The directory of its copy, under the layers directory.
    package var copy: String
    /// The base's files when it was copied.
    package var files: [DatabaseFile]
    /// A replacement whose derived data is complete in `staging`: the next open applies it.
    package var pending: Pending?
    /// Read from a format-1 record.
    package var legacy = false
    /// The last base an open refused to replace this one with, and why: an open given the
    /// same base with the same files keeps the base in force without trying again.
    var refused: Refused?

    struct Refused: Codable, Equatable {
        var base: String
        var files: [DatabaseFile]
        /// The refusal's ``KVDocsError/Kind`` (its raw value).
        var kind: String
        var reason: String
    }

    package struct Pending: Equatable {
        var base: String
        package var copy: String
        var files: [DatabaseFile]
        /// The staging database, under the layers directory, holding the user layer's
        /// derived data over the new base (`nil` in a format-1 record: not checked).
        var staging: String?
    }

    init(base: String, copy: String, files: [DatabaseFile]) {
        self.base = base
        self.copy = copy
        self.files = files
    }

    private struct Stored: Codable {
        var format: Int
        var base: String
        var copy: String
        var files: [DatabaseFile]?
        var fingerprint: [String]?
        var pending: StoredPending?
        var refused: Refused?
    }

    private struct StoredPending: Codable {
        var base: String
        var copy: String
        var files: [DatabaseFile]?
        var fingerprint: [String]?
        var staging: String?
    }

    package static func read(_ layersPath: String) throws -> LayersRecord? {
        let path = layersPath + "/LAYERS.json"
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let stored: Stored
        do {
            stored = try JSONDecoder().decode(Stored.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw KVDocsError(
                .corruption,
                "\(path) cannot be read (\(error.localizedDescription)); remove it and open again with the base: the user database is then taken over that base, its indexes re-derived",
                path: path)
        }
        guard stored.format <= format else {
            throw KVDocsError(
                .notSupported,
                "\(path) has layers format \(stored.format), written by a newer version of KVDocs; this version reads formats 1 and \(format)",
                path: path)
        }
        guard stored.format >= 1 else {
            throw KVDocsError(
                .corruption,
                "\(path) has layers format \(stored.format), which no version of KVDocs writes; remove it and open again with the base",
                path: path)
        }
        var record = LayersRecord(base: stored.base, copy: stored.copy, files: stored.files ?? [])
        record.legacy = stored.format == 1
        record.refused = stored.format == 1 ? nil : stored.refused
        if let p = stored.pending {
            record.pending = Pending(
                base: p.base, copy: p.copy, files: p.files ?? [], staging: stored.format == 1 ? nil : p.staging)
        }
        return record
    }

    /// Writes the record (format 2) with one rename: a crash leaves the old record or the new one.
    package func write(_ layersPath: String) throws {
        let path = layersPath + "/LAYERS.json", temporary = path + ".new"
        let stored = Stored(
            format: Self.format, base: base, copy: copy, files: files, fingerprint: nil,
            pending: pending.map {
                StoredPending(base: $0.base, copy: $0.copy, files: $0.files, fingerprint: nil, staging: $0.staging)
            },
            refused: refused)
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            let data = try encoder.encode(stored)
            let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            guard fd >= 0 else {
                throw KVDocsError(
                    .ioError, "cannot write \(temporary): \(String(cString: strerror(errno)))", path: temporary)
            }
            let written = data.withUnsafeBytes { Foundation.write(fd, $0.baseAddress, $0.count) }
            let synced = fullSync(fd)
            _ = Foundation.close(fd)
            guard written == data.count, synced == 0 else {
                throw KVDocsError(
                    .ioError, "cannot write \(temporary): \(String(cString: strerror(errno)))", path: temporary)
            }
            guard rename(temporary, path) == 0 else {
                throw KVDocsError(
                    .ioError, "cannot rename \(temporary): \(String(cString: strerror(errno)))", path: path)
            }
            try LevelDB.syncDirectory(layersPath)
        } catch let e as KVDocsError {
            throw e
        } catch {
            throw KVDocsError(.ioError, "cannot write \(path): \(error.localizedDescription)", path: path)
        }
    }
}
