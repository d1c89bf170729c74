#include "cgeo.h"
#include "cb_time.h"
#include "cb_sqlite.h"
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EARTH_RADIUS 6371008.8

struct cg_db {
    sqlite3 *db;
    sqlite3_stmt *insert, *box;
};

double cg_haversine(double lat1, double lon1, double lat2, double lon2) {
    const double k = M_PI / 180;
    double p1 = lat1 * k, p2 = lat2 * k;
    double dp = p2 - p1, dl = lon2 * k - lon1 * k;
    double s1 = sin(dp / 2), s2 = sin(dl / 2);
    double a = s1 * s1 + cos(p1) * cos(p2) * (s2 * s2);
    if (a > 1) a = 1;
    if (a < 0) a = 0;
    return EARTH_RADIUS * (2 * asin(sqrt(a)));
}

cg_db *cg_open(const char *path, char **error) {
    *error = NULL;
    cg_db *d = calloc(1, sizeof(cg_db));
    if (!d) return NULL;
    if (sqlite3_open(path, &d->db) != SQLITE_OK) { fail(d->db, error); cg_close(d); return NULL; }
    char *m = NULL;
    if (sqlite3_exec(d->db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
                     "CREATE VIRTUAL TABLE IF NOT EXISTS pts USING rtree(id, minlat, maxlat, minlon, maxlon, +lat REAL, +lon REAL);",
                     NULL, NULL, &m) != SQLITE_OK) {
        *error = strdup(m ? m : "sqlite3_exec failed");
        sqlite3_free(m);
        cg_close(d);
        return NULL;
    }
    if (sqlite3_prepare_v3(d->db, "INSERT INTO pts VALUES (?1, ?2, ?2, ?3, ?3, ?2, ?3)", -1, SQLITE_PREPARE_PERSISTENT, &d->insert, NULL) != SQLITE_OK ||
        sqlite3_prepare_v3(d->db, "SELECT id, lat, lon FROM pts WHERE minlat <= ?2 AND maxlat >= ?1 AND minlon <= ?4 AND maxlon >= ?3",
                           -1, SQLITE_PREPARE_PERSISTENT, &d->box, NULL) != SQLITE_OK) {
        fail(d->db, error);
        cg_close(d);
        return NULL;
    }
    return d;
}

void cg_close(cg_db *d) {
    if (!d) return;
    sqlite3_finalize(d->insert);
    sqlite3_finalize(d->box);
    sqlite3_close(d->db);
    free(d);
}

