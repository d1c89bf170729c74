// swift-tools-version:6.0
import PackageDescription

// `KVDOCS_WITHOUT_SYNC=1` builds the package without its networked half: no KVDocsSync, no
// KVDocsEtcd, no kvrepl (whose `serve` and `replicate` need sync), and none of the HTTP
// stack (SwiftNIO, Hummingbird, AsyncHTTPClient) resolved or built. scripts/sanitize uses it, since the
// suites it runs under ThreadSanitizer need none of them.
let withSync = Context.environment["KVDOCS_WITHOUT_SYNC"] == nil

// Where LevelDB comes from. On Apple hosts (Xcode, `swift build` on a Mac, builds for iOS,
// watchOS, tvOS and visionOS), or with `KVDOCS_BUNDLED_LEVELDB=1`: the `leveldb` product of
// firebase/leveldb, which compiles LevelDB's sources (its C API included) for the target, with
// `HAVE_FULLFSYNC` (a synced write ends in `fcntl(F_FULLFSYNC)`) and without Snappy.
// Elsewhere: the system library (Debian's libleveldb-dev and libsnappy-dev). scripts/test-bundled
// builds and tests the bundled branch on Linux, through a mirror to a local stand-in.
#if os(macOS)
let bundledLevelDB = Context.environment["KVDOCS_SYSTEM_LEVELDB"] == nil
#else
let bundledLevelDB = Context.environment["KVDOCS_BUNDLED_LEVELDB"] != nil
#endif
// A build without Snappy: the bundled LevelDB, or `KVDOCS_WITHOUT_SNAPPY=1` over the system
// library (to test, on Linux, what an Apple build does with Snappy-compressed tables).
let withoutSnappy = bundledLevelDB || Context.environment["KVDOCS_WITHOUT_SNAPPY"] != nil
let storageSettings: [SwiftSetting] = withoutSnappy ? [.define("KVDOCS_WITHOUT_SNAPPY")] : []

