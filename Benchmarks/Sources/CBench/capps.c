#include "capps.h"
#include "cb_time.h"
#include "cb_sqlite.h"
#include "cgeo.h"
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EARTH_RADIUS 6371008.8

struct ca_athletes {
    sqlite3 *db;
    sqlite3_stmt *insert, *top, *count, *by_licence, *begin, *commit;
};

struct ca_stations {
    sqlite3 *db;
    sqlite3_stmt *insert_station, *insert_box, *insert_departure, *box, *station, *next, *begin, *commit;
};

static int step_done(sqlite3 *db, sqlite3_stmt *s, char **error) {
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) return fail(db, error);
    return 0;
}

static void copy_text(char *to, size_t size, sqlite3_stmt *s, int column) {
    const unsigned char *t = sqlite3_column_text(s, column);
    int n = sqlite3_column_bytes(s, column);
    if (!t) { to[0] = 0; return; }
    if ((size_t)n >= size) n = (int)size - 1;
    memcpy(to, t, (size_t)n);
    to[n] = 0;
}

/// EXPLAIN QUERY PLAN of a prepared statement's SQL, its `detail` lines joined by "; ".
static int explain(sqlite3 *db, sqlite3_stmt *s, char *out, size_t out_len, char **error) {
    *error = NULL;
    if (out_len == 0) return 0;
    out[0] = 0;
    char *sql = sqlite3_mprintf("EXPLAIN QUERY PLAN %s", sqlite3_sql(s));
    if (!sql) return fail(NULL, error);
    sqlite3_stmt *plan = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &plan, NULL);
    sqlite3_free(sql);
    if (rc != SQLITE_OK) return fail(db, error);
    size_t used = 0;
    while ((rc = sqlite3_step(plan)) == SQLITE_ROW) {
        const char *detail = (const char *)sqlite3_column_text(plan, 3);
        int w = snprintf(out + used, out_len - used, "%s%s", used ? "; " : "", detail ? detail : "");
        if (w > 0 && (size_t)w < out_len - used) used += (size_t)w;
    }
    sqlite3_finalize(plan);
    if (rc != SQLITE_DONE) return fail(db, error);
    return 0;
}

// MARK: athletes

ca_athletes *ca_athletes_open(const char *path, char **error) {
    *error = NULL;
    ca_athletes *d = calloc(1, sizeof(ca_athletes));
    if (!d) return NULL;
    if (sqlite3_open(path, &d->db) != SQLITE_OK) { fail(d->db, error); ca_athletes_close(d); return NULL; }
    if (exec(d->db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
                    "CREATE TABLE athlete (id INTEGER PRIMARY KEY, licence TEXT UNIQUE, name TEXT, country TEXT, club TEXT, points INTEGER, sport TEXT);"
                    "CREATE INDEX athlete_country_points ON athlete(country, points);", error) ||
        prepare(d->db, "INSERT INTO athlete (id, licence, name, country, club, points, sport) VALUES (?, ?, ?, ?, ?, ?, ?)", &d->insert, error) ||
        prepare(d->db, "SELECT id, licence, name, country, club, points, sport FROM athlete WHERE country = ?1 ORDER BY points DESC, id DESC LIMIT ?2", &d->top, error) ||
        prepare(d->db, "SELECT count(*) FROM athlete WHERE country = ?", &d->count, error) ||
        prepare(d->db, "SELECT id, licence, name, country, club, points, sport FROM athlete WHERE licence = ?", &d->by_licence, error) ||
        prepare(d->db, "BEGIN", &d->begin, error) || prepare(d->db, "COMMIT", &d->commit, error)) {
        ca_athletes_close(d);
        return NULL;
    }
    return d;
}

void ca_athletes_close(ca_athletes *d) {
    if (!d) return;
    sqlite3_stmt *all[] = {d->insert, d->top, d->count, d->by_licence, d->begin, d->commit};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) sqlite3_finalize(all[i]);
    sqlite3_close(d->db);
    free(d);
}

