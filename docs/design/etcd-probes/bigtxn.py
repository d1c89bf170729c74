import json, base64, http.client, time, etcd3
def b(s): return base64.b64encode(s.encode()).decode()
c = etcd3.client(host="127.0.0.1", port=23798)
conn = http.client.HTTPConnection("127.0.0.1", 23798)
for rnd in range(3):
  for n in (128, 1000, 4096):
    ops=[{"request_put":{"key":b("t%05d"%i),"value":b("v"*100)}} for i in range(n)]
    body=json.dumps({"success":ops})
    t=time.perf_counter(); conn.request("POST","/v3/kv/txn",body=body); r=conn.getresponse(); r.read(); tj=(time.perf_counter()-t)*1e3
    t=time.perf_counter(); c.transaction(compare=[], success=[c.transactions.put("t%05d"%i, "v"*100) for i in range(n)], failure=[]); tg=(time.perf_counter()-t)*1e3
    print(f"{n} puts in one txn: JSON gateway {tj:.1f} ms (status {r.status}), gRPC {tg:.1f} ms")
