"""Charts of a kvbench run (matplotlib), from results.json into PNG files.

Usage: python3 plot.py results.json OUTPUT_DIR
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

results_file, out = sys.argv[1], sys.argv[2]
with open(results_file) as f:
    run = json.load(f)
rows = run["results"]


def pairs(section, a, b):
    names = []
    for r in rows:
        if r["section"] == section and r["name"] not in names:
            names.append(r["name"])
    get = {(r["name"], r["variant"]): r["microsecondsPerOperation"] for r in rows if r["section"] == section}
    names = [n for n in names if (n, a) in get and (n, b) in get]
    return names, [get[(n, a)] for n in names], [get[(n, b)] for n in names]


def comparison(section, a, b, title, filename):
    names, xs, ys = pairs(section, a, b)
    if not names:
        return
    fig, ax = plt.subplots(figsize=(10, 0.45 * len(names) + 1.5))
    ratios = [x / y for x, y in zip(xs, ys)]
    ax.barh(names, ratios, color=["#3b7dd8" if r <= 1.1 else "#d8743b" for r in ratios])
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_xlabel(f"{a} / {b} time per operation (lower is better; 1.0 = equal)")
    ax.set_title(title)
    ax.invert_yaxis()
    for i, r in enumerate(ratios):
        ax.text(r, i, f" {r:.2f}×", va="center", fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, filename), dpi=110)
    plt.close(fig)


def tuning(filename):
    groups = {}
    for r in rows:
        if r["section"] == "tuning":
            groups.setdefault(r["name"], []).append(r)
    if not groups:
        return
    names = list(groups)
    cols = 3
    rows_n = (len(names) + cols - 1) // cols
    fig, axes = plt.subplots(rows_n, cols, figsize=(14, 3 * rows_n))
    for ax, name in zip(axes.flat, names):
        items = groups[name]
        ax.bar([i["variant"] for i in items], [i["microsecondsPerOperation"] for i in items], color="#3b7dd8")
        ax.set_title(name, fontsize=9)
        ax.set_ylabel("µs/op", fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(names):]:
        ax.axis("off")
    fig.suptitle(f"Tuning matrix (N = {run['n']})")
    fig.tight_layout()
    fig.savefig(os.path.join(out, filename), dpi=100)
    plt.close(fig)


comparison("raw", "swift", "c", f"Swift wrapper vs LevelDB C API (N = {run['n']})", "raw.png")
tuning("tuning.png")
comparison("documents", "kvdocs", "sqlite", "Documents: KVDocs vs SQLite (GRDB, WAL)", "documents.png")
comparison("text", "kvdocs", "sqlite fts5", "Full-text: KVDocs vs SQLite FTS5", "text.png")
print("charts written to", out)
