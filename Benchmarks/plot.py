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
def documents(filename):
    variants = [("kvdocs", "sqlite-c"), ("kvdocs-untyped", "sqlite-c"), ("kvdocs", "grdb"), ("kvdocs-untyped", "grdb")]
    names = []
    for r in rows:
        if r["section"] == "documents" and r["name"] not in names:
            names.append(r["name"])
    get = {(r["name"], r["variant"]): r["microsecondsPerOperation"] for r in rows if r["section"] == "documents"}
    if not names:
        return
    fig, ax = plt.subplots(figsize=(11, 0.6 * len(names) + 2))
    height = 0.8 / len(variants)
    colors = ["#3b7dd8", "#7fb0f0", "#d8743b", "#f0b07f"]
    for k, (a, b) in enumerate(variants):
        ys, xs = [], []
        for i, n in enumerate(names):
            if (n, a) in get and (n, b) in get:
                ys.append(i + k * height)
                xs.append(get[(n, a)] / get[(n, b)])
        ax.barh(ys, xs, height=height, color=colors[k], label=f"{a} / {b}")
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_yticks([i + 0.4 - height / 2 for i in range(len(names))])
    ax.set_yticklabels(names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("time per operation, ratio (lower is better; 1.0 = equal)")
    ax.set_title("Documents: KVDocs vs SQLite (C API and GRDB)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, filename), dpi=110)
    plt.close(fig)


def scaling(filename):
    data = [r for r in rows if r["section"] == "scaling"]
    if not data:
        return
    names = []
    for r in data:
        if r["name"] not in names:
            names.append(r["name"])
    fig, axes = plt.subplots(1, len(names), figsize=(5 * len(names), 4), squeeze=False)
    for ax, name in zip(axes.flat, names):
        for variant, color in [("kvdocs", "#3b7dd8"), ("sqlite-c", "#d8743b")]:
            pts = sorted((r["extra"]["documents"], r["microsecondsPerOperation"]) for r in data if r["name"] == name and r["variant"] == variant)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", color=color, label=variant)
        ax.set_xscale("log")
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("documents in the collection")
        ax.set_ylabel("µs/op")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, filename), dpi=100)
    plt.close(fig)


documents("documents.png")
scaling("scaling.png")
comparison("text", "kvdocs", "fts5-c", "Full-text: KVDocs vs SQLite FTS5 (C API)", "text.png")
print("charts written to", out)
