import http.client, json, base64, time
def b(s): return base64.b64encode(s.encode()).decode()
conn = http.client.HTTPConnection("127.0.0.1", 23791)
def call(path, body):
    conn.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
    r = conn.getresponse(); d = r.read(); json.loads(d); return r.status
def lat(name, path, body, n=300):
    ts=[]
    for _ in range(n):
        t=time.perf_counter(); call(path, body); ts.append(time.perf_counter()-t)
    ts.sort(); print(f"JSON keep-alive {name}: n={n} median {ts[n//2]*1e3:.2f} ms p90 {ts[int(n*.9)]*1e3:.2f} ms")
lat("range point (linearizable)", "/v3/kv/range", {"key": b("k001")})
lat("range point (serializable)", "/v3/kv/range", {"key": b("k001"), "serializable": True})
lat("range 100 keys", "/v3/kv/range", {"key": b("k"), "range_end": b("l"), "limit": "100"})
lat("put", "/v3/kv/put", {"key": b("p"), "value": b("v")})
lat("txn compare+2 puts", "/v3/kv/txn", {"compare": [{"key": b("k001"), "target": "VERSION", "result": "GREATER", "version": "0"}], "success": [{"request_put": {"key": b("a1"), "value": b("v")}}, {"request_put": {"key": b("a2"), "value": b("v")}}]})