double ca_athletes_insert(ca_athletes *d, ca_athlete_rows r, int n, int batch, char **error) {
    *error = NULL;
    double start = now();
    for (int i = 0; i < n; i += batch) {
        if (step_done(d->db, d->begin, error)) return -1;
        for (int j = i; j < n && j < i + batch; j++) {
            sqlite3_bind_int64(d->insert, 1, r.id[j]);
            sqlite3_bind_text(d->insert, 2, r.licence[j], -1, SQLITE_STATIC);
            sqlite3_bind_text(d->insert, 3, r.name[j], -1, SQLITE_STATIC);
            sqlite3_bind_text(d->insert, 4, r.country[j], -1, SQLITE_STATIC);
            sqlite3_bind_text(d->insert, 5, r.club[j], -1, SQLITE_STATIC);
            sqlite3_bind_int64(d->insert, 6, r.points[j]);
            sqlite3_bind_text(d->insert, 7, r.sport[j], -1, SQLITE_STATIC);
            if (step_done(d->db, d->insert, error)) return -1;
        }
        if (step_done(d->db, d->commit, error)) return -1;
    }
    return now() - start;
}

/// An athlete as an app holds it.
typedef struct {
    int64_t id, points;
    char licence[32], name[64], country[8], club[64], sport[32];
} athlete;

/// Steps through a query's athletes, copying each out (ids to out, up to max_out, -1
/// padded); returns the count or -1.
static int read_athletes(ca_athletes *d, sqlite3_stmt *s, int64_t *out, int max_out, char **error) {
    static athlete a;   // static: the copies are kept, as an app's would be
    int count = 0, rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        a.id = sqlite3_column_int64(s, 0);
        copy_text(a.licence, sizeof a.licence, s, 1);
        copy_text(a.name, sizeof a.name, s, 2);
        copy_text(a.country, sizeof a.country, s, 3);
        copy_text(a.club, sizeof a.club, s, 4);
        a.points = sqlite3_column_int64(s, 5);
        copy_text(a.sport, sizeof a.sport, s, 6);
        if (out && count < max_out) out[count] = a.id;
        count++;
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) return fail(d->db, error);
    for (int j = count; out && j < max_out; j++) out[j] = -1;
    return count;
}

double ca_athletes_top(ca_athletes *d, const char *const *countries, int n, int limit, int64_t *out_ids, char **error) {
    *error = NULL;
    double start = now();
    for (int i = 0; i < n; i++) {
        sqlite3_bind_text(d->top, 1, countries[i], -1, SQLITE_STATIC);
        sqlite3_bind_int(d->top, 2, limit);
        if (read_athletes(d, d->top, out_ids ? out_ids + (long)i * limit : NULL, limit, error) < 0) return -1;
    }
    return now() - start;
}

double ca_athletes_count(ca_athletes *d, const char *const *countries, int n, int64_t *out_counts, char **error) {
    *error = NULL;
    double start = now();
    for (int i = 0; i < n; i++) {
        sqlite3_bind_text(d->count, 1, countries[i], -1, SQLITE_STATIC);
        int rc = sqlite3_step(d->count);
        int64_t count = rc == SQLITE_ROW ? sqlite3_column_int64(d->count, 0) : -1;
        sqlite3_reset(d->count);
        if (rc != SQLITE_ROW) return fail(d->db, error);
        if (out_counts) out_counts[i] = count;
    }
    return now() - start;
}

double ca_athletes_by_licence(ca_athletes *d, const char *const *licences, int n, int64_t *out_ids, char **error) {
    *error = NULL;
    double start = now();
    for (int i = 0; i < n; i++) {
        sqlite3_bind_text(d->by_licence, 1, licences[i], -1, SQLITE_STATIC);
        if (read_athletes(d, d->by_licence, out_ids ? out_ids + i : NULL, 1, error) < 0) return -1;
    }
    return now() - start;
}

int ca_athletes_plan(ca_athletes *d, int which, char *out, size_t out_len, char **error) {
    sqlite3_stmt *s = which == 0 ? d->top : (which == 1 ? d->count : d->by_licence);
    return explain(d->db, s, out, out_len, error);
}

// MARK: stations

