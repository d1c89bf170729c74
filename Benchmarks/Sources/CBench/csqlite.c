#include "csqlite.h"
#include "cb_time.h"
#include "cb_sqlite.h"
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct cs_db {
    sqlite3 *db;
    sqlite3_stmt *insert, *update, *delete, *get, *equal, *range_age, *range_id, *begin, *commit;
};

cs_db *cs_open(const char *path, int indexes, int covering, char **error) {
    *error = NULL;
    cs_db *d = calloc(1, sizeof(cs_db));
    if (!d) return NULL;
    if (sqlite3_open(path, &d->db) != SQLITE_OK) { fail(d->db, error); cs_close(d); return NULL; }
    const char *setup =
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
        "CREATE TABLE IF NOT EXISTS person (id TEXT PRIMARY KEY NOT NULL, name TEXT, age INTEGER, city TEXT, email TEXT, score REAL);";
    if (exec(d->db, setup, error)) { cs_close(d); return NULL; }
    if (indexes >= 1 && exec(d->db, covering ? "CREATE INDEX IF NOT EXISTS by_city ON person(city, id, name, age, email, score);"
                                             : "CREATE INDEX IF NOT EXISTS by_city ON person(city, id);", error)) { cs_close(d); return NULL; }
    if (indexes >= 3 && exec(d->db, covering ? "CREATE INDEX IF NOT EXISTS by_age ON person(age, id, name, city, email, score);"
                                              "CREATE UNIQUE INDEX IF NOT EXISTS by_email ON person(email);"
                                            : "CREATE INDEX IF NOT EXISTS by_age ON person(age, id);"
                                              "CREATE UNIQUE INDEX IF NOT EXISTS by_email ON person(email);", error)) { cs_close(d); return NULL; }
    if (prepare(d->db, "INSERT INTO person (id, name, age, city, email, score) VALUES (?, ?, ?, ?, ?, ?)", &d->insert, error) ||
        prepare(d->db, "UPDATE person SET name = ?2, age = ?3, city = ?4, email = ?5, score = ?6 WHERE id = ?1", &d->update, error) ||
        prepare(d->db, "DELETE FROM person WHERE id = ?", &d->delete, error) ||
        prepare(d->db, "SELECT id, name, age, city, email, score FROM person WHERE id = ?", &d->get, error) ||
        prepare(d->db, "SELECT id, name, age, city, email, score FROM person WHERE city = ? ORDER BY id LIMIT ?", &d->equal, error) ||
        prepare(d->db, "SELECT id, name, age, city, email, score FROM person WHERE age >= ?1 AND age < ?2 ORDER BY age, id LIMIT ?3", &d->range_age, error) ||
        prepare(d->db, "SELECT id, name, age, city, email, score FROM person WHERE age >= ?1 AND age < ?2 ORDER BY id LIMIT ?3", &d->range_id, error) ||
        prepare(d->db, "BEGIN", &d->begin, error) || prepare(d->db, "COMMIT", &d->commit, error)) {
        cs_close(d);
        return NULL;
    }
    return d;
}

void cs_close(cs_db *d) {
    if (!d) return;
    sqlite3_stmt *all[] = {d->insert, d->update, d->delete, d->get, d->equal, d->range_age, d->range_id, d->begin, d->commit};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) sqlite3_finalize(all[i]);
    sqlite3_close(d->db);
    free(d);
}

static int step_done(cs_db *d, sqlite3_stmt *s, char **error) {
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) return fail(d->db, error);
    return 0;
}

static void bind_person(sqlite3_stmt *s, cs_people p, int i) {
    sqlite3_bind_text(s, 1, p.id[i], -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, p.name[i], -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 3, p.age[i]);
    sqlite3_bind_text(s, 4, p.city[i], -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 5, p.email[i], -1, SQLITE_STATIC);
    sqlite3_bind_double(s, 6, p.score[i]);
}

static double write_rows(cs_db *d, sqlite3_stmt *s, cs_people p, int n, int batch, char **error) {
    *error = NULL;
    double start = now();
    for (int i = 0; i < n; i += batch) {
        if (step_done(d, d->begin, error)) return -1;
        for (int j = i; j < n && j < i + batch; j++) {
            bind_person(s, p, j);
            if (step_done(d, s, error)) return -1;
        }
        if (step_done(d, d->commit, error)) return -1;
    }
    return now() - start;
}

double cs_insert(cs_db *d, cs_people p, int n, int batch, char **error) { return write_rows(d, d->insert, p, n, batch, error); }
double cs_update(cs_db *d, cs_people p, int n, int batch, char **error) { return write_rows(d, d->update, p, n, batch, error); }

double cs_delete(cs_db *d, const char *const *ids, int n, char **error) {
    *error = NULL;
    double start = now();
    if (step_done(d, d->begin, error)) return -1;
    for (int i = 0; i < n; i++) {
        sqlite3_bind_text(d->delete, 1, ids[i], -1, SQLITE_STATIC);
        if (step_done(d, d->delete, error)) return -1;
    }
    if (step_done(d, d->commit, error)) return -1;
    return now() - start;
}

/// A row as an app holds it.
typedef struct {
    char id[32], name[64], city[64], email[64];
    int64_t age;
    double score;
} row;

