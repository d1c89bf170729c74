#include "cfts.h"
#include "cb_time.h"
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct cf_db {
    sqlite3 *db;
    sqlite3_stmt *insert, *query, *begin, *commit;
};

static double fail(sqlite3 *db, char **error) {
    *error = strdup(db ? sqlite3_errmsg(db) : "out of memory");
    return -1;
}

cf_db *cf_open(const char *path, char **error) {
    *error = NULL;
    cf_db *d = calloc(1, sizeof(cf_db));
    if (!d) return NULL;
    char *m = NULL;
    if (sqlite3_open(path, &d->db) != SQLITE_OK ||
        sqlite3_exec(d->db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
                            "CREATE VIRTUAL TABLE IF NOT EXISTS notes USING fts5(title, body);", NULL, NULL, &m) != SQLITE_OK ||
        sqlite3_prepare_v3(d->db, "INSERT INTO notes(rowid, title, body) VALUES (?, ?, ?)", -1, SQLITE_PREPARE_PERSISTENT, &d->insert, NULL) != SQLITE_OK ||
        sqlite3_prepare_v3(d->db, "SELECT rowid, rank FROM notes WHERE notes MATCH ? ORDER BY rank LIMIT ?", -1, SQLITE_PREPARE_PERSISTENT, &d->query, NULL) != SQLITE_OK ||
        sqlite3_prepare_v3(d->db, "BEGIN", -1, SQLITE_PREPARE_PERSISTENT, &d->begin, NULL) != SQLITE_OK ||
        sqlite3_prepare_v3(d->db, "COMMIT", -1, SQLITE_PREPARE_PERSISTENT, &d->commit, NULL) != SQLITE_OK) {
        *error = strdup(m ? m : sqlite3_errmsg(d->db));
        sqlite3_free(m);
        cf_close(d);
        return NULL;
    }
    return d;
}

void cf_close(cf_db *d) {
    if (!d) return;
    sqlite3_finalize(d->insert);
    sqlite3_finalize(d->query);
    sqlite3_finalize(d->begin);
    sqlite3_finalize(d->commit);
    sqlite3_close(d->db);
    free(d);
}

static int step_done(sqlite3_stmt *s) {
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    return rc == SQLITE_DONE;
}

double cf_insert(cf_db *d, const char *const *titles, const char *const *bodies, int n, int batch, char **error) {
    *error = NULL;
    double start = now();
    for (int i = 0; i < n; i += batch) {
        if (!step_done(d->begin)) return fail(d->db, error);
        for (int j = i; j < n && j < i + batch; j++) {
            sqlite3_bind_int64(d->insert, 1, j);
            sqlite3_bind_text(d->insert, 2, titles[j], -1, SQLITE_STATIC);
            sqlite3_bind_text(d->insert, 3, bodies[j], -1, SQLITE_STATIC);
            if (!step_done(d->insert)) return fail(d->db, error);
        }
        if (!step_done(d->commit)) return fail(d->db, error);
    }
    return now() - start;
}

double cf_query(cf_db *d, const char *const *queries, int n, int limit, int64_t *out_ids, int *rows, char **error) {
    *error = NULL;
    *rows = 0;
    double start = now();
    for (int i = 0; i < n; i++) {
        sqlite3_bind_text(d->query, 1, queries[i], -1, SQLITE_STATIC);
        sqlite3_bind_int(d->query, 2, limit);
        int k = 0, rc;
        while ((rc = sqlite3_step(d->query)) == SQLITE_ROW) {
            int64_t id = sqlite3_column_int64(d->query, 0);
            volatile double rank = sqlite3_column_double(d->query, 1);
            (void)rank;
            if (out_ids && k < limit) out_ids[(size_t)i * (size_t)limit + (size_t)k] = id;
            k++;
        }
        sqlite3_reset(d->query);
        if (rc != SQLITE_DONE) return fail(d->db, error);
        if (out_ids) for (int j = k; j < limit; j++) out_ids[(size_t)i * (size_t)limit + (size_t)j] = -1;
        *rows += k;
    }
    return now() - start;
}

double cf_index_bytes(cf_db *d, double *content_bytes) {
    // dbstat: pages of the FTS5 shadow tables, the index apart from the content table.
    sqlite3_stmt *s = NULL;
    double index = -1;
    *content_bytes = -1;
    sqlite3_exec(d->db, "PRAGMA wal_checkpoint(TRUNCATE);", NULL, NULL, NULL);
    if (sqlite3_prepare_v2(d->db, "SELECT name = 'notes_content', SUM(pgsize) FROM dbstat WHERE name LIKE 'notes%' GROUP BY name = 'notes_content'", -1, &s, NULL) == SQLITE_OK) {
        while (sqlite3_step(s) == SQLITE_ROW) {
            if (sqlite3_column_int(s, 0)) *content_bytes = sqlite3_column_double(s, 1);
            else index = sqlite3_column_double(s, 1);
        }
    }
    sqlite3_finalize(s);
    return index;
}

int cf_optimize(cf_db *d, char **error) {
    *error = NULL;
    char *m = NULL;
    if (sqlite3_exec(d->db, "INSERT INTO notes(notes) VALUES('optimize');", NULL, NULL, &m) != SQLITE_OK) {
        *error = strdup(m ? m : sqlite3_errmsg(d->db));
        sqlite3_free(m);
        return -1;
    }
    return 0;
}
