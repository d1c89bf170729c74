#ifndef KVDOCS_CB_SQLITE_H
#define KVDOCS_CB_SQLITE_H
// The SQLite helpers the SQLite baselines share (private to CBench): each returns -1 with
// *error set (free with free()) on failure, 0 otherwise.
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

static inline int fail(sqlite3 *db, char **error) {
    *error = strdup(db ? sqlite3_errmsg(db) : "out of memory");
    return -1;
}

static inline int exec(sqlite3 *db, const char *sql, char **error) {
    char *m = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &m) != SQLITE_OK) {
        *error = strdup(m ? m : "sqlite3_exec failed");
        sqlite3_free(m);
        return -1;
    }
    return 0;
}

static inline int prepare(sqlite3 *db, const char *sql, sqlite3_stmt **s, char **error) {
    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, s, NULL) != SQLITE_OK) return fail(db, error);
    return 0;
}

#endif
