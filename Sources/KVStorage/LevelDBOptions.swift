import KVSupport

/// How a database is opened and tuned.
///
/// Every field has LevelDB's documented default except three, chosen so that a damaged
/// database gives errors and never aborts the process or answers wrongly:
/// ``createIfMissing`` is `true` (what almost every caller wants), ``paranoidChecks`` is
/// `true`, and ``bloomFilterBitsPerKey`` is 10. ``LevelDBReadOptions/verifyChecksums`` is `true` too.
/// Values that LevelDB would silently clamp are rejected by ``LevelDB/init(path:options:)``
/// with a `.invalidArgument` error naming the option, the value and the allowed range.
///
/// ```swift
/// var options = LevelDBOptions()
/// options.bloomFilterBitsPerKey = 10
/// options.blockCacheCapacity = 64 << 20
/// let db = try LevelDB(path: path, options: options)
/// ```
public struct LevelDBOptions: Sendable {
    /// Create the database if it does not exist. Default `true`.
    public var createIfMissing: Bool = true
    /// Fail if the database already exists. Default `false`.
    public var errorIfExists: Bool = false
    /// Check stored data aggressively and stop at the first sign of corruption. Default
    /// `true`, unlike LevelDB's `false`.
    ///
    /// With it, LevelDB verifies the checksum of every block it reads for a compaction or a
    /// repair, of every table's index, and of every log record it replays on open: damage
    /// gives a `.corruption` error (on open, on the read, or on the next write after a failed
    /// background compaction) instead of reaching code that trusts the bytes. (A torn tail of
    /// the newest log, as a power loss leaves it, is cut and reported instead: see
    /// ``LevelDB/recoveredTornTail``.) Without it, a
    /// damaged block can be compacted into a new table, where LevelDB's table builder
    /// asserts (`table_builder.cc`, keys out of order) and aborts the process, and a damaged
    /// log record is skipped silently on open. Turn it off only for data that can be rebuilt;
    /// the checks cost a CRC-32C of each block read from the disk (not from the cache).
    public var paranoidChecks: Bool = true
    /// Bytes buffered in memory (and in the log) before they are sorted into a table file.
    /// Larger values speed up bulk loads and lengthen recovery. Default 4 MiB; 64 KiB–1 GiB.
    public var writeBufferSize: Int = 4 << 20
    /// Table files LevelDB may keep open. Default 1000; 74–50,000.
    public var maxOpenFiles: Int = 1000
    /// Approximate uncompressed size of a table block. Default 4 KiB; 1 KiB–4 MiB.
    public var blockSize: Int = 4096
    /// Keys between restart points of the key delta encoding. Default 16; at least 1.
    public var blockRestartInterval: Int = 16
    /// Bytes written to one table file before a new one is started. Default 2 MiB; 1 MiB–1 GiB.
    public var maxFileSize: Int = 2 << 20
    /// Block compression. Default ``Compression/preferred``: `.snappy` where this build's
    /// LevelDB has Snappy (the system library: Linux, or macOS with `KVDOCS_SYSTEM_LEVELDB`),
    /// `.none` where it has not (the bundled LevelDB of Apple platforms), where `.snappy` is
    /// refused. A database that an app ships for Apple platforms (a base of a
    /// ``LayeredKeyValueStore``) must be written with `.none`: their LevelDB cannot read a
    /// Snappy-compressed table.
    public var compression: Compression = .preferred
    /// Bits per key of a Bloom filter kept with each table, which saves disk reads for
    /// missing keys; `nil` keeps no filter. Default 10 (about 1% false positives), unlike
    /// LevelDB's own default of none: a document store reads single keys that are often
    /// missing (unique index checks, gets, inserts checking that an id is free), and a
    /// filter answers most of those without reading a table block. It costs about 10 bits
    /// per key on disk and in memory. Tables written with or without a filter read the
    /// same; a changed filter is ignored for old tables, so it should stay the same across opens.
    public var bloomFilterBitsPerKey: Int? = 10
    /// Capacity in bytes of an LRU cache of uncompressed blocks; `nil` (the default) lets
    /// LevelDB use its internal 8 MiB cache.
    public var blockCacheCapacity: Int? = nil
    /// The key order; `nil` (the default) is LevelDB's bytewise order.
    /// A database must always be opened with the comparator it was created with.
    public var comparator: LevelDBComparator? = nil

    /// The data protection class of the database's directory and files on iOS, watchOS,
    /// tvOS and visionOS, which decides whether they can be read while the device is locked;
    /// `nil` (the default) leaves the class the app's container gives them. Applied when the
    /// database opens, to the directory and to every file in it; LevelDB's later files (logs,
    /// tables, manifests) take the directory's class. Ignored on macOS and Linux, which
    /// have no per-file protection classes.
    ///
    /// `.complete` makes the files unreadable while the device is locked: LevelDB then fails
    /// its background compactions and reads with `.ioError`, so close the database when the
    /// app moves to the background. `.completeUntilFirstUserAuthentication` (the system's
    /// default for an app's files) keeps them readable from the first unlock after a restart.
    public var fileProtection: FileProtection? = nil

