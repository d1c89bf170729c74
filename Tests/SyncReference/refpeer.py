#!/usr/bin/env python3
"""refpeer: an independent reference peer for CouchDB's replication protocol.

Standard library only. Written for KVDocs issue 32 from the CouchDB
documentation, NOT from KVDocs' code nor from Tests/python/revision_tree_model.py.

Documents followed (repository apache/couchdb, commit
a6778e5d49a5df32a8eeeff4bf55d0e24ff688a6, 2026-08-06):
  - src/docs/src/replication/protocol.rst   (algorithm, replication log, _bulk_docs
                                              new_edits:false, _ensure_full_commit,
                                              checkpoint comparison, error responses)
  - src/docs/src/api/database/bulk-api.rst  (_bulk_get, _bulk_docs, _all_docs)
  - src/docs/src/api/database/changes.rst   (_changes: since, limit, style, feed,
                                              timeout, filter=_doc_ids)
  - src/docs/src/api/database/misc.rst      (_revs_diff, _revs_limit)
  - src/docs/src/api/document/common.rst    (GET doc: rev, revs, open_revs, latest,
                                              conflicts, deleted_conflicts; PUT; DELETE)
  - src/docs/src/api/local.rst              (_local documents)
  - src/docs/src/api/server/common.rst      (GET /)

Rules taken from those docs (and the CouchDB guide's conflict chapter):
  - a revision is "N-hex"; a document is a tree of revisions; leaves are the
    current revisions; the winner is chosen by: non-deleted leaves first, then
    the highest position N, then the greatest rev id (string order);
  - _conflicts = non-deleted leaves other than the winner;
    _deleted_conflicts = deleted leaves other than the winner;
  - new_edits:false stores the given revision and its _revisions ancestry
    as-is (merging paths into the tree);
  - _revs_limit (default 1000) bounds how many ancestors are kept: a
    revision is kept if it is within _revs_limit of some leaf;
  - _local documents are not replicated, not in _changes, rev "0-N".

Sequences are integers (CouchDB 1.x style); clients treat them as opaque.

Usage:
  python3 refpeer.py serve --port 0 --db NAME [--db NAME2] [--user U --password P]
  python3 refpeer.py replicate SOURCE_URL TARGET_URL [--continuous-seconds N]
"""

import argparse
import base64
import hashlib
import hmac
import json
import signal
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

VERSION = "0.1"


# ----------------------------------------------------------------------------
# Revision trees
# ----------------------------------------------------------------------------

class HTTPError(Exception):
    def __init__(self, status, error, reason, headers=None):
        super().__init__(reason)
        self.status = status
        self.error = error
        self.reason = reason
        self.headers = headers or {}


def bad_request(reason):
    return HTTPError(400, "bad_request", reason)


def parse_rev(rev):
    """'N-id' -> (N, id). Raises 400 bad_request 'Invalid rev format'."""
    if not isinstance(rev, str) or "-" not in rev:
        raise bad_request("Invalid rev format")
    pos, _, rid = rev.partition("-")
    if not pos.isdigit() or not rid:
        raise bad_request("Invalid rev format")
    n = int(pos)
    if n < 1:
        raise bad_request("Invalid rev format")
    return n, rid


def rev_str(key):
    return "%d-%s" % key


class Node:
    __slots__ = ("parent", "deleted", "body")

    def __init__(self, parent, deleted, body):
        self.parent = parent      # (pos, id) or None (root or stemmed)
        self.deleted = deleted
        self.body = body          # dict without _-fields, or None if unknown


class DocTree:
    """The revision tree of one document: nodes keyed by (pos, id)."""

    def __init__(self, doc_id):
        self.id = doc_id
        self.nodes = {}
        self.seq = 0

    def children(self):
        ch = {}
        for k, n in self.nodes.items():
            if n.parent is not None and n.parent in self.nodes:
                ch.setdefault(n.parent, []).append(k)
        return ch

    def leaves(self):
        parents = {n.parent for n in self.nodes.values() if n.parent is not None}
        return [k for k in self.nodes if k not in parents]

    def sorted_leaves(self):
        """Leaves, winner first: non-deleted first, then highest pos, then greatest id."""
        return sorted(self.leaves(),
                      key=lambda k: (not self.nodes[k].deleted, k[0], k[1]),
                      reverse=True)

    def winner(self):
        return self.sorted_leaves()[0]

    def conflicts(self):
        return [k for k in self.sorted_leaves()[1:] if not self.nodes[k].deleted]

    def deleted_conflicts(self):
        return [k for k in self.sorted_leaves()[1:] if self.nodes[k].deleted]

    def path(self, key):
        """[key, parent, grandparent, ...] as far as known."""
        out = [key]
        cur = self.nodes[key].parent
        while cur is not None and cur in self.nodes:
            out.append(cur)
            cur = self.nodes[cur].parent
        return out

    def revisions(self, key):
        p = self.path(key)
        return {"start": key[0], "ids": [k[1] for k in p]}

    def merge_path(self, path, deleted, body):
        """path: [(pos, id) leaf ... oldest known ancestor], consecutive positions.
        Returns True when the leaf revision was new."""
        leaf = path[0]
        is_new = leaf not in self.nodes
        for i, key in enumerate(path):
            parent = path[i + 1] if i + 1 < len(path) else None
            node = self.nodes.get(key)
            if node is None:
                self.nodes[key] = Node(parent, False, None)
            elif node.parent is None and parent is not None:
                node.parent = parent   # graft a stemmed branch back on
        if is_new or self.nodes[leaf].body is None:
            self.nodes[leaf].deleted = bool(deleted)
            self.nodes[leaf].body = body
        return is_new

    def stem(self, limit):
        keep = set()
        for leaf in self.leaves():
            for k in self.path(leaf)[:limit]:
                keep.add(k)
        for k in list(self.nodes):
            if k not in keep:
                del self.nodes[k]
        for n in self.nodes.values():
            if n.parent is not None and n.parent not in self.nodes:
                n.parent = None

    def latest_leaves_from(self, key):
        """Leaves that descend from key (key itself if it is a leaf)."""
        ch = self.children()
        out, stack = [], [key]
        while stack:
            k = stack.pop()
            kids = ch.get(k)
            if kids:
                stack.extend(kids)
            else:
                out.append(k)
        return sorted(out, reverse=True)

    def doc_json(self, key, revs=False):
        n = self.nodes[key]
        d = {"_id": self.id, "_rev": rev_str(key)}
        if n.body:
            d.update(n.body)
        if n.deleted:
            d["_deleted"] = True
        if revs:
            d["_revisions"] = self.revisions(key)
        return d