ca_stations *ca_stations_open(const char *path, char **error) {
    *error = NULL;
    ca_stations *d = calloc(1, sizeof(ca_stations));
    if (!d) return NULL;
    if (sqlite3_open(path, &d->db) != SQLITE_OK) { fail(d->db, error); ca_stations_close(d); return NULL; }
    if (exec(d->db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
                    "CREATE TABLE station (id INTEGER PRIMARY KEY, name TEXT, lat REAL, lon REAL);"
                    "CREATE VIRTUAL TABLE station_box USING rtree(id, minlat, maxlat, minlon, maxlon, +lat REAL, +lon REAL);"
                    "CREATE TABLE departure (id INTEGER PRIMARY KEY, station INTEGER, time INTEGER, line TEXT, destination TEXT);"
                    "CREATE INDEX departure_station_time ON departure(station, time);", error) ||
        prepare(d->db, "INSERT INTO station (id, name, lat, lon) VALUES (?1, ?2, ?3, ?4)", &d->insert_station, error) ||
        prepare(d->db, "INSERT INTO station_box VALUES (?1, ?2, ?2, ?3, ?3, ?2, ?3)", &d->insert_box, error) ||
        prepare(d->db, "INSERT INTO departure (id, station, time, line, destination) VALUES (?, ?, ?, ?, ?)", &d->insert_departure, error) ||
        prepare(d->db, "SELECT id, lat, lon FROM station_box WHERE minlat <= ?2 AND maxlat >= ?1 AND minlon <= ?4 AND maxlon >= ?3", &d->box, error) ||
        prepare(d->db, "SELECT id, name, lat, lon FROM station WHERE id = ?", &d->station, error) ||
        prepare(d->db, "SELECT id, station, time, line, destination FROM departure WHERE station = ?1 AND time >= ?2 ORDER BY time, id LIMIT ?3", &d->next, error) ||
        prepare(d->db, "BEGIN", &d->begin, error) || prepare(d->db, "COMMIT", &d->commit, error)) {
        ca_stations_close(d);
        return NULL;
    }
    return d;
}

void ca_stations_close(ca_stations *d) {
    if (!d) return;
    sqlite3_stmt *all[] = {d->insert_station, d->insert_box, d->insert_departure, d->box, d->station, d->next, d->begin, d->commit};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) sqlite3_finalize(all[i]);
    sqlite3_close(d->db);
    free(d);
}

double ca_stations_insert(ca_stations *d, const int64_t *ids, const char *const *names, const double *lats, const double *lons, int n, char **error) {
    *error = NULL;
    double start = now();
    if (step_done(d->db, d->begin, error)) return -1;
    for (int i = 0; i < n; i++) {
        sqlite3_bind_int64(d->insert_station, 1, ids[i]);
        sqlite3_bind_text(d->insert_station, 2, names[i], -1, SQLITE_STATIC);
        sqlite3_bind_double(d->insert_station, 3, lats[i]);
        sqlite3_bind_double(d->insert_station, 4, lons[i]);
        if (step_done(d->db, d->insert_station, error)) return -1;
        sqlite3_bind_int64(d->insert_box, 1, ids[i]);
        sqlite3_bind_double(d->insert_box, 2, lats[i]);
        sqlite3_bind_double(d->insert_box, 3, lons[i]);
        if (step_done(d->db, d->insert_box, error)) return -1;
    }
    if (step_done(d->db, d->commit, error)) return -1;
    return now() - start;
}

double ca_departures_insert(ca_stations *d, ca_departure_rows r, int n, int batch, char **error) {
    *error = NULL;
    double start = now();
    for (int i = 0; i < n; i += batch) {
        if (step_done(d->db, d->begin, error)) return -1;
        for (int j = i; j < n && j < i + batch; j++) {
            sqlite3_bind_int64(d->insert_departure, 1, r.id[j]);
            sqlite3_bind_int64(d->insert_departure, 2, r.station[j]);
            sqlite3_bind_int64(d->insert_departure, 3, r.time[j]);
            sqlite3_bind_text(d->insert_departure, 4, r.line[j], -1, SQLITE_STATIC);
            sqlite3_bind_text(d->insert_departure, 5, r.destination[j], -1, SQLITE_STATIC);
            if (step_done(d->db, d->insert_departure, error)) return -1;
        }
        if (step_done(d->db, d->commit, error)) return -1;
    }
    return now() - start;
}

