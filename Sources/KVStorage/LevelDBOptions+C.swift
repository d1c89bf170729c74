import CLevelDB
import KVSupport

/// The C objects built from ``LevelDBOptions`` for one open database.
///
/// LevelDB's options do not own the cache, filter policy or comparator
/// (`include/leveldb/c.h`), so this class owns all of them and is destroyed only after
/// `leveldb_close` (or after a failed open, destroy or repair).
final class COptions {
    let options: OpaquePointer
    private var cache: OpaquePointer?
    private var filterPolicy: OpaquePointer?
    private var comparator: OpaquePointer?

    /// - Throws: `.invalidArgument` when an option is out of range or the comparator name is reserved.
    init(_ swift: LevelDBOptions) throws {
        try swift.validate()
        if let name = swift.comparator?.name, name.hasPrefix("leveldb.") {
            throw KVDocsError(
                .invalidArgument,
                "comparator name \"\(name)\" is reserved: names starting with \"leveldb.\" belong to LevelDB")
        }
        options = leveldb_options_create()
        leveldb_options_set_create_if_missing(options, swift.createIfMissing ? 1 : 0)
        leveldb_options_set_error_if_exists(options, swift.errorIfExists ? 1 : 0)
        leveldb_options_set_paranoid_checks(options, swift.paranoidChecks ? 1 : 0)
        leveldb_options_set_write_buffer_size(options, swift.writeBufferSize)
        leveldb_options_set_max_open_files(options, Int32(swift.maxOpenFiles))
        leveldb_options_set_block_size(options, swift.blockSize)
        leveldb_options_set_block_restart_interval(options, Int32(swift.blockRestartInterval))
        leveldb_options_set_max_file_size(options, swift.maxFileSize)
        leveldb_options_set_compression(
            options, swift.compression == .snappy ? Int32(leveldb_snappy_compression) : Int32(leveldb_no_compression))
        if let bits = swift.bloomFilterBitsPerKey {
            let policy = leveldb_filterpolicy_create_bloom(Int32(bits))
            filterPolicy = policy
            leveldb_options_set_filter_policy(options, policy)
        }
        // Never pass a NULL cache: leveldb_options_set_cache(opt, NULL) crashes.
        if let capacity = swift.blockCacheCapacity {
            let lru = leveldb_cache_create_lru(capacity)
            cache = lru
            leveldb_options_set_cache(options, lru)
        }
        if let swiftComparator = swift.comparator {
            let c = ComparatorState.makeCComparator(swiftComparator)
            comparator = c
            leveldb_options_set_comparator(options, c)
        }
    }

    deinit {
        leveldb_options_destroy(options)
        if let cache { leveldb_cache_destroy(cache) }
        if let filterPolicy { leveldb_filterpolicy_destroy(filterPolicy) }
        if let comparator { leveldb_comparator_destroy(comparator) }
    }
}

/// Calls `body` with a NULL error pointer and turns a message LevelDB stored in it into a
/// ``KVDocsError``, freeing the message.
@inline(__always)
func withLevelDBError<R>(
    path: String?, key: UnsafeRawBufferPointer? = nil, _ body: (UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> R
) throws -> R {
    // The pointer must be NULL before every call: LevelDB leaves it unchanged on success.
    var error: UnsafeMutablePointer<CChar>? = nil
    let result = body(&error)
    if let error {
        let message = String(cString: error)
        leveldb_free(error)
        var error = KVDocsError(levelDBStatus: message, path: path)
        error.key = key.map { Array($0) }
        if error.kind == .unsupportedCompression { throw error }
        // LevelDB names the file of an I/O error, not the file whose checksum failed: find it.
        if error.kind == .corruption, let path, !message.contains(path),
            let found = DamageLocator.locate(in: path, status: message)
        {
            error.message += " (in \(found))"
        }
        throw error
    }
    return result
}

extension KVDocsError {
    /// The error of a LevelDB status message (``KVDocsError/init(status:path:)``), except
    /// that a build without Snappy reports LevelDB's "corrupted compressed block contents"
    /// (`table/format.cc`, which is all it can say of a Snappy-compressed block) as
    /// `.unsupportedCompression`: the block is sound, this build cannot read it.
    package init(levelDBStatus message: String, path: String?) {
        self.init(status: message, path: path)
        if !LevelDBOptions.Compression.snappyIsAvailable, message.contains("corrupted compressed block contents") {
            kind = .unsupportedCompression
            self.message +=
                " (a Snappy-compressed block, which this build's LevelDB cannot read: it has no Snappy; the data is not damaged, do not repair it)"
        }
    }
}

/// Creates C read options for `options`, calls `body`, destroys them.
func withCReadOptions<R>(_ options: LevelDBReadOptions, snapshot: OpaquePointer?, _ body: (OpaquePointer) throws -> R)
    rethrows
    -> R
{
    let c: OpaquePointer = leveldb_readoptions_create()
    defer { leveldb_readoptions_destroy(c) }
    leveldb_readoptions_set_verify_checksums(c, options.verifyChecksums ? 1 : 0)
    leveldb_readoptions_set_fill_cache(c, options.fillCache ? 1 : 0)
    if let snapshot { leveldb_readoptions_set_snapshot(c, snapshot) }
    return try body(c)
}