def split_body(doc):
    """Document -> (body without _-fields, deleted). Rejects unknown _ fields."""
    body = {}
    for k, v in doc.items():
        if k.startswith("_"):
            if k in ("_id", "_rev", "_revisions", "_deleted", "_conflicts",
                     "_deleted_conflicts", "_revs_info", "_attachments", "_local_seq"):
                continue
            raise HTTPError(400, "doc_validation", "Bad special document member: " + k)
        body[k] = v
    return body, doc.get("_deleted") is True


def new_rev_id(parent, deleted, body):
    h = hashlib.md5()
    h.update(json.dumps([deleted, rev_str(parent) if parent else "", body],
                        sort_keys=True, separators=(",", ":")).encode())
    return h.hexdigest()


def validate_docid(doc_id):
    if not isinstance(doc_id, str) or doc_id == "":
        raise HTTPError(400, "illegal_docid", "Document id must not be empty")
    if doc_id.startswith("_") and not doc_id.startswith("_design/"):
        raise HTTPError(400, "illegal_docid",
                        "Only reserved document ids may start with underscore.")


class Database:
    def __init__(self, name):
        self.name = name
        self.docs = {}
        self.local = {}          # id (without _local/) -> (n, body)
        self.seq = 0
        self.revs_limit = 1000
        self.cond = threading.Condition()

    # -- all methods below are called with self.cond held --

    def info(self):
        live = sum(1 for t in self.docs.values() if not t.nodes[t.winner()].deleted)
        return {"db_name": self.name, "update_seq": self.seq,
                "committed_update_seq": self.seq, "instance_start_time": "0",
                "doc_count": live, "doc_del_count": len(self.docs) - live,
                "purge_seq": 0, "compact_running": False, "disk_format_version": 8,
                "sizes": {"active": 0, "disk": 0, "external": 0}}

    def _touch(self, tree):
        self.seq += 1
        tree.seq = self.seq
        self.cond.notify_all()

    def put_replicated(self, doc):
        """new_edits=false for one document. Returns None or an error dict."""
        if not isinstance(doc, dict):
            raise bad_request("Document must be a JSON object")
        doc_id = doc.get("_id")
        validate_docid(doc_id)
        if "_rev" not in doc:
            raise bad_request("_rev is required when new_edits is false")
        pos, rid = parse_rev(doc["_rev"])
        revs = doc.get("_revisions")
        if revs is not None:
            if (not isinstance(revs, dict) or not isinstance(revs.get("start"), int)
                    or not isinstance(revs.get("ids"), list) or not revs["ids"]
                    or not all(isinstance(i, str) and i for i in revs["ids"])):
                raise HTTPError(400, "doc_validation", "_revisions is malformed")
            if revs["start"] != pos or revs["ids"][0] != rid:
                raise HTTPError(400, "doc_validation",
                                "_revisions does not match _rev")
            if revs["start"] - len(revs["ids"]) < 0:
                raise HTTPError(400, "doc_validation", "_revisions is too long")
            if len(set(revs["ids"])) != len(revs["ids"]):
                raise HTTPError(400, "doc_validation", "_revisions has duplicates")
            path = [(pos - i, x) for i, x in enumerate(revs["ids"])]
        else:
            path = [(pos, rid)]
        body, deleted = split_body(doc)
        return doc_id, path, deleted, body

    def apply_replicated(self, doc_id, path, deleted, body):
        tree = self.docs.get(doc_id)
        created = tree is None
        if created:
            tree = DocTree(doc_id)
        new = tree.merge_path(path, deleted, body)
        if new:
            tree.stem(self.revs_limit)
            self.docs[doc_id] = tree
            self._touch(tree)
        elif created:
            pass

    def prepare_edit(self, doc, doc_id=None):
        if not isinstance(doc, dict):
            raise bad_request("Document must be a JSON object")
        if doc_id is None:
            doc_id = doc.get("_id")
            if doc_id is None:
                doc_id = uuid.uuid4().hex
        validate_docid(doc_id)
        parent = parse_rev(doc["_rev"]) if "_rev" in doc else None
        body, deleted = split_body(doc)
        return doc_id, parent, deleted, body

    def apply_edit(self, doc_id, parent, deleted, body):
        """Interactive edit. Returns (rev) or raises 409."""
        tree = self.docs.get(doc_id)
        if parent is None:
            if tree is not None:
                w = tree.winner()
                if not tree.nodes[w].deleted:
                    raise HTTPError(409, "conflict", "Document update conflict.")
                parent = w          # re-create on top of the deleted winner
        else:
            if tree is None or parent not in tree.nodes or parent not in tree.leaves():
                raise HTTPError(409, "conflict", "Document update conflict.")
        key = ((parent[0] + 1) if parent else 1, new_rev_id(parent, deleted, body))
        if tree is None:
            tree = DocTree(doc_id)
        path = [key] + (tree.path(parent) if parent else [])
        tree.merge_path(path, deleted, body)
        tree.nodes[key].deleted = deleted
        tree.nodes[key].body = body
        tree.stem(self.revs_limit)
        self.docs[doc_id] = tree
        self._touch(tree)
        return rev_str(key)

    def changes(self, since, limit, style, doc_ids=None, include_docs=False):
        rows = sorted((t for t in self.docs.values() if t.seq > since),
                      key=lambda t: t.seq)
        if doc_ids is not None:
            rows = [t for t in rows if t.id in doc_ids]
        truncated = limit is not None and len(rows) > limit
        if limit is not None:
            rows = rows[:limit]
        results = []
        for t in rows:
            leaves = t.sorted_leaves()
            revs = leaves if style == "all_docs" else leaves[:1]
            r = {"seq": t.seq, "id": t.id, "changes": [{"rev": rev_str(k)} for k in revs]}
            if t.nodes[leaves[0]].deleted:
                r["deleted"] = True
            if include_docs:
                r["doc"] = t.doc_json(leaves[0])
            results.append(r)
        last = results[-1]["seq"] if truncated else self.seq
        if results and not truncated:
            last = max(last, results[-1]["seq"])
        pending = 0
        if truncated:
            pending = sum(1 for t in self.docs.values() if t.seq > last)
        return {"results": results, "last_seq": last, "pending": pending}


