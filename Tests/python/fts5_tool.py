"""Reference side of the full-text differential tests: SQLite FTS5 (Debian's SQLite).

  tokenize TOKENIZER   stdin: one JSON string per line -> stdout: JSON list of its terms
  search               stdin: one JSON object {"tokenizer", "columns", "docs", "queries"[, "detail"]}
                       -> stdout: one JSON object per query: {"ids", "scores", "highlights", "snippets"}
                          (best first, as ORDER BY bm25(t), rowid) or {"error": message}
"""
import json
import sqlite3
import sys


def tokenize(tokenizer):
    con = sqlite3.connect(":memory:")
    con.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{tokenizer}')")
    con.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    lines = [json.loads(line) for line in sys.stdin if line.strip()]
    con.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", enumerate(lines, 1))
    terms = {}
    for term, doc, offset in con.execute('SELECT term, doc, "offset" FROM v ORDER BY doc, "offset"'):
        terms.setdefault(doc, []).append(term)
    for i in range(1, len(lines) + 1):
        print(json.dumps(terms.get(i, []), ensure_ascii=False))


def snippets(con, query):
    """snippet() of every match, best first, or None where FTS5 fails (its snippet()
    reports corruption for a NEAR group's leftover positions past the row's end)."""
    try:
        return [r[0] for r in con.execute("SELECT snippet(t, -1, '[', ']', '...', 8) FROM t WHERE t MATCH ? ORDER BY bm25(t), rowid",
                                          (query,)).fetchall()]
    except sqlite3.Error:
        return None


def search():
    spec = json.load(sys.stdin)
    columns = spec["columns"]
    con = sqlite3.connect(":memory:")
    detail = spec.get("detail", "full")
    con.execute(f"CREATE VIRTUAL TABLE t USING fts5({', '.join(columns)}, tokenize='{spec['tokenizer']}', detail={detail})")
    docs = spec["docs"]
    con.executemany(f"INSERT INTO t(rowid, {', '.join(columns)}) VALUES (?{', ?' * len(columns)})",
                    [(i, *[d.get(c) for c in columns]) for i, d in enumerate(docs, 1)])
    highlights = ", ".join(f"highlight(t, {i}, '[', ']')" for i in range(len(columns)))
    for query in spec["queries"]:
        try:
            rows = con.execute(f"SELECT rowid, bm25(t), {highlights} FROM t WHERE t MATCH ? ORDER BY bm25(t), rowid",
                               (query,)).fetchall()
            print(json.dumps({"ids": [docs[r[0] - 1]["id"] for r in rows], "scores": [r[1] for r in rows],
                              "highlights": [list(r[2:]) for r in rows], "snippets": snippets(con, query)}, ensure_ascii=False))
        except sqlite3.Error as e:
            print(json.dumps({"error": str(e)}))


if __name__ == "__main__":
    if sys.argv[1] == "tokenize":
        tokenize(sys.argv[2])
    elif sys.argv[1] == "search":
        search()
    else:
        sys.exit("unknown command " + sys.argv[1])
