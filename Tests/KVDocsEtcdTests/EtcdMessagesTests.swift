import Foundation
import KVDocs
import Testing

@testable import KVDocsEtcd

/// The gateway's JSON as etcd 3.4 sends it (recorded on a real cluster: docs/design/etcd.md
/// §2.2): 64-bit integers as strings, bytes as base64, and every field at its default left
/// out. No cluster needed.
@Suite struct EtcdMessagesTests {
    static func base64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }

    @Test func aRangeAnswerIsReadWithItsOmittedDefaults() throws {
        let recorded = try JSONValue(
            parsing: """
                {"header":{"cluster_id":"14841639068965178418","member_id":"10276657743932975437","revision":"4","raft_term":"2"},
                 "kvs":[{"key":"\(Self.base64("docs/b"))","create_revision":"3","mod_revision":"3","version":"1","value":"\(Self.base64("v"))"}],
                 "more":true,"count":"2"}
                """)
        let answer = try EtcdMessages.rangeResponse(recorded)
        #expect(answer.revision == 4 && answer.more && answer.count == 2)
        #expect(answer.kvs == [.init(key: Array("docs/b".utf8), value: Array("v".utf8), modRevision: 3)])
        // An empty range: no kvs, no more, no count; an empty value: no value member.
        let empty = try EtcdMessages.rangeResponse(try JSONValue(parsing: #"{"header":{"revision":"9"}}"#))
        #expect(empty == .init(kvs: [], more: false, count: 0, revision: 9))
        let emptyValue = try EtcdMessages.rangeResponse(
            try JSONValue(
                parsing: #"{"header":{"revision":"9"},"kvs":[{"key":"YQ==","mod_revision":"7"}],"count":"1"}"#))
        #expect(emptyValue.kvs == [.init(key: [0x61], value: [], modRevision: 7)])
    }

    @Test func aTransactionThatFailedHasNoSucceededMember() throws {
        #expect(try EtcdMessages.succeeded(try JSONValue(parsing: #"{"header":{"revision":"5"},"succeeded":true}"#)))
        #expect(!(try EtcdMessages.succeeded(try JSONValue(parsing: #"{"header":{"revision":"5"}}"#))))
    }

    @Test func anAnswerThatIsNotEtcdsIsADecodingErrorNamingTheMember() throws {
        for (text, member) in [
            (#"{"header":{"revision":"x"}}"#, "header.revision"), (#"{"kvs":[{"key":"%%%"}]}"#, "kvs.key"),
            (#"{"kvs":{}}"#, "kvs"), (#"{"more":"yes"}"#, "more")
        ] {
            do {
                _ = try EtcdMessages.rangeResponse(try JSONValue(parsing: text))
                Issue.record("accepted \(text)")
            } catch let error as KVDocsError {
                #expect(error.kind == .decoding && error.message.contains("has a \(member) "), "\(error)")
            }
        }
    }

    @Test func requestsSpellIntegersAsStringsAndLeaveDefaultsOut() throws {
        let range = EtcdMessages.range(key: [1], end: [2], limit: 5, revision: 12, descending: true)
        #expect(
            range.compactDescription
                == #"{"key":"AQ==","limit":"5","range_end":"Ag==","revision":"12","sort_order":"DESCEND","sort_target":"KEY"}"#
        )
        #expect(EtcdMessages.range(key: [1], end: nil).compactDescription == #"{"key":"AQ=="}"#)
        #expect(
            EtcdMessages.range(key: [1], end: nil, revision: 3, serializable: true).compactDescription
                == #"{"key":"AQ==","revision":"3","serializable":true}"#)
        let txn = EtcdMessages.txn(operations: [.put(key: [1], value: [2]), .delete(key: [3])])
        #expect(
            txn.compactDescription
                == #"{"success":[{"request_put":{"key":"AQ==","value":"Ag=="}},{"request_delete_range":{"key":"Aw=="}}]}"#
        )
    }

    @Test func etcdsErrorsBecomeKindsNamingTheLimit() {
        func map(_ status: Int, _ body: String) -> KVDocsError {
            EtcdConnection.map(status: status, body: Array(body.utf8), endpoint: "http://127.0.0.1:23791")
        }
        let compacted = map(
            400,
            #"{"error":"etcdserver: mvcc: required revision has been compacted","message":"etcdserver: mvcc: required revision has been compacted","code":11}"#
        )
        #expect(compacted.kind == .compacted)
        let large = map(400, #"{"error":"etcdserver: request is too large","code":3}"#)
        #expect(large.kind == .limitExceeded && large.message.contains("--max-request-bytes"))
        let ops = map(400, #"{"error":"etcdserver: too many operations in txn request","code":3}"#)
        #expect(ops.kind == .limitExceeded && ops.message.contains("--max-txn-ops"))
        let space = map(429, #"{"error":"etcdserver: mvcc: database space exceeded","code":8}"#)
        #expect(space.kind == .limitExceeded && space.message.contains("alarm disarm"))
        let timeout = map(503, #"{"error":"etcdserver: request timed out","code":14}"#)
        #expect(timeout.kind == .unavailable && timeout.message.contains("127.0.0.1:23791"))
        #expect(
            map(400, #"{"error":"etcdserver: duplicate key given in txn request","code":3}"#).kind == .invalidArgument)
        #expect(map(502, "bad gateway").message.contains("HTTP 502: bad gateway"))
    }

    @Test func keysLiveUnderTheRootsTupleAndRangesMapToHalfOpenIntervals() throws {
        let store = try EtcdKeyValueStore(endpoints: ["http://127.0.0.1:1"], root: "shop")
        let p = Tuple("kvdocs", "shop").encoded
        #expect(store.prefix == p && store.prefixEnd == Array(p.dropLast()) + [1])
        #expect(store.etcdKey([]) == p)
        let all = store.etcdRange(.all)
        #expect(all.start == p && all.end == store.prefixEnd)
        let r = store.etcdRange(KeyRange(lower: .excluded([5]), upper: .included([9])))
        #expect(r.start == p + [5, 0] && r.end == p + [9, 0])
        let s = store.etcdRange(KeyRange(lower: .included([5]), upper: .excluded([9])))
        #expect(s.start == p + [5] && s.end == p + [9])
        // No root's keys are among another's.
        let other = try EtcdKeyValueStore(endpoints: ["http://127.0.0.1:1"], root: "shop/eu")
        #expect(!other.prefix.starts(with: p) && !p.starts(with: other.prefix))
        for bad in ["", "a\u{0}b"] {
            #expect(throws: KVDocsError.self) { try EtcdKeyValueStore(endpoints: ["http://127.0.0.1:1"], root: bad) }
        }
        #expect(throws: KVDocsError.self) { try EtcdKeyValueStore(endpoints: ["127.0.0.1:2379"], root: "x") }
        #expect(throws: KVDocsError.self) { try EtcdKeyValueStore(endpoints: [], root: "x") }
    }
}
