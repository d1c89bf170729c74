import Foundation
import KVDocsTestSupport

/// An etcd cluster of one test's own (scripts/etcd-cluster), on ports no other test uses,
/// for what would disturb the shared cluster: compaction, a full quota, members killed.
/// Stopped and removed when released.
final class PrivateEtcdCluster {
    let directory: TemporaryDirectory
    let endpoints: [String]
    private let script = packageRoot.appendingPathComponent("scripts/etcd-cluster").path

    /// Starts `members` members with client ports `portBase + 1…` and peer ports `portBase + 11…`,
    /// `portBase` a multiple of 100 from 24,000 to 64,000 drawn at random (another base when a
    /// start fails: a port may be taken).
    init(members: Int, quotaBytes: Int? = nil) throws {
        directory = TemporaryDirectory("kvdocs-etcd-private")
        var environment = ProcessInfo.processInfo.environment
        environment["KVDOCS_ETCD_MEMBERS"] = String(members)
        if let quotaBytes { environment["KVDOCS_ETCD_QUOTA_BYTES"] = String(quotaBytes) }
        var failures: [String] = []
        for _ in 0..<3 {
            environment["KVDOCS_ETCD_PORT_BASE"] = String(Int.random(in: 240...640) * 100)
            let started = try runProcess(script, ["start", directory.child("cluster")], environment: environment)
            if started.status == 0 { break }
            failures.append(started.stderr)
        }
        guard failures.count < 3 else {
            throw NSError(
                domain: "etcd-cluster", code: 1, userInfo: [NSLocalizedDescriptionKey: failures.joined(separator: "\n")]
            )
        }
        endpoints = try String(contentsOfFile: directory.child("cluster/endpoints"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",").map(String.init)
    }

    /// Kills member `n` (1-based) at once.
    func kill(_ n: Int) throws { try runProcess(script, ["kill", directory.child("cluster"), String(n)]) }

    /// Starts member `n` again on its data.
    func restart(_ n: Int) throws { try runProcess(script, ["restart", directory.child("cluster"), String(n)]) }

    deinit { _ = try? runProcess(script, ["stop", directory.child("cluster")]) }
}