# ----------------------------------------------------------------------------
# HTTP server
# ----------------------------------------------------------------------------

def parse_json_param(q, name, default=None):
    if name not in q:
        return default
    try:
        return json.loads(q[name])
    except ValueError:
        raise bad_request("Invalid value for '%s' parameter" % name)


def parse_bool(q, name):
    v = q.get(name)
    if v is None:
        return False
    if v in ("true", "false"):
        return v == "true"
    raise bad_request("Invalid boolean parameter: " + name)


def parse_int(q, name, default):
    v = q.get(name)
    if v is None:
        return default
    try:
        n = int(v)
    except ValueError:
        raise bad_request("Invalid value for '%s' parameter" % name)
    if n < 0:
        raise bad_request("Invalid value for '%s' parameter" % name)
    return n


class Server:
    def __init__(self, dbs=(), user=None, password=None):
        self.dbs = {n: Database(n) for n in dbs}
        self.lock = threading.Lock()
        self.user = user
        self.password = password
        self.uuid = uuid.uuid4().hex


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "refpeer/" + VERSION

    def log_message(self, fmt, *args):
        if getattr(self.server, "verbose", False):
            sys.stderr.write("%s\n" % (fmt % args))
            sys.stderr.flush()

    @property
    def state(self):
        return self.server.state

    # ---- plumbing -------------------------------------------------------

    def send_json(self, status, obj, extra_headers=None):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Cache-Control", "must-revalidate")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (extra_headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n > 64 * 1024 * 1024:
            raise HTTPError(413, "too_large", "the request entity is too large")
        return self.rfile.read(n) if n else b""

    def json_body(self, required=True):
        raw = self.read_body()
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if ctype != "application/json":
            raise HTTPError(415, "bad_content_type", "Content-Type must be application/json")
        try:
            return json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise bad_request("invalid UTF-8 JSON")

    def check_auth(self):
        st = self.state
        if st.user is None:
            return
        h = self.headers.get("Authorization") or ""
        ok = False
        if h.startswith("Basic "):
            try:
                u, _, p = base64.b64decode(h[6:]).decode().partition(":")
                ok = hmac.compare_digest(u.encode(), st.user.encode()) and \
                    hmac.compare_digest(p.encode(), st.password.encode())
            except (ValueError, UnicodeDecodeError):
                ok = False
        if not ok:
            raise HTTPError(401, "unauthorized", "Name or password is incorrect.",
                            {"WWW-Authenticate": 'Basic realm="refpeer"'})

    def do_GET(self):
        self.dispatch()

    def do_HEAD(self):
        self.dispatch()

    def do_POST(self):
        self.dispatch()

    def do_PUT(self):
        self.dispatch()

    def do_DELETE(self):
        self.dispatch()

    def dispatch(self):
        try:
            self.check_auth()
            u = urllib.parse.urlsplit(self.path)
            q = dict(urllib.parse.parse_qsl(u.query, keep_blank_values=True))
            segs = [urllib.parse.unquote(s) for s in u.path.split("/") if s != ""]
            self.route(segs, q)
        except HTTPError as e:
            # the request body may be unread: do not reuse this connection
            self.close_connection = True
            headers = dict(e.headers, Connection="close")
            self.send_json(e.status, {"error": e.error, "reason": e.reason}, headers)
        except (BrokenPipeError, ConnectionResetError):
            pass
        except Exception as e:  # pragma: no cover
            self.close_connection = True
            self.send_json(500, {"error": "unknown_error", "reason": str(e)[:200]},
                           {"Connection": "close"})

    def method_not_allowed(self, allowed):
        raise HTTPError(405, "method_not_allowed", "Only %s allowed" % allowed,
                        {"Allow": allowed})

    def get_db(self, name):
        db = self.state.dbs.get(name)
        if db is None:
            raise HTTPError(404, "not_found", "Database does not exist.")
        return db

    # ---- routing --------------------------------------------------------

    def route(self, segs, q):
        m = self.command
        if not segs:
            if m not in ("GET", "HEAD"):
                self.method_not_allowed("GET,HEAD")
            return self.send_json(200, {"couchdb": "Welcome", "version": "3.3.0",
                                        "vendor": {"name": "refpeer", "version": VERSION},
                                        "uuid": self.state.uuid, "features": []})
        name = segs[0]
        if len(segs) == 1:
            if m == "PUT":
                if not name or not (name[0].isalpha() and name[0].islower()) or \
                        any(c not in "abcdefghijklmnopqrstuvwxyz0123456789_$()+-" for c in name):
                    raise HTTPError(400, "illegal_database_name",
                                    "Name: '%s'. Only lowercase characters (a-z), digits (0-9), "
                                    "and any of the characters _, $, (, ), +, -, and / are "
                                    "allowed. Must begin with a letter." % name)
                with self.state.lock:
                    if name in self.state.dbs:
                        raise HTTPError(412, "file_exists",
                                        "The database could not be created, the file already exists.")
                    self.state.dbs[name] = Database(name)
                return self.send_json(201, {"ok": True})
            db = self.get_db(name)
            if m in ("GET", "HEAD"):
                with db.cond:
                    return self.send_json(200, db.info())
            if m == "POST":
                return self.bulk_docs(db, {"docs": [self.json_body()]}, single=True)
            self.method_not_allowed("GET,HEAD,PUT,POST")
        db = self.get_db(name)
        second = segs[1]
        if second == "_changes" and len(segs) == 2:
            return self.changes(db, q)
        if second == "_revs_diff" and len(segs) == 2:
            if m != "POST":
                self.method_not_allowed("POST")
            return self.revs_diff(db, self.json_body())
        if second == "_bulk_docs" and len(segs) == 2:
            if m != "POST":
                self.method_not_allowed("POST")
            return self.bulk_docs(db, self.json_body())
        if second == "_bulk_get" and len(segs) == 2:
            if m != "POST":
                self.method_not_allowed("POST")
            return self.bulk_get(db, q, self.json_body())
        if second == "_ensure_full_commit" and len(segs) == 2:
            if m != "POST":
                self.method_not_allowed("POST")
            self.read_body()
            return self.send_json(201, {"ok": True, "instance_start_time": "0"})
        if second == "_revs_limit" and len(segs) == 2:
            if m == "GET":
                with db.cond:
                    return self.send_json(200, db.revs_limit)
            if m == "PUT":
                n = self.json_body()
                if not isinstance(n, int) or isinstance(n, bool) or n < 1:
                    raise bad_request("`revs_limit` must be a positive integer")
                with db.cond:
                    db.revs_limit = n
                    for t in db.docs.values():
                        t.stem(n)
                return self.send_json(200, {"ok": True})
            self.method_not_allowed("GET,PUT")
        if second == "_all_docs" and len(segs) == 2:
            return self.all_docs(db, q)
        if second == "_local" and len(segs) == 3:
            return self.local_doc(db, segs[2], q)
        if second == "_design" and len(segs) == 3:
            return self.document(db, "_design/" + segs[2], q)
        if second.startswith("_"):
            raise HTTPError(400, "illegal_docid",
                            "Only reserved document ids may start with underscore.")
        if len(segs) == 2:
            return self.document(db, second, q)
        raise HTTPError(404, "not_found", "missing")   # attachments: not supported

    # ---- endpoints ------------------------------------------------------

    def changes(self, db, q):
        m = self.command
        doc_ids = None
        if m == "POST":
            body = self.json_body()
            if q.get("filter") == "_doc_ids":
                ids = body.get("doc_ids") if isinstance(body, dict) else None
                if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
                    raise bad_request("`doc_ids` filter parameter is not a list of doc ids.")
                doc_ids = set(ids)
        elif m != "GET":
            self.method_not_allowed("GET,POST,HEAD")
        if m == "GET" and q.get("filter") == "_doc_ids":
            ids = parse_json_param(q, "doc_ids")
            if not isinstance(ids, list):
                raise bad_request("`doc_ids` filter parameter is not a list of doc ids.")
            doc_ids = set(ids)
        elif q.get("filter") not in (None, "_doc_ids"):
            raise bad_request("filter not supported")
        feed = q.get("feed", "normal")
        if feed not in ("normal", "longpoll"):
            raise bad_request("Supported `feed` types: normal, longpoll")
        style = q.get("style", "main_only")
        if style not in ("main_only", "all_docs"):
            raise bad_request("Supported `style` values: main_only, all_docs")
        since_raw = q.get("since", "0")
        if since_raw == "now":
            with db.cond:
                since = db.seq
        else:
            try:
                since = int(json.loads(since_raw)) if since_raw.startswith('"') else int(since_raw)
            except ValueError:
                raise bad_request("Malformed sequence supplied in 'since' parameter.")
        limit = parse_int(q, "limit", None)
        include_docs = parse_bool(q, "include_docs")
        timeout = parse_int(q, "timeout", 60000) / 1000.0
        deadline = time.time() + min(timeout, 300)
        with db.cond:
            res = db.changes(since, limit, style, doc_ids, include_docs)
            while feed == "longpoll" and not res["results"]:
                left = deadline - time.time()
                if left <= 0:
                    break
                db.cond.wait(left)
                res = db.changes(since, limit, style, doc_ids, include_docs)
        self.send_json(200, res)

    def revs_diff(self, db, body):
        if not isinstance(body, dict):
            raise bad_request("Request body must be a JSON object")
        parsed = {}
        for doc_id, revs in body.items():
            if not isinstance(revs, list):
                raise bad_request("Revisions must be a list")
            parsed[doc_id] = [(r, parse_rev(r)) for r in revs]
        out = {}
        with db.cond:
            for doc_id, revs in parsed.items():
                tree = db.docs.get(doc_id)
                known = tree.nodes if tree else {}
                missing = [(r, k) for r, k in revs if k not in known]
                if not missing:
                    continue
                entry = {"missing": [r for r, _ in missing]}
                if tree:
                    maxpos = max(k[0] for _, k in missing)
                    anc = [rev_str(k) for k in tree.sorted_leaves() if k[0] < maxpos]
                    if anc:
                        entry["possible_ancestors"] = anc
                out[doc_id] = entry
        self.send_json(200, out)

    def bulk_docs(self, db, body, single=False):
        if not isinstance(body, dict) or not isinstance(body.get("docs"), list):
            raise bad_request("POST body must include `docs` parameter.")
        new_edits = body.get("new_edits", True)
        if not isinstance(new_edits, bool):
            raise bad_request("`new_edits` parameter must be a boolean.")
        # validate everything first: nothing written on a malformed request
        prepared = []
        for d in body["docs"]:
            if new_edits:
                prepared.append(db.prepare_edit(d))
            else:
                prepared.append(db.put_replicated(d))
        out = []
        with db.cond:
            for p in prepared:
                if new_edits:
                    try:
                        rev = db.apply_edit(*p)
                        out.append({"ok": True, "id": p[0], "rev": rev})
                    except HTTPError as e:
                        out.append({"id": p[0], "error": e.error, "reason": e.reason})
                else:
                    # protocol.rst: "If the Document has been stored successfully,
                    # the list item MUST contain the field ok with true value"
                    db.apply_replicated(*p)
                    out.append({"ok": True, "id": p[0], "rev": rev_str(p[1][0])})
        if single:
            r = out[0]
            if "error" in r:
                raise HTTPError(409, r["error"], r["reason"])
            return self.send_json(201, r)
        self.send_json(201, out)

    def open_revs_results(self, db, doc_id, open_revs, revs, latest):
        """-> list of {"ok": doc} / {"missing": rev}."""
        tree = db.docs.get(doc_id)
        if open_revs == "all":
            if tree is None:
                return None
            return [{"ok": tree.doc_json(k, revs)} for k in tree.sorted_leaves()]
        out = []
        seen = set()
        for r in open_revs:
            k = parse_rev(r)
            if tree is None or k not in tree.nodes or \
                    (tree.nodes[k].body is None and not latest):
                out.append({"missing": r})
                continue
            keys = tree.latest_leaves_from(k) if latest else [k]
            for kk in keys:
                if kk in seen:
                    continue
                seen.add(kk)
                if tree.nodes[kk].body is None and not tree.nodes[kk].deleted:
                    out.append({"missing": rev_str(kk)})
                else:
                    out.append({"ok": tree.doc_json(kk, revs)})
        return out

    def bulk_get(self, db, q, body):
        if not isinstance(body, dict) or not isinstance(body.get("docs"), list):
            raise bad_request("Missing JSON list of 'docs'.")
        revs = parse_bool(q, "revs")
        latest = parse_bool(q, "latest")
        results = []
        with db.cond:
            for item in body["docs"]:
                if not isinstance(item, dict) or not isinstance(item.get("id"), str):
                    results.append({"id": item.get("id") if isinstance(item, dict) else None,
                                    "docs": [{"error": {"id": None, "rev": "undefined",
                                                        "error": "bad_request",
                                                        "reason": "Invalid document id"}}]})
                    continue
                doc_id = item["id"]
                rev = item.get("rev")
                tree = db.docs.get(doc_id)
                docs = []
                if rev is None:
                    if tree is None:
                        docs = [{"error": {"id": doc_id, "rev": "undefined",
                                           "error": "not_found", "reason": "missing"}}]
                    else:
                        docs = [{"ok": tree.doc_json(k, revs)} for k in tree.sorted_leaves()]
                else:
                    try:
                        res = self.open_revs_results(db, doc_id, [rev], revs, latest)
                    except HTTPError as e:
                        res = [{"missing": rev}]
                        docs = [{"error": {"id": doc_id, "rev": rev, "error": e.error,
                                           "reason": e.reason}}]
                    if not docs:
                        for r in res:
                            if "ok" in r:
                                docs.append(r)
                            else:
                                docs.append({"error": {"id": doc_id, "rev": r["missing"],
                                                       "error": "not_found",
                                                       "reason": "missing"}})
                results.append({"id": doc_id, "docs": docs})
        self.send_json(200, {"results": results})

    def all_docs(self, db, q):
        """bulk-api.rst GET/POST /{db}/_all_docs (keys, include_docs, limit)."""
        keys = parse_json_param(q, "keys")
        if self.command == "POST":
            body = self.json_body()
            if not isinstance(body, dict):
                raise bad_request("Request body must be a JSON object")
            keys = body.get("keys", keys)
        elif self.command not in ("GET", "HEAD"):
            self.method_not_allowed("GET,HEAD,POST")
        if keys is not None and (not isinstance(keys, list) or
                                 not all(isinstance(k, str) for k in keys)):
            raise bad_request("`keys` must be an array of strings")
        include_docs = parse_bool(q, "include_docs")
        limit = parse_int(q, "limit", None)
        rows = []
        with db.cond:
            total = sum(1 for t in db.docs.values() if not t.nodes[t.winner()].deleted)
            ids = keys if keys is not None else sorted(
                i for i, t in db.docs.items() if not t.nodes[t.winner()].deleted)
            for i in ids:
                t = db.docs.get(i)
                if t is None:
                    rows.append({"key": i, "error": "not_found"})
                    continue
                w = t.winner()
                row = {"id": i, "key": i, "value": {"rev": rev_str(w)}}
                if t.nodes[w].deleted:
                    row["value"]["deleted"] = True
                if include_docs:
                    row["doc"] = None if t.nodes[w].deleted else t.doc_json(w)
                rows.append(row)
        if limit is not None:
            rows = rows[:limit]
        self.send_json(200, {"total_rows": total, "offset": 0, "rows": rows})

    def document(self, db, doc_id, q):
        m = self.command
        if m in ("GET", "HEAD"):
            revs = parse_bool(q, "revs")
            latest = parse_bool(q, "latest")
            if "open_revs" in q:
                raw = q["open_revs"]
                if raw == "all":
                    open_revs = "all"
                else:
                    open_revs = parse_json_param(q, "open_revs")
                    if not isinstance(open_revs, list) or \
                            not all(isinstance(r, str) for r in open_revs):
                        raise bad_request("Invalid open_revs")
                with db.cond:
                    res = self.open_revs_results(db, doc_id, open_revs, revs, latest)
                if res is None:
                    raise HTTPError(404, "not_found", "missing")
                return self.send_json(200, res)
            with db.cond:
                tree = db.docs.get(doc_id)
                if tree is None:
                    raise HTTPError(404, "not_found", "missing")
                if "rev" in q:
                    k = parse_rev(q["rev"])
                    if k not in tree.nodes or tree.nodes[k].body is None and \
                            not tree.nodes[k].deleted:
                        raise HTTPError(404, "not_found", "missing")
                else:
                    k = tree.winner()
                    if tree.nodes[k].deleted:
                        raise HTTPError(404, "not_found", "deleted")
                d = tree.doc_json(k, revs)
                if parse_bool(q, "conflicts"):
                    c = [rev_str(x) for x in tree.conflicts()]
                    if c:
                        d["_conflicts"] = c
                if parse_bool(q, "deleted_conflicts"):
                    c = [rev_str(x) for x in tree.deleted_conflicts()]
                    if c:
                        d["_deleted_conflicts"] = c
            return self.send_json(200, d)
        if m == "PUT":
            doc = self.json_body()
            if not isinstance(doc, dict):
                raise bad_request("Document must be a JSON object")
            if "_id" in doc and doc["_id"] != doc_id:
                raise bad_request("Document id must match the URL")
            doc = dict(doc, _id=doc_id)
            if "rev" in q and "_rev" not in doc:
                doc["_rev"] = q["rev"]
            if q.get("new_edits") == "false":
                p = db.put_replicated(doc)
                with db.cond:
                    db.apply_replicated(*p)
                return self.send_json(201, {"ok": True, "id": doc_id, "rev": doc["_rev"]})
            p = db.prepare_edit(doc, doc_id)
            with db.cond:
                rev = db.apply_edit(*p)
            return self.send_json(201, {"ok": True, "id": doc_id, "rev": rev})
        if m == "DELETE":
            rev = q.get("rev") or (self.headers.get("If-Match") or "").strip('"')
            if not rev:
                raise HTTPError(409, "conflict", "Document update conflict.")
            p = db.prepare_edit({"_id": doc_id, "_rev": rev, "_deleted": True}, doc_id)
            with db.cond:
                rev = db.apply_edit(*p)
            return self.send_json(200, {"ok": True, "id": doc_id, "rev": rev})
        self.method_not_allowed("GET,HEAD,PUT,DELETE")

    def local_doc(self, db, lid, q):
        m = self.command
        full = "_local/" + lid
        if m in ("GET", "HEAD"):
            with db.cond:
                if lid not in db.local:
                    raise HTTPError(404, "not_found", "missing")
                n, body = db.local[lid]
            return self.send_json(200, dict(body, _id=full, _rev="0-%d" % n))
        if m == "PUT":
            doc = self.json_body()
            if not isinstance(doc, dict):
                raise bad_request("Document must be a JSON object")
            rev = doc.get("_rev") or q.get("rev")
            body = {k: v for k, v in doc.items() if k not in ("_id", "_rev", "_revisions")}
            with db.cond:
                cur = db.local.get(lid)
                if cur is not None and rev is not None and rev != "0-%d" % cur[0]:
                    raise HTTPError(409, "conflict", "Document update conflict.")
                if cur is not None and rev is None:
                    raise HTTPError(409, "conflict", "Document update conflict.")
                n = (cur[0] if cur else 0) + 1
                db.local[lid] = (n, body)
            return self.send_json(201, {"ok": True, "id": full, "rev": "0-%d" % n})
        if m == "DELETE":
            rev = q.get("rev")
            with db.cond:
                cur = db.local.get(lid)
                if cur is None:
                    raise HTTPError(404, "not_found", "missing")
                if rev != "0-%d" % cur[0]:
                    raise HTTPError(409, "conflict", "Document update conflict.")
                del db.local[lid]
            return self.send_json(200, {"ok": True, "id": full, "rev": "0-0"})
        self.method_not_allowed("GET,HEAD,PUT,DELETE")


