"""Self-test of the Python reference peer (stdlib only).

Run: python3 -m unittest Tests/SyncReference/test_refpeer.py   (from the repository root)
"""

import base64
import json
import os
import subprocess
import sys
import threading
import time
import unittest
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import refpeer  # noqa: E402

REFPEER = os.path.join(HERE, "refpeer.py")


def start_server(*args):
    p = subprocess.Popen([sys.executable, REFPEER, "serve", "--port", "0"] + list(args),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline().strip()
    if not line.startswith("listening on http://127.0.0.1:"):
        p.kill()
        raise RuntimeError("server did not start: %r %s" % (line, p.stderr.read()))
    return p, line.split("listening on ", 1)[1]


def http(method, url, body=None, headers=None, raw=None, auth=None):
    h = {"Accept": "application/json"}
    data = None
    if raw is not None:
        data = raw.encode()
        h["Content-Type"] = "application/json"
    elif body is not None:
        data = json.dumps(body).encode()
        h["Content-Type"] = "application/json"
    if auth:
        h["Authorization"] = "Basic " + base64.b64encode(auth.encode()).decode()
    h.update(headers or {})
    req = urllib.request.Request(url, data=data, method=method, headers=h)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def jtype(v):
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if v is None:
        return "null"
    return type(v).__name__


def shape_errors(got, doc, path="$", ignore=()):
    """Documented shape check: same JSON types; documented object keys present."""
    if jtype(got) != jtype(doc):
        return ["%s: type %s, documented %s" % (path, jtype(got), jtype(doc))]
    errs = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            if k in ignore:
                continue
            if k not in got:
                errs.append("%s: missing key %r" % (path, k))
            else:
                errs += shape_errors(got[k], v, "%s.%s" % (path, k), ignore)
    elif isinstance(doc, list) and doc:
        for i, g in enumerate(got):
            if all(shape_errors(g, d, path, ignore) for d in doc):
                errs.append("%s[%d]: %r matches no documented element shape" % (path, i, g))
    return errs


def canon(v):
    return json.loads(json.dumps(v, sort_keys=True))


class RefPeerCase(unittest.TestCase):
    def setUp(self):
        self.procs = []

    def tearDown(self):
        for p in self.procs:
            p.terminate()
            p.wait(5)
            p.stdout.close()
            p.stderr.close()

    def server(self, *args):
        p, url = start_server(*args)
        self.procs.append(p)
        return url

    # ---- helpers --------------------------------------------------------

    def state(self, db_url):
        """{id: (winner, sorted conflicts, sorted deleted conflicts, leaf docs)}"""
        st, ch = http("GET", db_url + "/_changes?style=all_docs")
        self.assertEqual(st, 200)
        out = {}
        for r in ch["results"]:
            st, leaves = http("GET", db_url + "/" + r["id"] + "?open_revs=all&revs=true")
            self.assertEqual(st, 200)
            st, doc = http("GET", db_url + "/" + r["id"] + "?conflicts=true&deleted_conflicts=true")
            if st == 404:
                self.assertEqual(doc, {"error": "not_found", "reason": "deleted"})
                winner = r["changes"][0]["rev"]
                self.assertTrue(r.get("deleted"))
                conflicts, dconf = [], sorted(x["rev"] for x in r["changes"][1:])
            else:
                winner = doc["_rev"]
                self.assertEqual(winner, r["changes"][0]["rev"])
                conflicts = sorted(doc.get("_conflicts", []))
                dconf = sorted(doc.get("_deleted_conflicts", []))
            out[r["id"]] = (winner, conflicts, dconf,
                            sorted((canon(x["ok"]) for x in leaves), key=lambda d: d["_rev"]))
        return out

    def put(self, db_url, doc_id, body):
        st, r = http("PUT", db_url + "/" + doc_id, body)
        self.assertEqual(st, 201, r)
        return r["rev"]

    # ---- tests ----------------------------------------------------------

    def test_two_way_replication_with_conflicts(self):
        a = self.server("--db", "a") + "/a"
        b = self.server("--db", "b") + "/b"
        for i in range(30):
            self.put(a, "doc%02d" % i, {"n": i, "side": "a"})
        for i in range(20, 40):
            self.put(b, "doc%02d" % i, {"n": i, "side": "b"})
        r1 = refpeer.replicate(a, b)
        self.assertEqual(r1["docs_written"], 30)
        # concurrent edits on both sides of shared docs
        for i in range(0, 10):
            ra = http("GET", a + "/doc%02d" % i)[1]["_rev"]
            rb = http("GET", b + "/doc%02d" % i)[1]["_rev"]
            self.assertEqual(ra, rb)
            self.put(a, "doc%02d" % i, {"n": i, "edit": "a", "_rev": ra})
            if i % 3 == 0:
                st, r = http("DELETE", b + "/doc%02d?rev=%s" % (i, rb))
                self.assertEqual(st, 200, r)
            else:
                r2 = self.put(b, "doc%02d" % i, {"n": i, "edit": "b", "_rev": rb})
                self.put(b, "doc%02d" % i, {"n": i, "edit": "b2", "_rev": r2})
        # the CLI, pull direction, then push again
        out = subprocess.run([sys.executable, REFPEER, "replicate", b, a],
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        summary = json.loads(out.stdout.strip().splitlines()[-1])
        for k in ("docs_read", "docs_written", "missing_checked", "last_seq"):
            self.assertIn(k, summary)
        self.assertGreater(summary["docs_written"], 0)
        refpeer.replicate(a, b)
        sa, sb = self.state(a), self.state(b)
        self.assertEqual(sa, sb)
        self.assertEqual(len(sa), 40)
        conflicted = [k for k, v in sa.items() if v[1]]
        self.assertTrue(conflicted)       # a's edit loses to b's 3-… for i % 3 != 0
        for i in range(0, 10):
            w, conf, dconf, leaves = sa["doc%02d" % i]
            self.assertEqual(len(leaves), 2)
            if i % 3 == 0:               # b deleted at 2-, a edited at 2-: the edit wins
                self.assertEqual(dconf and len(dconf), 1)
                self.assertEqual(conf, [])
            else:                         # b's 3- beats a's 2-
                self.assertTrue(w.startswith("3-"))
                self.assertEqual(len(conf), 1)
        # re-running transfers nothing, both ways
        for s, t in ((a, b), (b, a)):
            r = refpeer.replicate(s, t)
            self.assertEqual(r["docs_written"], 0, r)
            self.assertEqual(r["docs_read"], 0, r)
        out = subprocess.run([sys.executable, REFPEER, "replicate", b, a],
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(json.loads(out.stdout)["docs_written"], 0)

    def test_open_revs_path_and_checkpoints(self):
        a = self.server("--db", "a") + "/a"
        b = self.server("--db", "b") + "/b"
        for i in range(12):
            self.put(a, "d%d" % i, {"i": i})
        r = refpeer.replicate(a, b, batch_size=5, use_bulk_get=False)
        self.assertEqual(r["docs_written"], 12)
        self.assertEqual(self.state(a), self.state(b))
        st, log_a = http("GET", a + "/_local/" + r["replication_id"])
        st2, log_b = http("GET", b + "/_local/" + r["replication_id"])
        self.assertEqual((st, st2), (200, 200))
        self.assertEqual(log_a["session_id"], log_b["session_id"])
        self.assertEqual(log_a["source_last_seq"], r["last_seq"])
        self.assertTrue(log_a["_rev"].startswith("0-"))
        self.put(a, "late", {"x": 1})
        r2 = refpeer.replicate(a, b, use_bulk_get=False)
        self.assertEqual(r2["start_seq"], r["last_seq"])
        self.assertEqual(r2["docs_written"], 1)
        # a target whose log lost the last session: falls back to a common history entry
        lid = r2["replication_id"]
        st, lb = http("GET", b + "/_local/" + lid)
        hist = lb["history"][1:]
        st, _ = http("PUT", b + "/_local/" + lid, dict(lb, history=hist, session_id="gone"))
        self.assertEqual(st, 201)
        r3 = refpeer.replicate(a, b)
        self.assertEqual(r3["start_seq"], r["last_seq"])
        self.assertEqual(r3["docs_written"], 0)

    def test_winner_rules_and_stemming(self):
        a = self.server("--db", "a") + "/a"
        docs = [
            {"_id": "w", "_rev": "3-aaa", "_deleted": True, "_revisions": {"start": 3, "ids": ["aaa", "r2", "r1"]}},
            {"_id": "w", "_rev": "2-bbb", "_revisions": {"start": 2, "ids": ["bbb", "r1"]}, "v": "b"},
            {"_id": "w", "_rev": "2-ccc", "_revisions": {"start": 2, "ids": ["ccc", "r1"]}, "v": "c"},
        ]
        st, r = http("POST", a + "/_bulk_docs", {"docs": docs, "new_edits": False})
        self.assertEqual(st, 201)
        st, d = http("GET", a + "/w?conflicts=true&deleted_conflicts=true")
        self.assertEqual(d["_rev"], "2-ccc")          # non-deleted first, then greatest id
        self.assertEqual(d["_conflicts"], ["2-bbb"])
        self.assertEqual(d["_deleted_conflicts"], ["3-aaa"])
        st, res = http("GET", a + '/w?open_revs=["1-r1","9-zz"]&latest=true'.replace('"', "%22"))
        self.assertEqual(st, 200)
        self.assertEqual(sorted(x["ok"]["_rev"] for x in res if "ok" in x),
                         ["2-bbb", "2-ccc", "3-aaa"])
        self.assertIn({"missing": "9-zz"}, res)
        # stemming
        self.assertEqual(http("PUT", a + "/_revs_limit", raw="3")[0], 200)
        rev = self.put(a, "s", {"k": 0})
        for k in range(1, 6):
            rev = self.put(a, "s", {"k": k, "_rev": rev})
        st, d = http("GET", a + "/s?revs=true")
        self.assertEqual(d["_revisions"]["start"], 6)
        self.assertEqual(len(d["_revisions"]["ids"]), 3)
        st, diff = http("POST", a + "/_revs_diff", {"s": ["1-" + "0" * 32, rev]})
        self.assertEqual(diff["s"]["missing"], ["1-" + "0" * 32])

    def test_changes_longpoll_and_doc_ids(self):
        a = self.server("--db", "a") + "/a"
        self.put(a, "x", {})
        self.put(a, "y", {})
        st, ch = http("GET", a + "/_changes?since=0&limit=1")
        self.assertEqual([r["id"] for r in ch["results"]], ["x"])
        self.assertEqual(ch["last_seq"], 1)
        self.assertEqual(ch["pending"], 1)
        st, ch = http("POST", a + "/_changes?filter=_doc_ids", {"doc_ids": ["y"]})
        self.assertEqual([r["id"] for r in ch["results"]], ["y"])
        t0 = time.time()
        st, ch = http("GET", a + "/_changes?feed=longpoll&since=2&timeout=300")
        self.assertEqual(ch["results"], [])
        self.assertGreaterEqual(time.time() - t0, 0.25)
        threading.Timer(0.3, lambda: self.put(a, "z", {})).start()
        st, ch = http("GET", a + "/_changes?feed=longpoll&since=2&timeout=10000")
        self.assertEqual([r["id"] for r in ch["results"]], ["z"])
        self.assertEqual(http("GET", a + "/_changes?since=abc")[1]["error"], "bad_request")

    def test_continuous_replication(self):
        a = self.server("--db", "a") + "/a"
        b = self.server("--db", "b") + "/b"
        self.put(a, "first", {})
        threading.Timer(0.5, lambda: self.put(a, "second", {})).start()
        r = refpeer.replicate(a, b, continuous_seconds=1.5)
        self.assertEqual(r["docs_written"], 2)

    def test_auth_and_errors(self):
        root = self.server("--db", "a", "--user", "u", "--password", "p w")
        a = root + "/a"
        st, r = http("GET", root + "/")
        self.assertEqual((st, r["error"]), (401, "unauthorized"))
        self.assertEqual(http("GET", a, auth="u:p w")[0], 200)
        self.assertEqual(http("GET", a, auth="u:bad")[0], 401)
        b = self.server("--db", "b") + "/b"
        http("PUT", b + "/q", {"v": 1})
        r = refpeer.replicate(b, a.replace("http://", "http://u:p%20w@"))
        self.assertEqual(r["docs_written"], 1)
        # error shapes
        cases = [
            ("POST", b + "/_bulk_docs", None, "{", 400, "bad_request"),
            ("POST", b + "/_bulk_docs", {"docs": [{"_id": "a", "_rev": "x"}], "new_edits": False}, None, 400, "bad_request"),
            ("GET", b + "/nope", None, None, 404, "not_found"),
            ("GET", root.replace("127", "127") + "/zz", None, None, 401, "unauthorized"),
            ("PUT", b.rsplit("/", 1)[0] + "/b", None, None, 412, "file_exists"),
            ("PUT", b.rsplit("/", 1)[0] + "/Bad", None, None, 400, "illegal_database_name"),
            ("PUT", b + "/q", {"v": 2}, None, 409, "conflict"),
            ("GET", b.rsplit("/", 1)[0] + "/zz", None, None, 404, "not_found"),
            ("POST", b + "/_revs_diff", None, None, 415, "bad_content_type"),
            ("GET", b + "/_bulk_docs", None, None, 405, "method_not_allowed"),
            ("PUT", b + "/_bad", {}, None, 400, "illegal_docid"),
        ]
        for m, url, body, raw, status, err in cases:
            if status == 415:
                req = urllib.request.Request(url, data=b"{}", method=m,
                                             headers={"Content-Type": "text/plain"})
                try:
                    urllib.request.urlopen(req, timeout=10)
                    self.fail("expected 415")
                except urllib.error.HTTPError as e:
                    st, r = e.code, json.loads(e.read())
            else:
                st, r = http(m, url, body, raw=raw)
            self.assertEqual((st, r.get("error")), (status, err), (m, url, r))
            self.assertEqual(sorted(r), ["error", "reason"])
            self.assertIsInstance(r["reason"], str)
        # nothing stored by the rejected batch
        self.assertEqual(http("GET", b + "/a")[0], 404)

    def test_random_three_peer_convergence(self):
        import random
        seed = int(os.environ.get("REFPEER_SEED", "0")) or random.randrange(1, 10**6)
        rnd = random.Random(seed)
        peers = [self.server("--db", "d") + "/d" for _ in range(3)]
        ids = ["k%d" % i for i in range(8)]
        for step in range(60):
            if rnd.random() < 0.25:
                s, t = rnd.sample(peers, 2)
                refpeer.replicate(s, t, batch_size=rnd.choice([1, 3, 100]),
                                  use_bulk_get=rnd.random() < 0.5)
                continue
            url = rnd.choice(peers)
            doc_id = rnd.choice(ids)
            st, d = http("GET", url + "/" + doc_id)
            if st == 200 and rnd.random() < 0.25:
                self.assertEqual(http("DELETE", url + "/%s?rev=%s" % (doc_id, d["_rev"]))[0], 200)
            elif st == 200:
                self.put(url, doc_id, {"step": step, "_rev": d["_rev"]})
            else:
                self.assertEqual(st, 404)
                self.assertEqual(http("PUT", url + "/" + doc_id, {"step": step})[0], 201)
        for _ in range(2):      # all pairs, twice: quiescent afterwards
            for s in peers:
                for t in peers:
                    if s != t:
                        refpeer.replicate(s, t)
        states = [self.state(u) for u in peers]
        self.assertEqual(states[0], states[1], "seed %d" % seed)
        self.assertEqual(states[0], states[2], "seed %d" % seed)
        for s in peers:
            for t in peers:
                if s != t:
                    self.assertEqual(refpeer.replicate(s, t)["docs_written"], 0, "seed %d" % seed)

    def test_doc_examples(self):
        with open(os.path.join(HERE, "doc_examples.json")) as f:
            data = json.load(f)
        root = self.server()
        for n, ex in enumerate(data["examples"]):
            with self.subTest(ex["name"]):
                db = "ex%d" % n
                self.assertEqual(http("PUT", root + "/" + db)[0], 201)
                for s in ex["setup"]:
                    st, r = http(s["method"], root + s["path"].replace("{db}", db), s.get("body"))
                    self.assertIn(st, (200, 201), (s, r))
                rq = ex["request"]
                st, got = http(rq["method"], root + rq["path"].replace("{db}", db),
                               rq.get("body"), rq.get("headers"), raw=rq.get("raw_body"))
                self.assertEqual(st, ex["response"]["status"], (ex["doc"], got))
                errs = shape_errors(got, ex["response"]["body"], ignore=ex.get("ignore_keys", ()))
                self.assertEqual(errs, [], (ex["doc"], ex["section"], got))
                if ex["exact"]:
                    self.assertEqual(canon(got), canon(ex["response"]["body"]))
                for c in ex.get("check_after", []):
                    self.assertEqual(http("GET", root + c["path"].replace("{db}", db))[0],
                                     c["status"])


if __name__ == "__main__":
    unittest.main()
