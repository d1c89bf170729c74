"""An independent model of a replicated document's revision tree, written from the rules as
CouchDB documents them, not from couch_key_tree's code: the reference of
RevisionTreeTests.differentialAgainstPythonModel.

The model keeps a set of revisions (pos, id), each with its parent where known:
- merging a revision path (its history, oldest first) adds every revision it names and every
  parent link it shows; a revision's body is known once a path ended at it (its value then
  never changes: CouchDB keeps the stored value over a missing one);
- stemming to a limit keeps the revisions that are fewer than `limit` revisions above some
  leaf ("the last revs_limit revisions of each branch"); a kept revision whose parent is gone
  becomes a root;
- the winner is the leaf first when sorted descending by (not deleted, pos, id bytes); the
  conflicts are the other non-deleted leaves, the deleted conflicts the other deleted ones,
  both in that order.
Revision ids are bytes: 32 hexadecimal digits are 16 bytes (an MD5 id), anything else its
ASCII bytes. Ids are unique in the scenarios (each names one revision), so a revision's
position and parent never disagree between paths.

Input (stdin): one JSON scenario per line, {"ops": [{"merge": {"start": S, "ids": [...],
"deleted": D}} | {"stem": L}, ...]}. Output: one JSON line per scenario, a list with the
state after each op: {"nodes": [[pos, id, parent_id|null, has_body, deleted], ...] sorted,
"roots": [[pos, id], ...] sorted by (pos, id bytes), "leaves": [[pos, id, deleted], ...] in
winner order, "winner": [pos, id] | null, "conflicts": [...], "deleted_conflicts": [...]}.
"""
import json
import sys


def id_bytes(text):
    if len(text) == 32:
        return bytes.fromhex(text)
    return text.encode("ascii")


def sort_key(rev):
    pos, rid = rev
    return (pos, id_bytes(rid), 0 if len(rid) == 32 else 1)


class Model:
    def __init__(self):
        # (pos, id) -> {"parent": id or None, "body": bool, "deleted": bool}
        self.nodes = {}

    def merge(self, start, ids, deleted):
        for k, rid in enumerate(ids):
            key = (start + k, rid)
            parent = ids[k - 1] if k > 0 else None
            is_leaf = k == len(ids) - 1
            node = self.nodes.get(key)
            if node is None:
                node = {"parent": parent, "body": False, "deleted": False}
                self.nodes[key] = node
            elif node["parent"] is None and parent is not None:
                node["parent"] = parent
            if is_leaf and not node["body"]:
                node["body"] = True
                node["deleted"] = deleted

    def children(self):
        result = {key: [] for key in self.nodes}
        for (pos, rid), node in self.nodes.items():
            if node["parent"] is not None:
                result[(pos - 1, node["parent"])].append((pos, rid))
        return result

    def stem(self, limit):
        children = self.children()
        distance = {}
        # Deepest first, so children are done before parents.
        for key in sorted(self.nodes, key=lambda k: -k[0]):
            kids = children[key]
            distance[key] = 0 if not kids else 1 + min(distance[c] for c in kids)
        kept = {key for key in self.nodes if distance[key] < limit}
        self.nodes = {key: node for key, node in self.nodes.items() if key in kept}
        for (pos, rid), node in self.nodes.items():
            if node["parent"] is not None and (pos - 1, node["parent"]) not in kept:
                node["parent"] = None

    def state(self):
        children = self.children()
        leaves = [(key, node["deleted"]) for key, node in self.nodes.items() if not children[key]]
        leaves.sort(key=lambda leaf: (not leaf[1],) + sort_key(leaf[0]), reverse=True)
        winner = leaves[0] if leaves else None
        rest = leaves[1:]
        return {
            "nodes": sorted([pos, rid, node["parent"], node["body"], node["deleted"]]
                            for (pos, rid), node in self.nodes.items()),
            "roots": [list(key) for key in sorted((k for k, n in self.nodes.items() if n["parent"] is None), key=sort_key)],
            "leaves": [[key[0], key[1], d] for key, d in leaves],
            "winner": list(winner[0]) if winner else None,
            "conflicts": [list(key) for key, d in rest if not d],
            "deleted_conflicts": [list(key) for key, d in rest if d],
        }


def main():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        model = Model()
        states = []
        for op in json.loads(line)["ops"]:
            if "merge" in op:
                m = op["merge"]
                model.merge(m["start"], m["ids"], m["deleted"])
            else:
                model.stem(op["stem"])
            states.append(model.state())
        print(json.dumps(states))


if __name__ == "__main__":
    main()
