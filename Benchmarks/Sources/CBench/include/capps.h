#ifndef KVDOCS_CAPPS_H
#define KVDOCS_CAPPS_H
// The SQLite side of kvbench's apps section: two app workloads written as a SQLite expert
// writes them, on SQLite's C API with prepared statements reused, WAL and
// synchronous = NORMAL. Every query materialises its rows (each column copied out, as an
// app reading them would).
// - athletes: `athlete(id INTEGER PRIMARY KEY, licence TEXT UNIQUE, name, country, club,
//   points INTEGER, sport)` with `athlete_country_points ON athlete(country, points)`.
// - stations: `station(id INTEGER PRIMARY KEY, name, lat, lon)`, an R*Tree
//   `station_box(id, minlat, maxlat, minlon, maxlon, +lat, +lon)` (auxiliary columns hold
//   the exact point), `departure(id INTEGER PRIMARY KEY, station, time, line,
//   destination)` with `departure_station_time ON departure(station, time)`.
// Timing functions return elapsed seconds, or -1 with *error set (free with free()).
#include <stddef.h>
#include <stdint.h>

typedef struct ca_athletes ca_athletes;
typedef struct ca_stations ca_stations;

/// Athletes, as parallel arrays.
typedef struct {
    const int64_t *id;
    const char *const *licence;
    const char *const *name;
    const char *const *country;
    const char *const *club;
    const int64_t *points;
    const char *const *sport;
} ca_athlete_rows;

/// Departures, as parallel arrays.
typedef struct {
    const int64_t *id;
    const int64_t *station;
    const int64_t *time;
    const char *const *line;
    const char *const *destination;
} ca_departure_rows;

ca_athletes *ca_athletes_open(const char *path, char **error);
void ca_athletes_close(ca_athletes *db);
// Inserts rows [0, n) in transactions of `batch` rows.
double ca_athletes_insert(ca_athletes *db, ca_athlete_rows rows, int n, int batch, char **error);
// For each i: `WHERE country = countries[i] ORDER BY points DESC, id DESC LIMIT limit`.
// The ids of query i go to out_ids[i * limit ...], -1 padded (out_ids may be NULL).
double ca_athletes_top(ca_athletes *db, const char *const *countries, int n, int limit, int64_t *out_ids, char **error);
// For each i: `SELECT count(*) WHERE country = countries[i]` into out_counts[i] (may be NULL).
double ca_athletes_count(ca_athletes *db, const char *const *countries, int n, int64_t *out_counts, char **error);
// For each i: `WHERE licence = licences[i]`; the id (or -1) into out_ids[i] (may be NULL).
double ca_athletes_by_licence(ca_athletes *db, const char *const *licences, int n, int64_t *out_ids, char **error);
// SQLite's EXPLAIN QUERY PLAN of a query (0 top, 1 count, 2 licence), its lines joined by
// "; " into out. Returns 0, or -1 with *error set.
int ca_athletes_plan(ca_athletes *db, int which, char *out, size_t out_len, char **error);

ca_stations *ca_stations_open(const char *path, char **error);
void ca_stations_close(ca_stations *db);
// Inserts stations [0, n) (into the table and the R*Tree) in one transaction.
double ca_stations_insert(ca_stations *db, const int64_t *ids, const char *const *names, const double *lats, const double *lons, int n, char **error);
// Inserts departures [0, n) in transactions of `batch` rows.
double ca_departures_insert(ca_stations *db, ca_departure_rows rows, int n, int batch, char **error);
// For each i: the nearest station within `radius` metres of (lats[i], lons[i]) (the
// circle's bounding box from the R*Tree, an exact haversine distance for each candidate,
// the nearest kept, ties by id), its row, then its next `limit` departures:
// `WHERE station = ? AND time >= nows[i] ORDER BY time LIMIT limit`. The station's id (or
// -1) goes to out_stations[i], the departure ids to out_departures[i * limit ...], -1
// padded (both may be NULL). *candidates counts the rows the boxes returned.
double ca_stations_next(ca_stations *db, const double *lats, const double *lons, const int64_t *nows, int n, double radius, int limit,
                        int64_t *out_stations, int64_t *out_departures, long *candidates, char **error);
// SQLite's EXPLAIN QUERY PLAN of a query (0 the box, 1 the departures), as ca_athletes_plan.
int ca_stations_plan(ca_stations *db, int which, char *out, size_t out_len, char **error);

#endif
