import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@testable import KVDocsSync

/// The sync endpoint's answers and error shapes, without the network.
@Suite struct SyncEndpointTests {
    static func call(
        _ endpoint: SyncEndpoint, _ method: String, _ path: String, query: [(String, String)] = [],
        body: JSONValue? = nil, raw: [UInt8]? = nil, headers: [String: String] = [:]
    ) async throws -> (status: Int, json: JSONValue) {
        let response = await endpoint.respond(
            to: SyncRequest(
                method: method, path: path, query: query.map { (name: $0.0, value: $0.1) }, headers: headers,
                body: try raw ?? body?.canonicalBytes() ?? []))
        return (response.status, try JSONValue(parsing: response.body))
    }

    @Test func theServerAndDatabaseAnswersHaveCouchDBsShapes() async throws {
        let peer = try SyncPeer()
        try ReplicatorTests.fill(peer, 3)
        let endpoint = SyncEndpoint(store: peer.store)
        var r = try await Self.call(endpoint, "GET", "/")
        #expect(r.status == 200 && r.json["couchdb"] == "Welcome")
        let uuid = try await peer.store.uuid()
        #expect(r.json["uuid"] == .string(uuid))
        r = try await Self.call(endpoint, "GET", "/docs")
        #expect(r.status == 200 && r.json["db_name"] == "docs" && r.json["update_seq"] == 3)
        #expect(r.json["doc_count"] == 3 && r.json["instance_start_time"] == "0")
        r = try await Self.call(endpoint, "GET", "/nope")
        #expect(r.status == 404 && r.json == ["error": "not_found", "reason": "Database does not exist."])
        r = try await Self.call(endpoint, "GET", "/docs/_changes", query: [("style", "all_docs"), ("since", "1")])
        #expect(r.status == 200 && r.json["last_seq"] == 3)
        guard case .array(let rows)? = r.json["results"] else { return }
        #expect(rows.count == 2 && rows.first?["id"] == "d1" && rows.first?["seq"] == 2)
        r = try await Self.call(endpoint, "GET", "/docs/d1", query: [("revs", "true")])
        #expect(r.status == 200 && r.json["_id"] == "d1" && r.json["_revisions"]?["start"] == 1)
        r = try await Self.call(endpoint, "GET", "/docs/absent")
        #expect(r.status == 404 && r.json["reason"] == "missing")
        try peer.docs.delete(id: "d2")
        r = try await Self.call(endpoint, "GET", "/docs/d2")
        #expect(r.status == 404 && r.json["reason"] == "deleted")
        r = try await Self.call(endpoint, "POST", "/docs/_ensure_full_commit", body: [:])
        #expect(r.status == 201 && r.json["ok"] == true)
    }

    @Test func localDocumentsFollowCouchDBsRevisionRule() async throws {
        let peer = try SyncPeer()
        let endpoint = SyncEndpoint(store: peer.store)
        var r = try await Self.call(endpoint, "GET", "/docs/_local/cp")
        #expect(r.status == 404)
        r = try await Self.call(endpoint, "PUT", "/docs/_local/cp", body: ["seq": 1])
        #expect(r.status == 201 && r.json == ["ok": true, "id": "_local/cp", "rev": "0-1"])
        r = try await Self.call(endpoint, "PUT", "/docs/_local/cp", body: ["seq": 2])
        #expect(r.status == 409 && r.json["error"] == "conflict")
        r = try await Self.call(endpoint, "PUT", "/docs/_local/cp", body: ["seq": 2, "_rev": "0-1"])
        #expect(r.status == 201 && r.json["rev"] == "0-2")
        r = try await Self.call(endpoint, "GET", "/docs/_local/cp")
        #expect(r.json == ["_id": "_local/cp", "_rev": "0-2", "seq": 2])
        // _local documents are not changes.
        r = try await Self.call(endpoint, "GET", "/docs/_changes")
        #expect(r.json["results"] == [])
    }