static void copy_text(char *to, size_t size, sqlite3_stmt *s, int column) {
    const unsigned char *t = sqlite3_column_text(s, column);
    int n = sqlite3_column_bytes(s, column);
    if (!t) { to[0] = 0; return; }
    if ((size_t)n >= size) n = (int)size - 1;
    memcpy(to, t, (size_t)n);
    to[n] = 0;
}

/// Steps through a query's rows, copying each out; returns the count or -1.
static int read_rows(cs_db *d, sqlite3_stmt *s, char **error) {
    static row r;
    int count = 0, rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        copy_text(r.id, sizeof r.id, s, 0);
        copy_text(r.name, sizeof r.name, s, 1);
        r.age = sqlite3_column_int64(s, 2);
        copy_text(r.city, sizeof r.city, s, 3);
        copy_text(r.email, sizeof r.email, s, 4);
        r.score = sqlite3_column_double(s, 5);
        count++;
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) return fail(d->db, error);
    return count;
}

double cs_get(cs_db *d, const char *const *ids, int n, int *found, char **error) {
    *error = NULL;
    *found = 0;
    double start = now();
    for (int i = 0; i < n; i++) {
        sqlite3_bind_text(d->get, 1, ids[i], -1, SQLITE_STATIC);
        int c = read_rows(d, d->get, error);
        if (c < 0) return -1;
        *found += c;
    }
    return now() - start;
}

double cs_equal(cs_db *d, const char *const *cities, int n, int limit, int *rows, char **error) {
    *error = NULL;
    *rows = 0;
    double start = now();
    for (int i = 0; i < n; i++) {
        sqlite3_bind_text(d->equal, 1, cities[i], -1, SQLITE_STATIC);
        sqlite3_bind_int(d->equal, 2, limit);
        int c = read_rows(d, d->equal, error);
        if (c < 0) return -1;
        *rows += c;
    }
    return now() - start;
}

double cs_range(cs_db *d, const int64_t *lows, int n, int64_t width, int limit, int by_id, int *rows, char **error) {
    *error = NULL;
    *rows = 0;
    sqlite3_stmt *s = by_id ? d->range_id : d->range_age;
    double start = now();
    for (int i = 0; i < n; i++) {
        sqlite3_bind_int64(s, 1, lows[i]);
        sqlite3_bind_int64(s, 2, lows[i] + width);
        sqlite3_bind_int(s, 3, limit);
        int c = read_rows(d, s, error);
        if (c < 0) return -1;
        *rows += c;
    }
    return now() - start;
}

int cs_ids(cs_db *d, int kind, const char *text, int64_t low, int64_t width, int limit, char *out, size_t out_len, char **error) {
    *error = NULL;
    sqlite3_stmt *s = kind == 0 ? d->equal : (kind == 1 ? d->range_age : d->range_id);
    if (kind == 0) {
        sqlite3_bind_text(s, 1, text, -1, SQLITE_STATIC);
        sqlite3_bind_int(s, 2, limit);
    } else {
        sqlite3_bind_int64(s, 1, low);
        sqlite3_bind_int64(s, 2, low + width);
        sqlite3_bind_int(s, 3, limit);
    }
    size_t used = 0;
    int rc, count = 0;
    out[0] = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        const char *id = (const char *)sqlite3_column_text(s, 0);
        int w = snprintf(out + used, out_len - used, "%s\n", id ? id : "");
        if (w > 0 && (size_t)w < out_len - used) used += (size_t)w;
        count++;
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) return fail(d->db, error);
    return count;
}

double cs_import(const char *db_path, const char *file, int *count, char **error) {
    *error = NULL;
    *count = 0;
    sqlite3 *db = NULL;
    sqlite3_stmt *ins = NULL;
    FILE *f = NULL;
    char *line = NULL;
    size_t cap = 0;
    double result = -1;
    if (sqlite3_open(db_path, &db) != SQLITE_OK) { fail(db, error); goto done; }
    if (exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
                 "CREATE TABLE athlete (id TEXT PRIMARY KEY NOT NULL, name TEXT, country TEXT, sport TEXT, history TEXT);"
                 "CREATE INDEX by_country ON athlete(country); CREATE INDEX by_sport ON athlete(sport);", error)) goto done;
    if (prepare(db, "INSERT INTO athlete SELECT json_extract(?1, '$.id'), json_extract(?1, '$.name'), json_extract(?1, '$.country'), "
                    "json_extract(?1, '$.sport'), json(json_extract(?1, '$.history'))", &ins, error)) goto done;
    double start = now();
    f = fopen(file, "r");
    if (!f) { *error = strdup("cannot open the import file"); goto done; }
    if (exec(db, "BEGIN", error)) goto done;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) > 0) {
        if (len <= 1) continue;
        sqlite3_bind_text(ins, 1, line, (int)len, SQLITE_STATIC);
        int rc = sqlite3_step(ins);
        sqlite3_reset(ins);
        if (rc != SQLITE_DONE) { fail(db, error); goto done; }
        if (++*count % 1000 == 0 && (exec(db, "COMMIT", error) || exec(db, "BEGIN", error))) goto done;
    }
    if (exec(db, "COMMIT", error)) goto done;
    result = now() - start;
done:
    free(line);
    if (f) fclose(f);
    sqlite3_finalize(ins);
    sqlite3_close(db);
    return result;
}
