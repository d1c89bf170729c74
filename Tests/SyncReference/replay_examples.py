#!/usr/bin/env python3
"""Replays the CouchDB documentation's request/response examples (doc_examples.json)
against a running server, as test_refpeer.py replays them against refpeer.

Usage: replay_examples.py ROOT_URL [--skip NAME ...] [--shape-only NAME ...]
  ROOT_URL      the server's root, e.g. http://127.0.0.1:5984
  --skip        an example not to replay (by name), e.g. one for an endpoint the server
                does not serve; every skip is listed in the output.
  --shape-only  an example whose body is compared by shape only, although the example
                gives the exact body (e.g. a server that keeps no body of a revision
                that is not a leaf, as a compacted CouchDB); listed in the output.

Example n uses the database "ex<n>". A server that cannot create databases (KVDocs
serves the replicated collections its schema declares) must already have them: the
creation step accepts 201 (created) and 412 (it exists).

Prints one JSON line: {"passed": [names], "failed": [{"name", "doc", "why"}],
"skipped": [names], "shape_only": [names]}; exit status 0 when none failed.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_refpeer import canon, http, shape_errors  # noqa: E402


def replay(root, example, n, exact):
    db = "ex%d" % n
    status, body = http("PUT", root + "/" + db)
    if status not in (201, 412):
        return "creating %s answered %d %r" % (db, status, body)
    for step in example["setup"]:
        status, body = http(step["method"], root + step["path"].replace("{db}", db), step.get("body"))
        if status not in (200, 201):
            return "setup %s %s answered %d %r" % (step["method"], step["path"], status, body)
    rq = example["request"]
    status, got = http(rq["method"], root + rq["path"].replace("{db}", db),
                       rq.get("body"), rq.get("headers"), raw=rq.get("raw_body"))
    if status != example["response"]["status"]:
        return "status %d, documented %d: %r" % (status, example["response"]["status"], got)
    errors = shape_errors(got, example["response"]["body"], ignore=example.get("ignore_keys", ()))
    if errors:
        return "; ".join(errors) + ": %r" % (got,)
    if exact and example["exact"] and canon(got) != canon(example["response"]["body"]):
        return "body %r, documented %r" % (got, example["response"]["body"])
    for check in example.get("check_after", []):
        status = http("GET", root + check["path"].replace("{db}", db))[0]
        if status != check["status"]:
            return "afterwards GET %s answered %d, expected %d" % (check["path"], status, check["status"])
    return None


def main(argv):
    if not argv or argv[0].startswith("-"):
        sys.exit(__doc__)
    root = argv[0].rstrip("/")
    skip = set()
    shape_only = set()
    rest = argv[1:]
    while rest:
        if rest[0] in ("--skip", "--shape-only") and len(rest) > 1:
            (skip if rest[0] == "--skip" else shape_only).add(rest[1])
            rest = rest[2:]
        else:
            sys.exit("replay_examples.py: unexpected argument %r\n%s" % (rest[0], __doc__))
    with open(os.path.join(HERE, "doc_examples.json")) as f:
        examples = json.load(f)["examples"]
    unknown = (skip | shape_only) - {e["name"] for e in examples}
    if unknown:
        sys.exit("replay_examples.py: no example named %s" % ", ".join(sorted(unknown)))
    result = {"passed": [], "failed": [], "skipped": [], "shape_only": sorted(shape_only)}
    for n, example in enumerate(examples):
        if example["name"] in skip:
            result["skipped"].append(example["name"])
            continue
        why = replay(root, example, n, example["name"] not in shape_only)
        if why is None:
            result["passed"].append(example["name"])
        else:
            result["failed"].append({"name": example["name"], "doc": example["doc"], "why": why})
    print(json.dumps(result))
    return 1 if result["failed"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
