import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
let url = URL(string: "http://127.0.0.1:23791/v3/kv/range")!
let session = URLSession(configuration: .ephemeral)
func call(_ body: String) -> Data {
    var req = URLRequest(url: url); req.httpMethod = "POST"; req.httpBody = body.data(using: .utf8)
    let sem = DispatchSemaphore(value: 0); var out = Data()
    session.dataTask(with: req) { d, _, _ in out = d ?? Data(); sem.signal() }.resume()
    sem.wait(); return out
}
func lat(_ name: String, _ body: String, n: Int = 300) {
    var ts: [Double] = []
    for _ in 0..<n { let t = DispatchTime.now().uptimeNanoseconds; _ = try! JSONSerialization.jsonObject(with: call(body)); ts.append(Double(DispatchTime.now().uptimeNanoseconds - t) / 1e6) }
    ts.sort(); print(String(format: "URLSession %@: median %.2f ms p90 %.2f ms", name, ts[n/2], ts[n*9/10]))
}
lat("range point (linearizable)", #"{"key":"azAwMQ=="}"#)
lat("range point (serializable)", #"{"key":"azAwMQ==","serializable":true}"#)
lat("range 100 keys", #"{"key":"aw==","range_end":"bA==","limit":"100"}"#)
