"""Scenarios for pouchdb223_model_check.js (see its header): one JSON line per scenario, the
input format of Tests/python/revision_tree_model.py."""
import json, random, sys
random.seed(2233)
out=[]
for s in range(300):
    uni=[]  # (pos,id,parent,deleted)
    used=set()
    def nid():
        while True:
            i = ''.join(random.choice('0123456789abcdef') for _ in range(32)) if random.random()<0.4 else ''.join(random.choice('abcdefgh') for _ in range(random.randint(1,3)))
            if i not in used: used.add(i); return i
    for _ in range(random.randint(1,30)):
        p = None if not uni or random.random()<0.08 else random.randrange(len(uni))
        uni.append(((uni[p][0]+1) if p is not None else 1, nid(), p, random.random()<0.2))
    ops=[]
    for _ in range(random.randint(1,10)):
        leaf=random.randrange(len(uni)); chain=[leaf]
        while uni[chain[-1]][2] is not None: chain.append(uni[chain[-1]][2])
        chain.reverse()
        ops.append({"merge":{"start":uni[chain[0]][0],"ids":[uni[c][1] for c in chain],"deleted":uni[leaf][3]}})
    out.append({"ops":ops})
for o in out: print(json.dumps(o))