def make_server(port=0, dbs=(), user=None, password=None, host="127.0.0.1"):
    httpd = ThreadingHTTPServer((host, port), Handler)
    httpd.daemon_threads = True
    httpd.state = Server(dbs, user, password)
    return httpd


# ----------------------------------------------------------------------------
# Replicator client (protocol.rst "Replication Protocol Algorithm")
# ----------------------------------------------------------------------------

class Peer:
    def __init__(self, url):
        u = urllib.parse.urlsplit(url.rstrip("/"))
        self.auth = None
        netloc = u.netloc
        if "@" in netloc:
            cred, netloc = netloc.rsplit("@", 1)
            self.auth = "Basic " + base64.b64encode(
                urllib.parse.unquote(cred).encode()).decode()
        self.db_url = "%s://%s%s" % (u.scheme, netloc, u.path)
        self.root = "%s://%s/" % (u.scheme, netloc)
        self.display = self.db_url

    def request(self, method, path, body=None, query=None, root=False, timeout=330):
        url = self.root if root else self.db_url + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        data = None
        headers = {"Accept": "application/json"}
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if self.auth:
            headers["Authorization"] = self.auth
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, json.loads(r.read() or b"null")
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                return e.code, json.loads(raw)
            except ValueError:
                return e.code, {"error": "unknown", "reason": raw[:200].decode("latin-1")}


