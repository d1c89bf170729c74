import Foundation
import Testing

/// A reference implementation that differential tests compare KVDocs against, all reached
/// through the Python in `.venv` that scripts/install-deps makes.
///
/// A test that needs one declares it with `@Test(.requires(.plyvel))`. When the
/// reference is missing, a local run reports the test as skipped, naming what is missing
/// and how to install it; in CI (the environment variable `CI` set, as `.ci/run` does) the
/// test runs anyway and fails, because CI installs every reference and a skip there would
/// hide a broken setup.
package enum Reference: String, CaseIterable, Sendable {
    /// Python 3 itself (the standard library: `json`, `pty`), as `.venv/bin/python3`.
    case python = "Python 3 in .venv"
    /// FoundationDB's tuple layer for Python (`fdb.tuple`, pip package `foundationdb`).
    case fdbTuple = "FoundationDB's fdb.tuple"
    /// plyvel, another LevelDB client (Debian's `python3-plyvel`, seen from `.venv`).
    case plyvel = "plyvel (python3-plyvel)"
    /// SQLite's FTS5 through Python's `sqlite3` module: the tokenizers, `bm25()`,
    /// `highlight()` the text tests compare with.
    case sqliteFTS5 = "SQLite FTS5 (Python's sqlite3)"
    /// SQLite's JSON functions (`json_extract`, `json_type`, `json_each`) through Python's
    /// `sqlite3` module: the reference for document queries.
    case sqliteJSON = "SQLite JSON functions (Python's sqlite3)"
    /// PouchDB 2.2.3 under node, another implementation of CouchDB's replication protocol:
    /// node, Debian's `node-xmlhttprequest`, and the bundle that scripts/install-deps puts
    /// in `.venv/pouchdb223/bundle.js` (from PyPI's Python-PouchDB 0.4.1).
    case pouchDB2 = "PouchDB 2.2.3 under node"
    /// An etcd cluster whose client URLs `KVDOCS_ETCD_ENDPOINTS` lists (comma-separated),
    /// answering `/health`: what scripts/test starts with scripts/etcd-cluster.
    case etcd = "an etcd cluster at KVDOCS_ETCD_ENDPOINTS"

    /// The client URLs of the etcd cluster of the tests, from `KVDOCS_ETCD_ENDPOINTS`.
    package static var etcdEndpoints: [String] {
        (ProcessInfo.processInfo.environment["KVDOCS_ETCD_ENDPOINTS"] ?? "").split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces)
        }.filter { !$0.isEmpty }
    }

    /// Where scripts/install-deps puts PouchDB 2.2.3's bundle.
    package static let pouchDBBundle = packageRoot.appendingPathComponent(".venv/pouchdb223/bundle.js").path

    /// The Python statement that succeeds only when the reference works.
    private var probe: String {
        switch self {
        case .python: "pass"
        case .fdbTuple: "import fdb.tuple"
        case .plyvel: "import plyvel"
        case .sqliteFTS5: "import sqlite3; sqlite3.connect(':memory:').execute('CREATE VIRTUAL TABLE t USING fts5(x)')"
        case .sqliteJSON:
            "import sqlite3; sqlite3.connect(':memory:').execute(\"SELECT json_type('[1]', '$[0]'), value FROM json_each('[1]')\").fetchall()"
        case .pouchDB2:
            "import os, shutil; assert shutil.which('node') and os.path.isdir('/usr/share/nodejs/xmlhttprequest') and os.path.isfile(\(pythonString(Self.pouchDBBundle)))"
        case .etcd:
            "import os, urllib.request; assert all(b'\"true\"' in urllib.request.urlopen(e.strip() + '/health', timeout=3).read() for e in os.environ['KVDOCS_ETCD_ENDPOINTS'].split(','))"
        }
    }

    /// How to make the reference available.
    var remedy: String {
        switch self {
        case .etcd:
            "start one: scripts/etcd-cluster start DIR; export KVDOCS_ETCD_ENDPOINTS=$(cat DIR/endpoints) (scripts/test does both)"
        default: "run scripts/install-deps"
        }
    }

    /// The references present on this machine, probed once per test process with one run
    /// of the reference Python.
    package static let available: Set<Reference> = {
        guard let python = try? referencePython() else { return [] }
        let script = allCases.map { reference in
            "try:\n    \(reference.probe)\n    print(\(pythonString(reference.rawValue)))\nexcept Exception:\n    pass"
        }.joined(separator: "\n")
        guard let result = try? runProcess(python, ["-c", script]), result.status == 0 else { return [] }
        return Set(result.stdout.split(separator: "\n").compactMap { Reference(rawValue: String($0)) })
    }()

    /// Whether this run is in CI, where a missing reference must fail the tests that need
    /// it rather than skip them: `CI` is set to anything but `false` or `0`.
    package static var isCI: Bool {
        guard let value = ProcessInfo.processInfo.environment["CI"] else { return false }
        return !["", "false", "0"].contains(value.lowercased())
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test only when every reference in `references` is installed, or in CI
    /// (where a missing one fails the test); otherwise the test is skipped with a comment
    /// naming what is missing.
    package static func requires(_ references: Reference...) -> Self {
        // Without the reference Python, say so first: it is what scripts/install-deps makes.
        let needed =
            Reference.available.contains(.python) ? references : [.python] + references.filter { $0 != .python }
        let missing = needed.filter { !Reference.available.contains($0) }
        return .enabled(
            if: missing.isEmpty || Reference.isCI,
            Comment(
                rawValue: "missing \(missing.map(\.rawValue).joined(separator: ", ")): "
                    + Array(Set(missing.map(\.remedy))).sorted().joined(separator: "; ")))
    }
}
