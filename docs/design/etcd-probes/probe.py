import json, base64, urllib.request, urllib.error, time, sys
E = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:23791"
def b(s): return base64.b64encode(s if isinstance(s, bytes) else s.encode()).decode()
def call(path, body):
    data = json.dumps(body).encode()
    req = urllib.request.Request(E + path, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req) as r: return r.status, r.read().decode()
    except urllib.error.HTTPError as e: return e.code, e.read().decode()
# oversized put: 1.6 MiB value
st, out = call("/v3/kv/put", {"key": b("big"), "value": b(b"x" * (1600 * 1024))}); print("oversized put:", st, out[:300])
# just under: 1.4 MiB
st, out = call("/v3/kv/put", {"key": b("big"), "value": b(b"x" * (1400 * 1024))}); print("1.4MiB put:", st, out[:200])
# txn with 129 ops
ops = [{"request_put": {"key": b("k%03d" % i), "value": b("v")}} for i in range(129)]
st, out = call("/v3/kv/txn", {"success": ops}); print("129-op txn:", st, out[:300])
ops = ops[:128]
st, out = call("/v3/kv/txn", {"success": ops}); print("128-op txn:", st, out[:120])
# duplicate key in txn
st, out = call("/v3/kv/txn", {"success": [{"request_put": {"key": b("d"), "value": b("1")}}, {"request_put": {"key": b("d"), "value": b("2")}}]}); print("dup key txn:", st, out[:300])
# 129 compares?
cmps = [{"key": b("k%03d" % i), "target": "VERSION", "result": "GREATER", "version": "0"} for i in range(200)]
st, out = call("/v3/kv/txn", {"compare": cmps, "success": []}); print("200-compare txn:", st, out[:300])
# range limit over large response? range all
st, out = call("/v3/kv/range", {"key": b("k"), "range_end": b("l"), "limit": "2", "revision": "1"}); print("range rev1:", st, out[:300])
# latency
def lat(name, path, body, n=300):
    ts = []
    for _ in range(n):
        t = time.perf_counter(); call(path, body); ts.append(time.perf_counter() - t)
    ts.sort(); print(f"{name}: n={n} median {ts[n//2]*1e3:.2f} ms p90 {ts[int(n*.9)]*1e3:.2f} ms")
lat("range point (linearizable)", "/v3/kv/range", {"key": b("k001")})
lat("range point (serializable)", "/v3/kv/range", {"key": b("k001"), "serializable": True})
lat("range 100 keys", "/v3/kv/range", {"key": b("k"), "range_end": b("l"), "limit": "100"})
i = [0]
lat("put", "/v3/kv/put", {"key": b("p"), "value": b("v")})
lat("txn compare+2 puts", "/v3/kv/txn", {"compare": [{"key": b("k001"), "target": "VERSION", "result": "GREATER", "version": "0"}], "success": [{"request_put": {"key": b("a1"), "value": b("v")}}, {"request_put": {"key": b("a2"), "value": b("v")}}]})
