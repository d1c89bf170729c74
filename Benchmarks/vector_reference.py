#!/usr/bin/env python3
"""The references of kvbench's vector section, on the vectors kvbench wrote.

Usage: vector_reference.py DIR N DIMENSIONS QUERIES K [--hnsw]

DIR holds `vectors.f32` (N × DIMENSIONS float32, little-endian, row i the vector of id i),
`queries.f32` (QUERIES × DIMENSIONS) and `buckets.i32` (N int32: each vector's bucket,
0–99, for the filtered queries). The vectors are unit length and the metric is cosine, as
in the section. Prints one JSON object:

- `numpy`: the floor, a brute force per query (one matrix-vector product, then
  `argpartition` for the top k), one thread (OPENBLAS_NUM_THREADS=1 and the like are set
  before numpy loads); `ids`: each query's top k, for kvdocs to compare;
- `sqlite_vec`: sqlite-vec's `vec0` virtual table (`distance_metric=cosine`, the bucket a
  metadata column), microseconds per inserted vector (one transaction), milliseconds per
  query (`embedding MATCH ? AND k = ?`), and per filtered query (`AND bucket = 7`,
  `bucket < 10`, `bucket < 50`);
- with --hnsw, `hnswlib`: M 16, ef_construction 200, one thread; microseconds per
  inserted vector, and per ef of 50, 100, 200: milliseconds per query and recall@k against
  the numpy floor.
"""
import json
import os
import sys
import time

for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[variable] = "1"

import numpy as np  # noqa: E402


def main():
    if len(sys.argv) < 6:
        sys.exit(__doc__)
    directory, n, d, q, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    with_hnsw = "--hnsw" in sys.argv[6:]
    vectors = np.fromfile(os.path.join(directory, "vectors.f32"), dtype="<f4").reshape(n, d)
    queries = np.fromfile(os.path.join(directory, "queries.f32"), dtype="<f4").reshape(q, d)
    buckets = np.fromfile(os.path.join(directory, "buckets.i32"), dtype="<i4")
    out = {}

    # numpy: cosine distance of unit vectors, 1 - dot.
    ids = []
    start = time.perf_counter()
    for query in queries:
        distances = 1 - vectors @ query
        top = np.argpartition(distances, k)[:k]
        top = top[np.lexsort((top, distances[top]))]
        ids.append(top.tolist())
    out["numpy"] = {"ms_per_query": (time.perf_counter() - start) / q * 1e3, "ids": ids}

    # sqlite-vec's vec0, brute force.
    import sqlite3
    import sqlite_vec

    db = sqlite3.connect(":memory:")
    db.enable_load_extension(True)
    sqlite_vec.load(db)
    db.enable_load_extension(False)
    db.execute(f"create virtual table v using vec0(embedding float[{d}] distance_metric=cosine, bucket integer)")
    rows = [(i, vectors[i].tobytes(), int(buckets[i])) for i in range(n)]
    start = time.perf_counter()
    with db:
        db.executemany("insert into v(rowid, embedding, bucket) values (?, ?, ?)", rows)
    insert_us = (time.perf_counter() - start) / n * 1e6
    del rows

    def timed(condition):
        found = []
        start = time.perf_counter()
        for query in queries:
            found.append(
                [
                    r[0]
                    for r in db.execute(
                        f"select rowid, distance from v where embedding match ? and k = ?{condition}", (query.tobytes(), k)
                    )
                ]
            )
        return (time.perf_counter() - start) / q * 1e3, found

    plain_ms, plain_ids = timed("")
    filtered = {}
    for name, condition in (("1%", " and bucket = 7"), ("10%", " and bucket < 10"), ("50%", " and bucket < 50")):
        ms, found = timed(condition)
        filtered[name] = {"ms_per_query": ms, "ids": found}
    out["sqlite_vec"] = {
        "version": db.execute("select vec_version()").fetchone()[0],
        "us_per_insert": insert_us,
        "ms_per_query": plain_ms,
        "ids": plain_ids,
        "filtered": filtered,
    }

    if with_hnsw:
        import hnswlib

        index = hnswlib.Index(space="cosine", dim=d)
        index.init_index(max_elements=n, M=16, ef_construction=200, random_seed=100)
        index.set_num_threads(1)
        start = time.perf_counter()
        index.add_items(vectors, np.arange(n), num_threads=1)
        build_us = (time.perf_counter() - start) / n * 1e6
        efs = {}
        exact = [set(x) for x in out["numpy"]["ids"]]
        for ef in (50, 100, 200):
            index.set_ef(ef)
            start = time.perf_counter()
            labels = [index.knn_query(query, k=k, num_threads=1)[0][0] for query in queries]
            ms = (time.perf_counter() - start) / q * 1e3
            recall = sum(len(exact[i] & set(labels[i].tolist())) for i in range(q)) / (q * k)
            efs[str(ef)] = {"ms_per_query": ms, "recall": recall}
        out["hnswlib"] = {"us_per_insert": build_us, "ef": efs}

    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
