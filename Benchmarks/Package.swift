// swift-tools-version:6.0
// kvbench: LevelDB tuning benchmarks, the Swift wrapper against the raw C API, and the
// document and text layers against SQLite (GRDB, FTS5). Its own package so the main build
// and tests stay light: `swift run -c release kvbench [--quick]` from this folder.
import Foundation
import PackageDescription

// A path dependency's identity is its directory's name, which depends on the checkout.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
let rootIdentity = root.lastPathComponent.lowercased()

// `KVBENCH_WITHOUT_SYNC=1` builds kvbench without its sync and etcd sections, so without SwiftNIO,
// Hummingbird and AsyncHTTPClient (minutes of a release build): scripts/bench-smoke, which
// type-checks that section against the debug build instead.
let withSync = Context.environment["KVBENCH_WITHOUT_SYNC"] == nil

let package = Package(
    name: "KVDocsBenchmarks",
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0")
    ],
    targets: [
        // The same workloads written straight on LevelDB's C API: the baseline.
        .target(
            name: "CBench",
            linkerSettings: [.linkedLibrary("leveldb"), .linkedLibrary("sqlite3"), .linkedLibrary("m")]
        ),
        .executableTarget(
            name: "kvbench",
            dependencies: [
                "CBench",
                .product(name: "KVDocs", package: rootIdentity),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser")
            ]
                + (withSync
                    ? [
                        .product(name: "KVDocsSync", package: rootIdentity),
                        .product(name: "KVDocsEtcd", package: rootIdentity)
                    ] : []),
            swiftSettings: withSync ? [.define("KVBENCH_SYNC")] : []
        )
    ],
    swiftLanguageModes: [.v6]
)