let package = Package(
    name: "KVDocs",
    // The oldest releases with Swift 6's Synchronization module (`Atomic`, KVStorage's counters).
    platforms: [.macOS(.v15), .iOS(.v18), .watchOS(.v11), .tvOS(.v18), .visionOS(.v2)],
    products: [
        .library(name: "KVDocs", targets: ["KVDocs"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // Heap (HeapModule): the bounded top-k heaps of query execution.
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0")
    ],
    targets: [
        // MARK: - Library

        // One target per layer, each depending only on the layers below it, so that the
        // compiler keeps the direction: Support <- Storage <- Keys <- Text, Geo <- Documents.
        // Cross-layer internals are `package`; `KVDocs` re-exports every layer.

        // JSON values and their binary form, errors, locks and small utilities.
        .target(
            name: "KVSupport",
            dependencies: [.product(name: "HeapModule", package: "swift-collections")]
        ),
        // The Swift wrapper of LevelDB: databases, options, batches, cursors, snapshots,
        // repair, backups, layered stores.
        .target(
            name: "KVStorage",
            dependencies: ["CLevelDB", "KVSupport"],
            swiftSettings: storageSettings
        ),
        // The FoundationDB tuple encoding, subspaces, keyspaces and record splitting.
        .target(
            name: "KVKeys",
            dependencies: ["KVSupport", "KVStorage"]
        ),
        // Full-text indexes over rows (FTS5's tokenizers, query syntax, ranking).
        .target(
            name: "KVText",
            dependencies: ["KVSupport", "KVStorage", "KVKeys"]
        ),
        // Geometry and the row-level geo index: cells, coverings, the ring search.
        .target(
            name: "KVGeo",
            dependencies: ["KVSupport", "KVStorage", "KVKeys"]
        ),
        // Vectors: metrics, the packed blocks a vector index stores, float32 SIMD distances
        // with error bounds, the exact top-k selection.
        .target(
            name: "KVVector",
            dependencies: [
                "KVSupport", "KVStorage", "KVKeys", "CVectorKernels",
                .product(name: "HeapModule", package: "swift-collections")
            ]
        ),
        // The float32 kernels of vector scans for x86-64 processors with AVX2 and FMA,
        // chosen at run time (KVVector's Swift SIMD kernels everywhere else).
        .target(name: "CVectorKernels"),
        // Documents in collections: the catalog, schemas, index maintainers, queries,
        // observation, migrations, layered stores, the revision trees of replicated collections.
        .target(
            name: "KVDocuments",
            dependencies: [
                "KVSupport", "KVStorage", "KVKeys", "KVText", "KVGeo", "KVVector",
                .product(name: "HeapModule", package: "swift-collections")
            ]
        ),
        // The data side of CouchDB's replication protocol over replicated collections: the
        // changes a replicator reads, revs_diff, open revisions, writes that keep the
        // revisions they are given (new_edits: false), conflicts and their resolution,
        // `_local` documents, the store's uuid. The revision trees themselves are the
        // document layer's (every write to a replicated collection keeps one).
        .target(
            name: "KVReplication",
            dependencies: ["KVSupport", "KVStorage", "KVKeys", "KVDocuments"]
        ),
        // The umbrella: `import KVDocs` brings every layer; the DocC catalog lives here.
        .target(
            name: "KVDocs",
            dependencies: [
                "KVSupport", "KVStorage", "KVKeys", "KVText", "KVGeo", "KVVector", "KVDocuments", "KVReplication"
            ]
        ),

        // MARK: - kvrepl

        // libedit (Debian's libedit-dev): line editing, history and completion for kvrepl.
        .systemLibrary(
            name: "CEditLine",
            providers: [.apt(["libedit-dev"]), .brew(["libedit"])]
        ),
        // The shell's command language, literals, display and sample database: a library so
        // that it is unit-tested; the executable only reads lines and prints.
        .target(
            name: "KVReplCore",
            dependencies: ["KVDocs"]
        ),

        // MARK: - Examples and tools

        // The README's library example, kept compiling and runnable (`swift run kvdocs-example`).
        .executableTarget(
            name: "kvdocs-example",
            dependencies: ["KVDocs"],
            path: "Examples/QuickStart"
        ),
        // The two app stories, typed end to end (`swift run example-athletes DIR`,
        // `swift run example-stations DIR`): athletes with the user's groups in a layered
        // store and a replaced base; the nearest station and its next departures in one
        // snapshot. Run by the tests (Tests/KVReplTests/AppStoryTests.swift).
        .executableTarget(
            name: "example-athletes",
            dependencies: ["KVDocs"],
            path: "Examples/Athletes"
        ),
        .executableTarget(
            name: "example-stations",
            dependencies: ["KVDocs"],
            path: "Examples/Stations"
        ),
        // An app's model file: `@Observable` beside `import KVDocs`, kept current by an
        // observed query (`swift run example-observable DIR`); run by the tests.
        .executableTarget(
            name: "example-observable",
            dependencies: ["KVDocs"],
            path: "Examples/ObservableModel"
        ),
        // The reliability scenarios of RELIABILITY.md (corruption, crashes, fuzzing), run in
        // short modes by the tests and in long modes by hand.
        .executableTarget(
            name: "kvstress",
            dependencies: [
                "KVDocs", "KVReplCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser")
            ]
        ),
        // Exercises every storage API once, for the valgrind leak check (scripts/leak-check).
        .executableTarget(
            name: "kvdocs-leakcheck",
            dependencies: ["KVDocs"],
            path: "Tests/LeakCheck"
        ),

        // MARK: - Tests

        // What every test target shares: temporary databases and directories, running
        // processes and the reference Python, the `.requires(…)` trait that skips a
        // differential test when its reference is missing (and fails it in CI), the backends
        // of the differential suites, and the toy index kind. A library for tests only: it
        // imports Testing, and nothing but test targets depends on it.
        .target(
            name: "KVDocsTestSupport",
            dependencies: ["KVDocs"],
            path: "Tests/KVDocsTestSupport"
        ),
        // Counts each thread's heap allocations (its malloc replaces the C library's in the
        // executable that links it): kvbench's allocations per document, and the tests that
        // bound them on the hot paths. Never a dependency of the library.
        .target(
            name: "CAllocationCount",
            path: "Tests/CAllocationCount"
        ),
        // A test target per layer of the library, named after it; every one shares
        // KVDocsTestSupport. A layer's suites test what it owns, through the layers above
        // it where that is how it is used (text and geo through documents).
        .testTarget(name: "KVSupportTests", dependencies: ["KVDocs", "KVDocsTestSupport"]),
        .testTarget(name: "KVStorageTests", dependencies: ["KVDocs", "KVDocsTestSupport"]),
        .testTarget(name: "KVKeysTests", dependencies: ["KVDocs", "KVDocsTestSupport"]),
        .testTarget(name: "KVTextTests", dependencies: ["KVDocs", "KVDocsTestSupport"]),
        .testTarget(name: "KVGeoTests", dependencies: ["KVDocs", "KVDocsTestSupport"]),
        .testTarget(name: "KVVectorTests", dependencies: ["KVDocs", "KVDocsTestSupport", "KVDocuments", "KVVector"]),
        .testTarget(name: "KVDocumentsTests", dependencies: ["KVDocs", "KVDocsTestSupport", "CAllocationCount"])
    ],
    swiftLanguageModes: [.v6]
)

// MARK: - C library

// LevelDB's C API as the module CLevelDB, from either source (`bundledLevelDB` above).
if bundledLevelDB {
    package.dependencies.append(
        .package(url: "https://github.com/firebase/leveldb.git", .upToNextMinor(from: "1.22.2")))
    package.targets.append(
        .target(
            name: "CLevelDB",
            dependencies: [.product(name: "leveldb", package: "leveldb")],
            path: "Sources/CLevelDBBundled"
        ))
} else {
    // Debian ships no leveldb.pc, so the module map links `leveldb` directly and no
    // pkg-config name is given.
    package.targets.append(
        .systemLibrary(
            name: "CLevelDB",
            providers: [
                .apt(["libleveldb-dev", "libsnappy-dev"]),
                .brew(["leveldb", "snappy"])
            ]
        ))
}

// The sync half: the replicator and its HTTP server and client, the shell that offers them,
// and their tests.
if withSync {
    package.products += [
        .library(name: "KVDocsSync", targets: ["KVDocsSync"]),
        .library(name: "KVDocsEtcd", targets: ["KVDocsEtcd"]),
        .executable(name: "kvrepl", targets: ["kvrepl"])
    ]
    package.dependencies += [
        // KVDocsSync only: the HTTP server and client of replication.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0")
    ]
    package.targets += [
        // MARK: - Sync

        // Replication over CouchDB's protocol: the replicator and its peers. A product of its
        // own, so that apps that do not sync do not pull in its dependencies.
        .target(
            name: "KVDocsSync",
            dependencies: [
                "KVDocs", "KVDocuments", "KVSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log")
            ]
        ),

        // MARK: - etcd

        // EtcdStore: the storage seam over an etcd cluster (its v3 API through the JSON
        // gateway), so that the document, text and geo layers run on many machines. A product
        // of its own, like KVDocsSync: an app that does not use it does not build its HTTP client.
        .target(
            name: "KVDocsEtcd",
            dependencies: [
                "KVSupport", "KVStorage", "KVKeys",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio")
            ]
        ),

        // The shell's sync commands (replicate), over KVDocsSync: kept out of KVReplCore so
        // that the command language does not depend on the sync stack.
        .target(
            name: "KVReplSync",
            dependencies: ["KVReplCore", "KVDocsSync", "KVDocs"]
        ),
        .executableTarget(
            name: "kvrepl",
            dependencies: [
                "KVReplCore", "KVReplSync", "KVDocsEtcd", "CEditLine",
                .product(name: "ArgumentParser", package: "swift-argument-parser")
            ]
        ),
        .testTarget(
            name: "KVDocsEtcdTests",
            dependencies: ["KVDocsEtcd", "KVDocs", "KVDocsTestSupport"]
        ),
        .testTarget(
            name: "KVDocsSyncTests",
            dependencies: ["KVDocsSync", "KVDocs", "KVDocsTestSupport"]
        ),
        .testTarget(
            name: "KVReplTests",
            dependencies: ["KVReplCore", "KVReplSync", "KVDocs", "KVDocsTestSupport"]
        )
    ]
    // The differential suites of the document, text and geo tests run over etcd as well
    // (Tests/KVDocsTestSupport/TestBackend.swift).
    package.targets.first { $0.name == "KVDocsTestSupport" }?.dependencies.append("KVDocsEtcd")
}

