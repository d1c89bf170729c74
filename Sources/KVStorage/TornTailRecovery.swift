import Foundation
import KVSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Finds and cuts a torn tail of a database's newest log (see ``TornLogTail``), before
/// LevelDB opens the database.
///
/// The newest log is torn when it has bytes after its last whole record and none of them
/// begins an intact fragment (one that fits its block and has a correct checksum): not at
/// any offset of the block where the chain of intact fragments stops, nor along the chain of
/// fragments of any later block (LevelDB never lets a fragment cross a block, so every
/// block of a log it wrote begins with one). The bytes after the last whole record may be
/// zeroes, garbage, the first fragments of a record whose end is missing, or a record cut
/// short by the end of the file: LevelDB refuses some of these (a checksum mismatch, a bad
/// record length) and ignores others (it drops them when it turns the log into a table);
/// either way they are cut, kept in `lost/` and reported.
///
/// Damage followed by an intact fragment is mid-log corruption: nothing is cut. LevelDB
/// refuses most of it itself, naming no file (``DamageLocator`` names it); the one kind it
/// would read as the end of the log, dropping the intact records after it without a word (a
/// fragment whose length runs past the end of the file's last block), is refused here.
/// Damage in another live log or in the manifest also leaves the log alone.
package enum TornTailRecovery {
    /// What the bytes of a log are.
    package enum Verdict: Equatable {
        /// Every byte is part of a whole record.
        case sound
        /// Torn: whole records up to `keep`, then nothing intact; `levelDBRefuses` when
        /// LevelDB's reader would report a corruption rather than stop quietly.
        case torn(keep: Int, damage: String, levelDBRefuses: Bool)
        /// Damaged at `at`, with an intact fragment at `intact` after it.
        case damagedInTheMiddle(damage: String, at: Int, intact: Int, levelDBRefuses: Bool)
    }

    /// Judges the log `bytes` (see the type's description).
    package static func verdict(_ bytes: UnsafeRawBufferPointer) -> Verdict {
        let check = LogFileCheck(bytes)
        let size = bytes.count
        guard check.intactLength < size else { return .sound }
        // LevelDB reports a bad fragment, and a fragment running past the end of a full
        // final block (it takes one past the end of a partial final block for the end).
        let levelDBRefuses = check.damage != nil || size % LogFileCheck.blockSize == 0 && check.chainEnd < size
        let damage =
            check.damage
            ?? (check.chainEnd == size
                ? "a record whose last fragment is missing at offset \(check.intactLength)"
                : "a record cut short, or bytes that are no record, at offset \(check.chainEnd)")
        if let intact = firstIntactFragment(in: bytes, from: check.chainEnd) {
            return .damagedInTheMiddle(
                damage: damage, at: check.damageOffset ?? check.chainEnd, intact: intact, levelDBRefuses: levelDBRefuses
            )
        }
        return .torn(keep: check.intactLength, damage: damage, levelDBRefuses: levelDBRefuses)
    }

    /// Whether the last block of the log in `file` (of `size` bytes) is a chain of intact
    /// fragments ending with a record's last one, exactly at the end of the file: the
    /// common case, checked without reading the rest of the log.
    static func endsWithWholeRecord(_ file: String, size: Int) -> Bool {
        guard size > 0 else { return true }
        let blockStart = (size - 1) / LogFileCheck.blockSize * LogFileCheck.blockSize
        let fd = Foundation.open(file, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { Foundation.close(fd) }
        var block = [UInt8](repeating: 0, count: size - blockStart)
        var done = 0
        while done < block.count {
            let n = block.withUnsafeMutableBytes { buffer in
                pread(fd, buffer.baseAddress.map { $0 + done }, buffer.count - done, off_t(blockStart + done))
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            done += n
        }
        return block.withUnsafeBytes { bytes in
            var p = 0
            var lastType: UInt8 = 0
            while p < bytes.count {
                guard let length = intactFragment(in: bytes, at: p) else { return false }
                lastType = bytes[p + 6]
                p += length
            }
            return lastType == 1 || lastType == 4  // full, last
        }
    }

    /// The live logs of `path` (those LevelDB replays, from the manifest's log number on,
    /// as in `DBImpl::Recover`), oldest first; `nil` when the manifest is damaged.
    static func liveLogs(in path: String) -> [String]? {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        var state: ManifestCheck.State?
        if let current = try? String(contentsOfFile: path + "/CURRENT", encoding: .utf8) {
            let manifest = current.trimmingCharacters(in: .whitespacesAndNewlines)
            guard let bytes = readFileBytes(path + "/" + manifest) else { return nil }
            let check = bytes.withUnsafeBytes { LogFileCheck($0, keeping: .max) }
            guard check.damage == nil else { return nil }
            state = ManifestCheck.state(of: check.payloads)
        }
        return names.compactMap { name -> (number: UInt64, name: String)? in
            guard name.hasSuffix(".log"), let number = UInt64(name.dropLast(4)) else { return nil }
            if let state, let first = state.logNumber, number < first && number != state.previousLogNumber {
                return nil
            }
            return (number, name)
        }.sorted { $0.number < $1.number }.map(\.name)
    }

    /// The length (header and payload) of the fragment at `offset` when it is one: it fits
    /// in its block and its checksum is right; `nil` for anything else, including the zero
    /// padding LevelDB skips.
    static func intactFragment(in bytes: UnsafeRawBufferPointer, at offset: Int) -> Int? {
        let blockEnd = min(bytes.count, (offset / LogFileCheck.blockSize + 1) * LogFileCheck.blockSize)
        guard blockEnd - offset >= LogFileCheck.headerSize else { return nil }
        let length = Int(bytes[offset + 4]) | Int(bytes[offset + 5]) << 8
        let type = bytes[offset + 6]
        guard !(type == 0 && length == 0), offset + LogFileCheck.headerSize + length <= blockEnd else { return nil }
        let stored =
            UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8
            | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24
        let crc = CRC32C.checksum(
            UnsafeRawBufferPointer(rebasing: bytes[(offset + 6)..<(offset + LogFileCheck.headerSize + length)]))
        return CRC32C.mask(crc) == stored ? LogFileCheck.headerSize + length : nil
    }

    /// The offset of the first intact fragment at or after `start`: at any offset of
    /// `start`'s block, then along each later block's chain of fragments (stepping over a
    /// fragment whose checksum fails but whose length fits its block); `nil` when none.
    package static func firstIntactFragment(in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        let size = bytes.count
        let blockSize = LogFileCheck.blockSize, headerSize = LogFileCheck.headerSize
        let firstBlockEnd = min(size, (start / blockSize + 1) * blockSize)
        var offset = start
        while offset + headerSize <= firstBlockEnd {
            if intactFragment(in: bytes, at: offset) != nil { return offset }
            offset += 1
        }
        var block = firstBlockEnd
        while block < size {
            let blockEnd = min(size, block + blockSize)
            var p = block
            while blockEnd - p >= headerSize {
                if intactFragment(in: bytes, at: p) != nil { return p }
                let length = Int(bytes[p + 4]) | Int(bytes[p + 5]) << 8
                guard bytes[p + 6] != 0 || length != 0, p + headerSize + length <= blockEnd else { break }
                p += headerSize + length
            }
            block += blockSize
        }
        return nil
    }

    /// Cuts the torn tail of the newest log of the database at `path`, if it has one,
    /// keeping the dropped bytes in `lost/`; returns what it cut, or `nil` (nothing is
    /// changed then: no database, a sound log, a database in use, damage LevelDB reports
    /// itself). Holds the database's `LOCK` file while it cuts, so no other process opens
    /// the database halfway through.
    /// - Throws: `.corruption` for damage in the middle of the log that LevelDB would take
    ///   for its end (only with `paranoidChecks`); `.ioError` when a tail that LevelDB would
    ///   refuse cannot be saved or cut.
    static func recover(in path: String, paranoidChecks: Bool) throws -> TornLogTail? {
        // The newest log is the highest-numbered one (LevelDB deletes the older ones it no
        // longer needs); the manifest is read only when its end is not a whole record.
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        guard names.contains("CURRENT"),
            let newest = names.compactMap({ name -> (number: UInt64, name: String)? in
                guard name.hasSuffix(".log"), let number = UInt64(name.dropLast(4)) else { return nil }
                return (number, name)
            }).max(by: { $0.number < $1.number })?.name
        else { return nil }
        let log = path + "/" + newest
        var status = stat()
        guard stat(log, &status) == 0, !endsWithWholeRecord(log, size: Int(status.st_size)) else { return nil }
        // A log being written by a handle of this process or by another process is not torn.
        guard LevelDB.holder(of: path) == nil else { return nil }
        let lockFD = Foundation.open(path + "/LOCK", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard lockFD >= 0 else { return nil }
        // Closing the descriptor releases the lock; LevelDB takes its own on the open that follows.
        defer { Foundation.close(lockFD) }
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        guard fcntl(lockFD, F_SETLK, &lock) == 0 else { return nil }

        // Under the lock: the live logs again, every one but the newest sound.
        guard let logs = liveLogs(in: path), logs.last == newest, let bytes = readFileBytes(log) else { return nil }
        for older in logs.dropLast() {
            guard let other = readFileBytes(path + "/" + older),
                other.withUnsafeBytes({ LogFileCheck($0) }).damage == nil
            else { return nil }
        }
        switch bytes.withUnsafeBytes({ verdict($0) }) {
        case .sound:
            return nil
        case .damagedInTheMiddle(let damage, let at, let intact, let levelDBRefuses):
            guard !levelDBRefuses, paranoidChecks else { return nil }
            throw KVDocsError(
                .corruption,
                "\(log): \(damage), followed by an intact record at offset \(intact): the log is damaged at offset \(at), before its end, and LevelDB would drop every write after the damage without an error. Run LevelDB.repair(path:) (kvrepl --repair) to keep the writes before it",
                path: path)
        case .torn(let keep, let damage, let levelDBRefuses):
            do {
                return try cut(log: newest, in: path, bytes: bytes, keep: keep, damage: damage)
            } catch  where !levelDBRefuses {
                // LevelDB opens this log as it is, dropping the same bytes: let it.
                return nil
            }
        }
    }

    /// Saves `bytes[keep...]` of the log `name` to `lost/`, then cuts the log at `keep`.
    private static func cut(log name: String, in path: String, bytes: [UInt8], keep: Int, damage: String) throws
        -> TornLogTail
    {
        let fm = FileManager.default
        let lost = path + "/lost"
        var saved = lost + "/\(name).torn-at-\(keep)"
        var n = 2
        while fm.fileExists(atPath: saved) {
            saved = lost + "/\(name).torn-at-\(keep)-\(n)"
            n += 1
        }
        do {
            try fm.createDirectory(atPath: lost, withIntermediateDirectories: true)
        } catch {
            throw KVDocsError(
                .ioError,
                "cannot create \(lost) to keep the torn tail of \(path)/\(name): \(error.localizedDescription)",
                path: path)
        }
        try writeDurably(Array(bytes[keep...]), to: saved, path: path)
        try syncDirectory(lost, path: path)
        let log = path + "/" + name
        let fd = Foundation.open(log, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw KVDocsError(
                .ioError,
                "cannot open \(log) to cut its torn tail at offset \(keep): \(String(cString: strerror(errno)))",
                path: path)
        }
        defer { Foundation.close(fd) }
        guard ftruncate(fd, off_t(keep)) == 0, fullSync(fd) == 0 else {
            throw KVDocsError(
                .ioError,
                "cannot cut \(log) at offset \(keep) (its torn tail is kept in \(saved)): \(String(cString: strerror(errno)))",
                path: path)
        }
        return TornLogTail(
            logFile: name, offset: keep, droppedBytes: bytes.count - keep, savedAs: saved, damage: damage)
    }
    /// Writes `bytes` to a new file at `file` and forces it to the disk.
    private static func writeDurably(_ bytes: [UInt8], to file: String, path: String) throws {
        let fd = Foundation.open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw KVDocsError(
                .ioError, "cannot create \(file) to keep a torn log tail: \(String(cString: strerror(errno)))",
                path: path)
        }
        defer { Foundation.close(fd) }
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { buffer in
                // `done < bytes.count`, so the buffer is not empty and has a base address.
                write(fd, buffer.baseAddress.map { $0 + done }, bytes.count - done)
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                throw KVDocsError(
                    .ioError,
                    "cannot write \(file) (a torn log tail, \(bytes.count) bytes): \(String(cString: strerror(errno)))",
                    path: path)
            }
            done += n
        }
        guard fullSync(fd) == 0 else {
            throw KVDocsError(.ioError, "cannot sync \(file): \(String(cString: strerror(errno)))", path: path)
        }
    }

    /// Forces the entries of `directory` (a new file's name) to the disk.
    private static func syncDirectory(_ directory: String, path: String) throws {
        let fd = Foundation.open(directory, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw KVDocsError(
                .ioError, "cannot open \(directory) to sync it: \(String(cString: strerror(errno)))", path: path)
        }
        defer { Foundation.close(fd) }
        guard fullSync(fd) == 0 else {
            throw KVDocsError(.ioError, "cannot sync \(directory): \(String(cString: strerror(errno)))", path: path)
        }
    }
}
