#ifndef KVDOCS_CFTS_H
#define KVDOCS_CFTS_H
// The FTS5 baseline of kvbench's text section: SQLite's C API with prepared statements
// reused, WAL, synchronous=NORMAL; a table fts5(title, body) with rowids 0..n-1; queries
// `... MATCH ? ORDER BY rank LIMIT ?` reading rowid and rank of every row. Timing functions
// return elapsed seconds, or -1 with *error set (free with free()).
#include <stdint.h>

typedef struct cf_db cf_db;

cf_db *cf_open(const char *path, char **error);
void cf_close(cf_db *db);
// Inserts rows [0, n) in transactions of `batch` rows.
double cf_insert(cf_db *db, const char *const *titles, const char *const *bodies, int n, int batch, char **error);
// Runs each query with LIMIT limit; *rows counts rows; out_ids (n × limit, -1 padded) may be NULL.
double cf_query(cf_db *db, const char *const *queries, int n, int limit, int64_t *out_ids, int *rows, char **error);
// Bytes of the index (every shadow table but the content) and of the content table, from dbstat.
double cf_index_bytes(cf_db *db, double *content_bytes);
/// FTS5's 'optimize' command: merges every segment into one. Returns 0, or -1 with *error set (free it).
int cf_optimize(cf_db *d, char **error);

#endif