// MARK: - Benchmarks

// kvbench: LevelDB's tuning, the Swift wrapper against the raw C API, and every layer
// against SQLite (its C API, GRDB, FTS5, R*Tree), measured in the same run
// (`swift run -c release kvbench [--quick] [--sections …]`; Benchmarks/README.md). In the
// package itself, so that scripts/test builds it once with everything else; not a product,
// so an app that depends on KVDocs never resolves GRDB. `KVBENCH_WITHOUT_SYNC=1` builds it
// without its sync and etcd sections (a release build of kvbench alone then builds no
// SwiftNIO); the manifest without the networked half (KVDOCS_WITHOUT_SYNC) has no kvbench.
if withSync {
    let benchSync = Context.environment["KVBENCH_WITHOUT_SYNC"] == nil
    package.dependencies.append(.package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"))
    package.targets += [
        // The same workloads written straight on LevelDB's and SQLite's C APIs: the floors.
        .target(
            name: "CBench",
            dependencies: bundledLevelDB ? ["CLevelDB"] : [],
            path: "Benchmarks/Sources/CBench",
            cSettings: bundledLevelDB ? [.define("KVDOCS_BUNDLED_LEVELDB")] : [],
            linkerSettings: (bundledLevelDB ? [] : [.linkedLibrary("leveldb")]) + [
                .linkedLibrary("sqlite3"), .linkedLibrary("m")
            ]
        ),
        .executableTarget(
            name: "kvbench",
            dependencies: [
                "CBench", "CAllocationCount", "KVDocs",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser")
            ] + (benchSync ? ["KVDocsSync", "KVDocsEtcd"] : []),
            path: "Benchmarks/Sources/kvbench",
            swiftSettings: benchSync ? [.define("KVBENCH_SYNC")] : []
        ),
        // One workload of kvbench's documents section, alone, for a profiler (callgrind's
        // --toggle-collect='*profiledWorkload*'); see its main.swift.
        .executableTarget(
            name: "kvprofile",
            dependencies: ["KVDocs", "CAllocationCount"],
            path: "Benchmarks/Sources/kvprofile"
        )
    ]
}
