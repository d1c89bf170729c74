import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// kvrepl over a base and a user database: `--base`, `layers`, `replace-base`, `backup`.
@Suite struct KVReplLayersTests {
    @Test func aLayeredSessionMergesTheBaseAndWritesOnlyTheUserDatabase() throws {
        let dir = TemporaryDirectory("kvrepl-layers")
        let base = dir.child("base"), newBase = dir.child("new-base"), user = dir.child("user")
        var r = try kvrepl(["--demo", base, "-c", "count stations"])
        #expect(r.stdout == "60\n", "\(r.stderr)")
        r = try kvrepl([
            newBase, "--create", "--schema", try schemaFile(dir), "-c",
            #"insert stations {"id": "NEW", "name": "New Town", "zone": 1, "lines": [], "location": {"lat": -31.9, "lon": 115.9}}"#
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let before = try fingerprint(base)
        r = try kvrepl([
            user, "--base", base, "--create", "--json",
            "-c",
            #"upsert stations {"id": "HOME", "name": "Home", "zone": 1, "lines": [], "location": {"lat": -31.9541, "lon": 115.8621}}"#,
            "-c", "remove stations \"PERTH\"",
            "-c", "near stations (-31.9540, 115.8620) within 1500 limit 2",
            "-c", "count stations", "-c", "layers", "-c", "backup \(dir.child("backup"))", "-c", "verify"
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = try jsonLines(r.stdout)
        #expect(lines.count == 8)
        guard lines.count == 8 else { return }
        #expect(lines[2]["id"] == "HOME")
        #expect(lines[3]["id"] == "PERTH-UNDERGROUND")
        #expect(lines[4] == ["count": 60])
        #expect(lines[5]["base"] == .string(base))
        #expect(lines[6]["ok"] == true)
        #expect(lines[7]["ok"] == true)
        #expect(try fingerprint(base) == before)
        // Raw commands are refused: they would read one layer.
        r = try kvrepl([user, "--base", base, "-c", "scan --count"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("this session is layered"))
        // The user layer alone is not a database to read: kvrepl says how to open it.
        r = try kvrepl([user, "-c", "count stations"])
        #expect(r.status == 1)
        #expect(
            r.stderr.contains("is the user layer of a layered database over \(base): open it with --base"),
            "\(r.stderr)")
        // The backup is the user database: it opens with the base again.
        r = try kvrepl([dir.child("backup"), "--base", base, "-c", "count stations", "-c", "doc stations \"HOME\""])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix("60\n"))
        // Replacing the base keeps the user's document and delete.
        r = try kvrepl([
            user, "--base", base, "--json", "-c", "replace-base \(newBase)", "-c", "count stations", "-c",
            "doc stations \"HOME\"", "-c", "layers", "-c", "verify"
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let after = try jsonLines(r.stdout)
        #expect(after.count == 5)
        #expect(after.dropFirst().first == ["count": 2])  // NEW and HOME
        #expect(after.dropFirst(3).first?["base"] == .string(newBase))
        r = try kvrepl([user, "--base", newBase, "-c", "count stations"])
        #expect(r.stdout == "2\n", "\(r.stderr)")
        // Maintenance commands work on the merged view too.
        r = try kvrepl([
            user, "--base", newBase, "--json", "-c", "salvage", "-c", "reindex stations", "-c", "verify", "-c",
            "count stations"
        ])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try jsonLines(r.stdout).last == ["count": 2])
        #expect(try fingerprint(base) == before)
    }

    /// The README's three stories, as the script that tells them runs them.
    @Test func theReadmesLayerStoriesRun() throws {
        let dir = TemporaryDirectory("kvrepl-layers")
        var environment = ProcessInfo.processInfo.environment
        environment["KVREPL"] = try kvreplBinary()
        let script = packageRoot.appendingPathComponent("Examples/layers/story.sh").path
        let r = try runProcess("/bin/bash", [script, dir.path], environment: environment)
        #expect(r.status == 0, "\(r.stderr.suffix(2000))")
        // The user's station and group survive the replacement and the backup.
        #expect(r.stdout.contains("the base is now \(dir.path)/stations-2027.db"), "\(r.stdout)")
        #expect(r.stdout.components(separatedBy: #"{"id":"commute","stations":["HOME","PERTH"]}"#).count == 3)
        #expect(r.stdout.contains(#""REDCLIFFE"  8123.0 m"#))
        #expect(r.stdout.components(separatedBy: "4 documents, 22 index entries: ok").count == 3)
    }

    /// The sample schema, for the new base.
    private func schemaFile(_ dir: TemporaryDirectory) throws -> String {
        let path = dir.child("schema.json")
        let r = try kvrepl([dir.child("base"), "-c", "schema"])
        try r.stdout.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}

/// The layer defects of issue 27 as a shell user meets them: a replacement that conflicts,
/// bases that would hide the user's documents, a base that is the user database.
@Suite struct KVReplLayerSafetyTests {
    private func people(_ dir: TemporaryDirectory, _ name: String, ids: Range<Int>, email: String) throws -> String {
        let schema = dir.child("people-schema.json")
        try
            #"{"collections": {"people": {"primaryKey": "id", "indexes": [{"name": "by_email", "fields": ["email"], "unique": true}], "text": [{"name": "bio", "fields": ["bio"]}]}}}"#
            .write(toFile: schema, atomically: true, encoding: .utf8)
        let lines =
            ids.map { #"{"id": \#($0), "email": "\#(email)\#($0 % 1000)@x.org", "bio": "person \#($0)"}"# }.joined(
                separator: "\n") + "\n"
        let file = dir.child(name + ".jsonl")
        try lines.write(toFile: file, atomically: true, encoding: .utf8)
        let r = try kvrepl([dir.child(name), "--create", "--schema", schema, "-c", "import people \(file)"])
        #expect(r.status == 0, "\(r.stderr)")
        return dir.child(name)
    }

    @Test func aConflictingReplaceBaseFailsAndEveryLaterOpenWorks() throws {
        let dir = TemporaryDirectory("kvrepl-layer-safety")
        let b1 = try people(dir, "b1", ids: 0..<300, email: "b"), b3 = try people(dir, "b3", ids: 0..<300, email: "u")
        let users = try people(dir, "t", ids: 1000..<1100, email: "u")  // u0…u99, as b3's
        var r = try kvrepl([dir.child("u"), "--base", b1, "--create", "-c", "import people \(users).jsonl"])
        #expect(r.status == 0, "\(r.stderr)")
        r = try kvrepl([dir.child("u"), "--base", b1, "-c", "replace-base \(b3)"])
        #expect(r.status == 1)
        #expect(r.stderr.contains(#"unique index "by_email" of "people" already has"#), "\(r.stderr)")
        for base in [b1, b3, b1] {
            r = try kvrepl([dir.child("u"), "--base", base, "-c", "count people", "-c", "verify", "-c", "layers"])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stdout.hasPrefix("400\n"), "\(r.stdout)")
            #expect(r.stdout.contains("base: \(b1)"))
            // Naming the conflicting base: a warning, the old base kept.
            #expect(r.stderr.contains("the base in force is still \(b1)") == (base == b3), "\(r.stderr)")
        }
    }

    @Test func aFailedCreateOverAMismatchedBaseLeavesNothingAndNamesTheBase() throws {
        let dir = TemporaryDirectory("kvrepl-layer-safety")
        let b = try people(dir, "b", ids: 0..<20, email: "b")
        let mismatched = dir.child("mismatched.json")
        try #"{"collections": {"people": {"primaryKey": "id"}}}"#.write(
            toFile: mismatched, atomically: true, encoding: .utf8)
        let before = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        let r = try kvrepl([dir.child("u"), "--base", b, "--create", "--schema", mismatched, "-c", "count people"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("the base \(b) and the user layer disagree"), "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == before)
    }

    @Test func basesThatHideTheUsersDocumentsOrAreTheUserDatabaseAreRefused() throws {
        let dir = TemporaryDirectory("kvrepl-layer-safety")
        let b = try people(dir, "b", ids: 0..<50, email: "b")
        let u = dir.child("u")
        var r = try kvrepl([u, "--base", b, "--create", "-c", #"insert people {"id": 500, "email": "mine@x.org"}"#])
        #expect(r.status == 0, "\(r.stderr)")
        r = try kvrepl([dir.child("empty"), "--create", "-c", "put a b"])
        #expect(r.status == 0, "\(r.stderr)")
        for (target, words) in [(dir.child("empty"), "has no document store"), (u, "is the user database")] {
            r = try kvrepl([u, "--base", b, "-c", "replace-base \(target)", "-c", "count people"])
            #expect(r.status == 1)
            #expect(r.stderr.contains(words), "\(r.stderr)")
            #expect(r.stdout == "51\n")
        }
        // Said explicitly, the empty base is used (the collection leaves the schema with it).
        r = try kvrepl([u, "--base", b, "-c", "replace-base \(dir.child("empty")) --allow-unrelated", "-c", "layers"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("base: \(dir.child("empty"))"))
        // A base opened as its own user database: refused, nothing written.
        let before = try fingerprint(b)
        r = try kvrepl([b, "--base", b, "-c", "count people"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("is the user database"), "\(r.stderr)")
        #expect(try fingerprint(b) == before)
        #expect(!FileManager.default.fileExists(atPath: b + ".layers"))
        r = try kvrepl([b, "-c", "count people"])
        #expect(r.stdout == "50\n", "\(r.stderr)")
    }
}