class ReplicationError(Exception):
    pass


def _check(status, body, what, ok=(200, 201)):
    if status not in ok:
        raise ReplicationError("%s failed: %s %s" % (what, status, body))
    return body


def find_start_seq(src_log, tgt_log):
    """protocol.rst 'Compare Replication Logs'."""
    if not src_log or not tgt_log:
        return 0
    if src_log.get("session_id") and src_log.get("session_id") == tgt_log.get("session_id"):
        return src_log.get("source_last_seq", 0)
    tgt_sessions = {h.get("session_id"): h for h in tgt_log.get("history", [])}
    for h in src_log.get("history", []):      # newest first
        if h.get("session_id") in tgt_sessions:
            return h.get("recorded_seq", 0)
    return 0


def replicate(source_url, target_url, continuous_seconds=0, batch_size=100, use_bulk_get=True):
    src, tgt = Peer(source_url), Peer(target_url)
    stats = {"docs_read": 0, "docs_written": 0, "missing_checked": 0,
             "missing_found": 0, "doc_write_failures": 0}
    # Verify Peers
    st, src_root = src.request("GET", "", root=True)
    _check(st, src_root, "GET source /")
    _check(*src.request("GET", "/"), what="GET source db")
    st, body = tgt.request("GET", "/")
    if st == 404:
        _check(*tgt.request("PUT", "/"), what="create target")
    else:
        _check(st, body, "GET target db")
    # Generate Replication ID (implementation specific)
    rep_id = hashlib.md5(("refpeer-1\n%s\n%s\n%s" % (
        src_root.get("uuid", ""), src.display, tgt.display)).encode()).hexdigest()
    lid = "/_local/" + rep_id
    # Retrieve Replication Logs from Source and Target
    st_s, src_log = src.request("GET", lid)
    st_t, tgt_log = tgt.request("GET", lid)
    src_log = src_log if st_s == 200 else None
    tgt_log = tgt_log if st_t == 200 else None
    start_seq = find_start_seq(src_log, tgt_log)
    session_id = uuid.uuid4().hex
    start_time = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime())
    since = start_seq
    deadline = time.time() + continuous_seconds

    def checkpoint(seq):
        nonlocal src_log, tgt_log
        entry = dict(stats, session_id=session_id, start_last_seq=start_seq,
                     end_last_seq=seq, recorded_seq=seq, start_time=start_time,
                     end_time=time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime()))
        prev_hist = (src_log or {}).get("history", [])
        hist = [entry] + [h for h in prev_hist if h.get("session_id") != session_id][:49]
        base = {"_id": "_local/" + rep_id, "history": hist, "replication_id_version": 3,
                "session_id": session_id, "source_last_seq": seq}
        for peer, which in ((src, "src"), (tgt, "tgt")):
            cur = src_log if which == "src" else tgt_log
            doc = dict(base)
            if cur and "_rev" in cur:
                doc["_rev"] = cur["_rev"]
            st, r = peer.request("PUT", lid, doc)
            _check(st, r, "checkpoint on " + which, ok=(201,))
            doc["_rev"] = r["rev"]
            if which == "src":
                src_log = doc
            else:
                tgt_log = doc

    while True:
        feed = "normal"
        q = {"since": json.dumps(since) if not isinstance(since, int) else since,
             "style": "all_docs", "limit": batch_size, "feed": feed}
        if continuous_seconds and time.time() < deadline:
            q["feed"] = "longpoll"
            q["timeout"] = int(max(1, min(deadline - time.time(), 60)) * 1000)
        st, ch = src.request("GET", "/_changes", query=q)
        _check(st, ch, "_changes", ok=(200,))
        results = ch.get("results", [])
        last_seq = ch.get("last_seq", since)
        if results:
            # Calculate Revision Difference
            diff_req = {r["id"]: [c["rev"] for c in r["changes"]] for r in results}
            stats["missing_checked"] += sum(len(v) for v in diff_req.values())
            st, diff = tgt.request("POST", "/_revs_diff", diff_req)
            _check(st, diff, "_revs_diff", ok=(200,))
            docs = []
            wanted = [(doc_id, rev) for doc_id, e in diff.items() for rev in e["missing"]]
            stats["missing_found"] += len(wanted)
            # Fetch Changed Documents
            if wanted and use_bulk_get:
                st, bg = src.request("POST", "/_bulk_get",
                                     {"docs": [{"id": i, "rev": r} for i, r in wanted]},
                                     query={"revs": "true", "latest": "true"})
                if st == 200:
                    for res in bg["results"]:
                        for d in res["docs"]:
                            if "ok" in d:
                                docs.append(d["ok"])
                else:
                    use_bulk_get = False
            if wanted and not use_bulk_get:
                by_id = {}
                for i, r in wanted:
                    by_id.setdefault(i, []).append(r)
                for i, revs in by_id.items():
                    st, res = src.request("GET", "/" + urllib.parse.quote(i, safe=""),
                                          query={"revs": "true", "latest": "true",
                                                 "open_revs": json.dumps(revs)})
                    _check(st, res, "open_revs", ok=(200,))
                    docs.extend(d["ok"] for d in res if "ok" in d)
            # dedupe (latest=true may return a leaf twice)
            seen, uniq = set(), []
            for d in docs:
                k = (d["_id"], d["_rev"])
                if k not in seen:
                    seen.add(k)
                    uniq.append(d)
            stats["docs_read"] += len(uniq)
            # Upload Batch of Changed Documents
            if uniq:
                st, r = tgt.request("POST", "/_bulk_docs", {"docs": uniq, "new_edits": False})
                _check(st, r, "_bulk_docs", ok=(201,))
                failures = [x for x in r if "error" in x]
                stats["doc_write_failures"] += len(failures)
                stats["docs_written"] += len(uniq) - len(failures)
            # Ensure In Commit, Record Replication Checkpoint
            _check(*tgt.request("POST", "/_ensure_full_commit", {}),
                   what="_ensure_full_commit")
            checkpoint(last_seq)
        elif last_seq != start_seq and (src_log is None or src_log.get("source_last_seq")
                                         != last_seq):
            checkpoint(last_seq)
        since = last_seq
        if not results:
            if continuous_seconds and time.time() < deadline:
                continue
            break
    if src_log is None or tgt_log is None:
        checkpoint(since)
    return dict(stats, last_seq=since, replication_id=rep_id, session_id=session_id,
                start_seq=start_seq)


