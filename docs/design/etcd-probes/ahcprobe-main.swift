import AsyncHTTPClient
import NIOCore
import Foundation
import Dispatch
let client = HTTPClient(eventLoopGroupProvider: .singleton)
// Synchronous call, as the KeyValueReader seam needs: the EventLoopFuture API waited on.
func call(_ path: String, _ body: String) throws -> ByteBuffer {
    var req = try HTTPClient.Request(url: "http://127.0.0.1:23791" + path, method: .POST)
    req.body = .string(body)
    let resp = try client.execute(request: req).wait()
    return resp.body ?? ByteBuffer()
}
func lat(_ name: String, _ path: String, _ body: String, n: Int = 300) throws {
    var ts: [Double] = []
    for _ in 0..<n { let t = DispatchTime.now().uptimeNanoseconds; var b = try call(path, body); _ = try JSONSerialization.jsonObject(with: Data(b.readBytes(length: b.readableBytes)!)); ts.append(Double(DispatchTime.now().uptimeNanoseconds - t) / 1e6) }
    ts.sort(); print(String(format: "AsyncHTTPClient %@: median %.2f ms p90 %.2f ms", name, ts[n/2], ts[n*9/10]))
}
try lat("range point (linearizable)", "/v3/kv/range", #"{"key":"azAwMQ=="}"#)
try lat("range point (serializable)", "/v3/kv/range", #"{"key":"azAwMQ==","serializable":true}"#)
try lat("range 100 keys", "/v3/kv/range", #"{"key":"aw==","range_end":"bA==","limit":"100"}"#)
try lat("put", "/v3/kv/put", #"{"key":"cA==","value":"dg=="}"#)
try lat("txn compare+2 puts", "/v3/kv/txn", #"{"compare":[{"key":"azAwMQ==","target":"VERSION","result":"GREATER","version":"0"}],"success":[{"request_put":{"key":"YTE=","value":"dg=="}},{"request_put":{"key":"YTI=","value":"dg=="}}]}"#)
try client.syncShutdown()