    @Test func credentialsAreRequiredWhenSet() async throws {
        let peer = try SyncPeer()
        let endpoint = SyncEndpoint(store: peer.store, credentials: ("ada", "secret"))
        let missing = await endpoint.respond(to: SyncRequest(method: "GET", path: "/"))
        #expect(missing.status == 401)
        #expect(missing.headers.contains { $0.name == "WWW-Authenticate" })
        let wrong = "Basic " + Data("ada:nope".utf8).base64EncodedString()
        var r = try await Self.call(endpoint, "GET", "/", headers: ["authorization": wrong])
        #expect(r.status == 401 && r.json["error"] == "unauthorized")
        let right = "Basic " + Data("ada:secret".utf8).base64EncodedString()
        r = try await Self.call(endpoint, "GET", "/docs", headers: ["authorization": right])
        #expect(r.status == 200)
        #expect(throws: KVDocsError.self) { try SyncServer(store: peer.store, host: "0.0.0.0", port: 0) }
        #expect(throws: Never.self) {
            try SyncServer(store: peer.store, host: "0.0.0.0", port: 0, credentials: ("ada", "secret"))
        }
    }

    /// Bad input gets CouchDB's error shapes and writes nothing: the store's changes,
    /// documents and checkpoints are the same after each request as before.
    static func rows(_ json: JSONValue) -> [JSONValue] {
        if case .array(let rows) = json { rows } else { [] }
    }

    static func text(_ json: JSONValue?) -> String {
        if case .string(let text)? = json { text } else { "" }
    }

    @Test func interactiveEditsAnswerTheRevisionTheyMade() async throws {
        let peer = try SyncPeer()
        let endpoint = SyncEndpoint(store: peer.store)
        var r = try await Self.call(endpoint, "PUT", "/docs/n", body: ["tag": "a"])
        let first = Self.text(r.json["rev"])
        #expect(r.status == 201 && r.json["ok"] == true && first.hasPrefix("1-"))
        #expect(try await Self.call(endpoint, "GET", "/docs/n").json["_rev"] == .string(first))
        r = try await Self.call(endpoint, "PUT", "/docs/n", body: ["tag": "b", "_rev": .string(first)])
        #expect(r.status == 201 && Self.text(r.json["rev"]).hasPrefix("2-"))
        // A conflicting branch, which wins once the edit below is deleted.
        let rival: JSONValue = [
            "_id": "n", "_rev": "2-ffff", "tag": "c",
            "_revisions": ["start": 2, "ids": ["ffff", .string(String(first.dropFirst(2)))]]
        ]
        r = try await Self.call(endpoint, "POST", "/docs/_bulk_docs", body: ["docs": [rival], "new_edits": false])
        #expect(r.status == 201 && r.json == [])
        let winner = try #require(try peer.docs.revisionLeaves(id: "n").first).revision.description
        r = try await Self.call(
            endpoint, "POST", "/docs/_bulk_docs", body: ["docs": [["_id": "n", "_rev": .string(winner), "tag": "d"]]])
        let third = Self.text(Self.rows(r.json).first?["rev"])
        #expect(r.status == 201 && third.hasPrefix("3-"))
        r = try await Self.call(endpoint, "DELETE", "/docs/n", query: [("rev", third)])
        let tombstone = Self.text(r.json["rev"])
        #expect(r.status == 200 && r.json["ok"] == true && tombstone.hasPrefix("4-"))
        // The answer is the tombstone's revision; the other branch now wins.
        let leaves = try peer.docs.revisionLeaves(id: "n")
        #expect(leaves.contains { $0.deleted && $0.revision.description == tombstone })
        let now = try await Self.call(endpoint, "GET", "/docs/n")
        #expect(now.status == 200 && now.json["_rev"] != .string(tombstone))
    }

    @Test func allDocsListsWinnersByKeysOrByRangeAsCouchDBDoes() async throws {
        let peer = try SyncPeer()
        for id in ["b", "d", "a", "é", "c", "gone"] { try peer.docs.upsert(["_id": .string(id), "tag": .string(id)]) }
        try peer.docs.delete(id: "gone")
        let endpoint = SyncEndpoint(store: peer.store)
        func ids(_ query: [(String, String)]) async throws -> [String] {
            let r = try await Self.call(endpoint, "GET", "/docs/_all_docs", query: query)
            #expect(r.status == 200 && r.json["total_rows"] == 5, "\(query): \(r)")
            return Self.rows(r.json["rows"] ?? []).map { Self.text($0["id"]) }
        }
        // Id order (code points), live documents only.
        #expect(try await ids([]) == ["a", "b", "c", "d", "é"])
        #expect(try await ids([("descending", "true")]) == ["é", "d", "c", "b", "a"])
        #expect(try await ids([("startkey", #""b""#), ("endkey", #""d""#)]) == ["b", "c", "d"])
        #expect(try await ids([("start_key", #""b""#), ("end_key", #""d""#), ("inclusive_end", "false")]) == ["b", "c"])
        #expect(try await ids([("startkey", #""c""#), ("descending", "true")]) == ["c", "b", "a"])
        #expect(try await ids([("skip", "1"), ("limit", "2")]) == ["b", "c"])
        let offset = try await Self.call(endpoint, "GET", "/docs/_all_docs", query: [("startkey", #""c""#)])
        #expect(offset.json["offset"] == 2)
        // By keys: in their order, a missing id and a deleted one as CouchDB answers them.
        let r = try await Self.call(
            endpoint, "POST", "/docs/_all_docs", query: [("include_docs", "true")],
            body: ["keys": ["d", "nope", "gone", "a"]])
        let rows = Self.rows(r.json["rows"] ?? [])
        #expect(rows.count == 4 && rows.map { Self.text($0["key"]) } == ["d", "nope", "gone", "a"])
        #expect(rows[0]["doc"]?["tag"] == "d" && Self.text(rows[0]["value"]?["rev"]).hasPrefix("1-"))
        #expect(rows[1] == ["key": "nope", "error": "not_found"])
        #expect(rows[2]["value"]?["deleted"] == true && rows[2]["doc"] == .null)
        let byQuery = try await Self.call(endpoint, "GET", "/docs/_all_docs", query: [("keys", #"["a"]"#)])
        #expect(Self.rows(byQuery.json["rows"] ?? []).map { Self.text($0["id"]) } == ["a"])
        // Bad parameters.
        for query in [[("keys", "3")], [("startkey", "b")], [("inclusive_end", "maybe")], [("limit", "-1")]] {
            let bad = try await Self.call(endpoint, "GET", "/docs/_all_docs", query: query)
            #expect(bad.status == 400 && bad.json["error"] == "bad_request", "\(query)")
        }
    }

    /// The lines of a continuous feed, parsed (an empty line, a heartbeat, as `nil`).
    static func lines(_ response: SyncResponse, upTo count: Int = .max, whenHeartbeat: () throws -> Void = {})
        async throws -> [JSONValue?]
    {
        var lines: [JSONValue?] = []
        guard let stream = response.stream else { return lines }
        for try await chunk in stream {
            let line = chunk.last == 0x0A ? chunk.dropLast() : chunk[...]
            if line.isEmpty {
                lines.append(nil)
                try whenHeartbeat()
            } else {
                lines.append(try JSONValue(parsing: Array(line)))
            }
            if lines.count >= count { break }
        }
        return lines
    }

    @Test func aContinuousFeedSendsALinePerChangeHeartbeatsAndTheLastSequence() async throws {
        let peer = try SyncPeer()
        try ReplicatorTests.fill(peer, 3)
        let endpoint = SyncEndpoint(store: peer.store)
        func request(_ query: [(String, String)]) -> SyncRequest {
            SyncRequest(method: "GET", path: "/docs/_changes", query: query.map { (name: $0.0, value: $0.1) })
        }
        // Up to `limit` rows, then the last sequence.
        var lines = try await Self.lines(
            await endpoint.respond(to: request([("feed", "continuous"), ("limit", "2")])))
        #expect(lines.map { $0?["id"] } == ["d0", "d1", nil] && lines.last??["last_seq"] == 2, "\(lines)")
        // Without a heartbeat, the feed ends once `timeout` passes without a change.
        lines = try await Self.lines(
            await endpoint.respond(to: request([("feed", "continuous"), ("timeout", "50"), ("since", "1")])))
        #expect(lines.compactMap { $0?["seq"] } == [2, 3] && lines.last??["last_seq"] == 3, "\(lines)")
        // With one, an empty line while nothing happens, then each change as it comes.
        let live = await endpoint.respond(
            to: request([("feed", "continuous"), ("heartbeat", "20"), ("since", "now"), ("include_docs", "true")]))
        var wrote = false
        lines = try await Self.lines(live, upTo: 4) {
            if !wrote {
                wrote = true
                try peer.docs.upsert(["_id": "live", "tag": "t1"])
            }
        }
        #expect(lines.first == .some(nil), "\(lines)")
        let row = lines.compactMap { $0 }.first
        #expect(row?["id"] == "live" && row?["seq"] == 4 && row?["doc"]?["tag"] == "t1", "\(lines)")
        // Bad parameters.
        for query in [[("feed", "continuous"), ("heartbeat", "often")], [("feed", "continuous"), ("heartbeat", "0")]] {
            let bad = await endpoint.respond(to: request(query))
            #expect(bad.status == 400 && bad.stream == nil, "\(query)")
        }
    }

    @Test func badInputIsRefusedWithCouchDBsErrorsAndWritesNothing() async throws {
        let peer = try SyncPeer()
        try ReplicatorTests.fill(peer, 2)
        let endpoint = SyncEndpoint(store: peer.store)
        func state() throws -> [String] {
            try peer.state(ids: ["d0", "d1", "x", "../x", "a"], tags: ["t0", "t1"])
                + [try peer.docs.changes().lastSequence.description]
        }
        let before = try state()
        let tooMany = JSONValue.array((0...SyncEndpoint.maximumBatch).map { ["_id": .string("x\($0)"), "_rev": "1-a"] })
        let cycle: JSONValue = [
            "_id": "x", "_rev": "2-bbbb", "_revisions": ["start": 2, "ids": ["bbbb", "bbbb"]]
        ]
        let cases: [(String, String, [(String, String)], [UInt8], Int, String)] = [
            ("POST", "/docs/_bulk_docs", [], Array("{not json".utf8), 400, "bad_request"),
            ("POST", "/docs/_bulk_docs", [], Array(#"{"docs": 3}"#.utf8), 400, "bad_request"),
            (
                "POST", "/docs/_bulk_docs", [],
                try JSONValue.object(["docs": tooMany, "new_edits": false]).canonicalBytes(), 413, "too_large"
            ),
            ("POST", "/docs/_revs_diff", [], Array(#"{"x": ["nonsense"]}"#.utf8), 400, "bad_request"),
            ("POST", "/docs/_revs_diff", [], Array(#"[1, 2]"#.utf8), 400, "bad_request"),
            ("POST", "/docs/_bulk_get", [], Array(#"{"docs": [{"id": "x", "rev": "zz"}]}"#.utf8), 400, "bad_request"),
            (
                "POST", "/docs/_bulk_docs", [], Array(repeating: 0x20, count: SyncEndpoint.maximumBodySize + 1), 413,
                "too_large"
            ),
            ("GET", "/docs/_changes", [("feed", "eventsource")], [], 400, "bad_request"),
            ("GET", "/docs/_changes", [("since", "-3")], [], 400, "bad_request"),
            ("GET", "/docs/_changes", [("limit", "lots")], [], 400, "bad_request"),
            ("GET", "/docs/x", [("open_revs", "[1")], [], 400, "bad_request"),
            ("PUT", "/docs/_design/x", [], Array("{}".utf8), 403, "forbidden"),
            ("GET", "/_all_dbs", [], [], 400, "illegal_database_name"),
            ("DELETE", "/docs", [], [], 405, "method_not_allowed"),
            ("GET", "/docs/_revs_diff", [], [], 405, "method_not_allowed"),
            ("GET", "/docs/%ZZ", [], [], 400, "bad_request"),
            ("PUT", "/docs/_local/cp", [], Array("[]".utf8), 400, "bad_request"),
            ("PUT", "/docs/d0", [], Array(#"{"tag": "t9"}"#.utf8), 409, "conflict"),
            ("PUT", "/docs/d0", [("rev", "1-0000")], Array(#"{"tag": "t9"}"#.utf8), 409, "conflict"),
            ("POST", "/docs/_bulk_docs", [], Array(#"{"docs": [{"_id": "d0", "tag": "t9"}]}"#.utf8), 201, ""),
            ("DELETE", "/docs/d0", [], [], 409, "conflict"),
            ("DELETE", "/docs/d0", [("rev", "1-0000")], [], 409, "conflict")
        ]
        for (method, path, query, body, status, error) in cases {
            let r = try await Self.call(endpoint, method, path, query: query, raw: body)
            // (A refused edit in an interactive _bulk_docs is a 201 with the error in its row.)
            let found = r.json["error"] ?? Self.rows(r.json).first?["error"]
            #expect(
                r.status == status && found == .string(error.isEmpty ? "conflict" : error), "\(method) \(path): \(r)")
            #expect(try state() == before, "\(method) \(path) wrote")
        }
        // A document refused inside a batch is answered per document; the others are stored.
        var r = try await Self.call(
            endpoint, "POST", "/docs/_bulk_docs",
            body: [
                "docs": [
                    cycle, ["_id": "_secret", "_rev": "1-abcd"], ["_id": "ok", "_rev": "1-abcd", "v": 1],
                    ["_id": "att", "_rev": "1-abcd", "_attachments": [:]]
                ], "new_edits": false
            ])
        #expect(r.status == 201)
        guard case .array(let errors) = r.json else { return }
        let byID = Dictionary(uniqueKeysWithValues: errors.map { ($0["id"]?.compactDescription ?? "", $0["error"]) })
        #expect(
            byID == [#""x""#: "doc_validation", #""_secret""#: "illegal_docid", #""att""#: "forbidden"], "\(errors)")
        #expect(try peer.docs.get(id: "ok")?["v"] == 1)
        #expect(try peer.docs.revisionLeaves(id: "x").isEmpty)
        // Path traversal is only a document id: nothing outside the store is reached.
        r = try await Self.call(endpoint, "GET", "/docs/..%2F..%2Fetc%2Fpasswd")
        #expect(r.status == 404 && r.json["reason"] == "missing")
        r = try await Self.call(endpoint, "GET", "/docs/_local/..%2Fx")
        #expect(r.status == 404)
    }
}