/// A station and a departure as an app holds them.
typedef struct { int64_t id; char name[64]; double lat, lon; } station;
typedef struct { int64_t id, station, time; char line[32], destination[64]; } departure;

/// The nearest station within `radius` of (lat, lon), ties by id: the circle's bounding box
/// from the R*Tree, an exact distance for each candidate. Returns its id or -1 (none), or
/// -2 with *error set.
static int64_t nearest(ca_stations *d, double lat, double lon, double radius, long *candidates, char **error) {
    // A regional app: no pole or antimeridian inside the box (the region is far from both).
    double angle = radius / EARTH_RADIUS * 180 / M_PI + 1e-7;
    double sine = sin(angle * M_PI / 180) / cos(lat * M_PI / 180);
    double dl = sine >= 1 ? 180 : asin(sine) * 180 / M_PI + 1e-7;
    sqlite3_bind_double(d->box, 1, lat - angle);
    sqlite3_bind_double(d->box, 2, lat + angle);
    sqlite3_bind_double(d->box, 3, lon - dl);
    sqlite3_bind_double(d->box, 4, lon + dl);
    int64_t best = -1;
    double best_distance = 0;
    int rc;
    while ((rc = sqlite3_step(d->box)) == SQLITE_ROW) {
        (*candidates)++;
        int64_t id = sqlite3_column_int64(d->box, 0);
        double distance = cg_haversine(lat, lon, sqlite3_column_double(d->box, 1), sqlite3_column_double(d->box, 2));
        if (distance > radius) continue;
        if (best < 0 || distance < best_distance || (distance == best_distance && id < best)) {
            best = id;
            best_distance = distance;
        }
    }
    sqlite3_reset(d->box);
    if (rc != SQLITE_DONE) { fail(d->db, error); return -2; }
    return best;
}

double ca_stations_next(ca_stations *d, const double *lats, const double *lons, const int64_t *nows, int n, double radius, int limit,
                        int64_t *out_stations, int64_t *out_departures, long *candidates, char **error) {
    *error = NULL;
    *candidates = 0;
    static station s;   // static: the copies are kept, as an app's would be
    static departure r;
    double start = now();
    for (int i = 0; i < n; i++) {
        int64_t *ids = out_departures ? out_departures + (long)i * limit : NULL;
        for (int j = 0; ids && j < limit; j++) ids[j] = -1;
        int64_t best = nearest(d, lats[i], lons[i], radius, candidates, error);
        if (best == -2) return -1;
        if (out_stations) out_stations[i] = best;
        if (best < 0) continue;
        // The station's row, for the screen.
        sqlite3_bind_int64(d->station, 1, best);
        int rc = sqlite3_step(d->station);
        if (rc == SQLITE_ROW) {
            s.id = sqlite3_column_int64(d->station, 0);
            copy_text(s.name, sizeof s.name, d->station, 1);
            s.lat = sqlite3_column_double(d->station, 2);
            s.lon = sqlite3_column_double(d->station, 3);
        }
        sqlite3_reset(d->station);
        if (rc != SQLITE_ROW) return fail(d->db, error);
        // Its next departures.
        sqlite3_bind_int64(d->next, 1, best);
        sqlite3_bind_int64(d->next, 2, nows[i]);
        sqlite3_bind_int(d->next, 3, limit);
        int count = 0;
        while ((rc = sqlite3_step(d->next)) == SQLITE_ROW) {
            r.id = sqlite3_column_int64(d->next, 0);
            r.station = sqlite3_column_int64(d->next, 1);
            r.time = sqlite3_column_int64(d->next, 2);
            copy_text(r.line, sizeof r.line, d->next, 3);
            copy_text(r.destination, sizeof r.destination, d->next, 4);
            if (ids && count < limit) ids[count] = r.id;
            count++;
        }
        sqlite3_reset(d->next);
        if (rc != SQLITE_DONE) return fail(d->db, error);
    }
    return now() - start;
}

int ca_stations_plan(ca_stations *d, int which, char *out, size_t out_len, char **error) {
    return explain(d->db, which == 0 ? d->box : d->next, out, out_len, error);
}
