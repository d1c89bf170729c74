#ifndef KVDOCS_CGEO_H
#define KVDOCS_CGEO_H
// The baselines of kvbench's geo section.
// - SQLite's R*Tree module through the C API: `rtree(id, minlat, maxlat, minlon, maxlon,
//   +lat, +lon)` (auxiliary columns hold the exact coordinates), a bounding-box query of
//   the circle (two boxes across the antimeridian, all longitudes around a pole), then an
//   exact haversine filter and a sort by (distance, id). k-nearest widens the circle from
//   100 m as KVDocs does (×4 while nothing is found, else by √(k/found)·1.25 within
//   [1.5, 4]) and queries the box again each time.
// - A brute-force scan of every point in memory.
// Distances: haversine on a sphere of radius 6,371,008.8 m. Timing functions return
// elapsed seconds, or -1 with *error set (free with free()).
#include <stdint.h>

typedef struct cg_db cg_db;

cg_db *cg_open(const char *path, char **error);
void cg_close(cg_db *db);
// Inserts points 0..n-1 (ids are their positions) in one transaction.
double cg_insert(cg_db *db, const double *lats, const double *lons, int n, char **error);
// Runs n queries. radius <= 0: no radius (k-nearest); k <= 0: every hit within the radius.
// For query i, up to max_out hit ids go to out_ids[i * max_out ...] (-1 padded; out_ids may
// be NULL). *candidates counts rows the boxes returned, *hits the hits.
double cg_query(cg_db *db, const double *lats, const double *lons, int n, double radius, int k,
                int64_t *out_ids, int max_out, long *candidates, long *hits, char **error);
// The same queries by scanning every point.
double cg_brute(const double *plats, const double *plons, int npoints, const double *lats, const double *lons, int n,
                double radius, int k, int64_t *out_ids, int max_out, long *hits);
double cg_haversine(double lat1, double lon1, double lat2, double lon2);

#endif
