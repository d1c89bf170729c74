#ifndef KVDOCS_CSQLITE_H
#define KVDOCS_CSQLITE_H
// The raw SQLite baseline of kvbench's documents section: SQLite's C API with prepared
// statements reused, WAL, synchronous=NORMAL, the same table, indexes and transaction
// sizes as the Swift sides. Every query materialises its rows (each column copied out,
// as an app reading them would). Timing functions return elapsed seconds, or -1 with
// *error set (free with free()).
#include <stddef.h>
#include <stdint.h>

typedef struct cs_db cs_db;

/// The person rows, as parallel arrays.
typedef struct {
    const char *const *id;
    const char *const *name;
    const int64_t *age;
    const char *const *city;
    const char *const *email;
    const double *score;
} cs_people;

// indexes: 0, 1 (city) or 3 (city, age, unique email); covering: the query indexes carry
// every column (city, id, name, age, email, score), SQLite's covering index.
cs_db *cs_open(const char *path, int indexes, int covering, char **error);
void cs_close(cs_db *db);
// Inserts rows [0, n) in transactions of `batch` rows.
double cs_insert(cs_db *db, cs_people p, int n, int batch, char **error);
// Updates every column of rows [0, n) (the id selects), in transactions of `batch`.
double cs_update(cs_db *db, cs_people p, int n, int batch, char **error);
// Deletes ids [0, n) in one transaction.
double cs_delete(cs_db *db, const char *const *ids, int n, char **error);
// Selects each id's row; *found counts rows.
double cs_get(cs_db *db, const char *const *ids, int n, int *found, char **error);
// WHERE city = cities[i] ORDER BY id LIMIT limit, for each i; *rows counts rows.
double cs_equal(cs_db *db, const char *const *cities, int n, int limit, int *rows, char **error);
// WHERE age >= lows[i] AND age < lows[i] + width ORDER BY age, id (by_id: ORDER BY id) LIMIT limit.
double cs_range(cs_db *db, const int64_t *lows, int n, int64_t width, int limit, int by_id, int *rows, char **error);
// The ids one query returns, '\n'-separated into out (for checking every side agrees):
// kind 0 equality (text), 1 range by (age, id), 2 range by id.
int cs_ids(cs_db *db, int kind, const char *text, int64_t low, int64_t width, int limit, char *out, size_t out_len, char **error);
// Imports a file of athlete JSON lines: json_extract in one prepared INSERT per line, in
// transactions of 1000 lines; *count rows. Two indexes (country, sport).
double cs_import(const char *db_path, const char *file, int *count, char **error);

#endif