    /// Data protection classes (Apple's `FileProtectionType`).
    public enum FileProtection: Sendable, Hashable {
        /// Readable only while the device is unlocked.
        case complete
        /// Files open when the device locks stay usable; new files can be created while locked.
        case completeUnlessOpen
        /// Readable from the first unlock after a restart until the next restart.
        case completeUntilFirstUserAuthentication
        /// Always readable (Apple's `FileProtectionType.none`; not `.none`, which would read
        /// as the option's `nil`).
        case unprotected
    }

    /// Block compression algorithms.
    public enum Compression: Sendable, Hashable {
        /// No compression.
        case none
        /// Snappy, LevelDB's default: fast, and skipped for blocks it cannot shrink by 12.5%.
        case snappy

        /// Whether this build's LevelDB can read and write Snappy-compressed blocks: `false`
        /// in a build with the bundled LevelDB (firebase/leveldb, the one of Apple
        /// platforms), or one made with `KVDOCS_WITHOUT_SNAPPY=1`.
        public static let snappyIsAvailable: Bool = {
            #if KVDOCS_WITHOUT_SNAPPY
            false
            #else
            true
            #endif
        }()

        /// `.snappy` where ``snappyIsAvailable``, else `.none`: the default of ``LevelDBOptions/compression``.
        public static let preferred: Compression = snappyIsAvailable ? .snappy : .none
    }

    /// LevelDB's defaults, except ``createIfMissing`` (`true`).
    public init() {}

    /// The ranges LevelDB clamps options to (`db/db_impl.cc`, `SanitizeOptions`).
    static let writeBufferSizeRange = (64 << 10)...(1 << 30)
    static let maxOpenFilesRange = 74...50_000
    static let blockSizeRange = (1 << 10)...(4 << 20)
    static let maxFileSizeRange = (1 << 20)...(1 << 30)

    /// Checks every value LevelDB would otherwise clamp or misread.
    /// - Throws: ``KVDocsError`` of kind `.invalidArgument` naming the option and its allowed
    ///   range; `.unsupportedCompression` for `.snappy` in a build without Snappy.
    public func validate() throws {
        func check(_ name: String, _ value: Int, _ range: ClosedRange<Int>) throws {
            guard range.contains(value) else {
                throw KVDocsError(
                    .invalidArgument,
                    "option \(name) = \(value) is outside the range LevelDB accepts (\(range.lowerBound)...\(range.upperBound))"
                )
            }
        }
        try check("writeBufferSize", writeBufferSize, Self.writeBufferSizeRange)
        try check("maxOpenFiles", maxOpenFiles, Self.maxOpenFilesRange)
        try check("blockSize", blockSize, Self.blockSizeRange)
        try check("maxFileSize", maxFileSize, Self.maxFileSizeRange)
        try check("blockRestartInterval", blockRestartInterval, 1...Int(Int32.max))
        if let bits = bloomFilterBitsPerKey { try check("bloomFilterBitsPerKey", bits, 1...1000) }
        if let capacity = blockCacheCapacity { try check("blockCacheCapacity", capacity, 0...Int.max) }
        if compression == .snappy, !Compression.snappyIsAvailable {
            throw KVDocsError(
                .unsupportedCompression,
                "option compression = .snappy: this build's LevelDB has no Snappy (the bundled LevelDB of Apple platforms); use .none"
            )
        }
    }
}

/// Options of one read.
///
/// Not `Sendable` when it carries a snapshot, because a ``LevelDBSnapshot`` belongs to one thread.
public struct LevelDBReadOptions {
    /// Verify the checksum of every block read from disk. Default `true`, unlike LevelDB's
    /// `false`: a damaged block then gives a `.corruption` error instead of wrong keys or
    /// values. Blocks already in the block cache were verified when they were read; the
    /// cost is one CRC-32C per block read from the disk (measured in kvbench's `tuning`
    /// section). Turn it off for bulk scans of data known to be sound.
    public var verifyChecksums: Bool = true
    /// Keep blocks read for this call in the block cache; turn off for bulk scans
    /// that should not evict the working set. Default `true`.
    public var fillCache: Bool = true
    /// Read the database as it was when this snapshot was taken; `nil` reads the latest state.
    public var snapshot: LevelDBSnapshot? = nil

    /// Read options; the defaults read the latest state, fill the cache and verify checksums
    /// (LevelDB's `LevelDBReadOptions()` does not verify them).
    public init(verifyChecksums: Bool = true, fillCache: Bool = true, snapshot: LevelDBSnapshot? = nil) {
        self.verifyChecksums = verifyChecksums
        self.fillCache = fillCache
        self.snapshot = snapshot
    }

    package var isDefault: Bool { verifyChecksums && fillCache && snapshot == nil }
}
