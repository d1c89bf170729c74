#!/usr/bin/env python3
"""Replays replicated writes into refpeer's in-memory database and prints what its
_changes, _revs_diff and open_revs answer, for KVDocs' differential test
(Tests/KVDocumentsTests/ReplicationDataTests.swift).

stdin: one scenario per line:
  {"revs_limit": N,
   "batches": [[doc, ...], ...],        # docs as _bulk_docs new_edits:false sends them
   "revs_diff": {id: [rev, ...]},
   "open": [[id, "all" | [rev, ...], latest], ...]}
stdout: one line per scenario:
  {"leaves": {id: [[rev, deleted], ...]},   # winner first
   "changes": [[id, [rev, ...], deleted], ...],   # style all_docs, by sequence
   "revs_diff": {id: {"missing": [...], "possible_ancestors": [...]}},
   "open": [[{"ok": doc} | {"missing": rev}, ...], ...]}
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import refpeer  # noqa: E402


def run(scenario):
    db = refpeer.Database("d")
    db.revs_limit = scenario.get("revs_limit", 1000)
    with db.cond:
        for batch in scenario["batches"]:
            prepared = [db.put_replicated(doc) for doc in batch]
            for p in prepared:
                db.apply_replicated(*p)
        leaves = {
            doc_id: [[refpeer.rev_str(k), bool(tree.nodes[k].deleted)] for k in tree.sorted_leaves()]
            for doc_id, tree in db.docs.items()
        }
        changes = [
            [row["id"], [c["rev"] for c in row["changes"]], bool(row.get("deleted", False))]
            for row in db.changes(0, None, "all_docs")["results"]
        ]
        revs_diff = {}
        for doc_id, revs in scenario.get("revs_diff", {}).items():
            tree = db.docs.get(doc_id)
            known = tree.nodes if tree else {}
            missing = [r for r in revs if refpeer.parse_rev(r) not in known]
            if not missing:
                continue
            entry = {"missing": missing, "possible_ancestors": []}
            if tree:
                top = max(refpeer.parse_rev(r)[0] for r in missing)
                entry["possible_ancestors"] = [refpeer.rev_str(k) for k in tree.sorted_leaves() if k[0] < top]
            revs_diff[doc_id] = entry
        server = refpeer.Handler.__new__(refpeer.Handler)
        opened = []
        for doc_id, revs, latest in scenario.get("open", []):
            opened.append(server.open_revs_results(db, doc_id, revs, True, latest) or [])
    return {"leaves": leaves, "changes": changes, "revs_diff": revs_diff, "open": opened}


for line in sys.stdin:
    if line.strip():
        print(json.dumps(run(json.loads(line)), sort_keys=True))
