// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "KVDocs",
    products: [
        .library(name: "KVDocs", targets: ["KVDocs"]),
    ],
    targets: [
        // MARK: - C library

        // LevelDB's C API. Debian ships no leveldb.pc, so the module map links `leveldb` directly
        // and no pkg-config name is given.
        .systemLibrary(
            name: "CLevelDB",
            providers: [
                .apt(["libleveldb-dev", "libsnappy-dev"]),
                .brew(["leveldb"]),
            ]
        ),

        // MARK: - Library

        .target(
            name: "KVDocs",
            dependencies: ["CLevelDB"]
        ),

        // MARK: - Examples and tools

        // The README's library example, kept compiling and runnable (`swift run kvdocs-example`).
        .executableTarget(
            name: "kvdocs-example",
            dependencies: ["KVDocs"],
            path: "Examples/QuickStart"
        ),
        // Exercises every storage API once, for the valgrind leak check (scripts/leak-check).
        .executableTarget(
            name: "kvdocs-leakcheck",
            dependencies: ["KVDocs"],
            path: "Tests/LeakCheck"
        ),

        // MARK: - Tests

        .testTarget(
            name: "KVDocsTests",
            dependencies: ["KVDocs"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