# ----------------------------------------------------------------------------
# CLI
# ----------------------------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--port", type=int, default=5984)
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--db", action="append", default=[])
    s.add_argument("--user")
    s.add_argument("--password")
    s.add_argument("--verbose", action="store_true", help="log requests to stderr")
    r = sub.add_parser("replicate")
    r.add_argument("source")
    r.add_argument("target")
    r.add_argument("--continuous-seconds", type=float, default=0)
    r.add_argument("--batch-size", type=int, default=100)
    a = ap.parse_args(argv)
    # A parent may start this process with SIGINT and SIGTERM blocked (Foundation's Process
    # passes on its thread's signal mask): unblocked, so that a server stops when told to.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    if a.cmd == "serve":
        if (a.user is None) != (a.password is None):
            ap.error("--user and --password go together")
        httpd = make_server(a.port, a.db, a.user, a.password, a.host)
        httpd.verbose = a.verbose
        print("listening on http://%s:%d" % (a.host, httpd.server_address[1]), flush=True)
        try:
            httpd.serve_forever()
        except KeyboardInterrupt:
            pass
        return 0
    try:
        res = replicate(a.source, a.target, a.continuous_seconds, a.batch_size)
    except ReplicationError as e:
        print(json.dumps({"error": str(e)}), flush=True)
        return 1
    print(json.dumps(res, sort_keys=True), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
