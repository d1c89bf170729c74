import Foundation
import KVSupport

/// The messages of etcd's v3 API that ``EtcdKeyValueStore`` sends and reads, in the gateway's JSON
/// (proto3's JSON mapping): bytes as base64, 64-bit integers as decimal strings, enums by
/// name, and every field at its default value left out (`more` false, `count` 0, a
/// `succeeded` false, an empty list).
enum EtcdMessages {
    /// One key-value pair of a range answer.
    struct KeyValue: Equatable {
        var key: [UInt8]
        var value: [UInt8]
        /// The revision of the key's last change.
        var modRevision: Int64
    }

    /// A range answer.
    struct RangeResponse: Equatable {
        var kvs: [KeyValue]
        /// Whether the range holds more keys than the page returned.
        var more: Bool
        /// The keys of the whole range (not of the page).
        var count: Int64
        /// The cluster's revision when it answered (not the revision read).
        var revision: Int64
    }

    // MARK: Requests

    /// A Range request for `[key, end)` (`end` `nil`: the key alone).
    static func range(
        key: [UInt8], end: [UInt8]?, limit: Int = 0, revision: Int64 = 0, descending: Bool = false,
        countOnly: Bool = false, serializable: Bool = false
    ) -> JSONValue {
        var members: [(String, JSONValue)] = [("key", .string(base64(key)))]
        if let end { members.append(("range_end", .string(base64(end)))) }
        if limit > 0 { members.append(("limit", .string(String(limit)))) }
        if revision > 0 { members.append(("revision", .string(String(revision)))) }
        if descending {
            members.append(("sort_order", "DESCEND"))
            members.append(("sort_target", "KEY"))
        }
        if countOnly { members.append(("count_only", .bool(true))) }
        if serializable { members.append(("serializable", .bool(true))) }
        return .object(JSONObject(members))
    }

    /// One operation of a transaction.
    enum Operation: Equatable {
        case put(key: [UInt8], value: [UInt8])
        case delete(key: [UInt8])
    }

    /// A Txn request that applies `operations` when every compare holds (none: always).
    static func txn(compares: [JSONValue] = [], operations: [Operation]) -> JSONValue {
        let success: [JSONValue] = operations.map { operation in
            switch operation {
            case .put(let key, let value):
                ["request_put": ["key": .string(base64(key)), "value": .string(base64(value))]]
            case .delete(let key):
                ["request_delete_range": ["key": .string(base64(key))]]
            }
        }
        var members: [(String, JSONValue)] = []
        if !compares.isEmpty { members.append(("compare", .array(compares))) }
        members.append(("success", .array(success)))
        return .object(JSONObject(members))
    }

    /// A read-only Txn request of one Range request per key, each at `revision` (0: now).
    static func txnGets(_ keys: [[UInt8]], revision: Int64, serializable: Bool) -> JSONValue {
        [
            "success": .array(
                keys.map { ["request_range": range(key: $0, end: nil, revision: revision, serializable: serializable)] }
            )
        ]
    }

    /// Reads the answer of ``txnGets(_:revision:serializable:)``: each key's value, or
    /// `nil`, with its mod revision (0 when absent), and the answer's revision.
    /// - Throws: `.decoding` when the answer does not hold one Range answer per key.
    static func txnGetsResponse(_ json: JSONValue, count: Int) throws -> (
        values: [(value: [UInt8]?, modRevision: Int64)], revision: Int64
    ) {
        guard case .array(let responses)? = json["responses"], responses.count == count else {
            throw malformed("responses", json)
        }
        var values: [(value: [UInt8]?, modRevision: Int64)] = []
        values.reserveCapacity(count)
        for response in responses {
            guard let inner = response["response_range"] else { throw malformed("responses.response_range", json) }
            let kvs = try keyValues(inner, json)
            values.append((kvs.first?.value, kvs.first?.modRevision ?? 0))
        }
        return (values, try revision(json))
    }

    /// A DeleteRange request for `[key, end)`.
    static func deleteRange(key: [UInt8], end: [UInt8]) -> JSONValue {
        ["key": .string(base64(key)), "range_end": .string(base64(end))]
    }

    /// The size of the protobuf a request becomes, roughly from above: what the cluster's
    /// `--max-request-bytes` bounds.
    static func estimatedSize(_ operations: [Operation]) -> Int {
        operations.reduce(64) { total, operation in
            switch operation {
            case .put(let key, let value): total + key.count + value.count + 16
            case .delete(let key): total + key.count + 12
            }
        }
    }

    // MARK: Answers

    /// Reads a Range answer.
    /// - Throws: `.decoding` naming the member that is not what etcd sends.
    static func rangeResponse(_ json: JSONValue) throws -> RangeResponse {
        let kvs = try keyValues(json, json)
        return RangeResponse(
            kvs: kvs, more: try boolean(json["more"], "more", json), count: try integer(json["count"], "count", json),
            revision: try revision(json))
    }

    /// The `kvs` of a Range answer (`range`, which is `json` or a part of it).
    /// - Throws: `.decoding` naming the member, with the whole answer `json`.
    static func keyValues(_ range: JSONValue, _ json: JSONValue) throws -> [KeyValue] {
        guard let list = range["kvs"] else { return [] }
        guard case .array(let items) = list else { throw malformed("kvs", json) }
        var kvs: [KeyValue] = []
        kvs.reserveCapacity(items.count)
        for item in items {
            kvs.append(
                KeyValue(
                    key: try bytes(item["key"], "kvs.key", json),
                    value: try bytes(item["value"], "kvs.value", json),
                    modRevision: try integer(item["mod_revision"], "kvs.mod_revision", json)))
        }
        return kvs
    }

    /// The revision in an answer's header.
    static func revision(_ json: JSONValue) throws -> Int64 {
        try integer(json["header"]?["revision"], "header.revision", json)
    }

    /// Whether a Txn answer says its compares held.
    static func succeeded(_ json: JSONValue) throws -> Bool {
        try boolean(json["succeeded"], "succeeded", json)
    }

    // MARK: Encoding

    static func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }

    /// An int64 as proto3's JSON writes it (a string), or as a number; absent: 0.
    static func integer(_ value: JSONValue?, _ name: String, _ json: JSONValue) throws -> Int64 {
        switch value {
        case nil, .null?: return 0
        case .string(let text)?:
            guard let n = Int64(text) else { throw malformed(name, json) }
            return n
        case .int(let n)?: return n
        case .uint(let n)?:
            guard let m = Int64(exactly: n) else { throw malformed(name, json) }
            return m
        default: throw malformed(name, json)
        }
    }

    static func boolean(_ value: JSONValue?, _ name: String, _ json: JSONValue) throws -> Bool {
        switch value {
        case nil, .null?: return false
        case .bool(let b)?: return b
        default: throw malformed(name, json)
        }
    }

    /// Base64 bytes; absent: empty.
    static func bytes(_ value: JSONValue?, _ name: String, _ json: JSONValue) throws -> [UInt8] {
        switch value {
        case nil, .null?: return []
        case .string(let text)?:
            guard let data = Data(base64Encoded: text) else { throw malformed(name, json) }
            return Array(data)
        default: throw malformed(name, json)
        }
    }

    static func malformed(_ name: String, _ json: JSONValue) -> KVDocsError {
        let text = json.compactDescription
        return KVDocsError(
            .decoding,
            "etcd's answer has a \(name) that is not what etcd sends: \(text.prefix(300))\(text.count > 300 ? "…" : "")"
        )
    }
}
