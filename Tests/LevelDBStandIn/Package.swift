// swift-tools-version:5.9
import PackageDescription

// A stand-in for https://github.com/firebase/leveldb, used only by scripts/test-bundled: the
// same package name and product (`leveldb`, whose public headers give `leveldb/c.h`), but
// its target compiles no LevelDB: the header wraps the system's (Debian's libleveldb-dev)
// and the target links it. SwiftPM's mirror configuration maps the firebase URL to a git
// repository made from this directory, so that KVDocs' bundled branch of Package.swift
// (KVDOCS_BUNDLED_LEVELDB=1) resolves, builds and links here as it does on an Apple host.
let package = Package(
    name: "leveldb",
    products: [
        .library(name: "leveldb", targets: ["leveldb"])
    ],
    targets: [
        .target(
            name: "leveldb",
            publicHeadersPath: "include",
            linkerSettings: [.linkedLibrary("leveldb")]
        )
    ]
)
