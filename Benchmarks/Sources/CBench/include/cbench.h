#ifndef KVDOCS_CBENCH_H
#define KVDOCS_CBENCH_H
// The raw-C baseline of kvbench: each function times one workload on LevelDB's C API,
// using key, value and order buffers prepared by the Swift side so both sides do the
// same work. Returns elapsed seconds, or -1 with *error set (free with free()).
#include <stddef.h>
#include <stdint.h>
#include "csqlite.h"  // the raw SQLite baseline of the documents section
#include "cfts.h"     // the FTS5 baseline of the text section
#include "cgeo.h"     // the R*Tree and brute-force baselines of the geo section
#include "capps.h"    // the SQLite sides of the apps section
#include "cfloor.h"   // physical floors: programs of LevelDB C API calls

typedef struct cb_db cb_db;

typedef struct {
    size_t write_buffer_size;   // 0: LevelDB's default
    size_t block_size;          // 0: default
    size_t cache_capacity;      // 0: LevelDB's internal 8 MB cache
    int bloom_bits;             // 0: no filter
    int compression;            // 0 none, 1 snappy
} cb_options;

cb_db *cb_open(const char *path, cb_options options, char **error);
void cb_close(cb_db *db);

// Puts keys[order[i]] (16 bytes each) with values from `values` (vsize bytes at offset
// (i * 97) % (values_len - vsize)), in batches of `batch` (1: single puts).
double cb_fill(cb_db *db, const char *keys, const int32_t *order, int n, const char *values, size_t values_len,
               int vsize, int batch, int sync, char **error);
// Gets keys[order[i]]; *found counts hits.
double cb_read_random(cb_db *db, const char *keys, const int32_t *order, int n, int *found, char **error);
// Iterates every entry forward or backward, touching each key and value; *count entries.
double cb_read_seq(cb_db *db, int reverse, int *count, char **error);
// Seeks to keys[order[i]] and reads the entry there.
double cb_seek_random(cb_db *db, const char *keys, const int32_t *order, int n, int *found, char **error);
double cb_compact(cb_db *db);
// The number of table files at level 0 (-1 when unknown): reads wait for it to drain.
int cb_level0_files(cb_db *db);
// The physical floor of an index query on LevelDB alone: for each query q, one iterator
// seeks to its start key (start_lens[q] bytes, one after another in `starts`) and reads up
// to `limit` entries from there (key and value), then `limit` gets of the
// document keys the query returns (doc_lens[q * limit + i] bytes each, 0 for none, one
// after another in `doc_keys`). A query whose start is empty (length 0) reads no index:
// its gets alone. With seek_docs, the documents are read through one iterator instead of
// gets (a step when the next document is the next entry, else a seek). *entries counts
// the index entries read.
double cb_index_floor(cb_db *db, const char *starts, const size_t *start_lens, int queries, int limit,
                      const char *doc_keys, const size_t *doc_lens, int seek_docs, int *entries, char **error);

#endif
