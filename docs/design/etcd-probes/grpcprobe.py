import time, etcd3
from etcd3.etcdrpc import rpc_pb2 as pb
c = etcd3.client(host="127.0.0.1", port=23791)
c.put("k001", "v")
def lat(name, f, n=300):
    ts=[]
    for _ in range(n):
        t=time.perf_counter(); f(); ts.append(time.perf_counter()-t)
    ts.sort(); print(f"gRPC {name}: n={n} median {ts[n//2]*1e3:.2f} ms p90 {ts[int(n*.9)]*1e3:.2f} ms")
lat("range point (linearizable)", lambda: c.get("k001"))
lat("range point (serializable)", lambda: c.get("k001", serializable=True))
lat("range 100 keys", lambda: c.kvstub.Range(pb.RangeRequest(key=b"k", range_end=b"l", limit=100)))
lat("put", lambda: c.put("p", "v"))
lat("txn compare+2 puts", lambda: c.transaction(compare=[c.transactions.version("k001") > 0], success=[c.transactions.put("a1","v"), c.transactions.put("a2","v")], failure=[]))
