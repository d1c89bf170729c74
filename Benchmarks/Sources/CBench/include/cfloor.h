#ifndef KVDOCS_CFLOOR_H
#define KVDOCS_CFLOOR_H
// Physical floors: a program of LevelDB C API calls, prepared by the Swift side from what
// KVDocs read and wrote, run as fast as the C API allows. Each step reads its key (a) and
// value or end key (b) from `bytes` at the given offsets.
//
// Steps (cb_step_kind):
// - GET: leveldb_get of a (the value is freed unread).
// - PUT / DELETE: leveldb_writebatch_put(a, b) / leveldb_writebatch_delete(a) on the
//   program's one batch.
// - WRITE: leveldb_write of that batch (non-sync write options, as KVDocs' default), then
//   leveldb_writebatch_clear.
// - SCAN: a new iterator (the previous one destroyed), seek to a, then up to `limit`
//   entries (every one when limit < 0) whose key is below b (at or below b with flag
//   CB_UPPER_INCLUDED; no end when b is empty), each key and value touched; with flag
//   CB_LOWER_EXCLUDED, an entry equal to a is stepped over, not counted.
// - SCAN_SAME: as SCAN, on the iterator of the previous scan of the unit (a seek, not a
//   new iterator: KVDocs' multi-range cursor).
// - SCAN_REVERSE: a new iterator, positioned at the last entry below b (at or below with
//   CB_UPPER_INCLUDED; the last entry when b is empty), then up to `limit` entries
//   backwards while the key is at or above a (above a with CB_LOWER_EXCLUDED).
// Units: unit u is steps [unit_starts[u], unit_starts[u + 1]); an iterator never outlives
// its unit.
#include <stddef.h>
#include <stdint.h>

typedef struct cb_db cb_db;

enum cb_step_kind { CB_GET = 0, CB_PUT = 1, CB_DELETE = 2, CB_WRITE = 3, CB_SCAN = 4, CB_SCAN_SAME = 5, CB_SCAN_REVERSE = 6 };
enum { CB_UPPER_INCLUDED = 1, CB_LOWER_EXCLUDED = 2 };

typedef struct {
    const char *bytes;
    const int8_t *kind;
    const int8_t *flags;
    const size_t *a_offset, *a_length, *b_offset, *b_length;
    const int32_t *limit;
    const int32_t *unit_starts;   // units + 1 entries
} cb_program;

typedef struct {
    long gets;       // GET steps
    long found;      // of them, keys present
    long entries;    // entries read by scans
    long writes;     // leveldb_write calls
} cb_floor_stats;

// Runs units [first, first + count) of `program` on `db`; adds to *stats. Returns elapsed
// seconds, or -1 with *error set (free with free()).
double cb_floor_run(cb_db *db, cb_program program, int first, int count, cb_floor_stats *stats, char **error);

#endif
