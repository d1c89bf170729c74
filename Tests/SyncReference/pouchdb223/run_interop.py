#!/usr/bin/env python3
"""Optional interop check: PouchDB 2.2.3 (memory adapter, under node) replicates with a
refpeer server, push and pull, with a conflict and a deletion made on the refpeer side.

Needs: node, Debian's node-xmlhttprequest (/usr/share/nodejs/xmlhttprequest), and the
PouchDB 2.2.3 bundle from PyPI Python-PouchDB 0.4.1 (docs/design/sync.md section 0 says
how to download it). Not part of the unittest.

    python3 Tests/SyncReference/pouchdb223/run_interop.py --bundle DIR/pouchdb/bundle.js [--url DB_URL]
With --url, PouchDB replicates with that database of a running server (KVDocs' SyncServer,
say) instead of a refpeer server it starts; the server-side edits go to it over HTTP.
Exits 0 when both sides end with identical winners, conflicts and leaf sets and a second
round writes 0 docs both ways; 2 when a prerequisite is missing.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import test_refpeer as t  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bundle", default=os.environ.get("POUCHDB223_BUNDLE"))
    ap.add_argument("--url", help="a database of a running server, instead of a refpeer server")
    a = ap.parse_args()
    if not a.bundle or not os.path.exists(a.bundle) or not shutil.which("node") or \
            not os.path.exists("/usr/share/nodejs/xmlhttprequest"):
        print("SKIP: node, node-xmlhttprequest or the PouchDB 2.2.3 bundle is missing")
        return 2
    if a.url:
        p, db = None, a.url.rstrip("/")
    else:
        p, url = t.start_server("--db", "r")
        db = url + "/r"
    lines = {}
    try:
        n = subprocess.Popen(["node", os.path.join(HERE, "interop.js"), db],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                             env=dict(os.environ, BUNDLE=os.path.abspath(a.bundle)))
        for line in n.stdout:
            print(line.rstrip())
            tag, _, rest = line.strip().partition(" ")
            lines[tag] = rest
            if tag == "READY":
                # refpeer-side edits: a concurrent edit of 'shared', a delete, new docs
                st, d = t.http("GET", db + "/shared")
                t.http("PUT", db + "/shared", {"v": "ref", "_rev": d["_rev"]})
                st, d = t.http("GET", db + "/p1")
                t.http("DELETE", db + "/p1?rev=" + d["_rev"])
                for i in range(3):
                    t.http("PUT", db + "/r%d" % i, {"i": i})
                n.stdin.write("go\n")
                n.stdin.flush()
        n.wait(60)
        ref = {}
        st, ch = t.http("GET", db + "/_changes?style=all_docs")
        for r in ch["results"]:
            s1, d = t.http("GET", db + "/" + r["id"] + "?conflicts=true")
            w = [d["_rev"], sorted(d.get("_conflicts", []))] if s1 == 200 else ["deleted"]
            ref[r["id"]] = [w, sorted(c["rev"] for c in r["changes"])]
    finally:
        if p:
            p.terminate()
            p.wait()
    pouch = json.loads(lines.get("STATE", "null"))
    rerun = json.loads(lines.get("RERUN", "null"))
    ok = pouch == ref and rerun == {"pull_written": 0, "push_written": 0} and \
        len(ref.get("shared", [[], []])[1]) == 2
    print("REFPEER", json.dumps(ref, sort_keys=True))
    print("RESULT", "identical states, re-run wrote 0" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