double cg_insert(cg_db *d, const double *lats, const double *lons, int n, char **error) {
    *error = NULL;
    double start = now();
    sqlite3_exec(d->db, "BEGIN", NULL, NULL, NULL);
    for (int i = 0; i < n; i++) {
        sqlite3_bind_int64(d->insert, 1, i);
        sqlite3_bind_double(d->insert, 2, lats[i]);
        sqlite3_bind_double(d->insert, 3, lons[i]);
        if (sqlite3_step(d->insert) != SQLITE_DONE) { fail(d->db, error); return -1; }
        sqlite3_reset(d->insert);
    }
    if (sqlite3_exec(d->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) { fail(d->db, error); return -1; }
    return now() - start;
}

typedef struct { double distance; int64_t id; } hit;

static int compare_hits(const void *a, const void *b) {
    const hit *x = a, *y = b;
    if (x->distance != y->distance) return x->distance < y->distance ? -1 : 1;
    return x->id < y->id ? -1 : (x->id > y->id);
}

typedef struct { hit *items; long count, capacity; } hits_t;

static void push(hits_t *h, double distance, int64_t id) {
    if (h->count == h->capacity) {
        h->capacity = h->capacity ? h->capacity * 2 : 256;
        h->items = realloc(h->items, (size_t)h->capacity * sizeof(hit));
    }
    h->items[h->count++] = (hit){distance, id};
}

// Reads one box, keeping rows within `radius` of the centre.
static int read_box(cg_db *d, double lat0, double lat1, double lon0, double lon1, double lat, double lon, double radius,
                    hits_t *out, long *candidates, char **error) {
    sqlite3_bind_double(d->box, 1, lat0);
    sqlite3_bind_double(d->box, 2, lat1);
    sqlite3_bind_double(d->box, 3, lon0);
    sqlite3_bind_double(d->box, 4, lon1);
    int rc;
    while ((rc = sqlite3_step(d->box)) == SQLITE_ROW) {
        (*candidates)++;
        double dist = cg_haversine(lat, lon, sqlite3_column_double(d->box, 1), sqlite3_column_double(d->box, 2));
        if (dist <= radius) push(out, dist, sqlite3_column_int64(d->box, 0));
    }
    sqlite3_reset(d->box);
    if (rc != SQLITE_DONE) return fail(d->db, error);
    return 0;
}

// Every point within `radius` of (lat, lon), unsorted: the circle's bounding boxes.
static int read_circle(cg_db *d, double lat, double lon, double radius, hits_t *out, long *candidates, char **error) {
    double angle = radius / EARTH_RADIUS * 180 / M_PI + 1e-7;   // degrees, with slack for rounding
    double lat0 = lat - angle, lat1 = lat + angle;
    if (angle >= 180 || lat0 <= -90 || lat1 >= 90) {
        // Around a pole (or the whole sphere): every longitude.
        return read_box(d, lat0 < -90 ? -90 : lat0, lat1 > 90 ? 90 : lat1, -180, 180, lat, lon, radius, out, candidates, error);
    }
    double s = sin(angle * M_PI / 180) / cos(lat * M_PI / 180);
    if (s >= 1) return read_box(d, lat0, lat1, -180, 180, lat, lon, radius, out, candidates, error);
    double dl = asin(s) * 180 / M_PI + 1e-7;
    double lon0 = lon - dl, lon1 = lon + dl;
    if (lon0 < -180) {
        if (read_box(d, lat0, lat1, lon0 + 360, 180, lat, lon, radius, out, candidates, error)) return -1;
        return read_box(d, lat0, lat1, -180, lon1, lat, lon, radius, out, candidates, error);
    }
    if (lon1 > 180) {
        if (read_box(d, lat0, lat1, lon0, 180, lat, lon, radius, out, candidates, error)) return -1;
        return read_box(d, lat0, lat1, -180, lon1 - 360, lat, lon, radius, out, candidates, error);
    }
    return read_box(d, lat0, lat1, lon0, lon1, lat, lon, radius, out, candidates, error);
}

static void emit(hits_t *h, long keep, int64_t *out_ids, int max_out, int i, long *hits) {
    if (keep > h->count) keep = h->count;
    *hits += keep;
    if (!out_ids) return;
    for (int j = 0; j < max_out; j++) out_ids[(long)i * max_out + j] = j < keep ? h->items[j].id : -1;
}

double cg_query(cg_db *d, const double *lats, const double *lons, int n, double radius, int k,
                int64_t *out_ids, int max_out, long *candidates, long *hits, char **error) {
    *error = NULL;
    *candidates = 0;
    *hits = 0;
    hits_t h = {0};
    double maximum = M_PI * EARTH_RADIUS;
    double start = now();
    for (int i = 0; i < n; i++) {
        double limit = radius > 0 ? radius : maximum;
        double r = k > 0 ? (limit < 100 ? limit : 100) : limit;
        for (;;) {
            h.count = 0;
            if (read_circle(d, lats[i], lons[i], r, &h, candidates, error)) { free(h.items); return -1; }
            qsort(h.items, (size_t)h.count, sizeof(hit), compare_hits);
            if (k <= 0 || h.count >= k || r >= limit) break;
            double factor = h.count == 0 ? 4 : sqrt((double)k / (double)h.count) * 1.25;
            if (factor < 1.5) factor = 1.5;
            if (factor > 4) factor = 4;
            r = r * factor > limit ? limit : r * factor;
        }
        emit(&h, k > 0 ? k : h.count, out_ids, max_out, i, hits);
    }
    double elapsed = now() - start;
    free(h.items);
    return elapsed;
}

double cg_brute(const double *plats, const double *plons, int npoints, const double *lats, const double *lons, int n,
                double radius, int k, int64_t *out_ids, int max_out, long *hits) {
    *hits = 0;
    hits_t h = {0};
    double start = now();
    for (int i = 0; i < n; i++) {
        h.count = 0;
        for (int p = 0; p < npoints; p++) {
            double dist = cg_haversine(lats[i], lons[i], plats[p], plons[p]);
            if (radius <= 0 || dist <= radius) push(&h, dist, p);
        }
        qsort(h.items, (size_t)h.count, sizeof(hit), compare_hits);
        emit(&h, k > 0 ? k : h.count, out_ids, max_out, i, hits);
    }
    double elapsed = now() - start;
    free(h.items);
    return elapsed;
}
